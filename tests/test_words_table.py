#!/usr/bin/env python3
"""Tests of scripts/words_table.py on hand-made result.json files (no training): a group's
columns are every length some row was tested at, and a row tested at fewer lengths (a
transformer stops at its limit beside a recurrent model's longer words) shows "—" there
and is drawn only at its own lengths, where the summary used to fail on the missing key.
Registered with CTest (tests/CMakeLists.txt); standard library only."""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import reproduce  # noqa: E402
import words_table  # noqa: E402

NAME = "words_lengths"
TABLE = {"title": "t", "kind": "words", "seeds": [1], "budget": {}, "grid": {"data.dataset": ["words:A5"]},
         "runs": [{"name": "lstm", "config": "configs/state_tracking/lstm-h128.json"},
                  {"name": "transformer", "config": "configs/state_tracking/transformer-alibi-d128.json"}]}


def write_result(results, run, lengths, acc):
    d = os.path.join(results, NAME, run["id"])
    os.makedirs(d, exist_ok=True)
    config = {"model": {"type": run["name"]}, "data": {"max_len": 64, "dataset": "words:A5"},
              "train": {"lr": 0.001, "seed": run["seed"]}}
    test = [{"length": L, "position_acc": acc, "final_acc": acc, "sequence_acc": acc, "loss": 1.0} for L in lengths]
    result = {"val": {"position_acc": acc}, "parameters": 100, "classes": 60, "steps": 10, "wall_seconds": 2.0,
              "steps_to_99": None, "tokens_per_second": 1000.0, "config": config, "test": test}
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)


class WordsTable(unittest.TestCase):
    def test_rows_tested_at_fewer_lengths_show_a_dash_there(self):
        with tempfile.TemporaryDirectory() as results:
            reproduce.RESULTS = results
            runs = reproduce.expand(NAME, TABLE)
            by_name = {r["name"]: r for r in runs}
            write_result(results, by_name["transformer"], [64, 4096], 0.25)  # the first row read has fewer
            write_result(results, by_name["lstm"], [64, 4096, 65536], 0.5)
            words_table.summarize(results, NAME, TABLE, runs)
            with open(os.path.join(results, NAME + ".md")) as f:
                md = f.read()
            self.assertIn("| model | params | acc@64 | acc@4096 | acc@65536 | last@65536 |", md)
            self.assertIn("| lstm | 100 | 0.500 | 0.500 | 0.500 | 0.500 |", md)
            self.assertIn("| transformer | 100 | 0.250 | 0.250 | — | — |", md)
            with open(os.path.join(results, NAME + "-A5.svg")) as f:
                self.assertIn("<svg", f.read())

    def test_runs_left_out_on_purpose_are_listed_with_the_reason_not_as_pending(self):
        table = json.loads(json.dumps(TABLE))
        table["seeds"] = [1, 2, 3]
        table["runs"][0]["not_run"] = {"ids": ["lstm-dataset=words-A5-s2", "lstm-dataset=words-A5-s3"],
                                       "why": "seed 1 already fails"}
        table["runs"][1]["not_run"] = {"ids": ["transformer-dataset=words-A5-s%d" % k for k in (1, 2, 3)],
                                       "why": "replaced"}
        self.assertEqual([r["id"] for r in reproduce.expand(NAME, table)], ["lstm-dataset=words-A5-s1"])
        every = reproduce.expand(NAME, table, include_not_run=True)
        self.assertEqual(len(every), 6)
        self.assertEqual(sum(1 for r in every if r.get("not_run") == "seed 1 already fails"), 2)
        with tempfile.TemporaryDirectory() as results:
            write_result(results, every[0], [64], 0.5)
            words_table.summarize(results, NAME, table, every)
            with open(os.path.join(results, NAME + ".md")) as f:
                md = f.read()
            with open(os.path.join(results, NAME + ".json")) as f:
                summary = json.load(f)
        self.assertIn("| lstm | 100 | 0.500 | 0.500 | not reached (0/1) | 1 (+2 not run) |", md)
        self.assertIn("| transformer | — | not run | — | — | not run |", md)
        self.assertIn("Not run, on purpose: lstm-dataset=words-A5-s2, lstm-dataset=words-A5-s3. "
                      "Why (configs/paper/tables.json): seed 1 already fails", md)
        self.assertNotIn("Pending runs", md)
        self.assertEqual(summary["pending"], [])
        # A name the row does not have is refused, naming the table, the row and the id.
        table["runs"][0]["not_run"]["ids"].append("lstm-dataset=words-A5-s9")
        with self.assertRaisesRegex(ValueError, "words_lengths row lstm: not_run names lstm-dataset=words-A5-s9"):
            reproduce.expand(NAME, table)


if __name__ == "__main__":
    unittest.main()
