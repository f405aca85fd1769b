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
import fidelity_doc  # noqa: E402
import convergence_doc  # noqa: E402

TABLE = {"title": "t", "budget": {"train.steps": 10, "train.batch": 2, "train.seq_len": 4}, "seeds": [1, 2, 3],
         "runs": [{"name": "osmformer-linear", "config": "configs/osmformer-linear.json", "set": {}},
                  {"name": "transformer", "config": "configs/transformer.json", "set": {}}]}


def write_result(root, run_id, val, test, diverged=False, lr=0.01):
    """A result.json and metrics.jsonl as liegrad train (or record_divergence) leaves them."""
    d = os.path.join(root, "t", run_id)
    os.makedirs(d, exist_ok=True)
    result = {"parameters": 100, "config": {"train": {"lr": lr}}, "steps": 10, "tokens_seen": 80,
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

    def test_a_sweep_counts_settings_that_trained_identically_once(self):
        """The OSMFormer's clip 1 and clip none runs are the same training when its gradient
        norm (0.5 here) never reaches 1: the same results up to the last float digits."""
        grid = dict(TABLE, seeds=[1], plot="heatmap", grid={"train.lr": [0.001, 0.01], "train.clip": [1.0, "none"]})
        runs = reproduce.expand("t", grid)
        for run in runs:
            lr, clip = run["point"]["train.lr"], run["point"]["train.clip"]
            val = 2.0 + (0.1 if lr == 0.001 else 0.0)
            if run["name"] == "osmformer-linear":
                val += 1e-7 if clip == "none" else 0.0  # float order of the clip code path
            else:
                val += 0.02 if clip == "none" else 0.0  # the transformer's clip acts: different results
            write_result(self.tmp.name, run["id"], val, val + 0.1, lr=lr)
        reproduce.summarize("t", grid, runs)
        with open(os.path.join(self.tmp.name, "t.md")) as f:
            md = f.read()
        self.assertIn("osmformer-linear: best validation BPC 2.000; 1 of 2 distinct settings within 0.05 BPC of it. "
                      "Of its 4 settings, clip 1 and clip none gave identical results at lr 0.001 and 0.01 "
                      "(validation and test BPC within 1e-05: its gradient norm, at most 0.5, never reached clip 1, so "
                      "that clip never acted): each such group is one setting, counted once.", md)
        self.assertIn("transformer: best validation BPC 2.000; 2 of 4 distinct settings within 0.05 BPC of it.\n", md)
        with open(os.path.join(self.tmp.name, "t.json")) as f:
            summary = json.load(f)
        # Claim 5 counts the same way: the OSMFormer's 4 settings are 2.
        verdict, ev = results_doc.claim_wider_range({"robustness": summary})
        self.assertEqual(verdict, "does not hold")
        self.assertIn("OSMFormer: best validation BPC 2.000; 1 of 2 distinct finished settings", ev[0])
        self.assertIn("Of its 4 settings, clip 1 and clip none gave identical results at lr 0.001 and 0.01", ev[0])
        self.assertIn("Transformer: best validation BPC 2.000; 2 of 4 distinct finished settings", ev[1])
        self.assertNotIn("identical", ev[1])
        self.assertEqual(len(ev), 2)  # every setting finished: nothing pending


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
        self.assertIn("OSMFormer test 1.900 ± 0.010 seed s.d. (+1 diverged) against transformer 1.800 ± 0.010 seed "
                      "s.d., difference +0.100 ± 0.009 SE of the difference (Welch df 2.27, t_0.975 = 3.84", ev[1])
        self.assertEqual(verdict, "does not hold (its difference is beyond noise)")
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
        self.assertIn("1 of 3 distinct finished settings", ev[0])
        self.assertIn("3 of 4 distinct finished settings", ev[1])
        self.assertIn("the 3 settings that did not diverge (1 diverged) average 0.010 BPC above the best", ev[1])
        # The OSMFormer's fourth setting is still running: the counts are not final.
        self.assertEqual(ev[2], "Settings not yet finished: OSMFormer 1; pending.")

    def test_a_difference_within_t_times_its_standard_error_is_a_tie(self):
        """3 seeds against 3, s.d. 0.02 each: SE 0.0163, Welch df 4, t_0.975 = 2.776, bound
        0.045; a difference of 0.040 (beyond twice the SE, 0.033) is a tie, named as such."""
        def table(o_test, t_test, identity_test=3.0):
            return {"rows": [self.row("osmformer-linear", 3, 2.0, o_test, std=0.02),
                             self.row("transformer", 3, 2.0, t_test, std=0.02),
                             self.row("osmformer-identity", 3, 2.0, identity_test, std=0.02)]}
        tie, loses, wins = table(2.54, 2.50), table(2.60, 2.50), table(2.40, 2.50)
        verdict, ev = results_doc.claim_osmformer_vs_transformer({"ts100k": tie, "ptb100k": loses})
        self.assertEqual(verdict, "does not hold on Penn Treebank, tie on Tiny Shakespeare")
        self.assertIn("difference +0.040 ± 0.016 SE of the difference (Welch df 4, t_0.975 = 2.78: within noise, "
                      "|difference| ≤ t·SE = 0.045, a tie)", ev[0])
        verdict, _ = results_doc.claim_osmformer_vs_transformer({"ts100k": tie, "ptb100k": wins})
        self.assertEqual(verdict, "holds on Penn Treebank, tie on Tiny Shakespeare")
        verdict, _ = results_doc.claim_osmformer_vs_transformer({"ts100k": loses, "ptb100k": loses})
        self.assertEqual(verdict, "does not hold (both differences beyond noise)")
        # Claim 4: linear mixing against identity; a comparison within noise is a tie.
        rec = {"rows": [self.row("osm-rnn-linear", 3, 2.0, 2.54, std=0.02),
                        self.row("osm-rnn-identity", 3, 2.0, 2.50, std=0.02)]}
        verdict, _ = results_doc.claim_linear_vs_identity({"ts100k": wins, "ptb100k": table(2.6, 2.5, 2.4),
                                                           "recurrent": rec})
        self.assertEqual(verdict, "mixed: holds for the OSMFormer on Tiny Shakespeare, does not hold for the OSMFormer "
                                  "on Penn Treebank, tie for the OSM-RNN on Tiny Shakespeare")
        # Claim 3, one comparison.
        verdict, _ = results_doc.claim_rnn_vs_lstm({"recurrent": {"rows": [
            self.row("osm-rnn-linear", 3, 2.0, 2.54, std=0.02), self.row("lstm", 3, 2.0, 2.50, std=0.02)]}})
        self.assertEqual(verdict, "tie (its difference is within noise)")

    def test_claim_4_again_with_the_identity_models_best_reading(self):
        """Claim 4 keeps its verdict from the first reading and adds one for the identity
        model's token-grounding rows (identity_readings) against the same linear rows."""
        def table(o_test, identity_test):
            return {"rows": [self.row("osmformer-linear", 3, 2.0, o_test, std=0.02),
                             self.row("osmformer-identity", 3, 3.5, identity_test, std=0.02)]}
        rec = {"rows": [self.row("osm-rnn-linear", 3, 2.0, 2.5, std=0.02),
                        self.row("osm-rnn-identity", 3, 2.0, 2.6, std=0.02)]}
        ident = {"rows": [self.row("ts-identity-token", 3, 3.1, 2.54, std=0.02),
                          self.row("ptb-identity-token", 3, 2.9, 2.9, std=0.02)]}
        tables = {"ts100k": table(2.5, 3.6), "ptb100k": table(2.0, 3.4), "recurrent": rec, "identity_readings": ident}
        verdict, ev = results_doc.claim_linear_vs_identity(tables)
        self.assertEqual(verdict, "holds (all 3 differences beyond noise)")
        again = [e for e in ev if e.startswith("Again for the OSMFormer")]
        self.assertEqual(len(again), 1)
        self.assertIn("holds on Penn Treebank, tie on Tiny Shakespeare.", again[0])
        self.assertIn("Tiny Shakespeare: linear 2.500 ± 0.020 seed s.d. against identity with token grounding 2.540", again[0])
        # Without the table the claim reads as before.
        del tables["identity_readings"]
        self.assertFalse([e for e in results_doc.claim_linear_vs_identity(tables)[1] if e.startswith("Again")])

    def test_a_parked_reading_run_is_compared_at_equal_steps(self):
        import json
        import tempfile

        def metrics(path, vals):
            os.makedirs(path)
            with open(os.path.join(path, "metrics.jsonl"), "w") as f:
                for step, v in vals:
                    f.write(json.dumps({"step": step, "bpc": 9.9}) + "\n")  # a training line: ignored
                    f.write(json.dumps({"step": step, "val_bpc": v}) + "\n")

        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(convergence_doc.reading_progress(d, "ts_reading_long", "ts100k_long", "TS"), [])
            metrics(os.path.join(d, "ts100k_long", "osmformer-linear-s1"), [(2500, 2.5), (5000, 2.4), (7500, 2.3)])
            metrics(os.path.join(d, "ts100k_long", "osmformer-linear-s2"), [(2500, 2.7), (5000, 2.6), (7500, 2.5)])
            metrics(os.path.join(d, "ts100k_long", "transformer-s1"), [(2500, 0.0)])  # not the reading's base
            metrics(os.path.join(d, "parked", "ts_reading_long", "osmformer-91k-combined-s1"),
                    [(2500, 2.65), (4000, 2.55), (5500, 2.45)])
            lines = convergence_doc.reading_progress(d, "ts_reading_long", "ts100k_long", "TS")
            self.assertEqual(len(lines), 1)
            self.assertIn("TS, in progress: osmformer-91k-combined-s1 is parked, last evaluated at step 5,500", lines[0])
            self.assertIn("mean of its 2 seeds", lines[0])
            # Steps both sides evaluated: 2,500 (a multiple of 2,500) and the last common one, 2,500 too.
            self.assertIn("2,500: 2.650 against 2.600 (+0.050).", lines[0])
            self.assertNotIn("4,000", lines[0])
            base = {"rows": [{"model": "transformer", "family": "transformer", "n": 3, "lr": 0.01, "dropout": 0,
                              "best_step": [100] * 3, "best_val_bpc_mean": 2.2, "best_val_bpc_std": 0.01,
                              "test_bpc_at_best_mean": 2.5, "test_bpc_at_best_std": 0.01, "seeds": [1, 2, 3]}],
                    "chosen": {"transformer": "transformer"}}
            v, ev = convergence_doc.claim_osmformer_reading({"ts100k_long": base, "ptb100k_long": base}, d)
            self.assertEqual(v, "in progress (no seed has finished; the runs so far below)")
            self.assertIn(lines[0].replace("TS,", "Tiny Shakespeare,"), ev)

    def test_claim_1_again_with_the_best_reading_waits_for_three_seeds(self):
        def long_row(model, family, n, val, test):
            return {"model": model, "family": family, "n": n, "lr": 0.01, "dropout": 0, "best_step": [100] * n,
                    "best_val_bpc_mean": val, "best_val_bpc_std": 0.01, "test_bpc_at_best_mean": test,
                    "test_bpc_at_best_std": 0.01, "parameters": 79878, "seeds": list(range(1, n + 1))}
        base = {"rows": [long_row("transformer", "transformer", 3, 2.244, 2.548)], "chosen": {"transformer": "transformer"}}
        reading = lambda n: {"rows": [long_row("osmformer-91k-combined", "osmformer", n, 2.30, 2.60)]}
        tables = {"ts100k_long": base, "ptb100k_long": base, "ts_reading_long": reading(1), "ptb_reading_long": reading(3)}
        nowhere = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-such-results")
        v, ev = convergence_doc.claim_osmformer_reading(tables, nowhere)
        self.assertTrue(v.startswith("pending"))
        self.assertIn("Provisional: seeds still pending.", ev[0])
        tables["ts_reading_long"] = reading(3)
        v, ev = convergence_doc.claim_osmformer_reading(tables, nowhere)
        self.assertEqual(v, "does not hold (both differences beyond noise)")
        self.assertIn("Target: best validation 2.300, +0.046 against the paper's 2.254 and +0.056 against our "
                      "transformer's 2.244.", ev[0])

    def test_one_seed_sizes_within_the_borrowed_noise_are_ties(self):
        """Claim 2 has one seed per size; its noise is a one-seed difference's s.d. from the
        ~100K table's seeds: sqrt(0.02² + 0.02²) = 0.0283, df 4, bound 2.776 × 0.0283 = 0.0785."""
        ts = {"rows": [self.row("osmformer-linear", 3, 2.0, 2.5, std=0.02), self.row("transformer", 3, 2.0, 2.5,
                                                                                      std=0.02)]}
        scaling = {"rows": [self.row(m + "-" + size, 1, 2.0, test, std=0.0)
                            for size, o, t in (("100k", 2.6, 2.5), ("200k", 2.45, 2.5), ("300k", 2.4, 2.5),
                                               ("500k", 2.3, 2.35))
                            for m, test in (("osmformer-linear", o), ("transformer", t))]}
        verdict, ev = results_doc.claim_every_budget({"ts100k": ts, "scaling": scaling})
        self.assertEqual(verdict, "mixed: holds at ~300K, does not hold at ~100K, tie at ~200K and ~500K")
        self.assertIn("(Welch–Satterthwaite df 4, t_0.975 = 2.78); a difference within t_0.975 × 0.028 = 0.079 "
                      "is not resolved by one seed: a tie (2 of 4 beyond it: ~100K, +0.100, ~300K, -0.100).", ev[-1])


class FidelitySection(unittest.TestCase):
    """scripts/fidelity_doc.py on a synthetic screen: rows ranked on validation, Δ against
    the same layout's relative row, the bigram comparison, the ≤ 91K best and the two
    readings that advance."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.saved = fidelity_doc.RESULTS
        fidelity_doc.RESULTS = self.tmp.name

    def tearDown(self):
        fidelity_doc.RESULTS = self.saved
        self.tmp.cleanup()

    def test_ranking_and_verdict_lines(self):
        def r(run, val, params):
            return {"run": run, "n": 1, "val_bpc_mean": val, "test_bpc_mean": val + 0.1, "parameters": params}
        rows = [r("ts-identity-relative", 3.56, 15678), r("ts-identity-token", 3.10, 15678),
                r("ts-linear-relative", 2.49, 102078), r("ts-linear-combined", 2.40, 102078),
                r("ts-91k-combined", 2.45, 90919), r("ts-91k-relative", 2.60, 90919),
                r("ts-transformer", 2.30, 108481), r("ts-transformer-tied", 2.32, 104256)]
        with open(os.path.join(self.tmp.name, "osmformer_fidelity.json"), "w") as f:
            json.dump({"rows": rows, "pending": ["ptb-identity-relative-s1"]}, f)
        with open(os.path.join(self.tmp.name, "ngram_baselines.json"), "w") as f:
            json.dump({"tinyshakespeare": {"bigram": {"val_bpc": 3.568}, "trigram": {"val_bpc": 2.884}}}, f)
        text = "\n".join(fidelity_doc.section())
        table = [l for l in text.splitlines() if l.startswith("| ") and "BPC" not in l and "---" not in l]
        self.assertEqual([l.split(" | ")[0] for l in table][:3], ["| -", "| -", "| combined"])  # ranked on validation
        self.assertIn("| combined | linear, ~100K | 102,078 | 2.400 | 2.500 | -0.090 |", text)
        self.assertIn("token 3.100 (-0.468 against the bigram)", text)
        self.assertIn("**Best at ≤ 91K parameters**: combined", text)
        self.assertIn("validation 2.450, +0.196 against the paper's 2.254; +0.150 against the transformer, "
                      "untied head (2.300)", text)
        self.assertIn("**Best overall** (linear mixing, any size): combined (linear, ~100K, 2.400).", text)
        self.assertIn("1 run(s) of the screen are still pending", text)


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
