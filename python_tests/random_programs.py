"""Seeded random programs of elementwise, broadcast, reduce, reshape, transpose, slice,
concatenate and dot ops, run with fusion="tracehlo", "none" and "xla".

Run as a script so that a program that made XLA abort kills only this process:
    python python_tests/random_programs.py --seeds 0:40
prints one line per seed (`seed N ok` or `seed N MISMATCH ...`) and exits 1 on a
mismatch; test_fusion_random.py runs it in a subprocess.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import tracehlo
import tracehlo.numpy as tnp

UNARY = {
    "exp": lambda x: tnp.exp(tnp.tanh(x)),  # bounded, so chains stay finite
    "tanh": tnp.tanh, "sin": tnp.sin, "neg": tnp.negative, "abs": tnp.abs,
    "sqrt": lambda x: tnp.sqrt(tnp.abs(x)), "log1p": lambda x: tnp.log1p(tnp.abs(x)),
    "square": tnp.square,
}
BINARY = {"add": tnp.add, "sub": tnp.subtract, "mul": tnp.multiply,
          "max": tnp.maximum, "div": lambda a, b: a / (tnp.abs(b) + 1.0)}


class Program:
    """A straight-line program over a pool of values, recorded as text for reports."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.steps = []
        # every fourth program is big enough (4096+ elements) for the choices that
        # depend on size: what XLA CPU's library kernels take (passes/library.py)
        rows, cols = (64, 128) if seed % 4 == 3 else (4, 8)
        self.in_shapes = [(rows, cols), (cols,), (rows, cols)][: self.rng.integers(2, 4)]
        n = int(self.rng.integers(3, 12))
        for _ in range(n):
            self.steps.append(self._pick())

    def _pick(self):
        kind = self.rng.choice(["unary", "binary", "reduce", "reshape", "transpose", "slice",
                                "concat", "dot"], p=[.22, .22, .12, .1, .08, .1, .08, .08])
        return kind, int(self.rng.integers(0, 1 << 30))

    def inputs(self):
        return [self.rng.standard_normal(s).astype(np.float32) for s in self.in_shapes]

    def __call__(self, *xs):
        """Every value no later step reads is an output, so no traced op is dead."""
        pool, read = list(xs), set()
        for kind, r in self.steps:
            rng = np.random.default_rng(r)
            index = int(rng.integers(len(pool)))
            x = pool[index]
            before = len(pool)
            if kind == "unary":
                pool.append(UNARY[rng.choice(sorted(UNARY))](x))
            elif kind == "binary":
                same = [j for j, y in enumerate(pool)
                        if y.shape == x.shape or y.shape == x.shape[-1:]]
                j = same[int(rng.integers(len(same)))]
                read.add(j)
                pool.append(BINARY[rng.choice(sorted(BINARY))](x, pool[j]))
            elif kind == "reduce" and x.ndim:
                axis = int(rng.integers(x.ndim))
                fn = tnp.sum if rng.integers(2) else tnp.max
                pool.append(fn(x, axis=axis, keepdims=bool(rng.integers(2))))
            elif kind == "reshape" and x.size % 2 == 0:
                pool.append(x.reshape(2, -1) if x.ndim != 2 or x.shape[0] != 2 else x.ravel())
            elif kind == "transpose" and x.ndim >= 2:
                pool.append(x.T)
            elif kind == "slice" and x.ndim and x.shape[0] > 1:
                pool.append(x[1:] if rng.integers(2) else x[::2])
            elif kind == "concat" and x.ndim:
                pool.append(tnp.concatenate([x, x * 0.5], axis=0))
            elif kind == "dot" and x.ndim == 2:
                w = np.random.default_rng(r).standard_normal((x.shape[1], 3)).astype(np.float32)
                pool.append(x @ w)
            if len(pool) > before:
                read.add(index)
        return tuple(v for j, v in enumerate(pool) if j >= len(xs) and j not in read)


def run(seed: int) -> str | None:
    """None if the three fusion modes agree on this seed's program, else a report."""
    program = Program(seed)
    args = program.inputs()
    results = {}
    for mode in ("tracehlo", "none", "xla"):
        try:
            compiled = tracehlo.compile(program, args, fusion=mode)
            results[mode] = [np.asarray(o) for o in compiled(*args)]
        except Exception as e:  # a Python error is a failure to report, not a crash
            ir = tracehlo.make_ir(program)(*args)
            return f"fusion={mode} failed: {type(e).__name__}: {e}\n{ir}"
        if compiled.fusion != mode:  # XLA rejected our fusions and compile fell back
            return f"fusion={mode} fell back to {compiled.fusion}\n{compiled.ir}"
    for mode in ("none", "xla"):
        for a, b in zip(results["tracehlo"], results[mode]):
            if a.shape != b.shape or not np.allclose(a, b, rtol=2e-5, atol=1e-5, equal_nan=True):
                ir = tracehlo.make_ir(program)(*args)
                return f"tracehlo vs {mode} differ\n{ir}"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0:40", help="START:STOP")
    opts = ap.parse_args(argv)
    start, stop = map(int, opts.seeds.split(":"))
    failed = 0
    for seed in range(start, stop):
        print(f"seed {seed} ...", flush=True)  # the last line names the seed if XLA aborts
        problem = run(seed)
        print(f"seed {seed} {'ok' if problem is None else 'MISMATCH ' + problem}", flush=True)
        failed += problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
