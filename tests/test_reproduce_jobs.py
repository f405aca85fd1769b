#!/usr/bin/env python3
"""Tests of `scripts/reproduce.py --emit-jobs FILE` and `--collect` (sweeps as
scheduler job arrays): one self-contained shell line per missing run, a line that trains
its run when run on its own, a collect step that copies finished runs and writes the table
without training anything, and emitted lines that shrink as runs finish. And of `--park`:
an unfinished run parked in results/parked/ resumes on a machine without runs/ to the
same result as a run never interrupted. Trains 2-4-step LSTM runs of the state_tracking
table (under a second each) with the tool in $LIEGRAD_TOOL. Registered with CTest
(tests/CMakeLists.txt); standard library only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "reproduce.py")
TOOL = os.environ.get("LIEGRAD_TOOL", os.path.join(ROOT, "build", "liegrad"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import parking  # noqa: E402


class Sandbox(unittest.TestCase):
    """results/ and runs/ in a temporary directory; the state_tracking table's words:Z2
    seed-1 runs only."""
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")
        self.runs = os.path.join(self.tmp.name, "runs")

    def tearDown(self):
        self.tmp.cleanup()

    def reproduce(self, *args, steps=3, only="words-Z2-s1"):
        return subprocess.run([sys.executable, SCRIPT, "--binary", TOOL, "--results-dir", self.results,
                               "--runs-dir", self.runs, "--set", "train.steps=%d" % steps, "--only", only]
                              + list(args) + ["state_tracking"], capture_output=True, text=True)

    def emit(self, steps=3):
        path = os.path.join(self.tmp.name, "jobs.txt")
        done = self.reproduce("--emit-jobs", path, steps=steps)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(path) as f:
            return f.read().splitlines()


class DryRun(Sandbox):
    def test_a_dry_run_prints_the_commands_and_writes_nothing(self):
        done = self.reproduce("--dry-run")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("lstm-dataset=words-Z2-s1", done.stdout)
        self.assertIn("liegrad train", done.stdout.replace(TOOL, "liegrad"))
        self.assertFalse(os.path.exists(self.runs))
        self.assertFalse(os.path.exists(self.results))  # no table, no page


class EmitAndCollect(Sandbox):
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


class Park(Sandbox):
    RUN = "lstm-dataset=words-Z2-s1"
    # Evaluation at one length on a few sequences: the sanitizer build trains these runs
    # about 16 times slower, and the test is about the run's state, not its scores.
    # An evaluation every 2 steps, so that a run stopped at step 2 has a best.json to park.
    SMALL_EVAL = ("--set", "data.eval_lengths=[64]", "--set", "data.val_sequences=16",
                  "--set", "data.test_sequences=16", "--set", "train.eval_interval=2")

    def result(self):
        with open(os.path.join(self.results, "state_tracking", self.RUN, "result.json")) as f:
            r = json.load(f)
        return {k: v for k, v in r.items() if "second" not in k and "elapsed" not in k}

    def stopped_at(self, step, steps):
        """Trains the run with `steps` steps and stops it after `step` (liegrad --stop-at,
        what SIGTERM leaves: last.json and best.json there, no result.json)."""
        path = os.path.join(self.tmp.name, "jobs.txt")
        done = self.reproduce(*self.SMALL_EVAL, "--emit-jobs", path, steps=steps, only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(path) as f:
            line = f.read().splitlines()
        self.assertEqual(len(line), 1)
        self.assertIn(" $([ -f ", line[0])
        subprocess.run(["bash", "-c", line[0].replace(" $([ -f ", " --stop-at %d $([ -f " % step, 1)],
                       cwd=self.tmp.name, check=True)
        run_dir = os.path.join(self.runs, "state_tracking", self.RUN)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "result.json")))
        return run_dir

    def local_state_beside_the_parked_copy(self, step):
        """Replaces runs/ with the run stopped at `step`, as another machine's state that met
        the parked copy through git; made with the copy out of reach (emitting the job would
        otherwise unpark it)."""
        shutil.rmtree(self.runs)
        aside = os.path.join(self.tmp.name, "aside")
        os.rename(os.path.join(self.results, "parked"), aside)
        self.stopped_at(step, steps=4)
        os.rename(aside, os.path.join(self.results, "parked"))

    def park(self):
        done = self.reproduce("--park", only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout

    def test_parked_run_resumes_on_a_fresh_machine_to_the_uninterrupted_result(self):
        # The uninterrupted run: 4 steps.
        done = self.reproduce(*self.SMALL_EVAL, steps=4, only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stderr)
        straight = self.result()
        shutil.rmtree(self.results)
        shutil.rmtree(self.runs)
        # The same run stopped after step 2, parked.
        run_dir = self.stopped_at(2, steps=4)
        self.assertIn("parked at step 2", self.park())
        parked = os.path.join(self.results, "parked", "state_tracking", self.RUN)
        self.assertEqual(sorted(os.listdir(parked)), ["best.json.gz", "config.json", "last.json.gz", "metrics.jsonl"])
        # A fresh machine: no runs/. The run resumes at step 2 and ends where the straight one did.
        shutil.rmtree(self.runs)
        done = self.reproduce(*self.SMALL_EVAL, steps=4, only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("unparking", done.stdout)
        with open(run_dir + ".log") as f:
            self.assertIn("resuming at step 2", f.read())
        self.assertEqual(self.result(), straight)
        self.assertFalse(os.path.exists(os.path.join(self.results, "parked")))  # served, deleted
        # A finished run is not parked.
        done = self.reproduce("--park", only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("no unfinished run to park", done.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.results, "parked")))

    def test_a_parked_copy_ahead_of_runs_wins_and_is_never_rolled_back(self):
        run_dir = self.stopped_at(3, steps=4)
        self.park()
        self.local_state_beside_the_parked_copy(1)  # older than the parked copy
        done = self.reproduce("--park", only=self.RUN)
        self.assertEqual(done.returncode, 1)
        self.assertIn("ahead of", done.stdout)
        parked = os.path.join(self.results, "parked", "state_tracking", self.RUN)
        self.assertEqual(parking.step_of(parked), 3)
        # Training resumes from the parked copy, not from runs/.
        done = self.reproduce(*self.SMALL_EVAL, steps=4, only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("the parked copy (step 3) is ahead of", done.stdout)
        with open(run_dir + ".log") as f:
            self.assertIn("resuming at step 3", f.read())

    def test_a_parked_copy_trained_with_other_settings_is_refused(self):
        self.stopped_at(2, steps=4)
        self.park()
        shutil.rmtree(self.runs)
        done = self.reproduce(*self.SMALL_EVAL, steps=6, only=self.RUN)  # the table's budget changed
        self.assertEqual(done.returncode, 1)
        self.assertIn("was trained with train.steps=4, but the run now asks for train.steps=6", done.stdout)
        parked = os.path.join(self.results, "parked", "state_tracking", self.RUN)
        self.assertIn("start the run over with `rm -r %s`" % parked, done.stdout)  # not in git: rm, not git rm
        self.assertFalse(os.path.exists(os.path.join(self.runs, "state_tracking", self.RUN, "last.json")))
        # Unparked by the old settings, then asked for new ones: the state in runs/ is refused
        # too (liegrad itself would let train.steps change on resume).
        done = self.reproduce(*self.SMALL_EVAL, "--emit-jobs", os.path.join(self.tmp.name, "j"), steps=4,
                              only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        shutil.rmtree(parked)
        done = self.reproduce(*self.SMALL_EVAL, steps=6, only=self.RUN)
        self.assertEqual(done.returncode, 1)
        self.assertIn("was trained with train.steps=4, but the run now asks for train.steps=6", done.stdout)
        self.assertIn("rm -r %s" % os.path.join(self.runs, "state_tracking", self.RUN), done.stdout)

    def test_a_local_state_ahead_of_the_parked_copy_is_resumed(self):
        run_dir = self.stopped_at(1, steps=4)
        self.park()
        self.local_state_beside_the_parked_copy(3)  # newer than the parked copy
        done = self.reproduce(*self.SMALL_EVAL, steps=4, only=self.RUN)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertNotIn("unparking", done.stdout)
        with open(run_dir + ".log") as f:
            self.assertIn("resuming at step 3", f.read())
        self.assertFalse(os.path.exists(os.path.join(self.results, "parked")))  # served all the same

    def test_a_failed_commit_makes_the_exit_status_1(self):
        # results/ outside the repository: every commit fails, the results are still written.
        done = self.reproduce(*self.SMALL_EVAL, "--commit", steps=2, only=self.RUN)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("git commit failed", done.stdout)
        self.assertIn("git commit(s) failed", done.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.results, "state_tracking", self.RUN, "result.json")))

    def test_park_refuses_other_modes(self):
        done = self.reproduce("--park", "--collect")
        self.assertEqual(done.returncode, 2)
        self.assertIn("give it alone", done.stderr)
        self.assertFalse(os.path.exists(self.runs))

class Claims(Sandbox):
    """Two invocations sharing a table: a run claimed by a live process is skipped, a claim
    whose process is gone is taken over."""
    run_id = "lstm-dataset=words-Z2-s1"

    def claim_path(self):
        return os.path.join(self.runs, "state_tracking", self.run_id + ".claim")

    def write_claim(self, pid):
        os.makedirs(os.path.dirname(self.claim_path()), exist_ok=True)
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        start = stat[stat.rindex(")") + 2:].split()[19]
        with open(self.claim_path(), "w") as f:
            f.write("%d %s\n" % (pid, start))

    def test_a_run_claimed_by_a_live_process_is_skipped(self):
        holder = subprocess.Popen(["sleep", "60"])
        try:
            self.write_claim(holder.pid)
            done = self.reproduce(only=self.run_id)
        finally:
            holder.kill()
            holder.wait()
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("being trained by another invocation", done.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.runs, "state_tracking", self.run_id, "result.json")))
        self.assertFalse(os.path.exists(os.path.join(self.results, "state_tracking", self.run_id)))
        self.assertTrue(os.path.exists(self.claim_path()))  # left to its holder

    def test_a_claim_whose_process_is_gone_is_taken_over_and_released(self):
        gone = subprocess.Popen(["true"])
        os.makedirs(os.path.dirname(self.claim_path()), exist_ok=True)
        gone.wait()
        with open(self.claim_path(), "w") as f:  # start time 1: no live process, even if the pid is reused
            f.write("%d 1\n" % gone.pid)
        done = self.reproduce(only=self.run_id)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("being trained by another invocation", done.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.results, "state_tracking", self.run_id, "result.json")))
        self.assertFalse(os.path.exists(self.claim_path()))  # released after training


class Reuse(unittest.TestCase):
    """A run identical to a finished run of another table is found, also where both take
    their learning rate from a screen ("set_from"): the groups table's A6 row at SO(5) is
    the smallest-size table's row of the same name, trained once (committed results)."""
    def test_a_row_whose_rate_comes_from_a_screen_is_found_in_the_other_table(self):
        import reproduce
        with open(os.path.join(ROOT, "configs", "paper", "tables.json")) as f:
            manifest = json.load(f)
        name = "state_tracking_groups"
        runs = [r for r in reproduce.expand(name, manifest[name])
                if r["id"] == "osm-rnn-element-so5-alphabet6k-warm-dataset=words-A6-s1"]
        self.assertEqual(len(runs), 1)
        self.assertEqual(reproduce.resolve_words_set_from(manifest, name, runs), {})
        self.assertIn("train.lr", runs[0]["sets"])  # resolved from the screen, as when it trains
        source = reproduce.find_identical(manifest, name, manifest[name], runs[0])
        self.assertIsNotNone(source)
        self.assertEqual(source[:2], ("state_tracking_smallest", runs[0]["id"]))
        runs[0]["sets"]["train.lr"] *= 2  # another rate is another run
        self.assertIsNone(reproduce.find_identical(manifest, name, manifest[name], runs[0]))


if __name__ == "__main__":
    unittest.main()
