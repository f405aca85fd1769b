#!/usr/bin/env python3
"""Tests of scripts/state_tracking_doc.py's rules on synthetic summary rows (no
training): each family's row is chosen without the length-1024 accuracy it is judged on,
a verdict waits for pending seeds, "learned next to nothing" is measured from the
first-position score, and differences print with twice their standard error.
Registered with CTest (tests/CMakeLists.txt); standard library only."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import state_tracking_doc as doc  # noqa: E402

LENGTHS = [64, 1024]


def row(model, val, acc64, acc1024, sd=0.01, n=3, params=100, pending=()):
    return {"model": model, "group": "S3", "n": n, "diverged": 0, "pending": list(pending), "parameters": params,
            "classes": 6, "max_len": 64, "lengths": LENGTHS, "val_acc": [val, 0.0],
            "position_acc": {"64": [acc64, sd], "1024": [acc1024, sd]}, "final_acc": {"1024": [acc1024, sd]}}


def claim_line(rows):
    lines = doc.outcome({"groups": ["S3"], "rows": rows})
    return next(line for line in lines if "Claim" in line)


def write_seed_results(results_dir, table, accs):
    """For {(model, group): [accuracy at 1,024 per seed]}: each seed's result.json under
    results_dir/table, and the summary rows those runs make."""
    rows = []
    for (model, g), vals in accs.items():
        for seed, v in enumerate(vals, 1):
            run = os.path.join(results_dir, table, "%s-dataset=words-%s-s%d" % (model, g, seed))
            os.makedirs(run)
            with open(os.path.join(run, "result.json"), "w") as f:
                json.dump({"test": [{"length": 1024, "position_acc": v}]}, f)
        rows.append({"model": model, "group": g, "n": len(vals), "pending": [], "diverged": 0})
    return rows


class StateTrackingDoc(unittest.TestCase):
    def test_rows_are_chosen_on_validation_not_on_the_judged_length(self):
        rows = [row("osm-rnn-token-so5", 0.99, 0.99, 0.90, sd=0.3),   # best at 1024, worse on validation
                row("osm-rnn-token-so14", 1.00, 1.00, 0.50),
                row("transformer-alibi", 0.20, 0.20, 0.17), row("lstm", 1.0, 1.0, 1.0)]
        line = claim_line(rows)
        self.assertIn("osm-rnn-token-so14 0.500 against transformer-alibi 0.170", line)
        self.assertIn("**holds**", line)
        # Ties on validation and at 64 go to fewer parameters.
        rows[0].update(val_acc=[1.0, 0.0], position_acc={"64": [1.0, 0.3], "1024": [0.9, 0.3]}, parameters=50)
        self.assertIn("osm-rnn-token-so5 0.900", claim_line(rows))

    def test_a_verdict_waits_for_pending_seeds(self):
        rows = [row("osm-rnn-token-so14", 1.0, 1.0, 0.5, n=2, pending=["osm-rnn-token-so14-s3"]),
                row("transformer-alibi", 0.2, 0.2, 0.17), row("lstm", 1.0, 1.0, 1.0)]
        self.assertIn("**pending (osm-rnn-token-so14: seeds pending or diverged)**", claim_line(rows))

    def test_differences_print_with_twice_their_standard_error_and_no_negative_zero(self):
        a, b = row("a", 1, 1, 0.0090, sd=0.0003), row("b", 1, 1, 0.00904, sd=0.0003)
        verdict, d, text = doc.compare(a, b, 1024)
        self.assertEqual(text, "0.000 (2 standard errors: 0.0005)")
        self.assertTrue(verdict.startswith("not resolved"))
        verdict, d, text = doc.compare(row("a", 1, 1, 0.476, sd=0.061), row("b", 1, 1, 0.169, sd=0.0003), 1024)
        self.assertEqual((verdict, text), ("higher", "+0.307 (2 standard errors: 0.070)"))

    def test_learned_next_to_nothing_is_measured_from_the_first_position_score(self):
        floor = doc.first_position_score(6, 64)
        self.assertAlmostEqual(floor, (1 + 63 / 6) / 64)
        rows = [row("osmformer-so5", 0.2, floor + 0.05, 0.17), row("exprnn", 0.3, floor + 0.09, 0.17),
                row("lstm", 1.0, 1.0, 1.0)]
        line = next(l for l in doc.outcome({"groups": ["S3"], "rows": rows}) if "first position" in l)
        self.assertIn("These rows learned next to nothing beyond it: osmformer-so5 (rule", line)


class RelativeDriveGradients(unittest.TestCase):
    def test_explosions_are_read_from_the_logs(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for run, norms in (("osm-rnn-relative-so14-dataset=words-Z2-s1", [0.5, 150.0, 3e4, 20.0]),
                               ("osm-rnn-relative-so14-dataset=words-Z2-s2", [0.5, 0.7, 0.9, 0.4]),
                               ("lstm-dataset=words-Z2-s1", [1e9, 1e9, 1e9, 1e9])):
                os.makedirs(os.path.join(d, doc.TABLE, run))
                with open(os.path.join(d, doc.TABLE, run, "metrics.jsonl"), "w") as f:
                    for i, g in enumerate(norms):
                        f.write(json.dumps({"step": 10 * (i + 1), "grad_norm": g}) + "\n")
                        f.write(json.dumps({"step": 10 * (i + 1), "val_loss": 0.7 - 0.01 * (i == 1)}) + "\n")
            runs = doc.relative_drive_gradients(d)
            self.assertEqual([r["run"][-2:] for r in runs], ["s1", "s2"])  # relative-drive runs only
            self.assertEqual((runs[0]["max_norm"], runs[0]["max_step"], runs[0]["first_above_100"]), (3e4, 30, 20))
            self.assertIsNone(runs[1]["first_above_100"])
            self.assertEqual(runs[0]["best_val_step"], 20)
            text = "\n".join(doc.gradient_section(runs))
            self.assertIn("1 of 2 runs pass a norm of 100, from step 20 to 20", text)
            self.assertIn("in 2 of 2 runs the final validation loss is above the best", text)
            self.assertEqual(doc.gradient_section([]), [])
            self.assertIsNone(runs[0]["final_acc"])  # no val_acc logged

    def test_bounded_mixing_section_says_whether_it_learns(self):
        stable = {"run": "osm-rnn-relative-bounded-so14-lr=0.003-s1", "max_norm": 0.37, "max_step": 3100,
                  "first_above_100": None, "best_val_step": 20000, "best_val": 4.749, "final_val": 4.749,
                  "final_acc": 0.024}
        text = "\n".join(doc.bounded_section([stable]))
        self.assertIn("| osm-rnn-relative-bounded-so14-lr=0.003-s1 | 0.37 (3100) | 4.749 (20000) | 0.024 |", text)
        self.assertIn("the largest norm in 1 run is 0.37", text)
        self.assertIn("no best validation loss is below 0.9 of chance", text)
        exploding = dict(stable, max_norm=3e4, first_above_100=200)
        self.assertIn("1 of 1 runs still pass a norm of 100 (largest 3e+04)", "\n".join(doc.bounded_section([exploding])))
        self.assertIn("learns nothing measurable", text)
        learned = dict(stable, best_val=0.2)
        self.assertIn("1 of 2 runs learn", "\n".join(doc.bounded_section([stable, learned])))
        self.assertEqual(doc.bounded_section([]), [])


class LongTableSections(unittest.TestCase):
    def test_lengths_of_16x_and_more_are_ranked(self):
        r = row("osm-rnn-token-so14", 1.0, 1.0, 0.9)
        r.update(lengths=[64, 1024, 4096], position_acc={"64": [1.0, 0], "1024": [0.9, 0], "4096": [0.4, 0]})
        lines = doc.outcome({"groups": ["S3"], "rows": [r]})
        self.assertTrue(any("At length 1024 (16× the longest training word of length 64)" in l for l in lines))
        self.assertTrue(any("At length 4096 (64×" in l and "0.400" in l for l in lines))

    def test_a_row_trained_on_longer_words_is_named_and_kept_out_of_the_claims(self):
        base = row("osm-rnn-token-so14", 1.0, 1.0, 0.5)
        long_row = dict(row("osm-rnn-token-so14-len128", 1.0, 1.0, 1.0), max_len=128)
        tf = row("transformer-alibi", 0.2, 0.2, 0.17)
        lines = doc.outcome({"groups": ["S3"], "rows": [base, long_row, tf]})
        self.assertTrue(any("osm-rnn-token-so14-len128 (trained on ≤ 128) 1.000" in l for l in lines))
        claim = next(l for l in lines if "Claim" in l)
        self.assertIn("osm-rnn-token-so14 0.500 against", claim)  # not the len128 row, despite its 1.000

    def test_anchors_stand_beside_our_s5_rows_best_first(self):
        a = dict(row("lstm", 1, 1, 0.2), group="S5")
        b = dict(row("osm-rnn-token-so14-len128", 1, 1, 0.99, n=1), group="S5", max_len=128)
        text = "\n".join(doc.anchor_lines({"rows": [a, b, dict(row("x", 1, 1, 1), group="S3")]}))
        self.assertIn("| DeltaProduct, 4 Householder factors (Siems et al. 2025) | 128 |", text)
        self.assertIn("| liegrad osm-rnn-token-so14-len128 (1 seed) | 128 | 1.000 at 64, 0.990 at 1024 |", text)
        self.assertLess(text.index("len128"), text.index("liegrad lstm"))
        self.assertNotIn("liegrad x", text)  # S5 rows only
        self.assertEqual(doc.anchor_lines({"rows": [row("x", 1, 1, 1)]}), [])

    def test_the_screen_marks_the_rate_the_long_table_took(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            screen = {"rows": []}
            for lr, loss in ((0.001, 4.8), (0.003, 0.39)):
                r = dict(row("lstm lr=%g" % lr, 1, 1, 0.5, n=1), lr=lr, seeds=[1])
                screen["rows"].append(r)
                os.makedirs(os.path.join(d, doc.SCREEN, "lstm-lr=%g-s1" % lr))
                with open(os.path.join(d, doc.SCREEN, "lstm-lr=%g-s1" % lr, "result.json"), "w") as f:
                    json.dump({"best_val_loss": loss}, f)
            screen["rows"].append(dict(row("lstm lr=0.01", 1, 1, 0.5, n=0), lr=0.01))
            screen["rows"].append(dict(row("lstm lr=0.03", 1, 1, 0.5, n=0), lr=0.03, diverged=1))
            long_summary = {"rows": [dict(row("lstm dataset=words:S5", 1, 1, 1), lr=0.003)]}
            lines = doc.screen_lines(d, screen, long_summary)
            self.assertIn("| lstm | 0.003 | 0.3900 | 1.000 | 0.500 | yes |", lines)
            self.assertIn("| lstm | 0.001 | 4.8000 | 1.000 | 0.500 |  |", lines)
            self.assertIn("| lstm | 0.01 | pending | | | |", lines)
            self.assertIn("| lstm | 0.03 | diverged | | | |", lines)
            self.assertIn("2 of 4 screen runs finished", "\n".join(lines))
            self.assertEqual(doc.screen_lines(d, None, None), [])

    def test_the_diagnosis_names_what_stops_each_row(self):
        import json
        import tempfile

        def write(d, run_id, accs, diag):
            os.makedirs(os.path.join(d, doc.SCREEN, run_id))
            test = [{"length": L, "position_acc": a} for L, a in zip((64, 4096), accs)]
            with open(os.path.join(d, doc.SCREEN, run_id, "result.json"), "w") as f:
                json.dump({"test": test, "diagnosis": diag}, f)

        def drift(short, long_):
            return [{"length": 64, "on_exact_subspace": short}, {"length": 4096, "on_exact_subspace": long_}]

        with tempfile.TemporaryDirectory() as d:
            base = {"state_independent": True, "rest_rms_defect": 1.39}
            write(d, "held-s1", (1.0, 1.0), dict(base, exact_dims=6, exact_rms_defect=0.004, drift=drift(0.08, 0.4)))
            write(d, "held-s2", (1.0, 0.99), dict(base, exact_dims=6, exact_rms_defect=0.006, drift=drift(0.1, 0.6)))
            write(d, "nothing-s1", (0.02, 0.01), dict(base, exact_dims=0, exact_rms_defect=0.0, drift=drift(-1, -1)))
            write(d, "relative-s1", (0.02, 0.01), {"state_independent": False, "drift": []})
            os.makedirs(os.path.join(d, doc.SCREEN, "lstm-s1"))  # no diagnosis: not a row here
            with open(os.path.join(d, doc.SCREEN, "lstm-s1", "result.json"), "w") as f:
                json.dump({"test": [], "diagnosis": None}, f)
            lines = doc.diagnosis_lines(d, doc.SCREEN, "### heading")
            text = "\n".join(lines)
            # Means over the two seeds: defect 0.005, distances 0.09 / 0.5, accuracy 1.0 / 0.995.
            self.assertIn("| held | 2 | 6 | 0.0050 | 1.390 | 0.090 / 0.500 | 1.000 / 0.995 | 0.32 | holds: exact on 6 "
                          "directions, the state within 0.50 of its prototype on U |", lines)
            self.assertIn("| nothing | 1 | 0 | — | 1.390 | — | 0.020 / 0.010 | — | does not fit: the transitions hold "
                          "no representation of G (no exact subspace) |", lines)
            self.assertIn("| relative | 1 | — | — | — | — | 0.020 / 0.010 | — | state-dependent step", text)
            self.assertNotIn("lstm", text)
            self.assertEqual(doc.diagnosis_lines(d, "no_such_table", "### x"), [])
        self.assertIn("drift on the exact subspace (0.10 at the shortest length, 0.90 at the longest)",
                      doc.reading(1.0, 0.5, 6, 0.1, 0.9, True))
        self.assertIn("the readout stops it", doc.reading(1.0, 0.5, 6, 0.1, 0.15, True))
        self.assertIn("fits short words with no exact subspace", doc.reading(1.0, 0.5, 0, 0, 0, True))
        self.assertIn("does not fit, though 4 directions are exact: the readout", doc.reading(0.5, 0.1, 4, 0, 0, True))

    def test_the_screen_names_its_choice_before_the_long_table_runs(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            rows = []
            for name, lr, loss in (("tf", 0.001, 4.75), ("tf", 0.003, 4.70), ("osm", 0.001, 4.8), ("osm", 0.003, 0.39)):
                rows.append(dict(row("%s lr=%g" % (name, lr), 1, 1, 0.5, n=1), lr=lr, seeds=[1], classes=120))
                os.makedirs(os.path.join(d, doc.SCREEN, "%s-lr=%g-s1" % (name, lr)))
                with open(os.path.join(d, doc.SCREEN, "%s-lr=%g-s1" % (name, lr), "result.json"), "w") as f:
                    json.dump({"best_val_loss": loss}, f)
            lines = doc.screen_lines(d, {"rows": rows}, None)
            self.assertIn("| tf | 0.003 | 4.7000 | 1.000 | 0.500 | chosen (every rate near chance: the choice is "
                          "noise) |", lines)
            self.assertIn("| tf | 0.001 | 4.7500 | 1.000 | 0.500 |  |", lines)
            self.assertIn("| osm | 0.003 | 0.3900 | 1.000 | 0.500 | chosen |", lines)

    def test_the_wide_screen_reads_its_own_table(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            r = dict(row("lstm-h128 lr=0.003", 1, 1, 0.9, n=1), lr=0.003, seeds=[1])
            os.makedirs(os.path.join(d, doc.WIDE, "lstm-h128-lr=0.003-s1"))
            with open(os.path.join(d, doc.WIDE, "lstm-h128-lr=0.003-s1", "result.json"), "w") as f:
                json.dump({"best_val_loss": 0.41}, f)
            long_summary = {"rows": [dict(row("lstm-h128 dataset=words:S5", 1, 1, 1), lr=0.003)]}
            lines = doc.screen_lines(d, {"rows": [r]}, long_summary, doc.WIDE, doc.WIDE_INTRO)
            self.assertEqual(lines[0], "### Wider models")
            self.assertIn("| lstm-h128 | 0.003 | 0.4100 | 1.000 | 0.900 | yes |", lines)
            self.assertIn("1 of 1 screen runs finished", "\n".join(lines))

    def test_the_alphabet_switch_is_read_from_the_training_log(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            def run(name, generator_steps, accs):
                rd = os.path.join(d, doc.GROUPS, name)
                os.makedirs(rd)
                with open(os.path.join(rd, "config.json"), "w") as f:
                    json.dump({"data": {"generator_steps": generator_steps}}, f)
                with open(os.path.join(rd, "metrics.jsonl"), "w") as f:
                    for step, a in accs:
                        f.write(json.dumps({"step": step, "acc": a, "loss": 1.0}) + "\n")
                        f.write(json.dumps({"step": step, "val_acc": 0.5}) + "\n")  # validation has no "acc"
                with open(os.path.join(rd, "result.json"), "w") as f:
                    f.write("{}")
                return rd
            back = run("osm-a-s1", 200, [(100, 0.5), (200, 0.9), (300, 0.01), (400, 0.2), (1500, 0.95), (1600, 1.0)])
            self.assertEqual(doc.alphabet_switch(back), (200, 0.9, 0.01, 1500, 1600, 1.0))
            never = run("osm-b-s1", 200, [(200, 0.8), (300, 0.004), (900, 0.03)])
            self.assertEqual(doc.alphabet_switch(never), (200, 0.8, 0.004, None, 900, 0.03))
            self.assertIsNone(doc.alphabet_switch(run("osm-c-s1", 0, [(100, 0.5)])))  # no curriculum
            table = "\n".join(doc.switch_lines(d, doc.GROUPS))
            self.assertIn("| osm-a-s1 | 200 | 0.900 | 0.010 | 1,500 | 1.000 at 1,600 |", table)
            self.assertIn("| osm-b-s1 | 200 | 0.800 | 0.004 | not by 900 | 0.030 at 900 |", table)
            self.assertNotIn("osm-c-s1", table)

    def test_smallest_sizes_read_so_and_su_rows_by_real_dimension(self):
        self.assertEqual(doc.size_of("osm-rnn-token-so8-alphabet"), ("SO", 8))
        self.assertEqual(doc.size_of("osm-rnn-token-su3-alphabet"), ("SU", 3))
        self.assertEqual(doc.size_of("osm-rnn-token-su3-alphabet-tau3"), ("SU", 3))  # a remedy row
        self.assertEqual(doc.size_of("osm-rnn-element-so6-alphabet6k-warm"), ("SO", 6))
        self.assertEqual(doc.size_of("osm-rnn-token-so14"), ("SO", 14))
        self.assertIsNone(doc.size_of("lstm-h128-alphabet"))
        self.assertIsNone(doc.size_of("osm-rnn-token-sox-alphabet"))

    def test_each_size_reports_its_best_recipe(self):
        import json
        import tempfile
        accs = {("osm-rnn-token-so5-alphabet", "A6"): [0.004, 0.003, 0.004],
                ("osm-rnn-element-so5-alphabet6k-warm", "A6"): [1.0, 0.999, 0.2],
                ("osm-rnn-token-so8-alphabet", "A6"): [0.995],
                ("osm-rnn-token-su3-alphabet", "A6"): [0.001, 0.002]}
        with tempfile.TemporaryDirectory() as d:
            rows = write_seed_results(d, doc.SMALLEST, accs)
            got = doc.smallest_learning(d, {"rows": rows}, 1024)
        self.assertEqual(got, {"A6": [(5, "SO(5)", 2, 3, "osm-rnn-element-so5-alphabet6k-warm", 2),
                                      (6, "SU(3)", 0, 2, "osm-rnn-token-su3-alphabet", 1),
                                      (8, "SO(8)", 1, 1, "osm-rnn-token-so8-alphabet", 1)]})

    def test_a_row_of_fewer_seeds_is_not_counted_short(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for name in ("one-dataset=words-S6-s1", "three-dataset=words-S6-s1"):
                os.makedirs(os.path.join(d, doc.GROUPS, name))
                with open(os.path.join(d, doc.GROUPS, name, "result.json"), "w") as f:
                    json.dump({"test": [{"length": 1024, "position_acc": 0.002}]}, f)
            rows = [{"model": "one", "group": "S6", "n": 1, "pending": [], "diverged": 0},
                    {"model": "three", "group": "S6", "n": 1, "pending": ["three-s2", "three-s3"], "diverged": 0}]
            lines = doc.target_lines(d, doc.GROUPS, rows, 1024)
            self.assertEqual(lines[0], "- S6, one: 0.002 at 1024; 0 of 1 seeds >= 0.99 (a row of 1 seed).")
            self.assertEqual(lines[1], "- S6, three: 0.002 at 1024; 0 of 1 seeds >= 0.99, 2 more to run.")

    def test_the_baselines_fit_verdict_takes_each_familys_best_row_over_the_tables(self):
        import json
        import tempfile

        def row(model, group, acc64, n=1):
            return {"model": model, "group": group, "n": n, "pending": [], "diverged": 0,
                    "position_acc": {"64": [acc64, 0.0]} if n else {}}
        with tempfile.TemporaryDirectory() as d:
            for table, rows in ((doc.BASELINES, [row("lstm-h128-alphabet lr=0.001", "A5", 0.5),
                                                 row("lstm-h128-slow", "A5", 0.995),
                                                 row("transformer-alibi-d128-alphabet lr=0.001", "A5", 0.05)]),
                                (doc.GROUPS, [row("lstm-h128-alphabet", "A6", 0.02),
                                              row("osm-rnn-token-so14", "A6", 1.0),
                                              row("transformer-alibi-d128-alphabet lr=0.001", "A6", 0.0, n=0)])):
                with open(os.path.join(d, table + ".json"), "w") as f:
                    json.dump({"rows": rows}, f)
            lines = doc.baseline_fit_lines(d)
        self.assertEqual(lines, [
            "- A5, LSTM: fits length 64 (best 0.995, lstm-h128-slow); tried: lstm-h128-slow 0.995; "
            "lstm-h128-alphabet lr=0.001 0.500.",
            "- A5, transformer: does not fit length 64 (best 0.050, transformer-alibi-d128-alphabet lr=0.001); "
            "tried: transformer-alibi-d128-alphabet lr=0.001 0.050.",
            "- A6, LSTM: does not fit length 64 (best 0.020, lstm-h128-alphabet); tried: lstm-h128-alphabet 0.020."])

    def test_the_groups_outcome_names_the_rows_meeting_the_target_per_group(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            runs = {("a", "S6"): [1.0, 0.995, 0.999], ("b", "S6"): [1.0, 1.0], ("c", "A7"): [1.0, 0.5, 1.0]}
            rows = write_seed_results(d, doc.GROUPS, runs)
            line = doc.groups_meeting_target(d, doc.GROUPS, rows, 1024)
        self.assertEqual(line, "Groups with a row at >= 0.99 at 1024 in 3 of 3 seeds: S6: a; A7: none yet. "
                               "Not yet met: A7.")


if __name__ == "__main__":
    unittest.main()
