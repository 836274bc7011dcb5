"""Transformations against JAX's, side by side in one process (issue 10's figures).

    python benchmarks/transforms.py [--quick] [--only train,per_example,eager_grad]

Workloads, each written once against a library (tracehlo or jax):
  train        an MLP training step: 784-512-512-10, batch 128, softmax cross-entropy,
               grad + SGD update, the whole step under jit
  per_example  per-example gradients `jit(vmap(grad(loss)))` of the same MLP, batch 64
  eager_grad   `grad(f)(x)` without jit, f a 10-op function of an f32[16]

Figures per workload (tracehlo / jax, each the median over interleaved rounds):
  frontend     trace + transform + lower: tracehlo's make_ir + lower_graph against
               jax.jit(step).trace(...).lower() (what each hands to XLA's compile)
  first_call   a fresh jit of a fresh function object, called once, until ready (no
               cache of ours warm: the passes' memo of XLA's import is cleared)
  stages       the first call's compile stages, median ms each: tracehlo's own timings
               (Compiled.timings: trace, lower, passes, xla_compile) against
               jax.jit(step).trace / .lower / .compile, and the kernels XLA runs for
               each (XLA CPU's compile time grows with them: an LLVM module each)
  steady       one call of the compiled step, inputs already on device
(eager_grad has one figure, the time per call.) Nothing is asserted: a measurement,
not a test.
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import tracehlo
import tracehlo.numpy as tnp
from tracehlo.lowering import lower_graph
from tracehlo.passes import xla_import
from tracehlo.runtime import entry_kernels

from measure import block, device_args, interleaved, perf, report

SIZES = (784, 512, 512, 10)
LIBS = {"tracehlo": (tracehlo, tnp), "jax": (jax, jnp)}


def mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, n_in ** -0.5, (n_in, n_out)).astype(np.float32),
             np.zeros(n_out, np.float32)) for n_in, n_out in zip(SIZES[:-1], SIZES[1:])]


def batch(n, seed=1):
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(n, SIZES[0])).astype(np.float32)
    labels = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], n)]
    return images, labels


def loss_fn(np_):
    def loss(params, images, labels):
        x = images
        for w, b in params[:-1]:
            x = np_.maximum(x @ w + b, 0.0)
        w, b = params[-1]
        logits = x @ w + b
        shifted = logits - np_.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - np_.log(np_.sum(np_.exp(shifted), axis=-1, keepdims=True))
        return -np_.mean(np_.sum(log_probs * labels, axis=-1))
    return loss


def make_train(lib):
    t, np_ = LIBS[lib]
    loss = loss_fn(np_)

    def step(params, images, labels):
        grads = t.grad(loss)(params, images, labels)
        return [(w - 0.01 * dw, b - 0.01 * db) for (w, b), (dw, db) in zip(params, grads)]
    return step


def make_per_example(lib):
    t, np_ = LIBS[lib]
    loss = loss_fn(np_)

    def one(params, image, label):
        return loss(params, image[None], label[None])
    return lambda params, images, labels: t.vmap(t.grad(one), in_axes=(None, 0, 0))(
        params, images, labels)


def ten_ops(np_):
    def f(x):
        y = np_.sin(x) * 2.0 + np_.cos(x)
        z = np_.tanh(y) * x - np_.exp(-x * x)
        return np_.sum(z * z + np_.log1p(y * y))
    return f


def frontend_sampler(lib, make, args):
    def sample():
        step = make(lib)  # a fresh function object: no tracing cache can hit
        t0 = perf()
        if lib == "tracehlo":
            lower_graph(tracehlo.make_ir(step)(*args), locations=True)
        else:
            jax.jit(step).trace(*args).lower()
        return perf() - t0
    return sample


def first_call_sampler(lib, make, args):
    jit = LIBS[lib][0].jit

    def sample():
        step = jit(make(lib))
        # the passes keep XLA's import of their last few fused modules, which every
        # round after the first would find: a first call of a new program finds none
        xla_import._imported_problems.cache_clear()
        t0 = perf()
        block(step(*args))
        return perf() - t0
    return sample


def steady_sampler(lib, make, args):
    step = LIBS[lib][0].jit(make(lib))
    block(step(*args))

    def sample():
        t0 = perf()
        block(step(*args))
        return perf() - t0
    return sample


def stages(make, args, reps):
    """{lib: {stage: [seconds]}} over `reps` fresh compiles, and each lib's kernel count."""
    times, kernels = {"tracehlo": {}, "jax": {}}, {}
    for _ in range(reps):
        xla_import._imported_problems.cache_clear()  # as in first_call_sampler
        compiled = tracehlo.compile(make("tracehlo"), args)
        for stage, t in compiled.timings.items():
            times["tracehlo"].setdefault(stage, []).append(t)
        kernels["tracehlo"] = len(compiled.kernels())
        t0 = perf()
        traced = jax.jit(make("jax")).trace(*args)
        t1 = perf()
        lowered = traced.lower()
        t2 = perf()
        executable = lowered.compile()
        t3 = perf()
        for stage, t in (("trace", t1 - t0), ("lower", t2 - t1), ("xla_compile", t3 - t2)):
            times["jax"].setdefault(stage, []).append(t)
        kernels["jax"] = len(entry_kernels(executable.as_text()))
    return times, kernels


def report_stages(name, times, kernels):
    for lib in LIBS:
        parts = "  ".join(f"{stage} {np.median(ts) * 1e3:6.1f}" for stage, ts in times[lib].items())
        print(f"{name + ' stages':<24} {lib:<8} {parts} ms   {kernels[lib]} kernels")


def eager_grad_sampler(lib, x):
    t, np_ = LIBS[lib]
    df = t.grad(ten_ops(np_))
    block(df(x))

    def sample():
        t0 = perf()
        block(df(x))
        return perf() - t0
    return sample


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="train,per_example,eager_grad")
    opts = parser.parse_args()
    reps = {"frontend": 5, "first_call": 3, "stages": 3, "steady": 20} if opts.quick else \
        {"frontend": 15, "first_call": 30, "stages": 5, "steady": 100}
    workloads = {"train": (make_train, 128), "per_example": (make_per_example, 64)}
    for name in opts.only.split(","):
        if name == "eager_grad":
            x = device_args(np.linspace(-1, 1, 16, dtype=np.float32))
            report("eager_grad per call", interleaved(
                {lib: eager_grad_sampler(lib, x) for lib in LIBS}, reps["steady"]))
            continue
        make, n = workloads[name]
        args = device_args((mlp_params(), *batch(n)))
        out = {lib: make(lib) for lib in LIBS}
        th = tracehlo.jit(out["tracehlo"])(*args)
        jx = jax.jit(out["jax"])(*args)
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                   for a, b in zip(jax.tree_util.tree_leaves(th), jax.tree_util.tree_leaves(jx)))
        print(f"{name}: max |tracehlo - jax| = {diff:.2e}")
        for figure, sampler in [("frontend", frontend_sampler),
                                ("first_call", first_call_sampler),
                                ("steady", steady_sampler)]:
            report(f"{name} {figure}", interleaved(
                {lib: sampler(lib, make, args) for lib in LIBS}, reps[figure],
                warmup=0 if figure == "first_call" else 2))
            if figure == "first_call":
                report_stages(name, *stages(make, args, reps["stages"]))


if __name__ == "__main__":
    main()
