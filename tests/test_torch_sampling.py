#!/usr/bin/env python3
"""bench/torch_sampling.py's recurrent decoding caches (the PyTorch side of the generation
benchmark): each cached step's logits equal the same position of the model's forward over
the whole stream (bench/torch_reference.py), in double, for every OSM-RNN drive and
readout and the expRNN, past the OSM-RNN's renormalisation steps. Exits 77 (skipped)
without torch."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
try:
    import torch
    import torch_reference as ref
    import torch_sampling as ts
except ImportError as e:  # no torch (or numpy) here
    print("skipped: %s" % e)
    sys.exit(77)

CONFIGS = [
    {"type": "osm_rnn", "group": "SO(4)"},
    {"type": "osm_rnn", "group": "SO(5)", "rnn_drive": "token", "mixing": "bounded"},
    {"type": "osm_rnn", "group": "SO(3)", "rnn_drive": "both", "mixing": "lowrank", "rank": 2},
    {"type": "osm_rnn", "group": "SO(3)", "rnn_drive": "element", "readout": "tied", "mixing": "identity"},
    {"type": "osm_rnn", "group": "SO(4)", "renormalize_every": 5},
    {"type": "exprnn", "hidden": 6},
]


class RecurrentCacheTests(unittest.TestCase):
    def test_cached_steps_equal_the_forward_over_the_stream(self):
        V, T = 7, 41
        for cfg in CONFIGS:
            with self.subTest(cfg=cfg):
                torch.manual_seed(3)
                m = ref.build(cfg, V, {}, torch.float64, ref.expm_taylor)
                with torch.no_grad():
                    for v in m.params.values():
                        v.add_(0.3 * torch.randn_like(v))  # mixings and gains away from their initial values
                x = torch.randint(0, V, (1, T))
                with torch.inference_mode():
                    full, _ = m.forward(x)
                    cache = ts.make_cache(m, T)
                    self.assertIsNot(type(cache), ts.RecurrentCache)
                    for p in range(T):
                        step = cache.step(x[0, p])
                        scale = max(1.0, float(full[0, p].abs().max()))
                        self.assertLess(float((step - full[0, p]).abs().max()) / scale, 1e-10, "position %d" % p)


if __name__ == "__main__":
    unittest.main()
