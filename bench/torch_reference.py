#!/usr/bin/env python3
"""PyTorch reference implementations of liegrad's five models, for side-by-side timing
against liegrad and as a second, independent check of the model maths (docs/models.md §4-6).

    # mean loss / BPC of a liegrad checkpoint's weights on a text (agreement test):
    python3 bench/torch_reference.py --checkpoint RUN/last.json --text FILE [--json] [--dtype float64]
    # median training throughput of a config (AdamW, batch x seq_len of the config):
    python3 bench/torch_reference.py --config configs/osmformer-linear.json --steps 20 --threads 2 --json
    # the same from a trained liegrad checkpoint's config and weights (bench/compare.sh's trained rows):
    python3 bench/torch_reference.py --weights RUN/last.json --steps 20 --threads 2 --json

Both modes run the same code: the models compute the same function as liegrad for
the same weights (names, shapes and layouts of docs/checkpoint.md; the group
coordinate maps come from examples/load_checkpoint.py), in float32 unless asked.
Written for speed the way a careful PyTorch user would (eager mode): batched tensor ops
everywhere; the only Python loops run over time in the recurrent models (and nn.LSTM's
fused kernel for the LSTM), over inputs split once with unbind; hat/vee are gathers; the
exponential is the faster, measured at start-up on the model's own batch shape, of
torch.linalg.matrix_exp and a batched Taylor polynomial in Paterson-Stockmeyer form
(degree 6, 9 or 12 in 3, 4 or 5 products, whichever with its squarings is cheapest for
the bound sqrt(||A^2||_1) >= ||A||_2 and accurate to float32's unit roundoff; degree 12 at
||A/2^s||_2 <= 1 in float64). At these sizes (32 or 4,096 matrices of 15-23 rows) the cost
is the number of ops as much as their arithmetic: torch 1.13's bmm loops over the batch
with three selects and one BLAS call per matrix, about 1 us per 16 x 16 product.
When timing training, torch's own thread count (torch.set_num_threads) is chosen after the
warm-up as the faster of --threads and 1 over two alternating steps (the recurrent models'
per-token ops are too small to gain from a second thread and wait for it on a loaded
machine; see pick_torch_threads), or --torch-threads N; then OpenBLAS's the same way
(torch's element-wise threads and OpenBLAS's own would otherwise share the cores; see
openblas_threads_setter), or --blas-threads N.

Measured against the version before these choices (the two alternating, 3 pairs per
model, `--config configs/M.json --steps 6 --warmup 2 --threads 2 --json`, on the 2-core
virtual machine (cpuinfo: Intel Xeon, AVX-512; OpenBLAS kernels SkylakeX) at a load average
near 8; medians of the runs' median tokens/s, old -> new):
osm-rnn-linear 1,004 -> 11,435, osm-rnn-identity 1,398 -> 15,966, exprnn 1,225 -> 33,719,
osmformer-linear 1,024 -> 4,284, osmformer-91k 715 -> 3,076. Much of that at 2 threads is
torch's thread choice; with --threads 1 for both, osm-rnn-linear went 4,867 -> 10,733
(the unbind) and osmformer-linear 3,619 -> 4,295 (the exponential; its bmm loops over
4,096 matrices).

Training-mode timing mirrors `liegrad bench` (measure/bench.cpp): random
initialisation (liegrad's init distributions), synthetic uniform tokens of the
config's vocabulary size (65 Tiny Shakespeare, 50 PTB char), recurrent state
carried across steps as in truncated BPTT, cross-entropy, backward, global-norm
clipping, AdamW (decay on weight matrices only) at a constant learning rate.
Warm-up steps are not timed. Reported: tokens/s per step (median, min, max),
tokens per second of process CPU time, and the process's peak RSS (ru_maxrss),
with the JSON keys liegrad bench uses. `--op expm --d 16 --n 4096` times the
batched exponential with its pullback alone (Frobenius-norm-1 skew inputs and
cotangents, as liegrad's).
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import load_checkpoint as lc  # noqa: E402  (checkpoint reading, group coordinate orders)

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_reference.py: PyTorch is required (Debian: apt-get install python3-torch)")


# ----------------------------------------------------------------------------- group maps


def hat_triplets(g):
    """hat of a group of examples/load_checkpoint.py as sparse triplets (entry, coordinate,
    coefficient), entry = row * n + column of the stored n x n matrix, built from the
    structure (groups/*.cpp head comments) so that large groups (SO(335)) stay cheap."""
    n = g.n
    out = []
    if isinstance(g, lc.Orthogonal):
        for p, (i, j) in enumerate(zip(*g.iu)):
            out += [(i * n + j, p, 1 / lc.SQRT2), (j * n + i, p, -1 / lc.SQRT2)]
    elif isinstance(g, lc.Unitary):
        d = g.d

        def put(i, j, k, x, y):  # coordinate k contributes x + iy to entry (i, j) of the complex matrix
            if x:
                out.extend([(i * n + j, k, x), ((d + i) * n + d + j, k, x)])
            if y:
                out.extend([((d + i) * n + j, k, y), (i * n + d + j, k, -y)])

        for k in range(g.ndiag):
            if g.kind == "SU":
                for j in range(d):
                    if g.D[k, j]:
                        put(j, j, k, 0.0, g.D[k, j])
            else:
                put(k, k, k, 0.0, 1.0)
        if g.kind != "T":
            for p, (i, j) in enumerate(zip(*g.iu)):
                kr, ki = g.ndiag + p, g.ndiag + g.P + p
                put(i, j, kr, 1 / lc.SQRT2, 0.0)
                put(j, i, kr, -1 / lc.SQRT2, 0.0)
                put(i, j, ki, 0.0, 1 / lc.SQRT2)
                put(j, i, ki, 0.0, 1 / lc.SQRT2)
    elif isinstance(g, lc.Complexified):
        a = g.g.n
        for e, k, c in hat_triplets(g.g):
            r, col = divmod(e, a)
            out += [(r * n + col, k, c), ((a + r) * n + a + col, k, c)]
    elif isinstance(g, lc.Product):
        o = co = 0
        for f in g.parts:
            for e, k, c in hat_triplets(f):
                r, col = divmod(e, f.n)
                out.append(((o + r) * n + o + col, co + k, c))
            o, co = o + f.n, co + f.m
    else:
        raise ValueError("no hat table for group %s" % g.name)
    return out


class GroupMaps:
    """hat: (N,m) -> (N,n,n) and vee: (N,n,n) -> (N,m) of a liegrad group as gathers.

    Both are tabulated once from the group's structure: every stored entry of hat(u) is a
    combination of at most K coordinates, every coordinate of vee(X) one of at most K'
    entries, and vee = s * hat^T (groups/group.hpp, s the real scale)."""

    def __init__(self, spec, dtype):
        g = lc.make_group(spec)
        self.g, self.n, self.m, self.s = g, g.n, g.m, lc.real_scale(g)
        trip = hat_triplets(g)
        self.hat_idx, self.hat_coef = self._table(g.n * g.n, [(e, k, c) for e, k, c in trip], dtype)
        self.vee_idx, self.vee_coef = self._table(g.m, [(k, e, self.s * c) for e, k, c in trip], dtype)

    @staticmethod
    def _table(rows, trip, dtype):
        """Triplets (row, col, value) as padded per-row (index, coefficient) lists."""
        per = [[] for _ in range(rows)]
        for r, c, v in trip:
            per[r].append((c, v))
        K = max(1, max(len(x) for x in per))
        idx = np.zeros((rows, K), dtype=np.int64)
        coef = np.zeros((rows, K))
        for r, x in enumerate(per):
            for t, (c, v) in enumerate(x):
                idx[r, t], coef[r, t] = c, v
        return torch.from_numpy(idx.reshape(-1)), torch.from_numpy(coef).to(dtype)

    def _apply(self, x, idx, coef):
        N = x.shape[0]
        g = x.index_select(1, idx).view(N, coef.shape[0], coef.shape[1]) * coef
        return g.squeeze(2) if coef.shape[1] == 1 else g.sum(2)

    def hat(self, u):
        return self._apply(u, self.hat_idx, self.hat_coef).view(-1, self.n, self.n)

    def vee(self, X):
        return self._apply(X.reshape(-1, self.n * self.n), self.vee_idx, self.vee_coef)

    def identity(self, dtype):
        return torch.eye(self.n, dtype=dtype)


# ----------------------------------------------------------------------------- exponential

_INV_FACT = [1.0 / math.factorial(k) for k in range(20)]


def _taylor_theta(m, u):
    """The largest t with sum_{k>m} t^k / k! <= u: below it the degree-m Taylor polynomial's
    truncation error is at most u in any submultiplicative norm (bisection)."""
    lo, hi = 0.0, 8.0
    for _ in range(60):
        t = 0.5 * (lo + hi)
        lo, hi = (t, hi) if sum(t ** k * _INV_FACT[k] for k in range(m + 1, 20)) <= u else (lo, t)
    return lo


# Paterson-Stockmeyer plans (degree m, block size q): the powers X..X^q (q - 1 products, the
# first being A^2), then m/q - 1 Horner products in X^q, so 3, 4 and 5 products. float32 uses
# the cheapest plan accurate to its unit roundoff 2^-24 (with the squarings it needs);
# float64 keeps degree 12 at ||X||_2 <= 1 (truncation error < 2e-10).
_PS_PLANS = {torch.float32: [(6, 3, _taylor_theta(6, 2.0 ** -24)), (9, 3, _taylor_theta(9, 2.0 ** -24)),
                             (12, 4, _taylor_theta(12, 2.0 ** -24))],
             torch.float64: [(12, 4, 1.0)]}
_ps_tables = {}


def _ps_plan(bound, dtype):
    """(m, q, s): the plan with the fewest products (Horner's and s squarings) for ||A||_2 <= bound."""
    best = None
    for m, q, theta in _PS_PLANS.get(dtype, _PS_PLANS[torch.float64]):
        s = max(0, int(math.ceil(math.log2(bound / theta)))) if bound > theta else 0
        cost = (q - 1) + (m // q - 1) + s
        if best is None or cost <= best[0]:
            best = (cost, m, q, s)
    return best[1:]


def _ps_table(m, q, dtype):
    """The coefficients of X..X^q (rows: the blocks B_{m/q-1} .. B_0, Horner order) and of I."""
    key = (m, q, dtype)
    if key not in _ps_tables:
        r = m // q
        coef = [[_INV_FACT[j * q + i] if i < q or j == r - 1 else 0.0 for i in range(1, q + 1)] for j in reversed(range(r))]
        diag = [_INV_FACT[j * q] for j in reversed(range(r))]
        _ps_tables[key] = (torch.tensor(coef, dtype=dtype), torch.tensor(diag, dtype=dtype).view(r, 1, 1))
    return _ps_tables[key]


def expm_taylor(A):
    """exp of a batch of skew matrices (N,n,n) (every exponent here is hat(u) of a compact
    group's algebra): a Taylor polynomial in Paterson-Stockmeyer form with scaling and
    squaring, exp(A) = T(A / 2^s)^(2^s), the plan chosen from a bound on ||A||_2.

    Written for few, large tensor ops, since at these sizes each op's overhead costs as
    much as its arithmetic: the bound is ||A||_2 <= sqrt(||A^2||_1) (A^2 is symmetric for skew
    A, so its 1-norm bounds its spectral radius), A^2 is the polynomial's first product
    (scaled, X^2 = A^2 / 4^s); the blocks B_j = c_{jq} I + ... + c_{jq+q-1} X^{q-1} (the top one
    with c_m X^q) are one (m/q, q) x (q, N n^2) product over the stacked powers and one
    diagonal add, and the Horner steps P <- B_j + X^q P are baddbmm's."""
    N, n = A.shape[0], A.shape[-1]
    A2 = torch.bmm(A, A)
    bound = math.sqrt(float(A2.detach().abs().sum(-2).amax())) if A.numel() else 0.0
    m, q, s = _ps_plan(bound, A.dtype)
    X, X2 = (A * (0.5 ** s), A2 * (0.25 ** s)) if s else (A, A2)
    powers = [X, X2]
    while len(powers) < q:  # X^k = X^2 X^(k-2)
        powers.append(torch.bmm(X2, powers[-2]))
    coef, diag = _ps_table(m, q, A.dtype)
    blocks = torch.mm(coef, torch.stack(powers).view(q, -1)).view(-1, N, n, n)
    blocks.diagonal(dim1=-2, dim2=-1).add_(diag)
    blocks = blocks.unbind(0)  # one node whose backward is one stack (selects: a zero-filled add each)
    P, Xq = blocks[0], powers[-1]
    for B in blocks[1:]:
        P = torch.baddbmm(B, Xq, P)
    for _ in range(s):
        P = torch.bmm(P, P)
    return P


def expm_torch(A):
    return torch.linalg.matrix_exp(A)


EXPM = {"taylor": expm_taylor, "matrix_exp": expm_torch}


def openblas_threads_setter():
    """openblas_set_num_threads of the OpenBLAS torch loaded, or None (another BLAS).

    Debian's torch runs its element-wise ops on OpenMP threads (torch.set_num_threads) and
    its products on OpenBLAS's own pthreads, two thread pools on the same cores; while
    libgomp's threads spin between parallel regions, OpenBLAS's wait for a core. On the
    2-core AMD EPYC (docs/performance-log.md) 2-thread nn.LSTM steps
    ran at 6,013-57,353 tokens/s, and at 50,029-75,970 with OpenBLAS on one thread;
    alternating runs (medians of 10 steps) gave the LSTM 15,177-21,033 against
    51,977-81,279 tokens/s and the transformer 15,767-19,477 against 25,332-27,133."""
    import ctypes
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "openblas" in path and ".so" in path:
            try:
                f = ctypes.CDLL(path).openblas_set_num_threads
            except (OSError, AttributeError):
                continue
            f.argtypes = [ctypes.c_int]
            return f
    return None


def pick_blas_threads(step, threads, choice, rounds=2):
    """Sets and returns OpenBLAS's thread count: `choice` if it is a number, else ("auto")
    the faster of `threads` and 1 over `rounds` alternating calls of step() each (their
    summed times, so the slow steps of an oversubscribed setting count), and the probe's
    times {threads: seconds}. (None, {}) when torch's BLAS is not OpenBLAS."""
    setter = openblas_threads_setter()
    if setter is None:
        return None, {}
    if choice != "auto":
        setter(int(choice))
        return int(choice), {}
    candidates = sorted({threads, 1}, reverse=True)
    times = {c: 0.0 for c in candidates}
    for _ in range(rounds):
        for c in candidates:
            setter(c)
            t0 = time.perf_counter()
            step()
            times[c] += time.perf_counter() - t0
    best = min(candidates, key=lambda c: times[c])
    setter(best)
    return best, {str(c): t for c, t in times.items()}


def pick_torch_threads(step, threads, choice, rounds=2):
    """Sets and returns torch's intra-op thread count (torch.set_num_threads): `choice` if it is
    a number, else ("auto") the faster of `threads` and 1 over `rounds` alternating calls of
    step() each, and the probe's times {threads: seconds}.

    The recurrent models' per-token tensors hold 17K-64K floats (32 x 23 x 23 states, the
    253 x 253 mixing's gradient added once per token), around torch's grain of 32,768
    elements, so a training step opens hundreds of OpenMP parallel regions of a few
    microseconds' work each. On a loaded machine each waits for the second thread to be
    scheduled: on the 2-core virtual machine (see the head comment) at a load average near
    8, osm-rnn-linear with 2 threads ran at 912-1,123 tokens/s both before and after the
    unbind and exponential changes (user time equal to wall time: the second thread
    spinning), and with 1 thread at 4,556-5,187 before them and 10,532-11,120 after. When
    the machine is quiet the probe keeps `threads`."""
    if choice != "auto":
        torch.set_num_threads(int(choice))
        return int(choice), {}
    candidates = sorted({threads, 1}, reverse=True)
    times = {c: 0.0 for c in candidates}
    for _ in range(rounds):
        for c in candidates:
            torch.set_num_threads(c)
            t0 = time.perf_counter()
            step()
            times[c] += time.perf_counter() - t0
    best = min(candidates, key=lambda c: times[c])
    torch.set_num_threads(best)
    return best, {str(c): t for c, t in times.items()}


def time_steps(step, steps):
    """Runs step() `steps` times: each call's wall seconds, and the process CPU seconds of all."""
    secs = []
    cpu0 = time.process_time()
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        secs.append(time.perf_counter() - t0)
    return secs, time.process_time() - cpu0


def probe_expm(n, N, threads, repeats=7):
    """Best time of forward + backward of each route on N skew n x n float32 matrices of norm ~1;
    the routes alternate, so a change of machine load hits both alike."""
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    B = torch.randn(N, n, n, generator=gen)
    A0 = (B - B.transpose(1, 2)) / (2.0 * math.sqrt(n))
    times = {name: float("inf") for name in EXPM}
    for _ in range(repeats):
        for name, f in EXPM.items():
            A = A0.clone().requires_grad_(True)
            t0 = time.perf_counter()
            f(A).sum().backward()
            times[name] = min(times[name], time.perf_counter() - t0)
    return times


def pick_expm(n, N, threads, choice):
    """The faster route ("auto"), measured in a child process so that the probe's memory does
    not count in this process's peak RSS; or the given choice."""
    if choice != "auto":
        return choice, {}
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-expm", str(n), str(N),
                          "--threads", str(threads)], capture_output=True, text=True)
    try:
        times = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError("the exponential probe failed: %s" % (res.stderr.strip() or res.stdout.strip()))
    return min(times, key=times.get), times


# ----------------------------------------------------------------------------- models
# Every model holds `params`: {liegrad name: tensor} in liegrad's layout, and `decay`:
# the names AdamW decays (role "weight"). forward(x (B,T) long, state) -> (logits (B,T,V), state).


def alibi_bias(h, T, slopes, dtype):
    """(h,T,T): -slope_k (i - j) on j <= i, -inf above the diagonal."""
    i = torch.arange(T)
    dist = (i[:, None] - i[None, :]).to(dtype)
    bias = -torch.as_tensor(slopes, dtype=dtype)[:, None, None] * dist
    return bias.masked_fill(i[None, :] > i[:, None], float("-inf"))


class Mixing:
    def __init__(self, model, name, kind, m, rank, init):
        self.kind = kind
        if kind == "linear":
            self.G = model.add(name, init.get(name, lambda: torch.eye(m)))
        elif kind == "bounded":  # Gamma = I - W / sqrt(1 + ||W||_F^2), W = 0 at init
            self.W = model.add(name, init.get(name, lambda: torch.zeros(m, m)))
        elif kind == "lowrank":
            self.U = model.add(name + ".u", init.get(name + ".u", lambda: torch.zeros(m, rank)))
            self.V = model.add(name + ".v", init.get(name + ".v", lambda: torch.randn(m, rank) / math.sqrt(m)))

    def __call__(self, u):
        if self.kind == "linear":
            return u @ self.G.t()
        if self.kind == "bounded":
            W = self.W
            G = torch.eye(W.shape[0], dtype=W.dtype) - W / torch.sqrt(1 + (W * W).sum())
            return u @ G.t()
        if self.kind == "lowrank":
            return u + (u @ self.V) @ self.U.t()
        return u


class Base:
    def __init__(self, dtype):
        self.dtype, self.params, self.decay, self.modules = dtype, {}, set(), []

    def add(self, name, make, decay=False):
        t = make().to(self.dtype).detach().clone().requires_grad_(True)
        self.params[name] = t
        if decay:
            self.decay.add(name)
        return t

    def named_parameters(self):
        out = list(self.params.items())
        for prefix, mod in self.modules:
            out += [(prefix + k, v) for k, v in mod.named_parameters() if v.requires_grad]
        return out


class OsmBase(Base):
    """embed, proto (algebra coordinates or manifold elements), bias, log_tau."""

    def __init__(self, cfg, V, init, dtype, expm):
        super().__init__(dtype)
        self.maps = GroupMaps(cfg.get("group", "SO(16)"), dtype)
        self.mixing, self.rank = cfg.get("mixing", "linear"), int(cfg.get("rank", 8))
        self.mode = cfg.get("group_param", "algebra")
        self.expm, self.V = expm, V
        m = self.maps.m
        sd = float(cfg.get("init_scale", 1.0)) / math.sqrt(m)
        tied = cfg.get("readout", "prototypes") == "tied"  # the OSM-RNN's P_v = N_v: no proto
        for name in ("embed",) if tied else ("embed", "proto"):
            if self.mode == "algebra":
                self.add(name, init.get(name, lambda: torch.randn(V, m, dtype=torch.float64) * sd))
                if name + ".base" in init:
                    self.params[name + ".base"] = init[name + ".base"]().to(dtype)  # fixed, not trained
            else:
                self.add(name, init.get(name, lambda: torch.linalg.matrix_exp(
                    self.maps.hat(torch.randn(V, m, dtype=torch.float64) * sd).to(torch.float64))))
        self.add("bias", init.get("bias", lambda: torch.zeros(V)))
        self.fixed_tau = cfg.get("tau")  # model.tau: fixed, no log_tau parameter
        if self.fixed_tau is None:
            self.add("log_tau", init.get("log_tau", lambda: torch.zeros(())))

    def elements(self, name):
        if self.mode == "manifold":
            return self.params[name]
        E = self.expm(self.maps.hat(self.params[name]))
        base = self.params.get(name + ".base")
        return E if base is None else base @ E

    def readout(self, H, proto):
        """H (N,n,n) -> (N,V): tau Re tr(H* P_v) + b_v as one GEMM."""
        n2 = self.maps.n ** 2
        tau = float(self.fixed_tau) if self.fixed_tau is not None else torch.exp(self.params["log_tau"])
        scale = self.maps.s * tau
        return (H.reshape(-1, n2) @ proto.reshape(self.V, n2).t()) * scale + self.params["bias"]

    def update(self, H, u):
        return H @ self.expm(self.maps.hat(u))


class OsmFormer(OsmBase):
    recurrent = False

    def __init__(self, cfg, V, init, dtype, expm):
        super().__init__(cfg, V, init, dtype, expm)
        self.L, self.h = int(cfg.get("layers", 3)), int(cfg.get("heads", 4))
        # relative (alias on), combined, token or off (docs/models.md section 5)
        self.grounding = lc.grounding_of(cfg)
        if self.grounding not in ("relative", "combined", "token", "off"):
            raise ValueError("model.grounding: unknown reading %r" % self.grounding)
        if self.grounding == "token" and self.mode != "algebra":
            raise ValueError("model.grounding: token needs group_param algebra")
        shared = cfg.get("grounding_mixing", "separate") == "shared"
        zero = cfg.get("grounding_init", "identity") == "zero"
        self.slopes = lc.alibi_slopes(self.h) if cfg.get("positional", "alibi") == "alibi" else np.zeros(self.h)
        beta0 = -0.5 * math.log(self.maps.n * self.maps.s)  # 1/sqrt(d), d the complex size
        m = self.maps.m
        self.layers = []
        for l in range(self.L):
            p = "layers.%d." % l
            lb = self.add(p + "log_beta", init.get(p + "log_beta", lambda: torch.full((self.h,), beta0)))
            att = Mixing(self, p + ("mix" if shared else "mix_att"), self.mixing, m, self.rank, init)
            gnd = None
            if self.grounding != "off":
                gnd_init = dict(init)
                if zero and p + "mix_gnd" not in init:
                    gnd_init[p + "mix_gnd"] = lambda: torch.zeros(m, m)
                gnd = att if shared else Mixing(self, p + "mix_gnd", self.mixing, m, self.rank, gnd_init)
            self.layers.append((lb, att, gnd))
        self._bias = {}

    def forward(self, x, state=None):
        B, T = x.shape
        n, maps = self.maps.n, self.maps
        if T not in self._bias:
            self._bias[T] = alibi_bias(self.h, T, self.slopes, self.dtype)
        bias = self._bias[T]
        E = self.elements("embed")
        M = E.index_select(0, x.reshape(-1))  # (BT,n,n)
        H = M
        for lb, att, gnd in self.layers:
            X = H.reshape(B, T, n * n)
            gram = X @ X.transpose(1, 2)  # (B,T,T) tr(H_i^T H_j) = Re tr(H_i* H_j) / s
            sc = (torch.exp(lb) * maps.s).view(1, -1, 1, 1) * gram.unsqueeze(1) + bias  # (B,h,T,T)
            abar = torch.softmax(sc, dim=-1).mean(1)
            A = (abar @ X).view(B * T, n, n)
            if self.grounding == "combined":
                if gnd is att or self.mixing == "identity":
                    # one linear map for both tangents: Gamma vee(H* A) + Gamma vee(H* M) =
                    # Gamma vee(H* (A + M)), one product, one vee and one mixing instead of two
                    H = self.update(H, att(maps.vee(H.transpose(1, 2) @ (A + M))))
                else:
                    H = self.update(H, att(maps.vee(H.transpose(1, 2) @ A)) + gnd(maps.vee(H.transpose(1, 2) @ M)))
                continue
            u_att = att(maps.vee(H.transpose(1, 2) @ A))
            H = self.update(H, u_att)
            if self.grounding == "relative":
                H = self.update(H, gnd(maps.vee(H.transpose(1, 2) @ M)))
            elif self.grounding == "token":
                # exp once per vocabulary entry, gathered per position (as liegrad's token_update)
                Ev = self.expm(maps.hat(gnd(self.params["embed"])))
                H = H @ Ev.index_select(0, x.reshape(-1))
        return self.readout(H, self.elements("proto")).view(B, T, self.V), None


class OsmRnn(OsmBase):
    recurrent = True

    def __init__(self, cfg, V, init, dtype, expm):
        super().__init__(cfg, V, init, dtype, expm)
        self.drive = cfg.get("rnn_drive", "relative")
        self.renorm = int(cfg.get("renormalize_every", 16))
        self.mix = Mixing(self, "mix", self.mixing, self.maps.m, self.rank, init)

    def forward(self, x, state=None):
        B, T = x.shape
        n, maps = self.maps.n, self.maps
        H = maps.identity(self.dtype).expand(B, n, n) if state is None else state
        E = self.elements("embed")
        # Time-major token elements, split once: indexing Ms[t] in the loop would record T
        # select nodes, each of whose backward writes a zero-filled (T,B,n,n) gradient and
        # adds it up, O(T^2) work (74% of a step's time); unbind's backward is one stack.
        Ms = E.index_select(0, x.t().reshape(-1)).view(T, B, n, n).unbind(0)
        I15 = 1.5 * torch.eye(n, dtype=self.dtype)
        states = []
        for t in range(T):
            M = Ms[t]
            if self.drive == "element":  # the token's algebra coordinates b_x (M = exp(hat(b)))
                u = self.params["embed"].index_select(0, x[:, t])
            elif self.drive == "token":
                u = maps.vee(M)
            else:
                u = maps.vee(H.transpose(1, 2) @ M)
                if self.drive == "both":
                    u = u + maps.vee(M)
            H = self.update(H, self.mix(u))
            if self.renorm > 0 and (t + 1) % self.renorm == 0:  # straight-through Newton-Schulz step
                with torch.no_grad():
                    corr = H @ (I15 - 0.5 * (H.transpose(1, 2) @ H)) - H
                H = H + corr
            states.append(H)
        Hs = torch.stack(states, 1)  # (B,T,n,n)
        return self.readout(Hs, self.prototypes()).view(B, T, self.V), H.detach()

    def prototypes(self):
        """P_v (V,n,n): the learned prototypes, or with readout: tied the transitions
        N_v = exp(hat(Gamma r_v)), r_v = b_v (element drive) or vee(M_v) (token)."""
        if "proto" in self.params:
            return self.elements("proto")
        maps = self.maps
        r = self.params["embed"] if self.drive == "element" else maps.vee(self.elements("embed"))
        return self.expm(maps.hat(self.mix(r)))


class Transformer(Base):
    recurrent = False

    def __init__(self, cfg, V, init, dtype, expm=None):
        super().__init__(dtype)
        D, L, h = int(cfg.get("D", 64)), int(cfg.get("layers", 2)), int(cfg.get("heads", 4))
        self.D, self.L, self.h, self.V = D, L, h, V
        self.slopes = lc.alibi_slopes(h) if cfg.get("positional", "alibi") == "alibi" else np.zeros(h)
        std = float(cfg.get("init_std", 0.02))
        rstd = std / math.sqrt(2.0 * L)
        w = lambda name, shape, sd: self.add(name, init.get(name, lambda: torch.randn(*shape) * sd), decay=True)
        z = lambda name, k: self.add(name, init.get(name, lambda: torch.zeros(k)))
        o = lambda name, k: self.add(name, init.get(name, lambda: torch.ones(k)))
        self.embed = w("embed", (V, D), std)
        self.blocks = []
        for l in range(L):
            p = "layers.%d." % l
            self.blocks.append(dict(
                ln1_w=o(p + "ln1.weight", D), ln1_b=z(p + "ln1.bias", D),
                qkv_w=w(p + "attn.qkv.weight", (D, 3 * D), std), qkv_b=z(p + "attn.qkv.bias", 3 * D),
                proj_w=w(p + "attn.proj.weight", (D, D), rstd), proj_b=z(p + "attn.proj.bias", D),
                ln2_w=o(p + "ln2.weight", D), ln2_b=z(p + "ln2.bias", D),
                fc_w=w(p + "mlp.fc.weight", (D, 4 * D), std), fc_b=z(p + "mlp.fc.bias", 4 * D),
                fc2_w=w(p + "mlp.proj.weight", (4 * D, D), rstd), fc2_b=z(p + "mlp.proj.bias", D)))
        self.lnf_w, self.lnf_b = o("ln_f.weight", D), z("ln_f.bias", D)
        self.tied = cfg.get("head", "untied") == "tied"  # logits = x embed^T, no bias
        if not self.tied:
            self.head_w, self.head_b = w("head.weight", (D, V), std), z("head.bias", V)
        self._bias = {}

    def forward(self, x, state=None):
        B, T = x.shape
        D, h = self.D, self.h
        e = D // h
        if T not in self._bias:
            self._bias[T] = alibi_bias(h, T, self.slopes, self.dtype)
        bias = self._bias[T]
        z = self.embed.index_select(0, x.reshape(-1))  # (BT,D)
        scale = 1.0 / math.sqrt(e)
        for b in self.blocks:
            a = F.layer_norm(z, (D,), b["ln1_w"], b["ln1_b"], 1e-5)
            qkv = torch.addmm(b["qkv_b"], a, b["qkv_w"]).view(B, T, 3, h, e).permute(2, 0, 3, 1, 4)  # (3,B,h,T,e)
            q, k, v = qkv[0], qkv[1], qkv[2]
            s = torch.baddbmm(bias.repeat(B, 1, 1), q.reshape(B * h, T, e), k.reshape(B * h, T, e).transpose(1, 2),
                              alpha=scale)
            o_ = torch.bmm(torch.softmax(s, -1), v.reshape(B * h, T, e)).view(B, h, T, e).transpose(1, 2)
            z = z + torch.addmm(b["proj_b"], o_.reshape(B * T, D), b["proj_w"])
            a = F.layer_norm(z, (D,), b["ln2_w"], b["ln2_b"], 1e-5)
            z = z + torch.addmm(b["fc2_b"], F.gelu(torch.addmm(b["fc_b"], a, b["fc_w"])), b["fc2_w"])
        z = F.layer_norm(z, (D,), self.lnf_w, self.lnf_b, 1e-5)
        if self.tied:
            return (z @ self.embed.t()).view(B, T, self.V), None
        return torch.addmm(self.head_b, z, self.head_w).view(B, T, self.V), None


class Lstm(Base):
    """nn.LSTM (gates i, f, g, o as liegrad) with liegrad's weights: weight_ih = w_ih^T,
    bias_ih = bias and a frozen zero bias_hh (so one bias of 4h, as in liegrad)."""

    recurrent = True

    def __init__(self, cfg, V, init, dtype, expm=None):
        super().__init__(dtype)
        h, L = int(cfg.get("hidden", 104)), int(cfg.get("layers", 1))
        self.h, self.L, self.V = h, L, V
        bound = 1.0 / math.sqrt(h)
        uni = lambda *shape: (torch.rand(*shape) * 2 - 1) * bound
        self.embed = self.add("embed", init.get("embed", lambda: torch.randn(V, h)), decay=True)
        self.lstm = torch.nn.LSTM(h, h, num_layers=L, batch_first=True).to(dtype)
        with torch.no_grad():
            for l in range(L):
                p = "layers.%d." % l
                getattr(self.lstm, "weight_ih_l%d" % l).copy_(init.get(p + "w_ih", lambda: uni(h, 4 * h))().t())
                getattr(self.lstm, "weight_hh_l%d" % l).copy_(init.get(p + "w_hh", lambda: uni(h, 4 * h))().t())
                b = init.get(p + "bias", lambda: torch.cat([uni(h), torch.ones(h), uni(2 * h)]))()
                getattr(self.lstm, "bias_ih_l%d" % l).copy_(b)
                bhh = getattr(self.lstm, "bias_hh_l%d" % l)
                bhh.zero_()
                bhh.requires_grad_(False)
                self.decay.update({"lstm.weight_ih_l%d" % l, "lstm.weight_hh_l%d" % l})
        self.modules.append(("lstm.", self.lstm))
        self.head_w = self.add("head.weight", init.get("head.weight", lambda: uni(h, V)), decay=True)
        self.head_b = self.add("head.bias", init.get("head.bias", lambda: uni(V)))

    def forward(self, x, state=None):
        B, T = x.shape
        z, st = self.lstm(self.embed[x], state)
        return torch.addmm(self.head_b, z.reshape(B * T, self.h), self.head_w).view(B, T, self.V), \
            tuple(s.detach() for s in st)


class ExpRnn(Base):
    recurrent = True

    def __init__(self, cfg, V, init, dtype, expm):
        super().__init__(dtype)
        h = self.h = int(cfg.get("hidden", 128))
        self.V, self.expm = V, expm
        self.maps = GroupMaps("SO(%d)" % h, dtype)

        def henaff():
            A = np.zeros((1, h, h))
            th = np.random.uniform(-math.pi, math.pi, size=h // 2)
            for k, i in enumerate(range(0, h - 1, 2)):
                A[0, i, i + 1], A[0, i + 1, i] = th[k], -th[k]
            return torch.from_numpy(self.maps.g.vee(A))

        bound = 1.0 / math.sqrt(h)
        self.a = self.add("transition", init.get("transition", henaff))  # (1, m)
        self.inp = self.add("input", init.get("input", lambda: torch.randn(V, h) / math.sqrt(h)), decay=True)
        self.b = self.add("modrelu_bias", init.get("modrelu_bias", lambda: (torch.rand(h) * 2 - 1) * 0.01))
        self.head_w = self.add("head.weight", init.get("head.weight", lambda: (torch.rand(h, V) * 2 - 1) * bound),
                               decay=True)
        self.head_b = self.add("head.bias", init.get("head.bias", lambda: (torch.rand(V) * 2 - 1) * bound))

    def forward(self, x, state=None):
        B, T = x.shape
        Qt = self.expm(self.maps.hat(self.a))[0].t()
        hs = torch.zeros(B, self.h, dtype=self.dtype) if state is None else state
        e = self.inp[x.t()].unbind(0)  # T of (B,h), split once (see OsmRnn.forward)
        outs = []
        for t in range(T):
            z = torch.addmm(e[t], hs, Qt)
            mag = z.abs() + self.b
            r = F.relu(mag)
            hs = torch.where(z >= 0, r, -r)  # modReLU, sign(0) = +
            outs.append(hs)
        Hs = torch.stack(outs, 1).reshape(B * T, self.h)
        return torch.addmm(self.head_b, Hs, self.head_w).view(B, T, self.V), hs.detach()


MODELS = {"osmformer": OsmFormer, "osm_rnn": OsmRnn, "transformer": Transformer, "lstm": Lstm, "exprnn": ExpRnn}


def build(cfg, V, init, dtype, expm):
    t = cfg.get("type")
    if t not in MODELS:
        raise lc.CheckpointError("model.type %r is not one of %s" % (t, ", ".join(MODELS)))
    return MODELS[t](cfg, V, init, dtype, expm)


# ----------------------------------------------------------------------------- agreement mode


def nll_sum(logits, y):
    return float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), y.reshape(-1), reduction="sum"))


def evaluate(model, ids, seq_len, batch=16):
    """tasks/evaluate.cpp's windows; returns (nats per symbol, predictions)."""
    N = ids.numel()
    starts = list(range(0, N - 1, seq_len))
    total = 0.0
    with torch.no_grad():
        if model.recurrent:
            state = None
            for s in starts:
                n = min(seq_len, N - 1 - s)
                logits, state = model.forward(ids[None, s:s + n], state)
                total += nll_sum(logits, ids[None, s + 1:s + 1 + n])
        else:
            full = [s for s in starts if s + seq_len <= N - 1]
            for k in range(0, len(full), batch):
                ss = full[k:k + batch]
                x = torch.stack([ids[s:s + seq_len] for s in ss])
                y = torch.stack([ids[s + 1:s + 1 + seq_len] for s in ss])
                total += nll_sum(model.forward(x)[0], y)
            if len(full) < len(starts):
                s = starts[-1]
                n = N - 1 - s
                total += nll_sum(model.forward(ids[None, s:s + n])[0], ids[None, s + 1:s + 1 + n])
    return total / (N - 1), N - 1


def agreement(args, checkpoint):
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    j, params, vocab = lc.load_checkpoint(checkpoint)
    source = "checkpoint '%s'" % checkpoint
    lc.build_model(j, params, source)  # validates names and shapes against the config
    cfg = j["config"]["model"]
    init = {k: (lambda v=v: torch.from_numpy(np.array(v))) for k, v in params.items()}
    ids = torch.from_numpy(lc.encode_text(args.text, vocab))
    seq_len = int(j["config"]["train"]["seq_len"])
    # Every exponential route the timing mode may pick ("auto" evaluates both).
    routes = list(EXPM) if args.expm == "auto" else [args.expm]
    if cfg["type"] in ("transformer", "lstm"):
        routes = ["none"]  # no exponential
    losses = {}
    for r in routes:
        model = build(cfg, len(vocab), init, dtype, EXPM.get(r, expm_taylor))
        losses[r], pred = evaluate(model, ids, seq_len)
    nats = losses[routes[0]]
    out = {"checkpoint": checkpoint, "source": args.text, "model": cfg["type"], "loss": nats, "nats": nats, "bpc": nats / math.log(2.0),
           "predictions": pred, "dtype": args.dtype, "loss_by_expm": losses}
    print(json.dumps(out) if args.json else "%s: loss %.6f nats, %.6f BPC over %d predictions (%s, torch %s; %s)"
          % (args.text, nats, out["bpc"], pred, cfg["type"], args.dtype,
             ", ".join("%s %.6f" % kv for kv in losses.items())))


# ----------------------------------------------------------------------------- timing mode


def vocab_of(dataset):
    """The vocabulary size liegrad's bench uses: 65 (Tiny Shakespeare), 50 (PTB char), or the
    distinct bytes of a text:<path> file."""
    if dataset == "tinyshakespeare":
        return 65
    if dataset == "ptb_char":
        return 50
    if dataset.startswith("text:"):
        with open(dataset[len("text:"):], "rb") as f:
            return len(set(f.read()))
    raise ValueError("unknown dataset %r" % dataset)


def spread(v):
    v = sorted(v)
    return {"median": float(np.median(v)), "min": v[0], "max": v[-1]}


def timing(args):
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    dtype = torch.float32
    init = {}
    if args.weights:  # a trained liegrad checkpoint: its config and weights (the trained rows)
        j, params, vocab = lc.load_checkpoint(args.weights)
        lc.build_model(j, params, "checkpoint '%s'" % args.weights)  # validates names and shapes
        cfg_all = j["config"]
        init = {k: (lambda v=v: torch.from_numpy(np.array(v))) for k, v in params.items()}
        V = len(vocab)
    else:
        with open(args.config) as f:
            cfg_all = json.load(f)
        V = vocab_of(cfg_all.get("data", {}).get("dataset", "tinyshakespeare"))
    cfg, tr = cfg_all["model"], cfg_all.get("train", {})
    B, T = int(args.batch or tr.get("batch", 32)), int(args.seq_len or tr.get("seq_len", 128))
    seed = int(tr.get("seed", 1))
    torch.manual_seed(seed)
    np.random.seed(seed)
    if cfg.get("group_param", "algebra") != "algebra":
        raise ValueError("timing mode trains algebra-mode group parameters only (liegrad's Riemannian steps for "
                         "group_param = manifold are not implemented here); the agreement mode reads both")
    expm_name, expm_times = "none", {}
    if cfg["type"] in ("osmformer", "osm_rnn", "exprnn"):
        n = lc.make_group(cfg.get("group", "SO(16)")).n if cfg["type"] != "exprnn" else int(cfg.get("hidden", 128))
        N = {"osmformer": B * T, "osm_rnn": B, "exprnn": 1}[cfg["type"]]
        expm_name, expm_times = pick_expm(n, N, args.threads, args.expm)
    model = build(cfg, V, init, dtype, EXPM.get(expm_name, expm_taylor))
    named = model.named_parameters()
    decay = [p for k, p in named if k in model.decay]
    other = [p for k, p in named if k not in model.decay]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": float(tr.get("weight_decay", 0.01))},
                             {"params": other, "weight_decay": 0.0}],
                            lr=float(tr.get("lr", 3e-3)), betas=(0.9, 0.999), eps=1e-8, foreach=True)
    clip = float(tr.get("clip", 1.0) or 0.0)
    params = [p for _, p in named]
    nparams = sum(p.numel() for p in params)
    gen = torch.Generator().manual_seed(seed + 7)
    losses = []

    def training_steps():
        # A generator, so that a step's tensors live until the next step reassigns them, as
        # in a plain training loop. Freed at each step's end instead (a function per step),
        # glibc returned their pages and the next step faulted them back in: PyTorch's
        # osmformer-linear took 911-927K page faults over 4 steps against 746-805K and ran
        # 20-35% slower (docs/performance-log.md).
        state = None
        while True:
            # synthetic uniform tokens, as `liegrad bench`; recurrent state carried as in TBPTT
            w = torch.randint(0, V, (B, T + 1), generator=gen)
            x, y = w[:, :-1], w[:, 1:]
            opt.zero_grad(set_to_none=True)
            logits, new_state = model.forward(x, state)
            loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(params, clip)
            opt.step()
            state = new_state if model.recurrent else None
            losses.append(float(loss))
            yield

    steps = training_steps()

    def train_step():
        next(steps)

    for _ in range(args.warmup):
        train_step()
    torch_threads, torch_probe = pick_torch_threads(train_step, args.threads, args.torch_threads)
    blas_threads, blas_probe = pick_blas_threads(train_step, args.threads, args.blas_threads)
    secs, cpu = time_steps(train_step, args.steps)
    tps = spread([B * T / t for t in secs])
    out = {"config": args.config or args.weights, "weights": args.weights, "model": cfg["type"], "parameters": nparams, "vocab": V, "batch": B, "seq_len": T,
           "threads": args.threads, "steps": args.steps, "warmup": args.warmup, "tokens_per_s": tps,
           "step_seconds_median": float(np.median(secs)), "tokens_per_cpu_s": B * T * args.steps / max(cpu, 1e-9),
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "expm": expm_name,
           "expm_probe_s": expm_times, "first_loss": losses[0], "last_loss": losses[-1], "torch": torch.__version__,
           # The kernels Debian's OpenBLAS runs for torch's dense products (None: OpenBLAS chose
           # from the CPU model, which on a CPU newer than the library is a narrow fallback).
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
           "blas_threads": blas_threads, "blas_threads_probe_s": blas_probe,
           "torch_threads": torch_threads, "torch_threads_probe_s": torch_probe}
    print(json.dumps(out) if args.json else
          "%s (%s, %d parameters): median %.0f tokens/s (min %.0f, max %.0f) over %d steps of %dx%d, %d threads; "
          "%.0f tokens per CPU second; peak RSS %.0f MiB; exp: %s; torch threads: %s; OpenBLAS threads: %s"
          % (out["config"], cfg["type"], nparams, tps["median"], tps["min"], tps["max"], args.steps, B, T, args.threads,
             out["tokens_per_cpu_s"], out["peak_rss_mib"], expm_name, torch_threads, blas_threads))


def expm_bench(args):
    """Batched exp + pullback of N skew d x d matrices (as `liegrad bench --op expm`)."""
    torch.set_num_threads(args.threads)
    name, probe = pick_expm(args.d, args.n, args.threads, args.expm)
    f = EXPM[name]
    gen = torch.Generator().manual_seed(0)
    Bm = torch.randn(args.n, args.d, args.d, generator=gen)
    A0 = Bm - Bm.transpose(1, 2)
    A0 = A0 / A0.flatten(1).norm(dim=1)[:, None, None]  # Frobenius norm 1, as liegrad's bench
    G = torch.randn(args.n, args.d, args.d, generator=gen)
    G = G / G.flatten(1).norm(dim=1)[:, None, None]

    def exp_steps():  # a generator, as timing()'s training_steps, so A lives until replaced
        while True:
            A = A0.clone().requires_grad_(True)
            f(A).backward(G)
            yield

    steps = exp_steps()

    def exp_step():
        next(steps)

    for _ in range(args.warmup):
        exp_step()
    blas_threads, blas_probe = pick_blas_threads(exp_step, args.threads, args.blas_threads)
    times, cpu = time_steps(exp_step, args.steps)
    mps = spread([args.n / t for t in times])
    out = {"op": "expm", "d": args.d, "n": args.n, "repeats": args.steps, "threads": args.threads,
           "matrices_per_s": mps, "matrices_per_cpu_s": args.n * args.steps / max(cpu, 1e-9), "expm": name,
           "expm_probe_s": probe, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
           "blas_threads": blas_threads, "blas_threads_probe_s": blas_probe}
    print(json.dumps(out) if args.json else "exp + pullback, d=%d N=%d: median %.0f matrices/s (%s)"
          % (args.d, args.n, mps["median"], name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", action="append",
                    help="liegrad checkpoint (agreement mode, with --text; repeat for several, one output line each)")
    ap.add_argument("--text", help="text file to evaluate on")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--config", help="liegrad config JSON (timing mode)")
    ap.add_argument("--weights", help="timing mode from a trained liegrad checkpoint: its config and weights")
    ap.add_argument("--op", choices=["expm"], help="time one op alone: batched exp + pullback")
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=0, help="override train.batch")
    ap.add_argument("--seq-len", type=int, default=0, help="override train.seq_len")
    ap.add_argument("--expm", choices=["auto", "taylor", "matrix_exp"], default="auto")
    ap.add_argument("--blas-threads", default="auto", help="OpenBLAS's threads when timing: auto (the faster of "
                    "--threads and 1, measured after the warm-up) or a number")
    ap.add_argument("--torch-threads", default="auto", help="torch's intra-op threads when timing training: auto "
                    "(the faster of --threads and 1, measured after the warm-up, before OpenBLAS's) or a number")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--probe-expm", nargs=2, type=int, metavar=("n", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.blas_threads != "auto" and not (args.blas_threads.isdigit() and int(args.blas_threads) > 0):
        ap.error("--blas-threads must be auto or a positive integer, got '%s'" % args.blas_threads)
    if args.torch_threads != "auto" and not (args.torch_threads.isdigit() and int(args.torch_threads) > 0):
        ap.error("--torch-threads must be auto or a positive integer, got '%s'" % args.torch_threads)
    if args.probe_expm:
        print(json.dumps(probe_expm(args.probe_expm[0], args.probe_expm[1], args.threads)))
        return
    try:
        if args.checkpoint or args.text:
            if not (args.checkpoint and args.text):
                ap.error("--checkpoint and --text go together")
            torch.set_num_threads(args.threads)
            for c in args.checkpoint:
                agreement(args, c)
        elif args.op == "expm":
            expm_bench(args)
        elif args.config or args.weights:
            timing(args)
        else:
            ap.error("give --checkpoint F --text T, --config F, or --op expm")
    except lc.CheckpointError as e:
        sys.exit("torch_reference.py: %s" % e)
    except (OSError, ValueError, KeyError) as e:
        sys.exit("torch_reference.py: %s: %s" % (type(e).__name__, e))


if __name__ == "__main__":
    main()
