#!/usr/bin/env python3
"""Tests of scripts/rotations_table.py and scripts/rotation_tracking_doc.py on hand-made
result.json files (no training): a screen's best rate is chosen by validation angle and
its seed-1 run joins the extra seeds' row, means and standard deviations are over
seeds, the floor rows come from the runs' own floors, the random guess is the Haar mean
angle, and the page states the target's verdict from the numbers.
Registered with CTest (tests/CMakeLists.txt); standard library only."""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import reproduce  # noqa: E402
import rotations_table  # noqa: E402

NAME = "rotation_tracking"  # the page reads this table's summary
TABLE = {
    "title": "t", "kind": "rotations", "seeds": [1, 2, 3], "budget": {},
    "runs": [
        {"name": "osm", "row": "osm", "config": "configs/state_tracking/rotations-osm-rnn-so3.json"},
        {"name": "lstm-screen", "row": "lstm", "config": "configs/state_tracking/rotations-lstm.json",
         "grid": {"train.lr": [0.001, 0.01]}, "seeds": [1]},
        {"name": "lstm-seeds", "row": "lstm", "config": "configs/state_tracking/rotations-lstm.json", "seeds": [2, 3],
         "set_from": {"train.lr": {"table": NAME, "run": "lstm-screen"}}},
    ]}
LENGTHS = [64, 4096]


def write_result(results, run, mean, val, model="osm_rnn", floor=0.0):
    d = os.path.join(results, NAME, run["id"])
    os.makedirs(d, exist_ok=True)
    config = {"model": {"type": model}, "data": {"noise": 0.0, "max_len": 64},
              "train": {"lr": run["sets"].get("train.lr", 0.01), "seed": run["seed"]}}
    result = {"val": {"mean_deg": val}, "best_val_angle_deg": val, "parameters": 9, "steps": 10, "wall_seconds": 2.0,
              "config": config,
              "test": [{"length": L, "mean_deg": mean * L, "p95_deg": 2 * mean * L, "floor_mean_deg": floor,
                        "floor_p95_deg": floor} for L in LENGTHS]}
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)


class RotationsTable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = self.tmp.name
        reproduce.RESULTS = self.results
        self.manifest = {NAME: TABLE}

    def tearDown(self):
        self.tmp.cleanup()

    def runs(self):
        runs = reproduce.expand(NAME, TABLE)
        waiting = reproduce.resolve_words_set_from(self.manifest, NAME, runs)
        return runs, waiting

    def summarize(self):
        runs, _ = self.runs()
        rotations_table.summarize(self.results, NAME, TABLE, runs)
        with open(os.path.join(self.results, NAME + ".json")) as f:
            return {r["model"]: r for r in json.load(f)["rows"]}

    def test_the_best_screened_rate_gets_the_seeds_and_its_seed_one_run(self):
        runs, waiting = self.runs()
        self.assertEqual(sorted(waiting), ["lstm-seeds-s2", "lstm-seeds-s3"])
        for seed, run in enumerate((r for r in runs if r["name"] == "osm"), 1):
            write_result(self.results, run, 1e-5 * seed, 1e-5)
        screen = {r["sets"]["train.lr"]: r for r in runs if r["name"] == "lstm-screen"}
        write_result(self.results, screen[0.001], 0.5, val=3.0, model="lstm")
        write_result(self.results, screen[0.01], 0.1, val=2.0, model="lstm")  # lower validation angle
        runs, waiting = self.runs()
        self.assertEqual(waiting, {})
        self.assertEqual({r["sets"]["train.lr"] for r in runs if r["name"] == "lstm-seeds"}, {0.01})
        for run in (r for r in runs if r["name"] == "lstm-seeds"):
            write_result(self.results, run, 0.1 * run["seed"], val=2.0, model="lstm")
        rows = self.summarize()
        chosen = rows["lstm lr=0.01"]
        self.assertTrue(chosen["chosen"])
        self.assertEqual(chosen["seeds"], [1, 2, 3])
        self.assertAlmostEqual(chosen["mean_deg"]["64"][0], 64 * 0.2)  # seeds at 0.1, 0.2, 0.3 degrees per step
        self.assertFalse(rows["lstm lr=0.001"]["chosen"])
        osm = rows["osm"]
        self.assertAlmostEqual(osm["mean_deg"]["4096"][0], 4096 * 2e-5)
        self.assertAlmostEqual(osm["mean_deg"]["4096"][1], 4096 * 1e-5)
        with open(os.path.join(self.results, NAME + ".md")) as f:
            md = f.read()
        self.assertIn("| floor: exact integration in double, noise 0 rad |", md)
        self.assertIn("| lstm | 0.01 | 2 |", md)  # the screen lists seed 1 of each rate
        self.assertTrue(os.path.exists(os.path.join(self.results, NAME + ".svg")))

    def test_the_random_guess_is_the_haar_mean_angle(self):
        # Numerical mean of t under the density (1 - cos t) / pi on [0, pi].
        n = 100000
        h = math.pi / n
        mean = sum((i + 0.5) * h * (1 - math.cos((i + 0.5) * h)) / math.pi * h for i in range(n))
        self.assertAlmostEqual(rotations_table.RANDOM_GUESS_DEG, math.degrees(mean), places=4)

    def test_the_page_states_the_target_from_the_numbers(self):
        runs, _ = self.runs()
        for run in (r for r in runs if r["name"] == "osm"):
            write_result(self.results, run, 2e-4, 1e-5)  # 0.82 degrees at 4096
        self.summarize()
        out = os.path.join(self.results, "page.md")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "rotation_tracking_doc.py"), "--results",
                        self.results, "--out", out], check=True, capture_output=True)
        with open(out) as f:
            page = f.read()
        self.assertIn("mean angle error at 4096 is 0.819 degrees over 3 seed(s), below the target of 1 degree", page)
        self.assertIn("![angle error against length](rotation_tracking.svg)", page)  # the page sits beside the plot
        for run in (r for r in runs if r["name"] == "osm"):
            write_result(self.results, run, 3e-4, 1e-5)  # 1.23 degrees at 4096
        self.summarize()
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "rotation_tracking_doc.py"), "--results",
                        self.results, "--out", out], check=True, capture_output=True)
        with open(out) as f:
            self.assertIn("1.23 degrees over 3 seed(s), not below the target", f.read())


if __name__ == "__main__":
    unittest.main()
