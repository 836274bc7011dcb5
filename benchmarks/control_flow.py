"""Loops against JAX's, side by side in one process (issue 11's control-flow figures).

    python benchmarks/control_flow.py [--quick] [--only fori,rnn,rnn_grad]

Workloads, each written once against a library (tracehlo or jax):
  fori      `fori_loop(0, 1000, body, x)` of a small update of an f32[256] carry
            (`x + 1e-3 * (cos(x + i) - 0.1 * x)`), static bounds: a scan on both sides
  rnn       an Elman RNN `scan` over 200 steps: h = tanh(x_t @ wx + h @ wh + b),
            batch 16, input 32, hidden 64; the loss mean over t of mean(h_t^2)
  rnn_grad  `value_and_grad` of that loss with respect to (wx, wh, b) under jit: the
            loss, and the gradient's forward and reverse scans, in one program

Figures per workload (tracehlo / jax, each the median over interleaved rounds of the
per-round ratio, see measure.paired_ratio):
  first_call  compile time: a fresh jit of a fresh function object, called once,
              until ready (trace, lower, our fusion passes, XLA compile, one run)
  steady      one call of the compiled program, inputs already on device; also
              tracehlo with fusion="xla" (XLA's fusion instead of our passes): what
              our fusion decisions cost, apart from the program we lower
and the kernels of each optimized program: launched once per call (ENTRY) and once per
iteration of each while loop. Nothing is asserted: a measurement, not a test.
"""
from __future__ import annotations

import argparse
import os
import re

import jax
import numpy as np

import tracehlo

from measure import (_timed_loop, device_args, interleaved, kernel_count, max_diff,
                     paired_ratio, report)
from transforms import LIBS, first_call_sampler

STEPS, RNN_STEPS, BATCH, N_IN, HIDDEN = 1000, 200, 16, 32, 64


def make_fori(lib):
    t, np_ = LIBS[lib]

    def body(i, x):
        return x + 1e-3 * (np_.cos(x + i.astype(x.dtype)) - 0.1 * x)
    return lambda x: t.lax.fori_loop(0, STEPS, body, x)


def fori_args():
    return (np.linspace(-2, 2, 256, dtype=np.float32),)


def rnn_loss(lib):
    t, np_ = LIBS[lib]

    def loss(params, h0, xs):
        wx, wh, b = params

        def step(h, x):
            h = np_.tanh(x @ wx + h @ wh + b)
            return h, np_.mean(h * h)
        return np_.mean(t.lax.scan(step, h0, xs)[1])
    return loss


def make_rnn_grad(lib):
    return LIBS[lib][0].value_and_grad(rnn_loss(lib))


def rnn_args(seed=0):
    rng = np.random.default_rng(seed)
    params = (rng.normal(0, N_IN ** -0.5, (N_IN, HIDDEN)).astype(np.float32),
              rng.normal(0, HIDDEN ** -0.5, (HIDDEN, HIDDEN)).astype(np.float32),
              np.zeros(HIDDEN, np.float32))
    return (params, np.zeros((BATCH, HIDDEN), np.float32),
            rng.normal(size=(RNN_STEPS, BATCH, N_IN)).astype(np.float32))


WORKLOADS = {"fori": (make_fori, fori_args), "rnn": (rnn_loss, rnn_args),
             "rnn_grad": (make_rnn_grad, rnn_args)}


def loop_kernels(hlo_text: str) -> str:
    """'ENTRY n, loop bodies [m, ...]': the kernels launched once per call and once per
    iteration of each while loop (measure.kernel_count of its body computation)."""
    bodies = re.findall(r"\bbody=(%?[\w.-]+)", hlo_text)
    per_loop = [kernel_count("ENTRY " + hlo_text.split(f"\n{b} ", 1)[1]) for b in bodies]
    return f"ENTRY {kernel_count(hlo_text)}, loop bodies {per_loop}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default=",".join(WORKLOADS))
    opts = parser.parse_args()
    first_reps, steady_reps = (3, 30) if opts.quick else (9, 200)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in opts.only.split(","):
        make, make_args = WORKLOADS[name]
        args = device_args(make_args())
        programs = {"tracehlo": tracehlo.jit(make("tracehlo")),
                    "fusion=xla": tracehlo.jit(make("tracehlo"), fusion="xla"),
                    "jax": jax.jit(make("jax"))}
        th, xla, jx = programs.values()
        print(f"{name}: max |tracehlo - jax| = {max_diff(th(*args), jx(*args)):.2e}; kernels: "
              f"tracehlo {loop_kernels(th.lower(*args).hlo)}, fusion=xla "
              f"{loop_kernels(xla.lower(*args).hlo)}, "
              f"jax {loop_kernels(jx.lower(*args).compile().as_text())}")
        report(f"{name} first_call", interleaved(
            {lib: first_call_sampler(lib, make, args) for lib in LIBS}, first_reps, warmup=0))
        steady = interleaved({k: _timed_loop(p, args, 1) for k, p in programs.items()},
                             steady_reps)
        report(f"{name} steady", steady)
        print(f"{'':<24} tracehlo fusion=xla {np.median(steady['fusion=xla']) * 1e3:9.3f} ms"
              f"   ratio {paired_ratio(steady['fusion=xla'], steady['jax']):6.3f}x")


if __name__ == "__main__":
    main()
