"""random.normal of 10**7 float32 values against jax.random.normal, side by side.

    python benchmarks/random_normal.py [--size N] [--reps R]

Figures (tracehlo / jax, medians over interleaved rounds, ratio per round):
  eager        `random.normal(key, (N,))` outside jit: one compiled program per call
  jit          the same inside `jit(lambda k: random.normal(k, (N,)))`, tracehlo's own
               fusion (kernels: how many XLA launches for each)
  first_call   a fresh jit of a fresh function, called once, until ready (compile)
It also says whether the samples are bit-equal. A measurement, not a test.
"""
from __future__ import annotations

import argparse

import jax
import jax.random as jr
import numpy as np

import tracehlo
from tracehlo import random as tr

from measure import block, interleaved, kernel_count, perf, report


def timed(fn, *args):
    def sample():
        t0 = perf()
        block(fn(*args))
        return perf() - t0
    return sample


def fresh_first_call(jit, normal, key, size):
    def sample():
        f = jit(lambda k: normal(k, (size,)))
        t0 = perf()
        block(f(key))
        return perf() - t0
    return sample


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10**7)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    n = args.size
    key, jkey = tr.PRNGKey(0), jr.PRNGKey(0)

    ours, theirs = np.asarray(tr.normal(key, (n,))), np.asarray(jr.normal(jkey, (n,)))
    print(f"random.normal of {n} float32, {jax.devices()[0].platform}: eager samples "
          f"bit-equal to jax: {np.array_equal(ours, theirs)}")
    report("eager", interleaved({"tracehlo": timed(tr.normal, key, (n,)),
                                 "jax": timed(jr.normal, jkey, (n,))}, args.reps))

    th_jit = tracehlo.jit(lambda k: tr.normal(k, (n,)))
    jx_jit = jax.jit(lambda k: jr.normal(k, (n,)))
    diff = np.asarray(th_jit(key)) != np.asarray(jx_jit(jkey))
    print(f"jit: {diff.sum()} of {n} samples differ from jax's; kernels: tracehlo "
          f"{len(th_jit.lower(key).kernels())}, jax "
          f"{kernel_count(jx_jit.lower(jkey).compile().as_text())}")
    report("jit", interleaved({"tracehlo": timed(th_jit, key), "jax": timed(jx_jit, jkey)},
                              args.reps))
    report("first_call", interleaved({"tracehlo": fresh_first_call(tracehlo.jit, tr.normal, key, n),
                                      "jax": fresh_first_call(jax.jit, jr.normal, jkey, n)},
                                     max(3, args.reps // 3), warmup=1))


if __name__ == "__main__":
    main()
