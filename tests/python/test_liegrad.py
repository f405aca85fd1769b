#!/usr/bin/env python3
"""Tests of the Python module `liegrad` (python/; docs/library.md), run by CTest as
python_GroupTests, python_CheckpointTests and python_TrainTests.

Groups are checked against numpy (exp by eigendecomposition, the exp pullback by
central finite differences, hat/vee round trips), checkpoints against the `liegrad`
tool (LIEGRAD_TOOL: `liegrad eval --text` must give the same BPC), and training
through its callback, its stop and Ctrl-C paths.

Needs numpy and the built module on PYTHONPATH. Run by hand:
  PYTHONPATH=build/python LIEGRAD_TOOL=build/liegrad python3 tests/python/test_liegrad.py -v
"""
import json
import os
import signal
import subprocess
import tempfile
import unittest

import numpy as np

import liegrad

GROUPS = ["SO(3)", "SO(4)", "O(3)", "U(2)", "SU(3)", "T(3)", "SO(3)xU(1)", "SO(2)xSU(2)"]


def exp_by_eig(A):
    """exp of a real matrix that is diagonalisable (here: skew-symmetric), by numpy.linalg.eig."""
    w, V = np.linalg.eig(A)
    return (V @ np.diag(np.exp(w)) @ np.linalg.inv(V)).real


def random_algebra(g, rng, *lead):
    return g.hat(rng.standard_normal(lead + (g.dim,)))


class GroupTests(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def test_properties(self):
        g = liegrad.group("su(3)")
        self.assertEqual(g.name, "SU(3)")
        self.assertEqual((g.n, g.dim, g.is_complex, g.real_scale), (6, 8, True, 0.5))
        so3 = liegrad.group("SO(3)")
        self.assertEqual((so3.n, so3.dim, so3.is_complex, so3.real_scale), (3, 3, False, 1.0))
        self.assertIn("SU(3)", repr(g))

    def test_exp_matches_eigendecomposition(self):
        for name in GROUPS:
            g = liegrad.group(name)
            if g.dim == 0:
                continue
            A = random_algebra(g, self.rng, 4)
            Q = g.exp(A)
            self.assertEqual(Q.dtype, np.float64)
            self.assertEqual(Q.shape, (4, g.n, g.n))
            for b in range(4):
                np.testing.assert_allclose(Q[b], exp_by_eig(A[b]), atol=1e-11, err_msg=name)
            self.assertLess(g.defect(Q), 1e-12, name)
            # liegrad.expm (any square matrix) agrees with the group's exp on the algebra.
            np.testing.assert_allclose(liegrad.expm(A), Q, atol=1e-12, err_msg=name)

    def test_exp_float32_and_batches(self):
        g = liegrad.group("SU(3)")
        A = random_algebra(g, self.rng, 2, 3)  # batch axes (2, 3)
        Q64 = g.exp(A)
        Q32 = g.exp(A.astype(np.float32))
        self.assertEqual(Q64.shape, (2, 3, 6, 6))
        self.assertEqual(Q32.dtype, np.float32)
        np.testing.assert_allclose(Q32, Q64, atol=2e-5)
        np.testing.assert_allclose(g.exp(A[1, 2]), Q64[1, 2], atol=1e-14)  # a single (n, n) matrix
        self.assertEqual(g.exp(np.zeros((0, 6, 6))).shape, (0, 6, 6))

    def test_expm_of_general_matrices(self):
        A = self.rng.standard_normal((3, 4, 4))
        Q = liegrad.expm(A)
        for b in range(3):
            # Taylor series with scaling and squaring in numpy, as an independent reference.
            s = 6
            X = A[b] / 2**s
            term, R = np.eye(4), np.eye(4)
            for k in range(1, 30):
                term = term @ X / k
                R = R + term
            for _ in range(s):
                R = R @ R
            np.testing.assert_allclose(Q[b], R, rtol=1e-11, atol=1e-11)

    def test_exp_pullback_against_finite_differences(self):
        eps = 1e-6
        for name in GROUPS:
            g = liegrad.group(name)
            if g.dim == 0:
                continue
            A = random_algebra(g, self.rng, 3)
            G = self.rng.standard_normal(A.shape)
            dA = g.exp_pullback(A, G)
            self.assertEqual(dA.shape, A.shape)
            for E in (random_algebra(g, self.rng, 3), None):
                if E is None:  # a direction off the algebra: the pullback is exact for any A
                    E = self.rng.standard_normal(A.shape)
                    f = lambda X: np.sum(G * liegrad.expm(X))
                else:
                    f = lambda X: np.sum(G * g.exp(X))
                numeric = (f(A + eps * E) - f(A - eps * E)) / (2 * eps)
                analytic = np.sum(dA * E)
                self.assertLess(abs(numeric - analytic), 1e-7 * max(1.0, abs(numeric)), name)
        # The module-level pullback is the same map.
        g = liegrad.group("SO(4)")
        A = random_algebra(g, self.rng, 2)
        G = self.rng.standard_normal(A.shape)
        np.testing.assert_allclose(liegrad.expm_pullback(A, G), g.exp_pullback(A, G), atol=1e-14)
        self.assertEqual(g.exp_pullback(A.astype(np.float32), G.astype(np.float32)).dtype, np.float32)

    def test_hat_vee_round_trips(self):
        for name in GROUPS:
            g = liegrad.group(name)
            u = self.rng.standard_normal((5, g.dim))
            A = g.hat(u)
            self.assertEqual(A.shape, (5, g.n, g.n))
            np.testing.assert_allclose(g.vee(A), u, atol=1e-14, err_msg=name)
            X = self.rng.standard_normal((5, g.n, g.n))
            np.testing.assert_allclose(g.hat(g.vee(X)), g.project(X), atol=1e-13, err_msg=name)
            np.testing.assert_allclose(g.project(A), A, atol=1e-14, err_msg=name)
            # hat is an isometry in the complex convention: inner(hat u, hat u) = |u|^2.
            np.testing.assert_allclose(g.inner(A, A), np.sum(u * u, axis=1), rtol=1e-12, err_msg=name)
            self.assertEqual(g.hat(u.astype(np.float32)).dtype, np.float32)

    def test_inner_identity_compose_log(self):
        g = liegrad.group("U(2)")
        H, P = g.sample(count=3, seed=1), g.sample(count=3, seed=2)
        want = g.real_scale * np.einsum("bij,bij->b", H, P)
        np.testing.assert_allclose(g.inner(H, P), want, atol=1e-14)
        self.assertAlmostEqual(float(g.inner(H[0], H[0])), 2.0, places=13)  # inner(H, H) = d on U(d)
        np.testing.assert_array_equal(g.identity(), np.eye(4))
        self.assertEqual(g.identity(np.float32).dtype, np.float32)
        np.testing.assert_allclose(g.compose(H, g.inverse(H)), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-13)
        np.testing.assert_allclose(g.compose(H[0], P), H[0] @ P, atol=1e-14)
        np.testing.assert_allclose(g.exp(g.log(H)), H, atol=1e-12)

    def test_bad_input_raises(self):
        g = liegrad.group("SO(3)")
        with self.assertRaisesRegex(ValueError, "SO\\(3\\)|accepted|group"):
            liegrad.group("SX(3)")
        with self.assertRaises(ValueError):
            liegrad.group("SO(0)")
        with self.assertRaisesRegex(ValueError, r"\(\.\.\., 3, 3\)"):
            g.exp(np.zeros((4, 4)))
        with self.assertRaisesRegex(ValueError, r"\(\.\.\., 3\)"):
            g.hat(np.zeros((2, 4)))
        with self.assertRaises(ValueError):
            g.vee(np.zeros(3))
        with self.assertRaisesRegex(TypeError, "int64"):
            g.exp(np.zeros((3, 3), dtype=np.int64))
        with self.assertRaisesRegex(TypeError, "complex128"):
            g.hat(np.zeros(3, dtype=np.complex128))
        with self.assertRaisesRegex(TypeError, "float16"):
            g.hat(np.zeros(3, dtype=np.float16))
        with self.assertRaisesRegex(TypeError, "dtypes"):
            g.inner(np.eye(3), np.eye(3, dtype=np.float32))
        with self.assertRaisesRegex(ValueError, "same shape"):
            g.inner(np.eye(3), np.stack([np.eye(3)] * 2))
        with self.assertRaisesRegex(ValueError, "Lie algebra"):
            g.exp(np.eye(3))  # symmetric, not skew: not in so(3)
        with self.assertRaisesRegex(ValueError, "NaN"):
            g.exp(np.full((3, 3), np.nan))
        with self.assertRaisesRegex(ValueError, "NaN"):
            liegrad.expm(np.array([[np.inf, 0.0], [0.0, 1.0]]))
        with self.assertRaisesRegex(ValueError, "square"):
            liegrad.expm(np.zeros((2, 3)))
        with self.assertRaisesRegex(ValueError, "shape of A"):
            g.exp_pullback(np.zeros((3, 3)), np.zeros((2, 3, 3)))
        with self.assertRaisesRegex(ValueError, "not in SO"):
            g.log(2 * np.eye(3))
        with self.assertRaises(TypeError):
            g.identity(np.int32)
        with self.assertRaises(TypeError):
            g.exp("not an array")
        # Lists are taken as float64.
        self.assertEqual(g.hat([0.0, 0.0, 1.0]).dtype, np.float64)
        np.testing.assert_array_equal(g.hat([0.0, 0.5, 1.0]), g.hat(np.array([0.0, 0.5, 1.0])))


def write_text(path):
    """A deterministic 12,000-character text of a few words (every split sees every letter)."""
    rng = np.random.default_rng(7)
    words = ["lie", "group", "state", "update", "the", "of", "on", "rotation", "phase", "model"]
    lines = []
    while sum(len(l) + 1 for l in lines) < 12000:
        lines.append(" ".join(rng.choice(words, size=8)) + ".")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def tiny_config(text, steps=12):
    return {
        "model": {"type": "osm_rnn", "group": "SO(3)", "mixing": "linear"},
        "data": {"dataset": "text:" + text, "val_frac": 0.1, "test_frac": 0.1},
        "train": {"steps": steps, "batch": 4, "seq_len": 16, "lr": 0.01, "warmup": 2, "eval_interval": 5,
                  "log_interval": 1, "threads": 1, "seed": 3},
    }


class CheckpointTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.text = os.path.join(cls.tmp.name, "corpus.txt")
        write_text(cls.text)
        cls.run_dir = os.path.join(cls.tmp.name, "run")
        cls.result = liegrad.train(tiny_config(cls.text), cls.run_dir)
        cls.best = os.path.join(cls.run_dir, "best.json")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_fields(self):
        ck = liegrad.load(self.best)
        self.assertEqual(ck.config["model"]["type"], "osm_rnn")
        self.assertEqual(ck.config["train"]["seq_len"], 16)
        with open(self.text, "rb") as f:
            self.assertEqual(ck.vocab, bytes(sorted(set(f.read()))))
        params = ck.parameters
        V = len(ck.vocab)
        self.assertEqual(params["embed"].shape, (V, 3))
        self.assertEqual(params["embed"].dtype, np.float32)
        self.assertEqual(params["mix"].shape, (3, 3))
        self.assertEqual(ck.model_type, "osm_rnn")
        self.assertEqual(ck.parameter_count, sum(p.size for p in params.values()))
        # The values are those stored in the file.
        with open(self.best) as f:
            stored = {p["name"]: p["values"] for p in json.load(f)["parameters"]}
        np.testing.assert_array_equal(params["embed"].ravel(), np.array(stored["embed"], dtype=np.float32))

    def test_bpc_equals_liegrad_eval(self):
        tool = os.environ.get("LIEGRAD_TOOL")
        if not tool:
            self.skipTest("LIEGRAD_TOOL is not set")
        sample_file = os.path.join(self.tmp.name, "eval.txt")
        with open(self.text) as f:
            text = f.read()[:3000]
        with open(sample_file, "w") as f:
            f.write(text)
        out = subprocess.run([tool, "eval", "--checkpoint", self.best, "--text", sample_file, "--json"],
                             check=True, capture_output=True, text=True).stdout
        cli = json.loads(out)["bpc"]
        ck = liegrad.load(self.best)
        self.assertAlmostEqual(ck.bpc(text), cli, delta=1e-6)
        self.assertAlmostEqual(ck.bpc(text.encode()), cli, delta=1e-6)
        self.assertGreater(cli, 0.5)

    def test_sample_is_deterministic(self):
        ck = liegrad.load(self.best)
        a = ck.sample("the ", length=50, temperature=0.8, top_k=5, seed=11)
        b = ck.sample("the ", length=50, temperature=0.8, top_k=5, seed=11)
        c = ck.sample("the ", length=50, temperature=0.8, top_k=5, seed=12)
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(a.startswith("the "))
        self.assertEqual(len(a), 54)
        self.assertTrue(set(a) <= set(ck.vocab.decode()))
        tool = os.environ.get("LIEGRAD_TOOL")
        if tool:  # the same text as `liegrad sample`
            out = subprocess.run([tool, "sample", "--checkpoint", self.best, "--prompt", "the ", "--length", "50",
                                  "--temperature", "0.8", "--top-k", "5", "--seed", "11"],
                                 check=True, capture_output=True, text=True).stdout
            self.assertEqual(out.rstrip("\n"), a)

    def test_bad_input_raises(self):
        ck = liegrad.load(self.best)
        with self.assertRaisesRegex(ValueError, "vocabulary"):
            ck.bpc("ZZZ unknown characters")
        with self.assertRaisesRegex(ValueError, "vocabulary"):
            ck.sample("Q", length=5)
        with self.assertRaises(ValueError):
            ck.sample("the", length=5, temperature=0.0)
        with self.assertRaises(TypeError):
            ck.bpc(123)
        with self.assertRaisesRegex(OSError, "no-such"):
            liegrad.load(os.path.join(self.tmp.name, "no-such.json"))
        with self.assertRaisesRegex(OSError, "not a liegrad checkpoint"):
            liegrad.load(os.path.join(self.run_dir, "result.json"))
        with self.assertRaisesRegex(OSError, "plugin"):
            liegrad.load_plugin(os.path.join(self.tmp.name, "libnothing.so"))


class TrainTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.text = os.path.join(self.tmp.name, "corpus.txt")
        write_text(self.text)
        self.out = os.path.join(self.tmp.name, "run")

    def tearDown(self):
        self.tmp.cleanup()

    def last_step(self):
        with open(os.path.join(self.out, "last.json")) as f:
            return json.load(f)["step"]

    def test_train_with_callback(self):
        seen = []
        result = liegrad.train(tiny_config(self.text), self.out, on_step=seen.append)
        self.assertEqual([s["step"] for s in seen], list(range(1, 13)))
        self.assertTrue(all(np.isfinite(s["loss"]) and s["total_steps"] == 12 for s in seen))
        self.assertEqual([s["step"] for s in seen if s["val_bpc"] is not None], [5, 10])
        self.assertFalse(result["interrupted"])
        self.assertEqual(result["steps_done"], 12)
        self.assertLess(np.mean([s["loss"] for s in seen[-3:]]), np.mean([s["loss"] for s in seen[:3]]))
        for f in ("config.json", "metrics.jsonl", "best.json", "last.json", "result.json"):
            self.assertTrue(os.path.exists(os.path.join(self.out, f)), f)
        with open(os.path.join(self.out, "result.json")) as f:
            self.assertAlmostEqual(json.load(f)["val_bpc"], result["val_bpc"], places=9)

    def test_callback_returning_false_stops(self):
        result = liegrad.train(tiny_config(self.text), self.out, on_step=lambda s: s["step"] < 3)
        self.assertTrue(result["interrupted"])
        self.assertEqual(result["steps_done"], 3)
        self.assertEqual(self.last_step(), 3)

    def test_ctrl_c_writes_last_json_and_resumes(self):
        def interrupt_at_4(s):
            if s["step"] == 4:
                os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does

        with self.assertRaises(KeyboardInterrupt):
            liegrad.train(tiny_config(self.text), self.out, on_step=interrupt_at_4)
        self.assertEqual(self.last_step(), 4)
        steps = []
        result = liegrad.train(None, self.out, resume=True, on_step=lambda s: steps.append(s["step"]))
        self.assertEqual(steps, list(range(5, 13)))
        self.assertFalse(result["interrupted"])

    def test_callback_exception_propagates_after_saving(self):
        def boom(s):
            if s["step"] == 2:
                raise RuntimeError("stop here")

        with self.assertRaisesRegex(RuntimeError, "stop here"):
            liegrad.train(tiny_config(self.text), self.out, on_step=boom)
        self.assertEqual(self.last_step(), 2)

    def test_bad_arguments_raise(self):
        cfg = tiny_config(self.text)
        cfg["train"]["stpes"] = 3
        with self.assertRaisesRegex(ValueError, "stpes"):
            liegrad.train(cfg, self.out)
        with self.assertRaises(TypeError):
            liegrad.train(tiny_config(self.text), self.out, on_step=42)
        with self.assertRaises(ValueError):
            liegrad.train(None, self.out)
        with self.assertRaises(TypeError):
            liegrad.train({"model": {1, 2}}, self.out)  # not JSON
        liegrad.train(tiny_config(self.text, steps=2), self.out)
        with self.assertRaisesRegex(OSError, "already holds a run"):
            liegrad.train(tiny_config(self.text, steps=2), self.out)


if __name__ == "__main__":
    unittest.main()
