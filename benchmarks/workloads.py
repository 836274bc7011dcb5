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


def _softmax(xp, x):
    # written out rather than nn.softmax so the three libraries run the same ops
    # (jax.nn.softmax wraps this in custom_jvp and stop_gradient)
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def _layernorm(xp, x, gamma, beta):
    mean = xp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = xp.mean(centered * centered, axis=-1, keepdims=True)
    return centered / xp.sqrt(var + 1e-5) * gamma + beta


def make_softmax(lib: Lib):
    xp = lib.np

    def softmax(x):
        return _softmax(xp, x)
    return softmax


def make_layernorm(lib: Lib):
    xp = lib.np

    def layernorm(x, gamma, beta):
        return _layernorm(xp, x, gamma, beta)
    return layernorm


def make_mlp(lib: Lib):
    xp, nn = lib.np, lib.nn

    def mlp(params, x):
        h = nn.relu(xp.dot(x, params["w1"]) + params["b1"])
        h = nn.gelu(xp.dot(h, params["w2"]) + params["b2"])
        return xp.dot(h, params["w3"]) + params["b3"]
    return mlp


def make_gelu_bias(lib: Lib):
    nn = lib.nn

    def gelu_bias(x, b):
        return nn.gelu(x + b)  # tanh-approximate, as after a dense layer
    return gelu_bias


def make_residual(lib: Lib):
    xp, nn = lib.np, lib.nn

    def residual(p, x):
        h = _layernorm(xp, x, p["gamma"], p["beta"])
        h = nn.relu(xp.dot(h, p["w1"]) + p["b1"])
        return x + xp.dot(h, p["w2"]) + p["b2"]
    return residual


def make_attention(lib: Lib, heads=4):
    xp = lib.np

    def attention(p, x):
        batch, seq, width = x.shape
        d = width // heads

        def split(w):  # [batch, seq, width] @ [width, width] -> [batch, heads, seq, d]
            t = xp.reshape(xp.matmul(x, w), (batch, seq, heads, d))
            return xp.transpose(t, (0, 2, 1, 3))
        q, k, v = split(p["wq"]), split(p["wk"]), split(p["wv"])
        scores = xp.matmul(q, xp.swapaxes(k, -1, -2)) / np.float32(np.sqrt(d))
        o = xp.matmul(_softmax(xp, scores), v)            # [batch, heads, seq, d]
        o = xp.reshape(xp.transpose(o, (0, 2, 1, 3)), (batch, seq, width))
        return xp.matmul(o, p["wo"]) + p["bo"]
    return attention


def make_mlp_train(lib: Lib, lr=0.1):
    """One SGD step of a 2-layer MLP classifier with softmax cross-entropy, the
    backward pass written by hand (matmuls, transposes, elementwise ops): returns
    (new params, loss)."""
    xp = lib.np

    def mlp_train(p, x, y):  # y: one-hot labels
        n = x.shape[0]
        z1 = xp.dot(x, p["w1"]) + p["b1"]
        h = xp.maximum(z1, 0.0)
        logits = xp.dot(h, p["w2"]) + p["b2"]
        shifted = logits - xp.max(logits, axis=-1, keepdims=True)
        e = xp.exp(shifted)
        s = xp.sum(e, axis=-1, keepdims=True)
        loss = -xp.sum(y * (shifted - xp.log(s))) / n
        # backward
        dlogits = (e / s - y) / n
        dw2 = xp.dot(xp.transpose(h), dlogits)
        db2 = xp.sum(dlogits, axis=0)
        dz1 = xp.where(z1 > 0, xp.dot(dlogits, xp.transpose(p["w2"])), 0.0)
        dw1 = xp.dot(xp.transpose(x), dz1)
        db1 = xp.sum(dz1, axis=0)
        grads = {"w1": dw1, "b1": db1, "w2": dw2, "b2": db2}
        return {k: p[k] - lr * grads[k] for k in p}, loss
    return mlp_train


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


def gelu_bias_inputs(rng, shape):
    return (_rand(rng, shape), _rand(rng, shape[-1:], 0.1))


def residual_inputs(rng, size):
    batch, width, hidden = size
    p = {"gamma": 1 + _rand(rng, (width,), 0.1), "beta": _rand(rng, (width,), 0.1),
         "w1": _rand(rng, (width, hidden), 1 / np.sqrt(width)), "b1": _rand(rng, (hidden,), 0.1),
         "w2": _rand(rng, (hidden, width), 1 / np.sqrt(hidden)), "b2": _rand(rng, (width,), 0.1)}
    return (p, _rand(rng, (batch, width)))


def attention_inputs(rng, size):
    batch, seq, width = size
    p = {n: _rand(rng, (width, width), 1 / np.sqrt(width)) for n in ("wq", "wk", "wv", "wo")}
    p["bo"] = _rand(rng, (width,), 0.1)
    return (p, _rand(rng, (batch, seq, width)))


def mlp_train_inputs(rng, size):
    batch, width, hidden, classes = size
    p = {"w1": _rand(rng, (width, hidden), 1 / np.sqrt(width)), "b1": _rand(rng, (hidden,), 0.1),
         "w2": _rand(rng, (hidden, classes), 1 / np.sqrt(hidden)),
         "b2": _rand(rng, (classes,), 0.1)}
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, batch)]
    return (p, _rand(rng, (batch, width)), y)


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
    Workload("gelu_bias", make_gelu_bias, gelu_bias_inputs, (512, 1024), (1, 1),
             "gelu(x + b), tanh approximation, x f32[512,1024], b f32[1024]"),
    Workload("residual", make_residual, residual_inputs, (256, 512, 1024), (1, 1, 1),
             "x + relu(layernorm(x)@w1+b1)@w2+b2, x f32[256,512], hidden 1024"),
    Workload("attention", make_attention, attention_inputs, (4, 128, 256), (1, 1, 4),
             "4-head self-attention: x@wq/wk/wv, softmax(QK^T/sqrt(d)), @V, @wo+bo; "
             "x f32[4,128,256]"),
    Workload("mlp_train", make_mlp_train, mlp_train_inputs, (128, 256, 512, 128),
             (1, 1, 1, 1), "SGD step of a 2-layer relu MLP, softmax cross-entropy, "
             "hand-written backward; batch 128, 256 -> 512 -> 128 classes; returns "
             "(params, loss)"),
]

# Which workloads `run.py --suite NAME` runs.
SUITES = {
    "default": ["elementwise", "softmax", "layernorm", "mlp"],
    "fusion": ["softmax", "layernorm", "mlp_train", "gelu_bias", "residual", "attention"],
}

BY_NAME = {w.name: w for w in WORKLOADS}
