#!/usr/bin/env python3
"""Tests of scripts/parking.py on hand-made checkpoints (no training): a park builds the
whole copy before it replaces the old one and recovers from an interrupted swap, refuses
to lose the best checkpoint or roll a copy back, and an unpark that fails leaves no
last.json a later resume would trust. The end-to-end park/resume test with real runs is
in tests/test_reproduce_jobs.py. Registered with CTest; standard library only."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import long_tables  # noqa: E402
import parking  # noqa: E402
import reproduce  # noqa: E402


def make_run(run_dir, step, best_step):
    """A stopped run as liegrad leaves it: last.json at `step` recording `best_step`
    (-1: no evaluation yet, so no best.json), config.json and metrics.jsonl."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "last.json"), "w") as f:
        json.dump({"step": step, "progress": {"best_step": best_step}, "optimizer": {"t": step}}, f)
    if best_step >= 0:
        with open(os.path.join(run_dir, "best.json"), "w") as f:
            json.dump({"step": best_step, "optimizer": {"t": best_step}, "weights": [best_step]}, f)
    elif os.path.exists(os.path.join(run_dir, "best.json")):
        os.remove(os.path.join(run_dir, "best.json"))
    for name, text in (("config.json", '{"train": {"steps": 10}}'), ("metrics.jsonl", '{"step": %d}\n' % step)):
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(text)


class Parking(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = os.path.join(self.tmp.name, "runs", "t", "r")
        self.root = os.path.join(self.tmp.name, "parked")
        self.dest = os.path.join(self.root, "t", "r")

    def tearDown(self):
        self.tmp.cleanup()

    def test_park_then_unpark_restores_the_run(self):
        make_run(self.run, 6, 4)
        self.assertEqual(parking.park(self.run, self.dest), 6)
        self.assertEqual(sorted(os.listdir(self.dest)), sorted(parking.FILES))
        with gzip.open(os.path.join(self.dest, "best.json.gz"), "rt") as f:
            self.assertNotIn("optimizer", json.load(f))  # weights only
        fresh = os.path.join(self.tmp.name, "fresh", "r")
        parking.unpark(self.dest, fresh)
        with open(os.path.join(fresh, "last.json")) as f:
            self.assertEqual(json.load(f)["optimizer"], {"t": 6})  # the optimizer state is whole
        with open(os.path.join(fresh, "best.json")) as f:
            self.assertEqual(json.load(f)["weights"], [4])
        self.assertEqual([n for n in os.listdir(fresh) if n.endswith(".unpark")], [])

    def test_a_later_park_replaces_the_copy_and_an_earlier_one_is_refused(self):
        make_run(self.run, 4, 2)
        parking.park(self.run, self.dest)
        make_run(self.run, 8, 6)
        self.assertEqual(parking.park(self.run, self.dest), 8)
        self.assertEqual(parking.step_of(self.dest), 8)
        make_run(self.run, 5, 4)
        with self.assertRaisesRegex(parking.ParkError, "parked at step 8, ahead of .* at step 5"):
            parking.park(self.run, self.dest)
        self.assertEqual(parking.step_of(self.dest), 8)

    def test_a_missing_best_checkpoint_is_not_parked_as_none(self):
        make_run(self.run, 6, 4)
        os.remove(os.path.join(self.run, "best.json"))
        with self.assertRaisesRegex(parking.ParkError, "best.json is missing"):
            parking.park(self.run, self.dest)
        self.assertFalse(os.path.exists(self.dest))
        make_run(self.run, 1, -1)  # no evaluation yet: nothing to lose
        self.assertEqual(parking.park(self.run, self.dest), 1)
        self.assertNotIn("best.json.gz", os.listdir(self.dest))

    def test_an_interrupted_swap_is_recovered(self):
        make_run(self.run, 4, 2)
        parking.park(self.run, self.dest)
        # Interrupted between the two renames: the whole old copy sits in DEST.old, a
        # half-built DEST.new may be left too.
        os.rename(self.dest, self.dest + ".old")
        os.makedirs(self.dest + ".new")
        # Reading finds the whole copy and changes nothing (another process may be parking).
        self.assertTrue(parking.exists(self.dest))
        self.assertEqual(parking.step_of(self.dest), 4)
        fresh = os.path.join(self.tmp.name, "fresh", "r")
        parking.unpark(self.dest, fresh)
        with open(os.path.join(fresh, "last.json")) as f:
            self.assertEqual(json.load(f)["step"], 4)
        self.assertTrue(os.path.isdir(self.dest + ".old") and os.path.isdir(self.dest + ".new"))
        # The next park (or discard) finishes the swap first.
        parking.settle(self.dest)
        self.assertEqual(parking.step_of(self.dest), 4)
        self.assertFalse(os.path.exists(self.dest + ".old") or os.path.exists(self.dest + ".new"))

    def test_a_failed_unpark_changes_nothing_and_an_unpark_drops_a_stale_best(self):
        make_run(self.run, 6, 4)
        parking.park(self.run, self.dest)
        with open(os.path.join(self.dest, "best.json.gz"), "wb") as f:
            f.write(b"not gzip")
        fresh = os.path.join(self.tmp.name, "fresh", "r")
        make_run(fresh, 2, 2)  # an older local state of the run
        before = {n: open(os.path.join(fresh, n)).read() for n in os.listdir(fresh)}
        with self.assertRaisesRegex(parking.ParkError, "could not be unpacked .* is unchanged"):
            parking.unpark(self.dest, fresh)
        self.assertEqual({n: open(os.path.join(fresh, n)).read() for n in os.listdir(fresh)}, before)
        os.remove(os.path.join(fresh, "last.json"))
        with self.assertRaises(parking.ParkError):
            parking.unpark(self.dest, fresh)
        self.assertFalse(os.path.exists(os.path.join(fresh, "last.json")))
        # A damaged last.json.gz is named, not a traceback.
        with open(os.path.join(self.dest, "last.json.gz"), "wb") as f:
            f.write(b"garbage")
        with self.assertRaisesRegex(parking.ParkError, "last.json.gz is damaged"):
            parking.step_of(self.dest)
        # An older local state with a best.json, and a copy without one (stopped before
        # its first evaluation): the local best.json does not survive the unpark.
        make_run(self.run, 1, -1)
        parking.park(self.run, os.path.join(self.root, "t", "early"))
        make_run(fresh, 0, 0)
        parking.unpark(os.path.join(self.root, "t", "early"), fresh)
        self.assertFalse(os.path.exists(os.path.join(fresh, "best.json")))

    def test_discard_removes_the_copy_and_empty_parents(self):
        make_run(self.run, 4, 2)
        parking.park(self.run, self.dest)
        self.assertTrue(parking.discard(self.dest, self.root))
        self.assertFalse(os.path.exists(self.root))
        self.assertFalse(parking.discard(self.dest, self.root))  # already gone: no error


class Settings(unittest.TestCase):
    def test_every_committed_run_matches_its_tables_settings(self):
        """The check that refuses a parked copy trained with other settings accepts every
        run in results/ against its table (a value liegrad writes back resolved, such as
        train.clip "none" as 0, is not a difference)."""
        with open(reproduce.MANIFEST) as f:
            manifest = json.load(f)
        checked = 0
        for name, table in manifest.items():
            if name == "comment":
                continue
            runs = reproduce.expand(name, table)
            if not long_tables.is_long(table):  # a words table's rates chosen by its screen, as when it ran
                reproduce.resolve_words_set_from(manifest, name, runs)
            for run in runs:
                path = os.path.join(reproduce.RESULTS, name, run["id"], "result.json")
                if not os.path.exists(path):
                    continue
                with open(path) as f:
                    config = json.load(f)["config"]
                self.assertEqual(reproduce.config_differences(run, reproduce.command_sets(table, run), config,
                                                              ignore=("train.threads",)), [], run["id"])
                checked += 1
        self.assertGreater(checked, 100)


@unittest.skipUnless(shutil.which("git"), "git is not installed: --commit cannot be used here either")
class Commits(unittest.TestCase):
    """reproduce.git_commit_paths in a scratch repository: a failed commit is counted (the
    run's exit status becomes 1), committing files already as committed is not a failure."""
    def test_failures_are_counted_and_nothing_to_commit_is_not_one(self):
        with tempfile.TemporaryDirectory() as repo:
            env = dict(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                       GIT_COMMITTER_EMAIL="t@t")
            saved_env, saved_root = dict(os.environ), reproduce.ROOT
            os.environ.update(env)
            try:
                reproduce.ROOT = repo
                subprocess.run(["git", "init", "-q", repo], check=True)
                path = os.path.join(repo, "a.txt")
                with open(path, "w") as f:
                    f.write("a\n")
                del reproduce.GIT_FAILURES[:]
                reproduce.git_commit_paths([path], "add a")
                self.assertEqual(reproduce.GIT_FAILURES, [])
                reproduce.git_commit_paths([path], "a again, unchanged")
                self.assertEqual(reproduce.GIT_FAILURES, [])
                log = subprocess.run(["git", "-C", repo, "log", "--oneline"], capture_output=True, text=True)
                self.assertEqual(len(log.stdout.splitlines()), 1)
                reproduce.git_commit_paths([os.path.join(self.tmp_outside(), "b.txt")], "outside the repository")
                self.assertEqual(reproduce.GIT_FAILURES, ["outside the repository"])
            finally:
                os.environ.clear()
                os.environ.update(saved_env)
                reproduce.ROOT = saved_root
                del reproduce.GIT_FAILURES[:]

    def tmp_outside(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "b.txt"), "w") as f:
            f.write("b\n")
        return d


if __name__ == "__main__":
    unittest.main()
