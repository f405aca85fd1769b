"""Parking: an unfinished run's state kept in git (results/parked/TABLE/RUN/), so a run
survives a machine that does not keep runs/ (scripts/reproduce.py --park; README,
"Reproducing the paper"). A parked copy holds last.json.gz (the resumable checkpoint,
optimizer included), best.json.gz (the best-validation weights, without the optimizer
state, which only load_model's readers would see and they ignore it), config.json and
metrics.jsonl. Writes are whole or absent: park builds the copy beside its place and
swaps it in; unpark unpacks every file before it renames them into place, last.json
last. Standard library only."""
import gzip
import json
import os
import shutil
import time

FILES = ("config.json", "metrics.jsonl", "best.json.gz", "last.json.gz")  # unpark's order: last.json last


class ParkError(Exception):
    """A park or unpark that would lose or mix state; the message says what and how to proceed."""


def settle(dest):
    """Finishes a swap that park() was interrupted in, before park or discard change DEST:
    with DEST missing, DEST.old is the last whole copy and becomes DEST again. Then a
    DEST.new (a build that was interrupted) and a DEST.old beside a DEST (which only ever
    appears whole, by a rename) are leftovers and are deleted."""
    if not os.path.isdir(dest) and os.path.isdir(dest + ".old"):
        os.rename(dest + ".old", dest)
    for leftover in (dest + ".new", dest + ".old"):
        if os.path.isdir(leftover):
            shutil.rmtree(leftover)


def location(dest):
    """Where a parked copy's files are, without changing anything: DEST, or DEST.old while
    an interrupted swap is unfinished; None when there is no copy."""
    for d in (dest, dest + ".old"):
        if os.path.exists(os.path.join(d, "last.json.gz")):
            return d
    return None


def exists(dest):
    return location(dest) is not None


def step_of(dest):
    """The training step of a parked copy's last.json; ParkError if it cannot be read."""
    path = os.path.join(location(dest) or dest, "last.json.gz")
    try:
        with gzip.open(path, "rt") as f:
            return json.load(f)["step"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ParkError("%s is damaged (%s: %s); restore it from git or delete it to start the run over" % (
            path, type(e).__name__, e))


def read_pair(run_dir):
    """(last, best) checkpoints of a run, read as a consistent pair: best.json's step must
    be the best step last.json records, retried while an evaluation of a live run
    rewrites them (liegrad writes best.json before last.json, each atomically)."""
    best_path = os.path.join(run_dir, "best.json")
    for _ in range(20):
        best = None
        if os.path.exists(best_path):
            with open(best_path) as f:
                best = json.load(f)
        with open(os.path.join(run_dir, "last.json")) as f:
            last = json.load(f)
        best_step = last.get("progress", {}).get("best_step", -1)
        if best is None and best_step is not None and best_step >= 0:
            raise ParkError("%s: last.json records a best checkpoint at step %d but best.json is missing; "
                            "parking it would lose the best checkpoint" % (run_dir, best_step))
        if best is None or best["step"] == last.get("progress", {}).get("best_step", best["step"]):
            return last, best
        time.sleep(1)
    raise ParkError("%s: best.json and last.json kept disagreeing on the best step" % run_dir)


def park(run_dir, dest):
    """Copies an unfinished run's state into DEST and returns the step parked. Refuses to
    replace a parked copy that is further along (that would roll the run back)."""
    settle(dest)
    last, best = read_pair(run_dir)
    if exists(dest) and step_of(dest) > last["step"]:
        raise ParkError("%s is parked at step %d, ahead of %s at step %d; parking would roll it back (delete "
                        "the run directory to resume from the parked copy)" % (dest, step_of(dest), run_dir,
                                                                                last["step"]))
    new = dest + ".new"
    os.makedirs(new)
    for name, ckpt in (("last.json", last), ("best.json", best)):
        if ckpt is None:
            continue
        if name == "best.json":
            ckpt.pop("optimizer", None)
        with gzip.open(os.path.join(new, name + ".gz"), "wt") as f:
            json.dump(ckpt, f, separators=(",", ":"))
    for name in ("config.json", "metrics.jsonl"):  # resume drops metrics past last.json's step
        shutil.copy(os.path.join(run_dir, name), os.path.join(new, name))
    if os.path.isdir(dest):
        os.rename(dest, dest + ".old")
    os.rename(new, dest)
    if os.path.isdir(dest + ".old"):
        shutil.rmtree(dest + ".old")
    return last["step"]


def unpark(dest, run_dir):
    """Restores a parked copy into RUN_DIR, where `liegrad train --resume` continues it.
    Every file is unpacked beside its name first; only then are they renamed into place,
    last.json last. So an unpark that fails (a damaged copy, a full disk) changes nothing
    in RUN_DIR, and a best.json of an older local state is removed when the copy has none."""
    src_dir = location(dest) or dest
    os.makedirs(run_dir, exist_ok=True)
    staged = []  # (temporary, target); target alone: remove it
    try:
        for name in FILES:
            src = os.path.join(src_dir, name)
            target = os.path.join(run_dir, name[:-3] if name.endswith(".gz") else name)
            if not os.path.exists(src):
                if name in ("config.json", "last.json.gz"):
                    raise OSError("%s is missing" % name)
                staged.append((None, target))
                continue
            tmp = target + ".unpark"
            staged.append((tmp, target))
            if name.endswith(".gz"):
                with gzip.open(src, "rb") as f, open(tmp, "wb") as out:
                    shutil.copyfileobj(f, out)
            else:
                shutil.copy(src, tmp)
    except (OSError, EOFError) as e:
        for tmp, _ in staged:
            if tmp and os.path.exists(tmp):
                os.remove(tmp)
        raise ParkError("%s could not be unpacked into %s (%s: %s); %s is unchanged. Restore the copy from git, "
                        "or delete it to start the run over" % (src_dir, run_dir, type(e).__name__, e, run_dir))
    for tmp, target in staged:
        if tmp:
            os.replace(tmp, target)
        elif os.path.exists(target):
            os.remove(target)


def discard(dest, root):
    """Deletes a served parked copy and the directories it leaves empty up to ROOT (the
    parked tree). Returns whether there was one. Tolerates another process removing the
    same directories at the same time."""
    settle(dest)
    if not os.path.isdir(dest):
        return False
    shutil.rmtree(dest)
    d = os.path.dirname(dest)
    while True:
        try:
            os.rmdir(d)  # only if empty
        except OSError:
            break
        if os.path.abspath(d) == os.path.abspath(root):
            break
        d = os.path.dirname(d)
    return True
