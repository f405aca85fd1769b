#!/usr/bin/env python3
"""Tests of the 2,000-step tables' reporting on synthetic results (no training): the
summary of a table whose rows diverged in some or every seed (scripts/reproduce.py
summarize), the claims of docs/results.md when a side diverged or a sweep is unfinished
(scripts/results_doc.py), and --summarize-only refusing --set. Registered with CTest
(tests/CMakeLists.txt); standard library only."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import reproduce  # noqa: E402
import results_doc  # noqa: E402

TABLE = {"title": "t", "budget": {"train.steps": 10, "train.batch": 2, "train.seq_len": 4}, "seeds": [1, 2, 3],
         "runs": [{"name": "osmformer-linear", "config": "configs/osmformer-linear.json", "set": {}},
                  {"name": "transformer", "config": "configs/transformer.json", "set": {}}]}


def write_result(root, run_id, val, test, diverged=False):
    """A result.json and metrics.jsonl as liegrad train (or record_divergence) leaves them."""
    d = os.path.join(root, "t", run_id)
    os.makedirs(d, exist_ok=True)
    result = {"parameters": 100, "config": {"train": {"lr": 0.01}}, "steps": 10, "tokens_seen": 80,
              "tokens_per_second": 1000.0, "wall_seconds": 1.0, "val_bpc": val, "test_bpc": test}
    if diverged:
        result.update(diverged=True, val_bpc=None, test_bpc=None, tokens_seen=None, tokens_per_second=None)
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)
    with open(os.path.join(d, "metrics.jsonl"), "w") as f:
        f.write(json.dumps({"step": 5, "loss": 1.0, "grad_norm": float("nan") if diverged else 0.5}) + "\n")
        f.write('{"step": 10, "loss": 1.0, "grad_n')  # cut short by a stopped run


class Summary(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.saved = reproduce.RESULTS
        reproduce.RESULTS = self.tmp.name

    def tearDown(self):
        reproduce.RESULTS = self.saved
        self.tmp.cleanup()

    def test_rows_that_diverged_in_some_or_every_seed(self):
        for seed in (1, 2, 3):  # the OSMFormer loses seed 3; the transformer every seed
            write_result(self.tmp.name, "osmformer-linear-s%d" % seed, 2.0 + seed / 100, 2.1 + seed / 100,
                         diverged=seed == 3)
            write_result(self.tmp.name, "transformer-s%d" % seed, None, None, diverged=True)
        reproduce.summarize("t", TABLE, reproduce.expand("t", TABLE))
        with open(os.path.join(self.tmp.name, "t.json")) as f:
            rows = {r["model"]: r for r in json.load(f)["rows"]}
        self.assertEqual((rows["osmformer-linear"]["n"], rows["osmformer-linear"]["diverged"]), (2, 1))
        self.assertAlmostEqual(rows["osmformer-linear"]["test_bpc_mean"], 2.115)
        self.assertEqual(rows["osmformer-linear"]["steps"], 10)
        # The NaN norm of a diverged seed and the line cut short are skipped, not propagated.
        self.assertEqual(rows["osmformer-linear"]["max_grad_norm"], 0.5)
        self.assertNotIn("steps", rows["transformer"])
        with open(os.path.join(self.tmp.name, "t.md")) as f:
            md = f.read()
        self.assertIn("| 2.115 ± 0.007 (+1 diverged) |", md)
        self.assertIn("| transformer | 100 | 0.01 | diverged | diverged |", md)


class Claims(unittest.TestCase):
    def row(self, run, n, val, test, diverged=0, std=0.01, lr=0.01):
        return {"run": run, "model": run, "n": n, "diverged": diverged, "lr": lr, "parameters": 100,
                "val_bpc_mean": val if n else None, "val_bpc_std": std if n else None,
                "test_bpc_mean": test if n else None, "test_bpc_std": std if n else None}

    def test_a_side_that_diverged_in_every_seed_is_named_not_pending(self):
        ts = {"rows": [self.row("osmformer-linear", 3, 2.3, 2.5, diverged=0),
                       self.row("transformer", 0, None, None, diverged=3)]}
        ptb = {"rows": [self.row("osmformer-linear", 2, 1.9, 1.9, diverged=1), self.row("transformer", 3, 1.8, 1.8)]}
        verdict, ev = results_doc.claim_osmformer_vs_transformer({"ts100k": ts, "ptb100k": ptb})
        self.assertEqual(ev[0], "Tiny Shakespeare: transformer diverged in every seed; no comparison.")
        self.assertIn("OSMFormer test 1.900 ± 0.010 (+1 diverged) against transformer 1.800 ± 0.010", ev[1])
        self.assertEqual(verdict, "does not hold")
        # A side not run yet is pending, as before.
        self.assertEqual(results_doc.absent("Tiny Shakespeare", {"rows": [ts["rows"][0]]},
                                            ("osmformer-linear", "transformer")), "Tiny Shakespeare: pending.")

    def test_robustness_counts_name_unfinished_and_diverged_settings(self):
        rows = ([dict(self.row("o-%d" % i, 1, 2.0 + i / 10, 2.0), model="osmformer-linear") for i in range(3)]
                + [dict(self.row("o-pending", 0, None, None), model="osmformer-linear")]
                + [dict(self.row("t-%d" % i, 1, 2.0 + i / 100, 2.0), model="transformer") for i in range(3)]
                + [dict(self.row("t-div", 0, None, None, diverged=1), model="transformer")])
        verdict, ev = results_doc.claim_wider_range({"robustness": {"rows": rows}})
        self.assertEqual(verdict, "does not hold")
        self.assertIn("1 of 3 finished settings", ev[0])
        self.assertIn("3 of 4 finished settings", ev[1])
        self.assertIn("the 3 settings that did not diverge (1 diverged) average 0.010 BPC above the best", ev[1])
        # The OSMFormer's fourth setting is still running: the counts are not final.
        self.assertEqual(ev[2], "Settings not yet finished: OSMFormer 1; pending.")


class Options(unittest.TestCase):
    def test_summarize_only_refuses_set(self):
        with tempfile.TemporaryDirectory() as tmp:  # so that a regression cannot rewrite results/
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "reproduce.py"), "--summarize-only",
                                "--results-dir", tmp, "--runs-dir", tmp, "--set", "train.steps=40", "ts100k"],
                               capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--summarize-only trains none", p.stderr)


if __name__ == "__main__":
    unittest.main()
