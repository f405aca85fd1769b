#!/usr/bin/env python3
"""Makes a fine-tune run directory from a finished group-word run: copies its
last.json with the training budget changed and, optionally, the readout temperature
fixed (model.tau; log_tau and its optimizer slots are dropped), so that
`liegrad train --resume --out DST` continues the same weights under the new settings.
This is how the three "+ 10,000 more steps" rows of docs/state_tracking.md "Exact
transitions" were made; `train.pin` (docs/training.md) does the same switch within one
run. Standard library only.

Usage: scripts/finetune_words_run.py SRC_RUN DST_RUN learned|TAU [section.key=JSON ...]
  e.g. scripts/finetune_words_run.py RUN FT 1.0 train.steps=30000 train.lr=0.0005 \
           train.min_lr_frac=0.0 'data.eval_lengths=[64,256,1024,4096]'
"""
import json
import math
import os
import shutil
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    src, dst, tau = argv[0], argv[1], argv[2]
    last = os.path.join(src, "last.json")
    try:
        with open(last) as f:
            ckpt = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("finetune_words_run: cannot read %s: %s" % (last, e))
    cfg = ckpt["config"]
    if tau != "learned":
        try:
            value = float(tau)
        except ValueError:
            sys.exit("finetune_words_run: TAU must be 'learned' or a number > 0, got %r" % tau)
        if value <= 0:
            sys.exit("finetune_words_run: TAU must be > 0, got %g" % value)
        learned = [p for p in ckpt["parameters"] if p["name"] == "log_tau"]
        if learned:
            v = learned[0]["values"]
            print("learned tau was %.6g" % math.exp(v[0] if isinstance(v, list) else v))
        cfg["model"]["tau"] = value
        ckpt["parameters"] = [p for p in ckpt["parameters"] if p["name"] != "log_tau"]
        ckpt["optimizer"]["params"].pop("log_tau", None)
    for item in argv[3:]:
        key, _, text = item.partition("=")
        section, _, name = key.partition(".")
        if section not in cfg or not name:
            sys.exit("finetune_words_run: %r is not section.key=JSON with a section of the config" % item)
        cfg[section][name] = json.loads(text)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "last.json"), "w") as f:
        json.dump(ckpt, f)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    shutil.copy(os.path.join(src, "metrics.jsonl"), os.path.join(dst, "metrics.jsonl"))


if __name__ == "__main__":
    main(sys.argv[1:])
