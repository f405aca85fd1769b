#!/usr/bin/env python3
"""Character n-gram count models as floors for the language-model tables.

For Tiny Shakespeare (the TFDS 90/5/5 split of docs/models.md section 7) and PTB
characters (bytes 0, 2, 4, ... of Mikolov's files), fits add-k smoothed bigram and
trigram count models on the training split and scores validation and test BPC over
every symbol after the split's first (the metric of docs/models.md section 7; the
first prediction of a trigram has one symbol of context and uses the bigram). k is
chosen on validation from a fixed grid and reported with its test BPC. Writes
results/ngram_baselines.json; docs/results.md quotes it (scripts/fidelity_doc.py).

A model that scores at the bigram's level uses nothing but the current symbol: the
OSMFormer with the first specification's grounding and identity mixing did
(docs/models.md section 5.1).

Usage: python3 scripts/ngram_baseline.py [--data-dir ../shared/data]
"""
import argparse
import json
import math
import os
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = [0.003, 0.01, 0.03, 0.1, 0.3, 1.0]


def tiny_shakespeare(d):
    with open(os.path.join(d, "tinyshakespeare", "input.txt"), "rb") as f:
        text = f.read()
    n = len(text)
    i = int(n * 0.9)
    half = (n - i) // 2
    return text[:i], text[i:i + half], text[i + half:], sorted(set(text))


def ptb_char(d):
    out = []
    for split in ("train", "valid", "test"):
        with open(os.path.join(d, "ptb-char", "ptb.char.%s.txt" % split), "rb") as f:
            out.append(f.read()[0::2])
    return out[0], out[1], out[2], sorted(set(out[0]))


def bpc(model, seq):
    """Mean -log2 p over symbols 1..N-1 of seq under model(context) -> p."""
    total = 0.0
    for t in range(1, len(seq)):
        total -= math.log2(model(seq[max(0, t - 2):t], seq[t]))
    return total / (len(seq) - 1)


def fit(train, V):
    uni, bi, tri = Counter(train), Counter(zip(train, train[1:])), Counter(zip(train, train[1:], train[2:]))
    ctx1 = Counter(train[:-1])
    ctx2 = Counter(zip(train, train[1:-1]))
    return uni, bi, tri, ctx1, ctx2


def scores(train, val, test, vocab):
    V = len(vocab)
    uni, bi, tri, ctx1, ctx2 = fit(train, V)

    def bigram(k):
        return lambda ctx, x: (bi[(ctx[-1], x)] + k) / (ctx1[ctx[-1]] + k * V)

    def trigram(k):
        big = bigram(k)

        def p(ctx, x):
            if len(ctx) < 2:
                return big(ctx, x)
            return (tri[(ctx[0], ctx[1], x)] + k) / (ctx2[(ctx[0], ctx[1])] + k * V)
        return p

    out = {}
    for name, make in (("bigram", bigram), ("trigram", trigram)):
        best = min(GRID, key=lambda k: bpc(make(k), val))
        out[name] = {"k": best, "val_bpc": bpc(make(best), val), "test_bpc": bpc(make(best), test)}
    # The fixed add-0.1 bigram quoted in the grounding issue.
    out["bigram_k0.1"] = {"k": 0.1, "val_bpc": bpc(bigram(0.1), val), "test_bpc": bpc(bigram(0.1), test)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "..", "shared", "data"))
    a = ap.parse_args()
    result = {"comment": "add-k count models fit on the training split, k chosen on validation from %s; "
                         "written by scripts/ngram_baseline.py" % GRID}
    for name, load in (("tinyshakespeare", tiny_shakespeare), ("ptb_char", ptb_char)):
        train, val, test, vocab = load(a.data_dir)
        result[name] = scores(train, val, test, vocab)
        print(name, json.dumps(result[name]))
    with open(os.path.join(ROOT, "results", "ngram_baselines.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print("wrote results/ngram_baselines.json")


if __name__ == "__main__":
    main()
