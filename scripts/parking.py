"""Parking: an unfinished run's state kept in git (results/parked/TABLE/RUN/), so a run
survives a machine that does not keep runs/ (scripts/reproduce.py --park; README,
"Reproducing the paper"). A parked copy holds last.json.gz (the resumable checkpoint,
optimizer included), best.json.gz (the best-validation weights, without the optimizer
state, which only load_model's readers would see and they ignore it), config.json and
metrics.jsonl. Writes are whole or absent: park builds the copy beside its place and
swaps it in; unpark renames each file into place, last.json last. Standard library only."""
import gzip
import json
import os
import shutil
import time

FILES = ("config.json", "metrics.jsonl", "last.json.gz", "best.json.gz")


class ParkError(Exception):
    """A park or unpark that would lose or mix state; the message says what and how to proceed."""


def settle(dest):
    """Finishes a swap that park() was interrupted in: with DEST missing, DEST.old is the
    last whole copy. A DEST.new left over from an interrupted build is dropped."""
    if not os.path.isdir(dest) and os.path.isdir(dest + ".old"):
        os.rename(dest + ".old", dest)
    for leftover in (dest + ".new", dest + ".old"):
        if os.path.isdir(leftover):
            shutil.rmtree(leftover)


def exists(dest):
    settle(dest)
    return os.path.exists(os.path.join(dest, "last.json.gz"))


def step_of(dest):
    """The training step of a parked copy's last.json."""
    with gzip.open(os.path.join(dest, "last.json.gz"), "rt") as f:
        return json.load(f)["step"]


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
    if os.path.exists(os.path.join(dest, "last.json.gz")) and step_of(dest) > last["step"]:
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
    Each file is unpacked beside its name and renamed into place, last.json last, so an
    interrupted unpark leaves no last.json that a later resume would take for whole; a
    best.json of an older local state is removed when the copy has none."""
    os.makedirs(run_dir, exist_ok=True)
    for name in ("config.json", "metrics.jsonl", "best.json.gz", "last.json.gz"):
        src = os.path.join(dest, name)
        target = os.path.join(run_dir, name[:-3] if name.endswith(".gz") else name)
        if not os.path.exists(src):
            if os.path.exists(target):
                os.remove(target)
            continue
        tmp = target + ".unpark"
        if name.endswith(".gz"):
            with gzip.open(src, "rb") as f, open(tmp, "wb") as out:
                shutil.copyfileobj(f, out)
        else:
            shutil.copy(src, tmp)
        os.replace(tmp, target)


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
