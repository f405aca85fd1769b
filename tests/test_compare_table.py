#!/usr/bin/env python3
"""Tests of bench/compare_table.py on synthetic runs (no timing, no torch): the per-round
files folded into one compare.json that keeps every round verbatim and prints the same
tables, medians with the rounds' range for each side, osmformer-linear's trained / init
ratio from paired rounds, the STREAM bandwidth line, the roofline table from `liegrad
bench`'s roofline fields, and that runs without them (older JSON) leave that table out.
Registered with CTest (tests/CMakeLists.txt); standard library only."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "compare_table.py")

# Five rounds: liegrad init and trained tokens/s, PyTorch init tokens/s.
INIT = [1000, 800, 1200, 900, 1100]
TRAINED = [900, 800, 1080, 450, 1100]  # per-round trained / init: 0.9, 1.0, 0.9, 0.5, 1.0 -> median 0.90
TORCH = [100, 90, 110, 95, 105]


def roofline(of_bound):
    fam = {f: {"derived": True, "of_bound": of_bound} for f in
           ("exp_forward", "exp_pullback", "attention", "small_products", "tangent", "readout", "optimizer")}
    fam["dense"] = {"derived": True, "of_bound": None}
    fam["other"] = {"derived": False, "of_bound": None, "note": "not derived: test"}
    return {"peak_gflop_per_s": 100.0, "gemm_n": 1024, "stream_gb_per_s": 20.0, "stream_mib_per_array": 128,
            "families": fam,
            "step": {"bound_ns_per_token": 10.0, "measured_ns_per_token": 10.0 / of_bound, "of_bound": of_bound}}


def write_runs(out, rounds, with_roofline=True, torch_coretype=None, blas_threads=None, torch_threads=None):
    def put(name, side, r, obj):
        with open(os.path.join(out, "%s.%s.%d.json" % (name, side, r)), "w") as f:
            json.dump(obj, f)
    for r in range(1, rounds + 1):
        i = r - 1
        lie = {"model": "osmformer", "tokens_per_s": {"median": INIT[i]}, "tokens_per_cpu_s": INIT[i] / 2,
               "peak_rss_mib": 100, "time_share": {"exp_forward": 0.5, "other": 0.5}, "flops_per_token": 1e6,
               "gflop_per_s": 1.0}
        if with_roofline:
            lie["roofline"] = roofline([0.2, 0.3, 0.4, 0.5, 0.6][i])
        put("osmformer-linear", "liegrad", r, lie)
        put("osmformer-linear", "torch", r, {"model": "osmformer", "tokens_per_s": TORCH[i],
                                             "tokens_per_cpu_s": TORCH[i] / 2, "peak_rss_mib": 500,
                                             "openblas_coretype": torch_coretype,
                                             "blas_threads": blas_threads[i] if blas_threads else None,
                                             "torch_threads": torch_threads[i] if torch_threads else None})
        put("trained-osmformer-linear", "liegrad", r, dict(lie, tokens_per_s={"median": TRAINED[i]}))
        put("trained-osmformer-linear", "torch", r, {"model": "osmformer", "tokens_per_s": TORCH[i],
                                                     "openblas_coretype": torch_coretype,
                                                     "blas_threads": 1 if blas_threads else None})
        put("gemm", "liegrad", r, {"op": "gemm", "liegrad_gflop_per_s": {"median": 100.0},
                                   "openblas_core": "Haswell"})
        put("stream", "liegrad", r, {"op": "stream", "triad_gb_per_s": {"median": 18.0 + r}})
        put("cores", "liegrad", r, {"op": "cores", "slowest_over_fastest": [0.7, 0.95, 1.0, 0.8, 0.9][i]})


def fold(out, rounds, folded):
    """Folds OUT's per-round files into FOLDED (compare.json); returns the printed tables."""
    return subprocess.run([sys.executable, SCRIPT, "fold", out, "--out", folded, "--threads", "2", "--steps", "10",
                           "--warmup", "2", "--rounds", str(rounds), "--load-start", "0 0 0", "--load-end", "0 0 0",
                           "--trained", "osmformer-linear", os.path.join(ROOT, "configs", "osmformer-linear.json")],
                          check=True, capture_output=True, text=True).stdout


def table(out, rounds):
    folded = os.path.join(out, "compare.json")
    printed = fold(out, rounds, folded)
    again = subprocess.run([sys.executable, SCRIPT, folded], check=True, capture_output=True, text=True).stdout
    assert printed == again, "the folded run prints other tables than the per-round files"
    return printed


class CompareTable(unittest.TestCase):
    def test_medians_ranges_paired_ratio_and_roofline(self):
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 5)
            text = table(out, 5)
            # Each side's median over rounds with the rounds' range.
            self.assertIn("| osmformer-linear | osmformer | 1,000 (800–1,200) | 100 (90–110) |", text)
            # Trained / init from the rounds' pairs: median 0.9 of 0.9, 1.0, 0.9, 0.5, 1.0, to three
            # decimals (a target of 0.9 must not hide 0.897).
            self.assertIn("osmformer-linear, liegrad trained ÷ init over 5 paired round(s): 0.900 (0.500–1.000)", text)
            self.assertIn("STREAM triad", text)
            self.assertIn("21.0 (19.0–23.0) GB/s", text)
            # Each round's slowest CPU over its fastest: median 0.90 of 0.7 ... 1.0.
            self.assertIn("1 is equal CPUs): 0.90 (0.70–1.00).", text)
            self.assertNotIn("Fewer than five rounds", text)
            # Roofline: fractions are medians over rounds (0.2 ... 0.6 -> 0.40); dense (no work) is a dash.
            roof = [line for line in text.splitlines() if line.startswith("| osmformer-linear |") and "0.40" in line]
            self.assertEqual(len(roof), 1, text)
            self.assertIn("| 0.40 | 10.0 | 25.0 | 0.40 | 100.0 | 20.0 |", roof[0])
            header = [line for line in text.splitlines() if "step of bound" in line][0]
            self.assertNotIn("| dense |", header)
            self.assertNotIn("| other |", header)

    def test_fold_keeps_every_round_verbatim(self):
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 5)
            with open(os.path.join(out, "broken.torch.9.json"), "w") as f:
                f.write("{not json")  # a run that failed half-way is left out, as before
            folded = os.path.join(out, "compare.json")
            fold(out, 5, folded)
            with open(folded) as f:
                run = json.load(f)
            self.assertEqual(run["format"], "liegrad-compare-1")
            self.assertEqual((run["threads"], run["steps"], run["warmup"], run["rounds"]), (2, 10, 2, 5))
            self.assertEqual(run["configs"], ["osmformer-linear"])
            self.assertEqual(run["trained"], ["osmformer-linear"])
            self.assertFalse(run["default_set"])
            self.assertNotIn("broken", run["runs"])
            for r in range(1, 6):
                with open(os.path.join(out, "osmformer-linear.liegrad.%d.json" % r)) as f:
                    self.assertEqual(run["runs"]["osmformer-linear"]["liegrad"][str(r)], json.load(f))
            self.assertEqual(sorted(run["runs"]["stream"]["liegrad"], key=int), ["1", "2", "3", "4", "5"])

    def test_a_file_that_is_not_a_folded_run_is_refused(self):
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "other.json")
            with open(path, "w") as f:
                json.dump({"runs": {}}, f)
            done = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("not a folded compare.sh run", done.stderr)

    def test_few_rounds_and_runs_without_a_roofline(self):
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 3, with_roofline=False)
            text = table(out, 3)
            self.assertIn("Fewer than five rounds", text)
            self.assertNotIn("step of bound", text)
            self.assertIn("over 3 paired round(s)", text)

    def test_kernels_warning_only_when_the_sides_differ(self):
        # OPENBLAS_CORETYPE as the environment spells it ("Haswell") against the core
        # OpenBLAS reports ("Haswell"; compare.sh exports it upper-cased): the same kernels.
        for torch_core, warned in (("Haswell", False), ("HASWELL", False), ("SKYLAKEX", True), (None, True)):
            with tempfile.TemporaryDirectory() as out:
                write_runs(out, 5, torch_coretype=torch_core)
                text = table(out, 5)
                self.assertEqual("may not run the same OpenBLAS kernels" in text, warned, (torch_core, text))

    def test_pytorch_blas_threads_per_row(self):
        # The thread counts torch_reference.py's probe chose, per row; none in older JSON.
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 5, blas_threads=[1, 2, 1, 1, 1])
            text = table(out, 5)
            self.assertIn("keeps the faster; its element-wise ops run on torch's own threads): "
                          "osmformer-linear 1 or 2; trained-osmformer-linear 1.", text)
            self.assertNotIn("PyTorch's own threads", text)  # JSON from before the torch-thread probe
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 5)
            self.assertNotIn("PyTorch's OpenBLAS threads", table(out, 5))
        with tempfile.TemporaryDirectory() as out:
            write_runs(out, 5, blas_threads=[1] * 5, torch_threads=[2, 1, 1, 1, 1])
            self.assertIn("PyTorch's own threads for its element-wise ops (probed the same way, after the OpenBLAS "
                          "probe): osmformer-linear 1 or 2.", table(out, 5))


if __name__ == "__main__":
    unittest.main()
