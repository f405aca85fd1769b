#!/usr/bin/env python3
"""Tests of the generation and growth tables around docs/performance.md, on synthetic
results (no timing, no torch, no liegrad): bench/sampling.py's medians over rounds and its
ratios (cost per symbol at the longest length over the shortest, sampling over training,
liegrad over PyTorch); bench/performance_page.py picks the newest sample-*/growth-* table
by the date its JSON records, and says how to run a table that has never been run.
Registered with CTest (tests/CMakeLists.txt); standard library only."""
import json
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
import performance_page  # noqa: E402
import sampling  # noqa: E402


def round_of(liegrad, torch, training):
    """One round of one config "x": symbols/s at n = 5 and 20 on each side, training tokens/s."""
    return {"liegrad": {"x": {"symbols_per_s": {"5": liegrad[0], "20": liegrad[1]}, "model": "osm_rnn",
                              "parameters": 1000, "context": 128, "peak_rss_mib": 10}},
            "torch": {"x": {"symbols_per_s": {"5": torch[0], "20": torch[1]}}},
            "training": {"x": {"tokens_per_s": training}}}


class SideTables(unittest.TestCase):
    def test_sampling_medians_and_ratios(self):
        rounds = [round_of((100, 80), (10, 9), 400), round_of((300, 100), (30, 8), 1000),
                  round_of((200, 90), (20, 10), 500)]
        s = sampling.summarize(["x"], rounds, [5, 20])[0]
        self.assertEqual(s["symbols_per_s"], {"5": 200, "20": 90})
        self.assertEqual(s["torch_symbols_per_s"], {"5": 20, "20": 9})
        self.assertAlmostEqual(s["cost_growth"], 200 / 90)
        self.assertAlmostEqual(s["over_training"], 90 / 500)
        self.assertAlmostEqual(s["over_torch"], 10.0)
        md = sampling.table([s], [5, 20], types.SimpleNamespace(threads=2, repeats=1), rounds)
        self.assertIn("| x | osm_rnn | 1000 | 128 | 200 | 90 | 2.22 | 500 | 0.180 | 20 | 9 | 10.0x |", md)

    def test_a_side_without_results_leaves_dashes(self):
        rounds = [{"liegrad": {"x": None}, "torch": {}, "training": {}}]
        s = sampling.summarize(["x"], rounds, [5, 20])[0]
        self.assertNotIn("over_torch", s)
        md = sampling.table([s], [5, 20], types.SimpleNamespace(threads=2, repeats=1), rounds)
        self.assertIn("| x | — |", md)

    def test_the_page_shows_the_newest_table_or_how_to_run_it(self):
        with tempfile.TemporaryDirectory() as results:
            tables = performance_page.side_tables(results)
            self.assertIn("not run yet", tables["sampling_table"])
            self.assertIn("bench/sampling.py", tables["sampling_table"])
            self.assertIn("bench/growth.py", tables["growth_table"])
            # the newer date wins, whatever the folders' names
            for folder, date, text in (("sample-z", "2026-01-01 10:00 UTC", "older"),
                                       ("sample-a", "2026-02-01 10:00 UTC", "newer")):
                os.makedirs(os.path.join(results, folder))
                with open(os.path.join(results, folder, "sample.json"), "w") as f:
                    json.dump({"date": date}, f)
                with open(os.path.join(results, folder, "sample.md"), "w") as f:
                    f.write("| %s |\n" % text)
            tables = performance_page.side_tables(results)
            self.assertEqual(tables["sampling_table"], "| newer |")
            self.assertIn("not run yet", tables["growth_table"])


if __name__ == "__main__":
    unittest.main()
