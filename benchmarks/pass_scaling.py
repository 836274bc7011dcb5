"""Fusion pass time against program size, next to jax.jit's whole compile.

    python benchmarks/pass_scaling.py [--sizes 100,300,1000,3000,10000] [--plot out.png]

Per size n, one program of n elementwise ops (sin, x * 1.5, x + 0.25 in turn, on
f32[16]) is written once for tracehlo.numpy and once for jax.numpy. Columns: our
passes alone (`passes.fuse_with_report` on the lowered StableHLO, the `passes`
entry of Compiled.timings), tracehlo.compile in all (trace, lower, passes, XLA),
and `jax.jit(f).lower(x).compile()` of the jax twin; each the median of a few runs.
`passes/jax` near a constant as n grows is what linear passes look like. A
measurement, not a test: nothing is asserted. `--plot` needs matplotlib
(optional) and draws both curves on log-log axes.
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import passes
from tracehlo.lowering import lower_graph


def chain(np_, n: int):
    def f(x):
        for k in range(n):
            x = np_.sin(x) if k % 3 == 0 else (x * 1.5 if k % 3 == 1 else x + 0.25)
        return x
    return f


def median_time(fn, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure(n: int, repeats: int) -> dict:
    x = np.ones((16,), np.float32)
    text = lower_graph(tracehlo.make_ir(chain(tnp, n))(x), locations=True)
    return {
        "ops": n,
        "passes": median_time(lambda: passes.fuse_with_report(text), repeats),
        "tracehlo": median_time(lambda: tracehlo.compile(chain(tnp, n), (x,)), repeats),
        "jax": median_time(lambda: jax.jit(chain(jnp, n)).lower(x).compile(), repeats),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,300,1000,3000,10000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--plot", help="write a log-log chart here (needs matplotlib)")
    opts = ap.parse_args(argv)
    rows = []
    print(f"{'ops':>6} {'passes s':>9} {'tracehlo s':>11} {'jax.jit s':>10} "
          f"{'passes/jax':>11} {'tracehlo/jax':>13} {'passes us/op':>13}")
    for n in map(int, opts.sizes.split(",")):
        r = measure(n, opts.repeats if n < 5000 else 1)
        rows.append(r)
        print(f"{n:>6} {r['passes']:>9.3f} {r['tracehlo']:>11.3f} {r['jax']:>10.3f} "
              f"{r['passes'] / r['jax']:>10.2f}x {r['tracehlo'] / r['jax']:>12.2f}x "
              f"{r['passes'] / n * 1e6:>13.0f}", flush=True)
    if opts.plot:
        import matplotlib.pyplot as plt  # optional extra, only for --plot
        ops = [r["ops"] for r in rows]
        for key in ("passes", "tracehlo", "jax"):
            plt.loglog(ops, [r[key] for r in rows], marker="o", label=key)
        plt.xlabel("elementwise ops")
        plt.ylabel("seconds")
        plt.legend()
        plt.savefig(opts.plot)


if __name__ == "__main__":
    main()
