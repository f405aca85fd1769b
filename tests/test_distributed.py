#!/usr/bin/env python3
"""Data-parallel training on MPI with 2 ranks (train/distributed.hpp, docs/distributed.md).

Run by CTest, one class per test (argument: the class name), with LIEGRAD_TOOL set to
the liegrad binary. Standard-library Python only. Every launch is bounded in time:
a rank that hangs fails the test instead of stalling CI. Exit code 77 (skipped) when
mpirun is missing or liegrad was built without MPI.

  Equivalence  2 ranks log the single process's losses over 50 steps, every model type
               and a group word task
  Resume       N -> M ranks (2 -> 1, 1 -> 2) continues the same run; a batch that no
               longer divides is refused with one line; the single-process tools
               (eval, sample) read a 2-rank run
  Faults       SIGTERM to mpirun: every rank stops, last.json at a step, resumable;
               a bad data file on one rank, and a non-finite loss: one line, no hang
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

TOOL = os.environ.get("LIEGRAD_TOOL", "")
MPIRUN = shutil.which("mpirun")
TIMEOUT = 120  # seconds for one launch; the runs here take a few seconds each
REL_TOL = 1e-5  # docs/distributed.md: the reduction order differs, so not bit-identical

# One small configuration per model type (about 1-3K parameters).
MODELS = {
    "osm_rnn": {"type": "osm_rnn", "group": "SO(4)"},
    "osmformer": {"type": "osmformer", "group": "SO(4)", "layers": 1, "heads": 2},
    "transformer": {"type": "transformer", "D": 16, "layers": 1, "heads": 2},
    "lstm": {"type": "lstm", "hidden": 16},
    "exprnn": {"type": "exprnn", "hidden": 16},
}


def small_corpus():
    """~6,000 characters of repetitive text (tests/train_test_utils.hpp's small_corpus)."""
    words = ["the cat sat", "on the mat", "a dog ran", "to the sea", "and back"]
    s, x = "", 12345
    while len(s) < 6000:
        x = (x * 1103515245 + 12345) % 2**32
        s += words[(x >> 16) % 5]
        s += ".\n" if (x >> 8) % 7 == 0 else ", "
    return s


def config(text, model, steps=50, batch=4):
    return {"model": model,
            "data": {"dataset": "text:" + text, "val_frac": 0.1, "test_frac": 0.1},
            "train": {"steps": steps, "batch": batch, "seq_len": 16, "lr": 1e-2, "warmup": 2,
                      "eval_interval": 20, "log_interval": 1, "threads": 1, "seed": 3}}


def mpi_prefix(ranks):
    extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return [MPIRUN, "-np", str(ranks), "--oversubscribe", *extra]


def run(args, ranks=0, timeout=TIMEOUT):
    """liegrad ARGS, alone (ranks=0) or under mpirun -np RANKS; returns CompletedProcess."""
    cmd = (mpi_prefix(ranks) if ranks else []) + [TOOL, *args]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def logged(out_dir, key):
    """{step: value} of the lines of OUT_DIR/metrics.jsonl that have KEY."""
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return {j["step"]: j[key] for j in lines if key in j}


def losses(out_dir):
    return logged(out_dir, "loss")


def error_lines(stderr):
    """liegrad's own lines in stderr (mpirun adds its report of the failed job)."""
    return [l for l in stderr.splitlines() if l.startswith("liegrad ")]


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="liegrad-mpi-")
        self.text = os.path.join(self.tmp, "text.txt")
        with open(self.text, "w") as f:
            f.write(small_corpus())

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write_config(self, name, cfg):
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def train(self, cfg_path, out, ranks=0, extra=()):
        p = run(["train", "--config", cfg_path, "--out", out, "--quiet", *extra], ranks)
        self.assertEqual(p.returncode, 0, f"{out}: {p.stderr}")
        return p

    def assert_same_losses(self, a, b, steps):
        la, lb = losses(a), losses(b)
        self.assertEqual(sorted(la), list(range(1, steps + 1)))
        self.assertEqual(sorted(lb), sorted(la))
        for s in la:
            rel = abs(la[s] - lb[s]) / abs(la[s])
            self.assertLessEqual(rel, REL_TOL, f"step {s}: {la[s]} vs {lb[s]}")


class Equivalence(Base):
    def test_two_ranks_log_the_single_process_losses(self):
        for name, model in MODELS.items():
            with self.subTest(model=name):
                cfg = self.write_config(name, config(self.text, model))
                one, two = os.path.join(self.tmp, name + "-1"), os.path.join(self.tmp, name + "-2")
                self.train(cfg, one)
                self.train(cfg, two, ranks=2)
                self.assert_same_losses(one, two, 50)
                # The same checkpoint format: rank 0 wrote every file, with the whole batch's lanes.
                for f in ("config.json", "best.json", "last.json", "result.json"):
                    self.assertTrue(os.path.exists(os.path.join(two, f)), f)
                with open(os.path.join(one, "last.json")) as f1, open(os.path.join(two, "last.json")) as f2:
                    s1, s2 = json.load(f1)["train_state"], json.load(f2)["train_state"]
                self.assertEqual([t["shape"] for t in s1], [t["shape"] for t in s2])


    def test_two_ranks_log_the_single_process_losses_on_a_group_word_task(self):
        cfg = {"model": MODELS["osm_rnn"],
               "data": {"dataset": "words:S3", "max_len": 8, "eval_lengths": [8], "val_sequences": 16,
                        "test_sequences": 8},
               "train": {"steps": 50, "batch": 8, "lr": 1e-2, "warmup": 2, "eval_interval": 20,
                         "log_interval": 1, "threads": 1, "seed": 3}}
        path = self.write_config("words", cfg)
        one, two = os.path.join(self.tmp, "w-1"), os.path.join(self.tmp, "w-2")
        self.train(path, one)
        self.train(path, two, ranks=2)
        self.assert_same_losses(one, two, 50)
        # The ranks' counts of correct positions are summed: the same training accuracy.
        self.assertEqual(len(logged(one, "acc")), 50)
        self.assertEqual(logged(one, "acc"), logged(two, "acc"))


class Resume(Base):
    def test_resume_across_rank_counts(self):
        model = MODELS["lstm"]  # carried state per lane: lanes move between ranks
        cfg = self.write_config("lstm", config(self.text, model, steps=40))
        full = os.path.join(self.tmp, "full")
        self.train(cfg, full)
        for first, second in ((2, 0), (0, 2)):
            with self.subTest(first=first, second=second):
                out = os.path.join(self.tmp, f"split-{first}-{second}")
                self.train(cfg, out, ranks=first, extra=["--stop-at", "20"])
                with open(os.path.join(out, "last.json")) as f:
                    self.assertEqual(json.load(f)["step"], 20)
                self.train(cfg, out, ranks=second, extra=["--resume"])
                self.assert_same_losses(full, out, 40)

    def test_resume_refuses_a_batch_that_does_not_divide(self):
        cfg = self.write_config("t", config(self.text, MODELS["transformer"], steps=10))
        out = os.path.join(self.tmp, "run")
        self.train(cfg, out, ranks=2, extra=["--stop-at", "5"])
        p = run(["train", "--out", out, "--resume", "--quiet"], ranks=3)
        self.assertNotEqual(p.returncode, 0)
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("--resume: train.batch: 4 does not divide among 3 ranks", lines[0])

    def test_single_process_tools_read_a_two_rank_run(self):
        cfg = self.write_config("o", config(self.text, MODELS["osm_rnn"], steps=10))
        out = os.path.join(self.tmp, "run")
        self.train(cfg, out, ranks=2)
        with open(os.path.join(out, "result.json")) as f:
            val = json.load(f)["val_bpc"]
        p = run(["eval", "--checkpoint", os.path.join(out, "last.json"), "--split", "val", "--json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertAlmostEqual(json.loads(p.stdout)["bpc"], val, places=5)
        p = run(["sample", "--checkpoint", os.path.join(out, "best.json"), "--length", "20", "--prompt", "the "])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(len(p.stdout), 20)


class Faults(Base):
    def test_sigterm_to_mpirun_stops_every_rank_and_writes_last_json(self):
        cfg = self.write_config("t", config(self.text, MODELS["lstm"], steps=1000000))
        out = os.path.join(self.tmp, "run")
        cmd = mpi_prefix(2) + [TOOL, "train", "--config", cfg, "--out", out, "--quiet"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"))
        try:
            metrics = os.path.join(out, "metrics.jsonl")
            deadline = time.monotonic() + TIMEOUT
            while not (os.path.exists(metrics) and len(losses(out)) >= 5):
                self.assertIsNone(p.poll(), "the run ended early")
                self.assertLess(time.monotonic(), deadline, "no training steps logged")
                time.sleep(0.2)
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertNotEqual(p.returncode, 0, err)
        with open(os.path.join(out, "last.json")) as f:
            step = json.load(f)["step"]
        self.assertGreaterEqual(step, 5)
        self.assertEqual(max(losses(out)), step)  # the checkpoint is at the last logged step
        # The interrupted run continues on one process.
        self.train(self.write_config("more", dict(config(self.text, MODELS["lstm"], steps=step + 3))), out,
                   extra=["--resume"])
        self.assertEqual(max(losses(out)), step + 3)

    def test_a_bad_data_file_on_one_rank_ends_the_job_with_one_line(self):
        good = self.write_config("good", config(self.text, MODELS["transformer"], steps=10))
        bad = self.write_config("bad", config(os.path.join(self.tmp, "absent.txt"), MODELS["transformer"], steps=10))
        # Rank 1 reads another configuration (as if its node had lost the data).
        self.assertIn("absent.txt", self.one_line_from_rank_1(good, bad))

    def test_a_non_finite_loss_ends_the_job_with_one_line(self):
        cfg = config(self.text, MODELS["transformer"], steps=50)
        cfg["train"].update({"lr": 1e30, "clip": 0, "warmup": 0})
        path = self.write_config("nan", cfg)
        p = run(["train", "--config", path, "--out", os.path.join(self.tmp, "run"), "--quiet"], ranks=2)
        self.assertNotEqual(p.returncode, 0)
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("non-finite", lines[0])

    def test_a_non_finite_loss_on_one_rank_is_reported_by_that_rank(self):
        # Rank 1 alone steps with an absurd learning rate (its configuration differs, as if
        # its node had a corrupted copy): after its first update only its weights are
        # huge, so only its own loss is non-finite at step 2, and the one line names it.
        good = config(self.text, MODELS["transformer"], steps=20)
        bad = json.loads(json.dumps(good))
        bad["train"].update({"lr": 1e30, "clip": 0, "warmup": 0})
        good["train"].update({"clip": 0, "warmup": 0})
        line = self.one_line_from_rank_1(self.write_config("good", good), self.write_config("bad", bad))
        self.assertIn("non-finite loss", line)

    def one_line_from_rank_1(self, good, bad):
        """Trains on 2 ranks, rank 1 with config `bad`; the job must fail with exactly one
        error line, from rank 1. Returns that line."""
        out = os.path.join(self.tmp, "run")
        script = f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then c={bad}; else c={good}; fi; ' \
                 f'exec {TOOL} train --config "$c" --out {out} --quiet'
        p = subprocess.run(mpi_prefix(2) + ["sh", "-c", script], capture_output=True, text=True, timeout=TIMEOUT)
        self.assertNotEqual(p.returncode, 0)
        lines = error_lines(p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("rank 1 of 2", lines[0])
        return lines[0]


if __name__ == "__main__":
    if not TOOL or not os.path.exists(TOOL):
        print("LIEGRAD_TOOL is not set to the liegrad binary", file=sys.stderr)
        sys.exit(2)
    if not MPIRUN:
        print("skipped: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
