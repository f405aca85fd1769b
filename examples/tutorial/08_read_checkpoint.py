#!/usr/bin/env python3
"""Tutorial chapter 8, part 2 (docs/tutorial/08-train-and-read.md): read the checkpoint
that 08_train_and_read wrote, in numpy, and score the same text with the OSM-RNN
rebuilt by hand from the spec (docs/models.md §3-4):

    H_0 = I,   H_{t+1} = H_t exp(hat(Gamma vee(H_t^T M_{x_t}))),
    every 16th step also H <- H (3I - H^T H) / 2    (renormalize_every, tutorial chapter 5),
    logits_{t+1} = tau Re tr(H_{t+1}^T P_v) + b_v      (predicts x_{t+1}; SO(4): s = 1)

with exp computed independently of liegrad (an eigendecomposition of the Hermitian iA).
The result is compared with the C++ score (to 1e-5: the C++ model runs in float) and
with examples/load_checkpoint.py, the full numpy reader (to 1e-9: both in float64).
Then the same for the run trained with renormalize_every 0: its float state drifts off
SO(4) (the C++ program measured it), and its score moves farther from the numpy one.

    /usr/bin/python3 examples/tutorial/08_read_checkpoint.py DIR

Exit status 77 (CTest: skipped) when numpy is missing, 1 when a check fails.
"""
import json
import math
import os
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not available (apt-get install python3-numpy)")
    sys.exit(77)

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import load_checkpoint  # noqa: E402  (examples/load_checkpoint.py)

failed = 0


def check(name, kind, value, tol):
    """Prints a check line like the C++ programs (examples/tutorial/tutorial.hpp)."""
    global failed
    ok = value < tol
    failed += 0 if ok else 1
    print("check: %s %s=%.2e tol=%.0e %s" % (name, kind, value, tol, "ok" if ok else "FAIL"))


d = 4
iu = np.triu_indices(d, 1)  # so(4) coordinates: u_p = sqrt(2) A_ij, i < j, row-major


def hat(u):
    A = np.zeros(u.shape[:-1] + (d, d))
    A[..., iu[0], iu[1]] = u / math.sqrt(2)
    A[..., iu[1], iu[0]] = -u / math.sqrt(2)
    return A


def vee(X):
    return (X[..., iu[0], iu[1]] - X[..., iu[1], iu[0]]) / math.sqrt(2)


def expm_skew(A):
    """exp(A) for real skew A: iA is Hermitian, iA = V diag(w) V*, so exp(A) = V diag(e^{-iw}) V*."""
    w, V = np.linalg.eigh(1j * A)
    return np.real((V * np.exp(-1j * w)[..., None, :]) @ np.conj(np.swapaxes(V, -1, -2)))


run = sys.argv[1] if len(sys.argv) > 1 else "tutorial08"
with open(os.path.join(run, "tutorial08.json")) as f:
    summary = json.load(f)


def score(path, verbose):
    """BPC of the text under the checkpoint at `path`, by hand and by load_checkpoint.py."""
    with open(path) as f:
        ck = json.load(f)
    params = {}
    for p in ck["parameters"]:
        params[p["name"]] = np.asarray(p["values"], dtype=np.float64).reshape(p["shape"])
    if verbose:
        print("%s version %d, step %d, model %s" % (ck["format"], ck["version"], ck["step"],
                                                    json.dumps(ck["config"]["model"])))
        for p in ck["parameters"]:
            print("  %-8s shape %-8s role %s" % (p["name"], p["shape"], p["role"]))

    embed, proto = expm_skew(hat(params["embed"])), expm_skew(hat(params["proto"]))  # (V,4,4) each
    Gamma, bias, tau = params["mix"], params["bias"], math.exp(float(params["log_tau"]))
    if verbose:
        defect = max(np.abs(np.swapaxes(E, -1, -2) @ E - np.eye(d)).max() for E in (embed, proto))
        check("embed_and_proto_in_SO4", "max_abs_err", defect, 1e-12)

    vocab = bytes(ck["vocab"])  # symbol id -> byte
    with open(summary["text"], "rb") as f:
        ids = [vocab.index(b) for b in f.read()]
    renorm = int(ck["config"]["model"]["renormalize_every"])  # 16 or 0; seq_len 32 is a multiple of 16
    H, nll = np.eye(d), 0.0
    for t in range(len(ids) - 1):
        H = H @ expm_skew(hat(Gamma @ vee(H.T @ embed[ids[t]])))
        if renorm > 0 and (t + 1) % renorm == 0:  # the Newton-Schulz step of chapter 5, every `renormalize_every` symbols
            H = H @ (3 * np.eye(d) - H.T @ H) / 2
        logits = tau * np.einsum("ij,vij->v", H, proto) + bias  # Re tr(H* P_v) = tr(H^T P_v) on SO(4)
        top = logits.max()
        nll += top + math.log(np.exp(logits - top).sum()) - logits[ids[t + 1]]
    bpc = nll / (len(ids) - 1) / math.log(2)
    reader = load_checkpoint.build_model(ck, load_checkpoint.load_checkpoint(path)[1], "checkpoint")
    bpc_reader = load_checkpoint.evaluate_bpc(reader, np.array(ids), int(ck["config"]["train"]["seq_len"]))[0]
    return bpc, bpc_reader


bpc, bpc_reader = score(summary["checkpoint"], True)
print("BPC: numpy by hand %.6f, load_checkpoint.py %.6f, liegrad (C++, float) %.6f" % (bpc, bpc_reader, summary["bpc"]))
check("numpy_by_hand_vs_cpp", "abs_err", abs(bpc - summary["bpc"]), 1e-5)
check("numpy_by_hand_vs_load_checkpoint", "abs_err", abs(bpc - bpc_reader), 1e-9)

# renormalize_every 0: numpy's double state stays on SO(4) to rounding, liegrad's float one drifts.
off = summary["unrenormalised"]
bpc0, bpc0_reader = score(off["checkpoint"], False)
print("renormalize_every 0: numpy by hand %.6f, load_checkpoint.py %.6f, liegrad (C++, float) %.6f;"
      " |numpy - C++| %.1e, with renormalisation %.1e" % (bpc0, bpc0_reader, off["bpc"], abs(bpc0 - off["bpc"]),
                                                           abs(bpc - summary["bpc"])))
check("unrenormalised_numpy_vs_cpp", "abs_err", abs(bpc0 - off["bpc"]), 1e-4)
check("unrenormalised_numpy_vs_load_checkpoint", "abs_err", abs(bpc0 - bpc0_reader), 1e-9)
check("renormalisation_brings_cpp_closer", "renormalised_over_not", abs(bpc - summary["bpc"]) / abs(bpc0 - off["bpc"]), 0.25)
print("all checks passed" if failed == 0 else "SOME CHECKS FAILED")
sys.exit(1 if failed else 0)
