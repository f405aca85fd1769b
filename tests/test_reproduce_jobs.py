#!/usr/bin/env python3
"""Tests of `scripts/reproduce.py --emit-jobs FILE` and `--collect` (issue 15, sweeps as
scheduler job arrays): one self-contained shell line per missing run, a line that trains
its run when run on its own, a collect step that copies finished runs and writes the table
without training anything, and emitted lines that shrink as runs finish. Trains one
3-step LSTM run of the state_tracking table (under a second) with the tool in
$LIEGRAD_TOOL. Registered with CTest (tests/CMakeLists.txt); standard library only."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "reproduce.py")
TOOL = os.environ.get("LIEGRAD_TOOL", os.path.join(ROOT, "build", "liegrad"))


class EmitAndCollect(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")
        self.runs = os.path.join(self.tmp.name, "runs")

    def tearDown(self):
        self.tmp.cleanup()

    def reproduce(self, *args):
        return subprocess.run([sys.executable, SCRIPT, "--binary", TOOL, "--results-dir", self.results,
                               "--runs-dir", self.runs, "--set", "train.steps=3", "--only", "words-Z2-s1"]
                              + list(args) + ["state_tracking"], capture_output=True, text=True)

    def emit(self):
        path = os.path.join(self.tmp.name, "jobs.txt")
        done = self.reproduce("--emit-jobs", path)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(path) as f:
            return f.read().splitlines()

    def test_emit_run_one_collect_emit_again(self):
        lines = self.emit()
        self.assertEqual(len(lines), 9)  # the table's nine models on words:Z2, seed 1
        self.assertFalse(os.path.exists(self.runs))  # emitting trains nothing
        self.assertTrue(all("train.steps=3" in l and self.runs in l for l in lines))
        lstm = [l for l in lines if "lstm-dataset=words-Z2-s1" in l]
        self.assertEqual(len(lstm), 1)
        # The line alone (as a Slurm array task would run it, from another directory).
        subprocess.run(["bash", "-c", lstm[0]], cwd=self.tmp.name, check=True)
        run_dir = os.path.join(self.runs, "state_tracking", "lstm-dataset=words-Z2-s1")
        self.assertTrue(os.path.exists(os.path.join(run_dir, "result.json")))
        with open(run_dir + ".log") as f:
            log = f.read()
        done = self.reproduce("--collect")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.results, "state_tracking", "lstm-dataset=words-Z2-s1",
                                                    "result.json")))
        self.assertTrue(os.path.exists(os.path.join(self.results, "state_tracking.md")))
        # Collecting trained nothing: no other run started, the finished one's log is as it was.
        self.assertEqual(sorted(os.listdir(os.path.join(self.runs, "state_tracking"))),
                         ["lstm-dataset=words-Z2-s1", "lstm-dataset=words-Z2-s1.log"])
        with open(run_dir + ".log") as f:
            self.assertEqual(f.read(), log)
        again = self.emit()
        self.assertEqual(len(again), 8)
        self.assertFalse(any("lstm-dataset" in l for l in again))

    def test_emit_and_collect_are_exclusive(self):
        done = self.reproduce("--collect", "--emit-jobs", os.path.join(self.tmp.name, "x"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("two steps", done.stderr)


if __name__ == "__main__":
    unittest.main()
