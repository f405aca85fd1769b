#!/usr/bin/env python3
"""Reload a liegrad checkpoint in numpy and recompute `liegrad eval`'s BPC on a text.

    python3 examples/load_checkpoint.py CHECKPOINT TEXTFILE [--json]

An independent reading of docs/checkpoint.md (the format, the group coordinate
orders, the real form of complex groups) and of docs/models.md (the
models), written against the C++ in models/, groups/ and tasks/evaluate.cpp. All
five model types load: osmformer, osm_rnn, transformer, lstm, exprnn (algebra or
manifold group parameters, identity / linear / lowrank / bounded mixing, every group
spelling make_group accepts). Only numpy is needed; everything runs in float64.

BPC is computed as `liegrad eval --checkpoint F --text FILE` does
(tasks/evaluate.hpp, docs/models.md §7): every symbol after the first is predicted once;
transformers read consecutive non-overlapping windows of train.seq_len (the last
one shorter); recurrent models start from their initial state at the first
symbol and carry it to the end with batch 1, window by window.

The matrix exponential is a scipy-free scaling-and-squaring Taylor polynomial on
the stored real matrices (every algebra element is stored as a real
skew-symmetric matrix: so(d) itself, or the real form [[X, -Y], [Y, X]] of a
skew-Hermitian X + iY; an eigendecomposition of the Hermitian iA would do too).
"""
import argparse
import json
import math
import re
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit("load_checkpoint.py: numpy is required (e.g. apt-get install python3-numpy)")

FORMAT = "liegrad-checkpoint"
VERSION = 1
SQRT2 = math.sqrt(2.0)


class CheckpointError(Exception):
    """A checkpoint or text file that cannot be used; the message names it."""


# ----------------------------------------------------------------------------- groups
# Every group is stored as real n x n matrices (groups/group.hpp). hat: (N, m) -> (N, n, n);
# vee: (N, n, n) -> (N, m), the coordinates of the projection onto the algebra (vee is
# linear on any matrix, not only algebra elements). real_scale: Re tr(H* P) = s tr(H^T P).


class Orthogonal:
    """SO(d) / O(d): n = d, m = d(d-1)/2, u_p = sqrt(2) A_ij for i < j, row-major."""

    def __init__(self, kind, d):
        self.name, self.d, self.n, self.m, self.complex = "%s(%d)" % (kind, d), d, d, d * (d - 1) // 2, False
        self.iu = np.triu_indices(d, 1)  # row-major pairs i < j

    def hat(self, u):
        A = np.zeros(u.shape[:-1] + (self.d, self.d))
        A[..., self.iu[0], self.iu[1]] = u / SQRT2
        A[..., self.iu[1], self.iu[0]] = -u / SQRT2
        return A

    def vee(self, X):
        return (X[..., self.iu[0], self.iu[1]] - X[..., self.iu[1], self.iu[0]]) / SQRT2


def _real_form(X, Y):
    """[[X, -Y], [Y, X]] of the complex matrices X + iY (batched)."""
    top = np.concatenate([X, -Y], axis=-1)
    bottom = np.concatenate([Y, X], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def _skew_hermitian_part(M, d):
    """Complex d x d skew-Hermitian part S = (Z - Z*)/2 of Z = Pi_C(M) (real-form projection)."""
    X = 0.5 * (M[..., :d, :d] + M[..., d:, d:])
    Y = 0.5 * (M[..., d:, :d] - M[..., :d, d:])
    Z = X + 1j * Y
    return 0.5 * (Z - np.conj(np.swapaxes(Z, -1, -2)))


class Unitary:
    """U(d), SU(d), T(d) in real form (n = 2d).

    U(d):  u = [Im A_jj (d) | sqrt(2) Re A_ij, i<j (P) | sqrt(2) Im A_ij, i<j (P)]
    SU(d): u = [<theta, D_l>, l = 1..d-1 | the same 2P off-diagonal values], theta_j = Im A_jj,
           D_l = diag(1, .., 1, -l, 0, .., 0) / sqrt(l(l+1)) (l ones)
    T(d):  u = theta = Im A_jj (d values)
    """

    def __init__(self, kind, d):
        self.kind, self.d, self.n, self.complex = kind, d, 2 * d, True
        self.name = "%s(%d)" % (kind, d)
        P = d * (d - 1) // 2
        self.P = P
        self.iu = np.triu_indices(d, 1)
        self.ndiag = {"U": d, "SU": d - 1, "T": d}[kind]
        self.m = self.ndiag + (0 if kind == "T" else 2 * P)
        # D (d-1, d): rows are the orthonormal traceless diagonals of su(d).
        self.D = np.zeros((max(d - 1, 0), d))
        for l in range(1, d):
            self.D[l - 1, :l] = 1.0
            self.D[l - 1, l] = -l
            self.D[l - 1] /= math.sqrt(l * (l + 1))

    def _theta(self, u):
        diag = u[..., : self.ndiag]
        return diag @ self.D if self.kind == "SU" else diag

    def hat(self, u):
        d = self.d
        lead = u.shape[:-1]
        Y = np.zeros(lead + (d, d))
        X = np.zeros(lead + (d, d))
        idx = np.arange(d)
        Y[..., idx, idx] = self._theta(u)
        if self.kind != "T":
            re = u[..., self.ndiag : self.ndiag + self.P] / SQRT2
            im = u[..., self.ndiag + self.P :] / SQRT2
            i, j = self.iu
            X[..., i, j], X[..., j, i] = re, -re
            Y[..., i, j], Y[..., j, i] = im, im
        return _real_form(X, Y)

    def vee(self, M):
        S = _skew_hermitian_part(M, self.d)
        y = np.imag(np.diagonal(S, axis1=-2, axis2=-1))
        diag = y @ self.D.T if self.kind == "SU" else y
        if self.kind == "T":
            return diag
        i, j = self.iu
        return np.concatenate([diag, SQRT2 * np.real(S[..., i, j]), SQRT2 * np.imag(S[..., i, j])], axis=-1)


class Complexified:
    """A real factor inside a product with a complex factor: stored [[X, 0], [0, X]]."""

    def __init__(self, g):
        self.g, self.name, self.n, self.m, self.complex = g, g.name, 2 * g.n, g.m, True

    def hat(self, u):
        A = self.g.hat(u)
        Z = np.zeros_like(A)
        return _real_form(A, Z)

    def vee(self, M):
        a = self.g.n
        return self.g.vee(0.5 * (M[..., :a, :a] + M[..., a:, a:]))


class Product:
    """G1 x G2 x ...: block diagonal in factor order, coordinates concatenated."""

    def __init__(self, factors):
        self.complex = any(f.complex for f in factors)
        self.parts = [Complexified(f) if self.complex and not f.complex else f for f in factors]
        self.name = "x".join(f.name for f in factors)
        self.n = sum(f.n for f in self.parts)
        self.m = sum(f.m for f in self.parts)

    def hat(self, u):
        A = np.zeros(u.shape[:-1] + (self.n, self.n))
        o = c = 0
        for f in self.parts:
            A[..., o : o + f.n, o : o + f.n] = f.hat(u[..., c : c + f.m])
            o, c = o + f.n, c + f.m
        return A

    def vee(self, M):
        out, o = [], 0
        for f in self.parts:
            out.append(f.vee(M[..., o : o + f.n, o : o + f.n]))
            o += f.n
        return np.concatenate(out, axis=-1)


def make_group(spec):
    """Parses "SO(16)", "U(4)", "SO(3)xU(2)", ... as groups/make_group.cpp does."""
    s = re.sub(r"\s+", "", spec).replace("\u00d7", "x")
    factors = []
    for part in re.split(r"[xX*]", s):
        mt = re.fullmatch(r"([A-Za-z]+)\((\d+)\)", part)
        if not mt or mt.group(1).upper() not in ("SO", "O", "U", "SU", "T") or int(mt.group(2)) < 1:
            raise CheckpointError("unknown group spelling %r (expected SO(d), O(d), U(d), SU(d), T(d) or a product)" % spec)
        kind, d = mt.group(1).upper(), int(mt.group(2))
        factors.append(Orthogonal(kind, d) if kind in ("SO", "O") else Unitary(kind, d))
    return factors[0] if len(factors) == 1 else Product(factors)


def real_scale(g):
    return 0.5 if g.complex else 1.0


def expm(A):
    """exp of matrices (..., n, n): scaling and squaring of the degree-18 Taylor polynomial
    (Horner), with 2^s >= ||A||_inf over the batch, so the truncation error is below
    1/19! ~ 8e-18 of ||exp||, then s squarings (float64 throughout)."""
    norm = float(np.abs(A).sum(-1).max()) if A.size else 0.0
    s = max(0, int(math.ceil(math.log2(norm)))) if norm > 1.0 else 0
    X = A / 2.0 ** s
    eye = np.eye(A.shape[-1])
    P = eye + X / 18.0
    for k in range(17, 0, -1):
        P = eye + (X @ P) / k
    for _ in range(s):
        P = P @ P
    return P


# ----------------------------------------------------------------------------- checkpoint


def load_checkpoint(path):
    """Reads and validates a checkpoint; returns (json, {name: array}, vocab bytes)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise CheckpointError("cannot read checkpoint '%s': %s" % (path, e.strerror or e))
    if not raw.strip():
        raise CheckpointError("checkpoint '%s' is empty" % path)
    try:
        j = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CheckpointError("checkpoint '%s' is not valid JSON (truncated or corrupted?)" % path)
    if not isinstance(j, dict) or j.get("format") != FORMAT:
        raise CheckpointError("'%s' is not a liegrad checkpoint (expected \"format\": \"%s\")" % (path, FORMAT))
    if j.get("version") != VERSION:
        raise CheckpointError("checkpoint '%s' has version %r; this script reads version %d" % (path, j.get("version"), VERSION))
    for key in ("config", "vocab", "parameters"):
        if key not in j:
            raise CheckpointError("checkpoint '%s' lacks \"%s\"" % (path, key))
    if isinstance(j["vocab"], dict) and "classes" in j["vocab"]:
        raise CheckpointError("checkpoint '%s' is a group word model (%s); this reader evaluates language models "
                              "only: use liegrad eval" % (path, j["vocab"].get("task", "words")))
    if not isinstance(j["vocab"], list) or not j["vocab"] or not all(isinstance(b, int) and 0 <= b < 256 for b in j["vocab"]):
        raise CheckpointError("checkpoint '%s': \"vocab\" must be a non-empty array of byte values" % path)
    vocab = bytes(j["vocab"])  # one symbol per byte, id = position
    params = {}
    for e in j["parameters"]:
        try:
            name, shape = e["name"], tuple(int(x) for x in e["shape"])
            values = np.asarray(e["values"], dtype=np.float64)
        except (KeyError, TypeError, ValueError):
            raise CheckpointError("checkpoint '%s': malformed parameter entry %r" % (path, e.get("name", "?")))
        if values.size != int(np.prod(shape)):
            raise CheckpointError("checkpoint '%s': parameter '%s' has %d values for shape %s" % (path, name, values.size, list(shape)))
        params[name] = values.reshape(shape)
    return j, params, vocab


def encode_text(path, vocab):
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise CheckpointError("cannot read '%s': %s" % (path, e.strerror or e))
    if not text:
        raise CheckpointError("'%s' is empty" % path)
    index = np.full(256, -1, dtype=np.int64)
    index[np.frombuffer(vocab, dtype=np.uint8)] = np.arange(len(vocab))
    ids = index[np.frombuffer(text, dtype=np.uint8)]
    if (ids < 0).any():
        bad = sorted(set(text[k] for k in np.nonzero(ids < 0)[0]))
        shown = ", ".join(repr(bytes([b]))[1:] for b in bad[:10])
        raise CheckpointError("'%s' cannot be encoded with the checkpoint's vocabulary: %d characters are not in it (%d distinct: %s%s)"
                              % (path, int((ids < 0).sum()), len(bad), shown, ", ..." if len(bad) > 10 else ""))
    if ids.size < 2:
        raise CheckpointError("'%s' needs at least 2 symbols to predict one" % path)
    return ids


class Params:
    """Named parameters with shape checks against what the configured model needs."""

    def __init__(self, arrays, source):
        self.a, self.source, self.used = arrays, source, set()

    def get(self, name, shape=None):
        if name not in self.a:
            raise CheckpointError("%s: parameter '%s' of the configured model is missing" % (self.source, name))
        x = self.a[name]
        if shape is not None and tuple(x.shape) != tuple(shape):
            raise CheckpointError("%s: parameter '%s' has shape %s but the configured model needs %s"
                                  % (self.source, name, list(x.shape), list(shape)))
        self.used.add(name)
        return x

    def has(self, name):
        return name in self.a

    def group_elements(self, name, g, count, mode):
        """The (count, n, n) elements of a group parameter: exp(hat(u)) (mode "algebra": u of
        shape (count, m), times the optional base `name.base` on the left) or the stored
        elements (mode "manifold")."""
        if mode == "algebra":
            E = expm(g.hat(self.get(name, (count, g.m))))
            if self.has(name + ".base"):
                E = self.get(name + ".base", (count, g.n, g.n)) @ E
            return E
        return self.get(name, (count, g.n, g.n))

    def finish(self):
        extra = sorted(set(self.a) - self.used)
        if extra:
            raise CheckpointError("%s: parameter '%s' is not part of the configured model" % (self.source, extra[0]))


def alibi_slopes(h):
    return np.array([2.0 ** (-8.0 * (k + 1) / h) for k in range(h)])


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def row_nll(logits, targets):
    """-log p(target) per row (logits (..., V), targets (...))."""
    mx = np.max(logits, axis=-1, keepdims=True)
    lse = mx[..., 0] + np.log(np.sum(np.exp(logits - mx), axis=-1))
    return lse - np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]


# ----------------------------------------------------------------------------- models
# Each model: forward(inputs (B,T) ids, state) -> (logits (B,T,V), state). Recurrent models
# take and return their carried state (None = initial state).


class Mixing:
    """u -> u Gamma^T on rows: identity, linear (`name` (m,m)), lowrank (I + U V^T) or
    bounded (I - W / sqrt(1 + ||W||_F^2) with W stored as `name`)."""

    def __init__(self, P, name, kind, m, rank):
        self.kind = kind
        if kind == "linear":
            self.G = P.get(name, (m, m))
        elif kind == "bounded":
            W = P.get(name, (m, m))
            self.G = np.eye(m) - W / np.sqrt(1.0 + np.sum(W * W))
            self.kind = "linear"
        elif kind == "lowrank":
            self.U = P.get(name + ".u", (m, rank))
            self.V = P.get(name + ".v", (m, rank))

    def __call__(self, u):
        if self.kind == "linear":
            return u @ self.G.T
        if self.kind == "lowrank":
            return u + (u @ self.V) @ self.U.T
        return u


class OsmCommon:
    def __init__(self, cfg, P, V):
        self.g = make_group(cfg.get("group", "SO(16)"))
        self.s = real_scale(self.g)
        self.mixing = cfg.get("mixing", "linear")
        self.rank = int(cfg.get("rank", 8))
        mode = cfg.get("group_param", "algebra")
        self.embed = P.group_elements("embed", self.g, V, mode)  # (V,n,n)
        self.bias = P.get("bias", (V,))
        # model.tau: a fixed temperature (no log_tau parameter), else learned exp(log_tau)
        self.tau = float(cfg["tau"]) if "tau" in cfg else math.exp(float(P.get("log_tau", ())))
        if cfg.get("readout", "prototypes") != "tied":  # tied: the model sets its transitions
            self.set_prototypes(P.group_elements("proto", self.g, V, mode))

    def set_prototypes(self, proto):
        """proto (V,n,n): the readout's P_v."""
        n = self.g.n
        self.proto = proto
        self.proto_flat = proto.reshape(len(proto), n * n)

    def readout(self, H):
        """H (..., n, n) -> logits (..., V) = tau Re tr(H* P_v) + b_v."""
        n = self.g.n
        return self.tau * self.s * (H.reshape(H.shape[:-2] + (n * n,)) @ self.proto_flat.T) + self.bias

    def update(self, H, u):
        return H @ expm(self.g.hat(u))


def grounding_of(cfg):
    """The OSMFormer's model.grounding by its canonical name ("on" is "relative"); when the
    config names none, the default of models::default_grounding (models/osmformer.hpp):
    identity mixing token (combined under group_param manifold), a learned mixing
    relative with separate mixings and combined with one shared per layer."""
    g = cfg.get("grounding")
    if g is None:
        if cfg.get("mixing", "linear") == "identity":
            g = "token" if cfg.get("group_param", "algebra") == "algebra" else "combined"
        else:
            g = "combined" if cfg.get("grounding_mixing", "separate") == "shared" else "relative"
    return {"on": "relative"}.get(g, g)


class OsmFormer:
    recurrent = False

    def __init__(self, cfg, P, V):
        self.c = OsmCommon(cfg, P, V)
        self.L, self.h = int(cfg.get("layers", 3)), int(cfg.get("heads", 4))
        # relative (alias on), combined, token or off (docs/models.md section 5)
        self.grounding = grounding_of(cfg)
        if self.grounding not in ("relative", "combined", "token", "off"):
            raise ValueError("model.grounding: unknown reading %r" % self.grounding)
        shared = cfg.get("grounding_mixing", "separate") == "shared"
        self.slopes = alibi_slopes(self.h) if cfg.get("positional", "alibi") == "alibi" else np.zeros(self.h)
        m = self.c.g.m
        if self.grounding == "token":  # the token elements' algebra coordinates b (V,m)
            self.coords = P.get("embed", (V, m))
        self.layers = []
        for l in range(self.L):
            p = "layers.%d." % l
            beta = np.exp(P.get(p + "log_beta", (self.h,)))
            att = Mixing(P, p + ("mix" if shared else "mix_att"), self.c.mixing, m, self.c.rank)
            gnd = None
            if self.grounding != "off":
                gnd = att if shared else Mixing(P, p + "mix_gnd", self.c.mixing, m, self.c.rank)
            self.layers.append((beta, att, gnd))

    def forward(self, x, state=None):
        c, g = self.c, self.c.g
        B, T = x.shape
        n = g.n
        M = c.embed[x]  # (B,T,n,n)
        H = M
        i = np.arange(T)
        dist = (i[:, None] - i[None, :]).astype(np.float64)  # i - j
        causal = i[None, :] <= i[:, None]
        for beta, att, gnd in self.layers:
            X = H.reshape(B, T, n * n)
            gram = c.s * (X @ np.swapaxes(X, 1, 2))  # (B,T,T) Re tr(H_i* H_j)
            sc = beta[None, :, None, None] * gram[:, None] - self.slopes[None, :, None, None] * dist
            sc = np.where(causal, sc, -np.inf)
            abar = softmax(sc, axis=-1).mean(axis=1)  # (B,T,T), head average
            A = (abar @ X).reshape(B, T, n, n)
            u_att = att(g.vee(np.swapaxes(H, -1, -2) @ A))
            if self.grounding == "combined":
                H = c.update(H, u_att + gnd(g.vee(np.swapaxes(H, -1, -2) @ M)))
                continue
            H = c.update(H, u_att)
            if self.grounding == "relative":
                H = c.update(H, gnd(g.vee(np.swapaxes(H, -1, -2) @ M)))
            elif self.grounding == "token":
                H = c.update(H, gnd(self.coords[x]))
        return c.readout(H), None


class OsmRnn:
    recurrent = True

    def __init__(self, cfg, P, V):
        self.c = OsmCommon(cfg, P, V)
        self.drive = cfg.get("rnn_drive", "relative")
        if self.drive == "element":
            self.coords = P.get("embed", (V, self.c.g.m))
        self.renorm = int(cfg.get("renormalize_every", 16))
        self.mix = Mixing(P, "mix", self.c.mixing, self.c.g.m, self.c.rank)
        if cfg.get("readout", "prototypes") == "tied":  # P_v = N_v = exp(hat(Gamma r_v))
            g = self.c.g
            r = self.coords if self.drive == "element" else g.vee(self.c.embed)
            self.c.set_prototypes(np.stack([expm(g.hat(u)) for u in self.mix(r)]))

    def forward(self, x, state=None):
        c, g = self.c, self.c.g
        B, T = x.shape
        n = g.n
        H = np.broadcast_to(np.eye(n), (B, n, n)).copy() if state is None else state
        states = []
        for t in range(T):  # t counts within the window, as in models/osm_rnn.cpp
            M = c.embed[x[:, t]]
            if self.drive == "element":  # the token's algebra coordinates b_x (M = exp(hat(b)))
                u = self.coords[x[:, t]]
            elif self.drive == "token":
                u = g.vee(M)
            else:
                u = g.vee(np.swapaxes(H, -1, -2) @ M)
                if self.drive == "both":
                    u = u + g.vee(M)
            H = c.update(H, self.mix(u))
            if self.renorm > 0 and (t + 1) % self.renorm == 0:  # Newton-Schulz polar step
                H = H @ (1.5 * np.eye(n) - 0.5 * np.swapaxes(H, -1, -2) @ H)
            states.append(H)
        return c.readout(np.stack(states, axis=1)), H


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # biased
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x / SQRT2))


class Transformer:
    recurrent = False

    def __init__(self, cfg, P, V):
        D, self.L, self.h = int(cfg.get("D", 64)), int(cfg.get("layers", 2)), int(cfg.get("heads", 4))
        self.D = D
        self.slopes = alibi_slopes(self.h) if cfg.get("positional", "alibi") == "alibi" else np.zeros(self.h)
        self.embed = P.get("embed", (V, D))
        self.blocks = []
        for l in range(self.L):
            p = "layers.%d." % l
            shapes = {"ln1.weight": (D,), "ln1.bias": (D,), "attn.qkv.weight": (D, 3 * D), "attn.qkv.bias": (3 * D,),
                      "attn.proj.weight": (D, D), "attn.proj.bias": (D,), "ln2.weight": (D,), "ln2.bias": (D,),
                      "mlp.fc.weight": (D, 4 * D), "mlp.fc.bias": (4 * D,), "mlp.proj.weight": (4 * D, D),
                      "mlp.proj.bias": (D,)}
            self.blocks.append({k: P.get(p + k, s) for k, s in shapes.items()})
        self.lnf_w, self.lnf_b = P.get("ln_f.weight", (D,)), P.get("ln_f.bias", (D,))
        if cfg.get("head", "untied") == "tied":  # logits = x embed^T, no bias
            self.head_w, self.head_b = self.embed.T, np.zeros(V)
        else:
            self.head_w, self.head_b = P.get("head.weight", (D, V)), P.get("head.bias", (V,))

    def attention(self, b, x):
        B, T, D = x.shape
        h, e = self.h, D // self.h
        qkv = x @ b["attn.qkv.weight"] + b["attn.qkv.bias"]  # weights (in, out)
        heads = lambda z: z.reshape(B, T, h, e).transpose(0, 2, 1, 3)  # (B,h,T,e)
        q, k, v = heads(qkv[..., :D]), heads(qkv[..., D : 2 * D]), heads(qkv[..., 2 * D :])
        i = np.arange(T)
        dist = (i[:, None] - i[None, :]).astype(np.float64)
        s = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(e) - self.slopes[None, :, None, None] * dist
        s = np.where(i[None, :] <= i[:, None], s, -np.inf)
        o = (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        return o @ b["attn.proj.weight"] + b["attn.proj.bias"]

    def forward(self, x, state=None):
        z = self.embed[x]
        for b in self.blocks:
            z = z + self.attention(b, layer_norm(z, b["ln1.weight"], b["ln1.bias"]))
            hdn = gelu(layer_norm(z, b["ln2.weight"], b["ln2.bias"]) @ b["mlp.fc.weight"] + b["mlp.fc.bias"])
            z = z + hdn @ b["mlp.proj.weight"] + b["mlp.proj.bias"]
        return layer_norm(z, self.lnf_w, self.lnf_b) @ self.head_w + self.head_b, None


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class Lstm:
    recurrent = True

    def __init__(self, cfg, P, V):
        h, self.layers = int(cfg.get("hidden", 104)), int(cfg.get("layers", 1))
        self.h = h
        self.embed = P.get("embed", (V, h))
        self.cells = [(P.get("layers.%d.w_ih" % l, (h, 4 * h)), P.get("layers.%d.w_hh" % l, (h, 4 * h)),
                       P.get("layers.%d.bias" % l, (4 * h,))) for l in range(self.layers)]
        self.head_w, self.head_b = P.get("head.weight", (h, V)), P.get("head.bias", (V,))

    def forward(self, x, state=None):
        B, T = x.shape
        h = self.h
        z = self.embed[x]
        state = state or [np.zeros((B, h)) for _ in range(2 * self.layers)]
        out_state = []
        for l, (w_ih, w_hh, bias) in enumerate(self.cells):
            xw = z @ w_ih + bias  # gates (i, f, g, o)
            hs, cs = state[2 * l], state[2 * l + 1]
            outs = []
            for t in range(T):
                gt = xw[:, t] + hs @ w_hh
                i, f, gg, o = sigmoid(gt[:, :h]), sigmoid(gt[:, h : 2 * h]), np.tanh(gt[:, 2 * h : 3 * h]), sigmoid(gt[:, 3 * h :])
                cs = f * cs + i * gg
                hs = o * np.tanh(cs)
                outs.append(hs)
            out_state += [hs, cs]
            z = np.stack(outs, axis=1)
        return z @ self.head_w + self.head_b, out_state


class ExpRnn:
    recurrent = True

    def __init__(self, cfg, P, V):
        h = self.h = int(cfg.get("hidden", 128))
        g = Orthogonal("SO", h)
        self.Q = expm(g.hat(P.get("transition", (1, g.m))))[0]  # stored (1, m)
        self.input = P.get("input", (V, h))
        self.b = P.get("modrelu_bias", (h,))
        self.head_w, self.head_b = P.get("head.weight", (h, V)), P.get("head.bias", (V,))

    def forward(self, x, state=None):
        B, T = x.shape
        hs = np.zeros((B, self.h)) if state is None else state
        e = self.input[x]
        outs = []
        for t in range(T):
            z = hs @ self.Q.T + e[:, t]
            mag = np.abs(z) + self.b
            hs = np.where(mag > 0, np.where(z >= 0, mag, -mag), 0.0)  # modReLU
            outs.append(hs)
        return np.stack(outs, axis=1) @ self.head_w + self.head_b, hs


MODELS = {"osmformer": OsmFormer, "osm_rnn": OsmRnn, "transformer": Transformer, "lstm": Lstm, "exprnn": ExpRnn}


def build_model(j, params, source):
    cfg = j["config"].get("model") if isinstance(j["config"], dict) else None
    if not isinstance(cfg, dict) or cfg.get("type") not in MODELS:
        raise CheckpointError("%s: config.model.type %r is not one of %s" % (source, (cfg or {}).get("type"), ", ".join(MODELS)))
    P = Params(params, source)
    V = len(j["vocab"])
    try:
        model = MODELS[cfg["type"]](cfg, P, V)
    except (TypeError, ValueError) as e:
        raise CheckpointError("%s: cannot build the %s model: %s" % (source, cfg["type"], e))
    P.finish()
    return model


def evaluate_bpc(model, ids, seq_len, batch=16):
    """Sum of -ln p over the windows of tasks/evaluate.cpp; returns (bpc, nats, predictions)."""
    N = ids.size
    starts = list(range(0, N - 1, seq_len))
    total = 0.0
    if model.recurrent:
        state = None
        for s in starts:
            n = min(seq_len, N - 1 - s)
            logits, state = model.forward(ids[None, s : s + n], state)
            total += row_nll(logits, ids[None, s + 1 : s + 1 + n]).sum()
    else:
        full = [s for s in starts if s + seq_len <= N - 1]
        for k in range(0, len(full), batch):
            ss = full[k : k + batch]
            x = np.stack([ids[s : s + seq_len] for s in ss])
            y = np.stack([ids[s + 1 : s + 1 + seq_len] for s in ss])
            total += row_nll(model.forward(x)[0], y).sum()
        if len(full) < len(starts):  # the short last window
            s = starts[-1]
            n = N - 1 - s
            total += row_nll(model.forward(ids[None, s : s + n])[0], ids[None, s + 1 : s + 1 + n]).sum()
    nats = total / (N - 1)
    return nats / math.log(2.0), nats, N - 1


def main(argv=None):
    ap = argparse.ArgumentParser(description="Recompute `liegrad eval --text` BPC of a liegrad checkpoint in numpy.")
    ap.add_argument("checkpoint")
    ap.add_argument("textfile")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    try:
        j, params, vocab = load_checkpoint(args.checkpoint)
        model = build_model(j, params, "checkpoint '%s'" % args.checkpoint)
        ids = encode_text(args.textfile, vocab)
        try:
            seq_len = int(j["config"]["train"]["seq_len"])
        except (KeyError, TypeError, ValueError):
            raise CheckpointError("checkpoint '%s': config.train.seq_len is missing" % args.checkpoint)
        bpc, nats, pred = evaluate_bpc(model, ids, seq_len)
    except CheckpointError as e:
        print("load_checkpoint.py: %s" % e, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"source": args.textfile, "model": j["config"]["model"]["type"], "bpc": bpc, "nats": nats,
                          "predictions": pred}))
    else:
        print("%s: %.6f BPC over %d predictions (%s)" % (args.textfile, bpc, pred, j["config"]["model"]["type"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
