#!/usr/bin/env python3
"""Generation speed of bench/torch_reference.py's models at batch 1, written as a careful
PyTorch user would, to set beside `liegrad bench --sample` (measure/sample_bench.hpp):

    python3 bench/torch_sampling.py --config configs/transformer.json --lengths 500,2000 --json
    python3 bench/torch_sampling.py --weights RUN/last.json --lengths 500,2000 --json

The same generation as liegrad's sampler (train/sample.hpp): a one-symbol prompt,
temperature 1, the whole vocabulary, the window train.seq_len. Recurrent models carry
their state from symbol to symbol, with what depends on the weights only formed once per
generation as liegrad's decoding cache does (the OSM-RNN's token elements, prototypes,
mixing and token transitions; the expRNN's exp(A)); the LSTM through nn.LSTM's own state,
its step having no such work; the attention models decode
incrementally from a cache in preallocated buffers: the transformer each layer's keys
and values, the OSMFormer each layer's input states (its keys and values at once). When
one more symbol would overfill the window, it restarts as the last seq_len // 2 symbols
(liegrad's default keep), refilled through the same steps. Everything runs under
torch.inference_mode(); the exponential's route is the faster at batch 1 (pick_expm) and
torch's own and OpenBLAS's thread counts each the faster of --threads and 1
(pick_torch_threads, pick_blas_threads), all probed as torch_reference.py's timing mode
does. Reported per length: symbols/s (median, min, max over --repeats runs after one
warm-up run) and microseconds per symbol.
"""
import argparse
import json
import math
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_reference as ref  # noqa: E402  (the models, their builders and the thread probes)
from torch_reference import F, lc, torch  # noqa: E402


class TransformerCache:
    """Keys and values of every layer in (h, window, e) buffers; one step appends a position."""

    def __init__(self, model, window):
        self.m, self.window = model, window
        e = model.D // model.h
        self.K = torch.zeros(model.L, model.h, window, e, dtype=model.dtype)
        self.Vv = torch.zeros(model.L, model.h, window, e, dtype=model.dtype)
        self.slopes = torch.as_tensor(model.slopes, dtype=model.dtype)
        self.dist = torch.arange(window, dtype=model.dtype)  # i - j for the newest position i
        self.p = 0

    def clear(self):
        self.p = 0

    def step(self, token):
        m, p = self.m, self.p
        D, h = m.D, m.h
        e = D // h
        z = m.embed[token].view(1, D)
        bias = -self.slopes[:, None] * self.dist[:p + 1].flip(0)[None, :]  # (h, p+1): -slope (i - j)
        for l, b in enumerate(m.blocks):
            a = F.layer_norm(z, (D,), b["ln1_w"], b["ln1_b"], 1e-5)
            q, k, v = torch.addmm(b["qkv_b"], a, b["qkv_w"]).view(3, h, e)
            self.K[l, :, p] = k
            self.Vv[l, :, p] = v
            s = torch.baddbmm(bias[:, None, :], q[:, None, :], self.K[l, :, :p + 1].transpose(1, 2), alpha=1 / math.sqrt(e))
            o = torch.bmm(torch.softmax(s, -1), self.Vv[l, :, :p + 1]).reshape(1, D)
            z = z + torch.addmm(b["proj_b"], o, b["proj_w"])
            a = F.layer_norm(z, (D,), b["ln2_w"], b["ln2_b"], 1e-5)
            z = z + torch.addmm(b["fc2_b"], F.gelu(torch.addmm(b["fc_b"], a, b["fc_w"])), b["fc2_w"])
        z = F.layer_norm(z, (D,), m.lnf_w, m.lnf_b, 1e-5)
        self.p = p + 1
        return (z @ m.embed.t())[0] if m.tied else torch.addmm(m.head_b, z, m.head_w)[0]


class OsmFormerCache:
    """Each layer's input states H_j (window, n*n): the keys (Re tr(H_i* H_j)) and the values."""

    def __init__(self, model, window):
        self.m, self.window = model, window
        n = model.maps.n
        self.X = torch.zeros(model.L, window, n * n, dtype=model.dtype)
        self.slopes = torch.as_tensor(model.slopes, dtype=model.dtype)
        self.dist = torch.arange(window, dtype=model.dtype)
        self.E = model.elements("embed")  # token elements, proto and the token grounding's steps: once
        self.P = model.elements("proto")
        self.Ev = [None] * model.L
        if model.grounding == "token":
            self.Ev = [model.expm(model.maps.hat(gnd(model.params["embed"]))) for _, _, gnd in model.layers]
        self.p = 0

    def clear(self):
        self.p = 0

    def step(self, token):
        m, p, maps = self.m, self.p, self.m.maps
        n = maps.n
        M = self.E[token].view(1, n, n)
        H = M
        bias = -self.slopes[:, None] * self.dist[:p + 1].flip(0)[None, :]  # (h, p+1)
        for l, (lb, att, gnd) in enumerate(m.layers):
            X = self.X[l]
            X[p] = H.reshape(n * n)
            gram = (X[:p + 1] @ X[p]) * maps.s  # (p+1,) Re tr(H_i* H_j)
            abar = torch.softmax(torch.exp(lb)[:, None] * gram[None, :] + bias, -1).mean(0)
            A = (abar @ X[:p + 1]).view(1, n, n)
            u_att = att(maps.vee(H.transpose(1, 2) @ A))
            if m.grounding == "combined":
                H = m.update(H, u_att + gnd(maps.vee(H.transpose(1, 2) @ M)))
                continue
            H = m.update(H, u_att)
            if m.grounding == "relative":
                H = m.update(H, gnd(maps.vee(H.transpose(1, 2) @ M)))
            elif m.grounding == "token":
                H = H @ self.Ev[l][token]
        self.p = p + 1
        return m.readout(H, self.P)[0]


class OsmRnnCache:
    """The OSM-RNN's state H, with what depends on the weights only formed once per
    generation: the token elements M_v, the prototypes, the mixing Gamma^T (the mixing of
    the identity) and, for the token and element drives, the transitions N_v, so that a
    step is H <- H N_x (token drives) or one product, the mixing, one exponential and one
    product (relative, both), then the readout; renormalised every renormalize_every
    symbols, as the model's forward over the whole text."""

    def __init__(self, model):
        self.m, maps = model, model.maps
        n = maps.n
        self.E = model.elements("embed")
        self.P = model.prototypes()
        self.Gt = model.mix(torch.eye(maps.m, dtype=model.dtype))  # u Gamma^T = u @ Gt
        self.N = None
        if model.drive in ("token", "element"):
            r = model.params["embed"] if model.drive == "element" else maps.vee(self.E)
            self.N = model.expm(maps.hat(r @ self.Gt))
        self.I15 = 1.5 * torch.eye(n, dtype=model.dtype)
        self.H = maps.identity(model.dtype).expand(1, n, n)
        self.p = 0

    def clear(self):
        pass

    def step(self, token):
        m, maps = self.m, self.m.maps
        if self.N is not None:
            H = self.H @ self.N[token]
        else:
            M = self.E[token]
            u = maps.vee(self.H.transpose(1, 2) @ M)
            if m.drive == "both":
                u = u + maps.vee(M.unsqueeze(0))
            H = self.H @ m.expm(maps.hat(u @ self.Gt))
        self.p += 1
        if m.renorm > 0 and self.p % m.renorm == 0:  # the Newton-Schulz step of the forward
            H = H @ (self.I15 - 0.5 * (H.transpose(1, 2) @ H))
        self.H = H
        return m.readout(H, self.P)[0]


class ExpRnnCache:
    """The expRNN's hidden state, with exp(A)^T formed once per generation; a step is one
    h x h product, the modReLU and the head."""

    def __init__(self, model):
        self.m = model
        self.Qt = model.expm(model.maps.hat(model.a))[0].t()
        self.h = torch.zeros(1, model.h, dtype=model.dtype)

    def clear(self):
        pass

    def step(self, token):
        m = self.m
        z = torch.addmm(m.inp[token].view(1, -1), self.h, self.Qt)
        r = F.relu(z.abs() + m.b)
        self.h = torch.where(z >= 0, r, -r)  # modReLU, sign(0) = +
        return torch.addmm(m.head_b, self.h, m.head_w)[0]


class RecurrentCache:
    """The model's own state, carried from symbol to symbol through its forward (the LSTM:
    nn.LSTM's step has no work that depends on the weights only); never restarted."""

    def __init__(self, model):
        self.m, self.state = model, None

    def clear(self):
        pass

    def step(self, token):
        logits, self.state = self.m.forward(token.view(1, 1), self.state)
        return logits[0, 0]


def make_cache(model, window):
    """The model's decoding state: a per-model cache, or its forward's own state."""
    if isinstance(model, ref.OsmRnn):
        return OsmRnnCache(model)
    if isinstance(model, ref.ExpRnn):
        return ExpRnnCache(model)
    if model.recurrent:
        return RecurrentCache(model)
    return (TransformerCache if isinstance(model, ref.Transformer) else OsmFormerCache)(model, window)


def generate(model, V, window, n, seed):
    """n symbols after a one-symbol prompt, with liegrad's window and restart (keep = window // 2)."""
    gen = torch.Generator().manual_seed(seed)
    cache = make_cache(model, window)
    keep = max(1, window // 2)
    ids = [0]
    start = fed = 0
    logits = None
    for _ in range(n):
        while fed < len(ids):
            logits = cache.step(torch.tensor(ids[fed]))
            fed += 1
        ids.append(int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)))
        if not model.recurrent and len(ids) - start > window:
            start = fed = len(ids) - keep
            cache.clear()
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", help="liegrad config JSON (random initial weights)")
    ap.add_argument("--weights", help="a trained liegrad checkpoint: its config and weights")
    ap.add_argument("--lengths", default="500,2000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--expm", choices=["auto", "taylor", "matrix_exp"], default="auto")
    ap.add_argument("--blas-threads", default="auto")
    ap.add_argument("--torch-threads", default="auto")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if bool(args.config) == bool(args.weights):
        ap.error("give one of --config FILE or --weights CHECKPOINT")
    for flag, v in (("--blas-threads", args.blas_threads), ("--torch-threads", args.torch_threads)):
        if v != "auto" and not (v.isdigit() and int(v) > 0):
            ap.error("%s must be auto or a positive integer, got '%s'" % (flag, v))
    try:
        lengths = [int(x) for x in args.lengths.split(",")]
    except ValueError:
        ap.error("--lengths: expected lengths like 500,2000, got '%s'" % args.lengths)
    if min(lengths) < 1 or args.repeats < 1:
        ap.error("--lengths and --repeats must be >= 1")
    torch.set_num_threads(args.threads)
    init = {}
    if args.weights:
        j, params, vocab = lc.load_checkpoint(args.weights)
        cfg_all, V = j["config"], len(vocab)
        init = {k: (lambda v=v: torch.from_numpy(np.array(v))) for k, v in params.items()}
    else:
        with open(args.config) as f:
            cfg_all = json.load(f)
        V = ref.vocab_of(cfg_all.get("data", {}).get("dataset", "tinyshakespeare"))
    cfg, tr = cfg_all["model"], cfg_all.get("train", {})
    window = int(tr.get("seq_len", 128))
    torch.manual_seed(int(tr.get("seed", 1)))
    expm_name, expm_times = "none", {}
    if cfg["type"] in ("osmformer", "osm_rnn", "exprnn"):
        n = lc.make_group(cfg.get("group", "SO(16)")).n if cfg["type"] != "exprnn" else int(cfg.get("hidden", 128))
        expm_name, expm_times = ref.pick_expm(n, 1, args.threads, args.expm)
    model = ref.build(cfg, V, init, torch.float32, ref.EXPM.get(expm_name, ref.expm_taylor))
    rows = []
    with torch.inference_mode():
        torch_threads, torch_probe = ref.pick_torch_threads(lambda: generate(model, V, window, 100, 0), args.threads,
                                                            args.torch_threads)
        blas_threads, blas_probe = ref.pick_blas_threads(lambda: generate(model, V, window, 100, 0), args.threads,
                                                         args.blas_threads)
        seed = 1
        for n in lengths:
            generate(model, V, window, n, seed)  # warm-up
            rates = []
            for _ in range(args.repeats):
                seed += 1
                t0 = time.perf_counter()
                generate(model, V, window, n, seed)
                rates.append(n / (time.perf_counter() - t0))
            s = ref.spread(rates)
            rows.append({"length": n, "symbols_per_s": s, "us_per_symbol": 1e6 / s["median"]})
    out = {"mode": "sample", "model": cfg["type"], "vocab": V, "context": window, "batch": 1, "threads": args.threads,
           "repeats": args.repeats, "rows": rows, "expm": expm_name, "expm_probe_s": expm_times,
           "blas_threads": blas_threads, "blas_threads_probe_s": blas_probe, "torch_threads": torch_threads,
           "torch_threads_probe_s": torch_probe, "torch": torch.__version__,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    if args.json:
        print(json.dumps(out))
        return
    print("sampling %s (torch %s, V = %d, window %d), batch 1, %d threads, torch threads %s, OpenBLAS threads %s, exp %s"
          % (cfg["type"], torch.__version__, V, window, args.threads, torch_threads, blas_threads, expm_name))
    for r in rows:
        s = r["symbols_per_s"]
        print("  n = %6d: median %.0f symbols/s (min %.0f, max %.0f), %.1f us per symbol"
              % (r["length"], s["median"], s["min"], s["max"], r["us_per_symbol"]))


if __name__ == "__main__":
    main()
