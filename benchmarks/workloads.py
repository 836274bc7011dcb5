"""One definition per benchmark workload, parameterised by the array namespace.

Each workload is written once against a `Lib` (a numpy-like module `np` and a
jax.nn-like module `nn`) and instantiated three times: with tracehlo.numpy /
tracehlo.nn, with jax.numpy / jax.nn, and with NumPy plus a small NumPy `nn` shim.
The math is therefore identical in all three; only the namespace differs.

`Workload.make(lib)` returns a *fresh* function object on every call. Benchmarks
that must not hit a compilation cache (frontend time, first-call latency) call
`make` once per repetition; both tracehlo.jit and jax.jit key their caches on the
function object, so a fresh closure is a guaranteed miss in both.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class Lib:
    name: str                 # "tracehlo", "jax", "numpy"
    np: types.ModuleType      # tracehlo.numpy, jax.numpy, numpy
    nn: object                # tracehlo.nn, jax.nn, _numpy_nn


# ------------------------------------------------------------------ NumPy nn shim

class _NumpyNN:
    """The few jax.nn functions the workloads use, in plain NumPy (same formulas
    as tracehlo.nn / jax.nn: tanh-approximate GELU, max-shifted softmax)."""

    @staticmethod
    def relu(x):
        return np.maximum(x, 0)

    @staticmethod
    def gelu(x, approximate=True):
        c = np.float32(np.sqrt(2 / np.pi))
        return 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * (x * x * x))))

    @staticmethod
    def softmax(x, axis=-1):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def libs(names=("tracehlo", "jax", "numpy")) -> dict[str, Lib]:
    out = {}
    for name in names:
        if name == "tracehlo":
            import tracehlo.nn
            import tracehlo.numpy
            out[name] = Lib(name, tracehlo.numpy, tracehlo.nn)
        elif name == "jax":
            import jax.nn
            import jax.numpy
            out[name] = Lib(name, jax.numpy, jax.nn)
        elif name == "numpy":
            out[name] = Lib(name, np, _NumpyNN)
        else:
            raise ValueError(name)
    return out


# ------------------------------------------------------------------ workloads
# Each maker takes a Lib and returns a new function; the function takes arrays only.

def make_elementwise(lib: Lib):
    xp = lib.np

    def elementwise(x):
        return xp.sin(x) * 2.0 + xp.cos(x) * x - 0.5
    return elementwise


def make_softmax(lib: Lib):
    xp = lib.np

    def softmax(x):
        # written out rather than nn.softmax so the three libraries run the same ops
        # (jax.nn.softmax wraps this in custom_jvp and stop_gradient)
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)
    return softmax


def make_layernorm(lib: Lib):
    xp = lib.np

    def layernorm(x, gamma, beta):
        mean = xp.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        var = xp.mean(centered * centered, axis=-1, keepdims=True)
        return centered / xp.sqrt(var + 1e-5) * gamma + beta
    return layernorm


def make_mlp(lib: Lib):
    xp, nn = lib.np, lib.nn

    def mlp(params, x):
        h = nn.relu(xp.dot(x, params["w1"]) + params["b1"])
        h = nn.gelu(xp.dot(h, params["w2"]) + params["b2"])
        return xp.dot(h, params["w3"]) + params["b3"]
    return mlp


# ------------------------------------------------------------------ inputs

def _rand(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def elementwise_inputs(rng, shape):
    return (_rand(rng, shape),)


softmax_inputs = elementwise_inputs


def layernorm_inputs(rng, shape):
    return (_rand(rng, shape), _rand(rng, shape[-1:]), _rand(rng, shape[-1:]))


def mlp_inputs(rng, size):
    batch, width = size
    params = {
        "w1": _rand(rng, (width, width), 1 / np.sqrt(width)), "b1": _rand(rng, (width,), 0.1),
        "w2": _rand(rng, (width, width), 1 / np.sqrt(width)), "b2": _rand(rng, (width,), 0.1),
        "w3": _rand(rng, (width, width), 1 / np.sqrt(width)), "b3": _rand(rng, (width,), 0.1),
    }
    return (params, _rand(rng, (batch, width)))


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    make: Callable[[Lib], Callable]
    inputs: Callable            # (rng, size) -> tuple of NumPy arrays / pytrees
    size: object                # realistic size: every measurement but dispatch
    dispatch_size: object       # tiny size for the per-call dispatch measurement
    describe: str

    def args(self, size=None, seed=0):
        return self.inputs(np.random.default_rng(seed), self.size if size is None else size)


WORKLOADS = [
    Workload("elementwise", make_elementwise, elementwise_inputs, (512, 512), (),
             "sin(x)*2 + cos(x)*x - 0.5 on f32[512,512]; dispatch on f32[]"),
    Workload("softmax", make_softmax, softmax_inputs, (512, 512), (1,),
             "row softmax (max-shifted) on f32[512,512]; dispatch on f32[1]"),
    Workload("layernorm", make_layernorm, layernorm_inputs, (512, 512), (1,),
             "layernorm over the last axis of f32[512,512] with gamma, beta f32[512]"),
    Workload("mlp", make_mlp, mlp_inputs, (256, 1024), (1, 1),
             "3-layer MLP forward (relu, gelu), batch 256 x width 1024, params a dict "
             "of 6 arrays; dispatch on width 1 (7 leaves)"),
]

BY_NAME = {w.name: w for w in WORKLOADS}
