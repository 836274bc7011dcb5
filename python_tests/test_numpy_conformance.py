"""tracehlo.numpy against jax.numpy as the oracle, table-driven: every function, over
bool, int8-32, uint8-32, f16, bf16, f32 and complex64, with Python and NumPy scalars,
0-d, size-0 and broadcasting shapes and JAX's keyword arguments. Each case must agree
in shape, dtype, weak_type and value (or raise JAX's error type), under jit and eagerly.

Cases are batched: one tracehlo.jit and one jax.jit per (family, dtype) returning every
case's result; a case that raises while tracing is recorded on its own, and a batch XLA
rejects is bisected to the cases responsible. Eager runs cover a sample (see EAGER).
`python test_numpy_conformance.py` prints the pass rate; `--x64` runs the 64-bit subset
(the x64 test runs it in a child process with TRACEHLO_ENABLE_X64 and JAX_ENABLE_X64).
"""
from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.numpy.util import promote_args_inexact  # the oracle of tnp.rsqrt

import tracehlo
import tracehlo.numpy as tnp
from numpy_helpers import JAX_RELEASE, check_raises

X64 = tracehlo.config.enable_x64
DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
          "bfloat16", "float32", "complex64"]
X64_DTYPES = ["int32", "int64", "uint32", "float32", "float64", "complex128"]
EAGER_DTYPES = {"int32", "float32", "float64"}  # sampled eagerly; others: jit only
EAGER_EVERY = 6
VALUES = "values"  # a case's fourth field: compare values too (compiled), not only types
TYPES = "types"  # a case's fourth field: types only, in a family whose values are all compared
KEY = "key"  # a case's fourth field: values compared at the family's value dtypes, uncapped

# The listed cases (JAX_INCONSISTENT, NOT_YET_FIXED and their x64 forms) are at the end.


def _jnp_with(**overrides):
    """jax.numpy, plus the names tracehlo.numpy has that jax.numpy spells elsewhere."""
    return types.SimpleNamespace(**{**{n: getattr(jnp, n) for n in dir(jnp)
                                       if not n.startswith("_")}, **overrides})


def _cumulative(lax_fn):
    """jnp has no cummax/cummin: lax's, with bool scanned as int (lax refuses bool), and
    lists refused as jnp's functions refuse them."""
    def fn(a, axis=None):
        if isinstance(a, list):
            raise TypeError("cummax/cummin take arrays, not lists")
        a = jnp.asarray(a)
        b = a.astype(jnp.int32) if a.dtype == jnp.bool_ else a
        out = lax_fn(b.ravel(), 0) if axis is None else lax_fn(b, axis % b.ndim)
        return out.astype(a.dtype)
    return fn


ORACLE = _jnp_with(rsqrt=lambda x: jax.lax.rsqrt(*promote_args_inexact("rsqrt", x)),
                   linalg=jnp.linalg,
                   cummax=_cumulative(jax.lax.cummax), cummin=_cumulative(jax.lax.cummin))


# ---------------------------------------------------------------- inputs

def _sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = jnp.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, 7, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-4, 6, shape).astype(dt)
    values = np.round(rng.uniform(-3, 3, shape), 2)
    if dt.kind == "c":
        values = values + 1j * np.round(rng.uniform(-3, 3, shape), 2)
    return values.astype(dt)


def _special(dtype):
    """Edge values: signed zeros, infinities, nan, extremes of the type."""
    dt = jnp.dtype(dtype)
    if dt == np.bool_:
        return np.array([True, False])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array([0, 1, info.max, info.min, info.max // 2 + 1], dt)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, float(jnp.finfo(dt).max),
              float(jnp.finfo(dt).tiny)]
    if dt.kind == "c":  # every edge value in each part (no 0 * inf from 1j * x)
        out = np.zeros(len(values), dt)
        out.real, out.imag = values, values[::-1]
        return out
    return np.array(values, dt)


class Pool:
    """The arrays a dtype's cases take (passed to jit as arguments)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.x = _sample(dtype, (2, 3), 1)
        self.x2 = _sample(dtype, (2, 3), 2)
        self.v = _sample(dtype, (3,), 3)
        self.s = _sample(dtype, (), 4)
        self.z = _sample(dtype, (0, 3), 5)
        self.col = _sample(dtype, (2, 1), 6)
        self.row = _sample(dtype, (1, 3), 7)
        self.sp = np.concatenate([_special(dtype), self.x.ravel()])
        self.sp2 = self.sp[::-1].copy()
        self.n = jnp.dtype(dtype).type(_sample(dtype, (), 8))  # a NumPy scalar
        self.x4 = _sample(dtype, (2, 3, 4, 5), 9)
        self.mask = _sample("bool", (2, 3), 10)
        self.idx = np.array([2, 0, -1, 1], np.int32)
        self.idx2 = np.array([[0, 2, 1], [1, 1, 0]], np.int32)


# ---------------------------------------------------------------- the table

UNARY = ["conjugate", "imag", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "arcsinh", "arccosh", "arctanh", "exp", "exp2", "log", "log1p", "expm1", "sqrt",
         "cbrt", "negative", "sign", "log2", "log10", "absolute", "abs", "floor", "ceil",
         "round", "around", "trunc", "square", "reciprocal", "invert", "bitwise_not",
         "logical_not", "isfinite", "isinf", "isnan", "signbit", "deg2rad", "rad2deg",
         "radians", "degrees", "conj", "real", "rsqrt"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "power", "pow",
          "float_power", "remainder", "mod", "fmod", "floor_divide", "divmod", "maximum",
          "minimum", "arctan2", "nextafter", "copysign", "hypot", "logaddexp", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and",
          "logical_or", "logical_xor"]
REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var",
              "std", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"]


def _unary_cases():
    for name in UNARY:
        yield f"{name}(x)", lambda m, x, f=name: getattr(m, f)(x), ("x",)
        yield f"{name}(s)", lambda m, s, f=name: getattr(m, f)(s), ("s",)
        yield f"{name}(z)", lambda m, z, f=name: getattr(m, f)(z), ("z",)
        yield f"{name}(special)", lambda m, sp, f=name: getattr(m, f)(sp), ("sp",), VALUES
        yield f"{name}(numpy scalar)", lambda m, f=name, p=None: getattr(m, f)(p.n), ()
    yield "round(x, 1)", lambda m, x: m.round(x, 1), ("x",)
    yield "round(x, decimals=-1)", lambda m, x: m.round(x, decimals=-1), ("x",)


def _binary_cases():
    for name in BINARY:
        f = name
        yield f"{f}(x, x2)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("x", "x2")
        yield f"{f}(col, row)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("col", "row")
        yield f"{f}(x, v)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("x", "v")
        yield f"{f}(z, v)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("z", "v")
        yield f"{f}(s, s)", lambda m, a, f=f: getattr(m, f)(a, a), ("s",)
        yield f"{f}(special, special2)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("sp", "sp2"), VALUES
        yield f"{f}(x, 2)", lambda m, a, f=f: getattr(m, f)(a, 2), ("x",)
        yield f"{f}(3, x)", lambda m, a, f=f: getattr(m, f)(3, a), ("x",)
        yield f"{f}(x, 1.5)", lambda m, a, f=f: getattr(m, f)(a, 1.5), ("x",)
        yield f"{f}(x, True)", lambda m, a, f=f: getattr(m, f)(a, True), ("x",)
        yield f"{f}(x, numpy scalar)", lambda m, a, f=f, p=None: getattr(m, f)(a, p.n), ("x",)
        yield f"{f}(x, 0)", lambda m, a, f=f: getattr(m, f)(a, 0), ("x",), VALUES
    yield "where(mask, x, x2)", lambda m, c, a, b: m.where(c, a, b), ("mask", "x", "x2")
    yield "where(mask, x, 0)", lambda m, c, a: m.where(c, a, 0), ("mask", "x")
    yield "where(s, 1, 2.5)", lambda m, c: m.where(c, 1, 2.5), ("s",)
    yield "clip(x, 0, 2)", lambda m, a: m.clip(a, 0, 2), ("x",)
    yield "clip(x, v)", lambda m, a, b: m.clip(a, b), ("x", "v")
    yield "clip(x, max=1)", lambda m, a: m.clip(a, max=1), ("x",)
    yield "x % x2 operator", lambda m, a, b: m.asarray(a) % b, ("x", "x2")
    yield "x ** 2 operator", lambda m, a: m.asarray(a) ** 2, ("x",)
    yield "x ** x2 operator", lambda m, a, b: m.asarray(a) ** b, ("x", "x2")
    yield "x // 0 operator", lambda m, a: m.asarray(a) // 0, ("x",)
    yield "-x operator", lambda m, a: -m.asarray(a), ("x",)
    yield "~x operator", lambda m, a: ~m.asarray(a), ("x",)


def _reduction_cases():
    for f in REDUCTIONS:
        yield f"{f}(x)", lambda m, a, f=f: getattr(m, f)(a), ("x",)
        yield f"{f}(x, axis=0)", lambda m, a, f=f: getattr(m, f)(a, axis=0), ("x",)
        yield f"{f}(s)", lambda m, a, f=f: getattr(m, f)(a), ("s",)
        yield f"{f}(z, axis=1)", lambda m, a, f=f: getattr(m, f)(a, axis=1), ("z",)
        yield f"{f}(z, axis=0)", lambda m, a, f=f: getattr(m, f)(a, axis=0), ("z",)
        yield f"{f}(x4, axis=(1, 3))", lambda m, a, f=f: getattr(m, f)(
            a, axis=(1, 3)) if f[:3] not in ("arg", "cum") else getattr(m, f)(a, axis=3), ("x4",)
        yield f"{f}(special)", lambda m, a, f=f: getattr(m, f)(a), ("sp",)
        if f[:3] not in ("cum",):
            yield f"{f}(x, axis=-1, keepdims)", lambda m, a, f=f: getattr(m, f)(
                a, axis=-1, keepdims=True), ("x",)
    for f in ("sum", "prod", "max", "min", "all", "any", "mean", "var", "std"):
        yield f"{f}(x, where=mask, axis=1)", lambda m, a, w, f=f: getattr(m, f)(
            a, axis=1, where=w, **({"initial": 0} if f in ("max", "min") else {})), ("x", "mask")
    for f in ("sum", "prod", "max", "min"):
        yield f"{f}(x, initial=1)", lambda m, a, f=f: getattr(m, f)(a, initial=1), ("x",)
    for f in ("sum", "prod", "mean", "var", "std", "cumsum", "cumprod"):
        yield f"{f}(x, dtype=float32)", lambda m, a, f=f: getattr(m, f)(a, dtype="float32"), ("x",)
        yield f"{f}(x, dtype=int32)", lambda m, a, f=f: getattr(m, f)(a, dtype="int32"), ("x",)
    for f in ("sum", "prod", "cumsum", "cumprod"):
        yield f"{f}(x, promote_integers=False)", lambda m, a, f=f: getattr(m, f)(
            a, promote_integers=False), ("x",)
    yield "var(x, ddof=1)", lambda m, a: m.var(a, ddof=1), ("x",)
    yield "std(x, axis=0, ddof=2)", lambda m, a: m.std(a, axis=0, ddof=2), ("x",)
    yield "argmax(x, axis=1, keepdims)", lambda m, a: m.argmax(a, axis=1, keepdims=True), ("x",)
    yield "linalg.norm(x)", lambda m, a: m.linalg.norm(a), ("x",)
    yield "linalg.norm(v, ord=1)", lambda m, a: m.linalg.norm(a, ord=1), ("v",)
    yield "linalg.norm(x, axis=1)", lambda m, a: m.linalg.norm(a, axis=1), ("x",)
    yield "linalg.norm(x, ord=inf)", lambda m, a: m.linalg.norm(a, ord=np.inf), ("x",)
    yield "x.ptp()", lambda m, a: m.asarray(a).ptp(), ("x",)
    yield "ptp(x, axis=0)", lambda m, a: m.ptp(a, axis=0), ("x",)


def _array_cases():
    yield "zeros(dtype)", lambda m, p=None: m.zeros((2, 3), p.dtype), ()
    yield "ones(dtype)", lambda m, p=None: m.ones(4, dtype=p.dtype), ()
    yield "empty(dtype)", lambda m, p=None: m.empty((0, 2), p.dtype), ()
    yield "full((2,), 1, dtype)", lambda m, p=None: m.full((2,), 1, p.dtype), ()
    yield "full((2, 3), s)", lambda m, a: m.full((2, 3), a), ("s",)
    yield "full((2, 3), v)", lambda m, a: m.full((2, 3), a), ("v",)
    yield "full_like(x, 2)", lambda m, a: m.full_like(a, 2), ("x",)
    yield "full_like(x, 2.5, dtype=float32)", lambda m, a: m.full_like(a, 2.5, dtype="float32"), ("x",)
    yield "zeros_like(x)", lambda m, a: m.zeros_like(a), ("x",)
    yield "ones_like(x, shape=(4,))", lambda m, a: m.ones_like(a, shape=(4,)), ("x",)
    yield "arange(5, dtype)", lambda m, p=None: m.arange(5, dtype=p.dtype), ()
    yield "arange(1, 7, 2, dtype)", lambda m, p=None: m.arange(1, 7, 2, dtype=p.dtype), ()
    yield "linspace(0, 4, 5, dtype)", lambda m, p=None: m.linspace(0, 4, 5, dtype=p.dtype), ()
    yield "linspace(s, 3, 4)", lambda m, a: m.linspace(a, 3, 4), ("s",)
    yield "linspace(0, v, 3, axis=1)", lambda m, a: m.linspace(0, a, 3, axis=1), ("v",)
    yield "eye(3, dtype)", lambda m, p=None: m.eye(3, dtype=p.dtype), ()
    yield "eye(2, 4, k=1, dtype)", lambda m, p=None: m.eye(2, 4, k=1, dtype=p.dtype), ()
    yield "identity(2, dtype)", lambda m, p=None: m.identity(2, dtype=p.dtype), ()
    yield "tri(3, dtype)", lambda m, p=None: m.tri(3, dtype=p.dtype), ()
    yield "tril(x)", lambda m, a: m.tril(a), ("x",)
    yield "triu(x, 1)", lambda m, a: m.triu(a, 1), ("x",)
    yield "asarray(x)", lambda m, a: m.asarray(a), ("x",)
    yield "asarray(numpy scalar)", lambda m, p=None: m.asarray(p.n), ()
    yield "asarray([s, s])", lambda m, a: m.asarray([a, a]), ("s",)
    yield "array(x, dtype=float32)", lambda m, a: m.array(a, dtype="float32"), ("x",)
    yield "astype(x, int8)", lambda m, a: m.astype(a, "int8"), ("x",)
    yield "astype(x, bool)", lambda m, a: m.astype(a, "bool"), ("x",)
    yield "broadcast_to(v, (2, 3))", lambda m, a: m.broadcast_to(a, (2, 3)), ("v",)
    yield "broadcast_to(s, (0, 2))", lambda m, a: m.broadcast_to(a, (0, 2)), ("s",)
    # shapes
    yield "reshape(x, (3, 2))", lambda m, a: m.reshape(a, (3, 2)), ("x",)
    yield "reshape(x, -1)", lambda m, a: m.reshape(a, -1), ("x",)
    yield "reshape(x, (3, 2), order=F)", lambda m, a: m.reshape(a, (3, 2), order="F"), ("x",)
    yield "reshape(z, (3, -1))", lambda m, a: m.reshape(a, (3, -1)), ("z",)
    yield "ravel(x)", lambda m, a: m.ravel(a), ("x",)
    yield "transpose(x)", lambda m, a: m.transpose(a), ("x",)
    yield "transpose(x4, (3, 0, 2, 1))", lambda m, a: m.transpose(a, (3, 0, 2, 1)), ("x4",)
    yield "swapaxes(x4, 1, -1)", lambda m, a: m.swapaxes(a, 1, -1), ("x4",)
    yield "moveaxis(x4, 0, -1)", lambda m, a: m.moveaxis(a, 0, -1), ("x4",)
    yield "moveaxis(x4, (0, 1), (2, 3))", lambda m, a: m.moveaxis(a, (0, 1), (2, 3)), ("x4",)
    yield "expand_dims(x, (0, 3))", lambda m, a: m.expand_dims(a, (0, 3)), ("x",)
    yield "squeeze(col)", lambda m, a: m.squeeze(a), ("col",)
    yield "squeeze(row, axis=0)", lambda m, a: m.squeeze(a, axis=0), ("row",)
    yield "atleast_1d(s)", lambda m, a: m.atleast_1d(a), ("s",)
    yield "atleast_2d(v)", lambda m, a: m.atleast_2d(a), ("v",)
    yield "atleast_1d(s, v)", lambda m, *a: m.atleast_1d(*a), ("s", "v")
    yield "atleast_2d(s, v, x)", lambda m, *a: m.atleast_2d(*a), ("s", "v", "x")
    yield "concatenate([x, x2])", lambda m, a, b: m.concatenate([a, b]), ("x", "x2")
    yield "concatenate([x, z])", lambda m, a, b: m.concatenate([a, b]), ("x", "z")
    yield "concatenate([x, x2], axis=None)", lambda m, a, b: m.concatenate([a, b], axis=None), ("x", "x2")
    yield "concatenate([x, x2], axis=1, dtype=float32)", lambda m, a, b: m.concatenate(
        [a, b], axis=1, dtype="float32"), ("x", "x2")
    yield "stack([v, v])", lambda m, a: m.stack([a, a]), ("v",)
    yield "stack([v, v], axis=-1, dtype=int32)", lambda m, a: m.stack([a, a], axis=-1, dtype="int32"), ("v",)
    yield "hstack([x, x2])", lambda m, a, b: m.hstack([a, b]), ("x", "x2")
    yield "hstack([s, s], dtype=float32)", lambda m, a: m.hstack([a, a], dtype="float32"), ("s",)
    yield "vstack([v, x])", lambda m, a, b: m.vstack([a, b]), ("v", "x")
    yield "vstack([v, v], dtype=float32)", lambda m, a: m.vstack([a, a], dtype="float32"), ("v",)
    yield "column_stack([v, v])", lambda m, a: m.column_stack([a, a]), ("v",)
    yield "split(x, 3, axis=1)", lambda m, a: m.split(a, 3, axis=1), ("x",)
    yield "split(v, [1])", lambda m, a: m.split(a, [1]), ("v",)
    yield "array_split(v, 2)", lambda m, a: m.array_split(a, 2), ("v",)
    yield "tile(v, 2)", lambda m, a: m.tile(a, 2), ("v",)
    yield "tile(x, (2, 1, 2))", lambda m, a: m.tile(a, (2, 1, 2)), ("x",)
    yield "repeat(x, 2, axis=0)", lambda m, a: m.repeat(a, 2, axis=0), ("x",)
    yield "repeat(x, [1, 0, 2], axis=1)", lambda m, a: m.repeat(a, np.array([1, 0, 2]), axis=1), ("x",)
    yield "flip(x)", lambda m, a: m.flip(a), ("x",)
    yield "fliplr(x)", lambda m, a: m.fliplr(a), ("x",)
    yield "flipud(x)", lambda m, a: m.flipud(a), ("x",)
    yield "roll(x, 1)", lambda m, a: m.roll(a, 1), ("x",)
    yield "roll(x, -1, axis=1)", lambda m, a: m.roll(a, -1, axis=1), ("x",)
    yield "roll(x, (1, 2), axis=(0, 1))", lambda m, a: m.roll(a, (1, 2), axis=(0, 1)), ("x",)
    yield "roll(x, (1, 1), axis=(1, 1))", lambda m, a: m.roll(a, (1, 1), axis=(1, 1)), ("x",)
    yield "roll(x, traced shift, axis=1)", lambda m, a, i: m.roll(a, i[0], axis=1), ("x", "idx")
    yield "pad(x, 1)", lambda m, a: m.pad(a, 1), ("x",)
    yield "pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4)))", lambda m, a: m.pad(
        a, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4))), ("x",)
    yield "pad(x, 2, mode=edge)", lambda m, a: m.pad(a, 2, mode="edge"), ("x",)
    yield "pad(x, (1, 2), mode=reflect)", lambda m, a: m.pad(a, (1, 2), mode="reflect"), ("x",)
    yield "pad(x, 1, mode=symmetric)", lambda m, a: m.pad(a, 1, mode="symmetric"), ("x",)
    yield "pad(x, 2, mode=wrap)", lambda m, a: m.pad(a, 2, mode="wrap"), ("x",)
    yield "diagonal(x)", lambda m, a: m.diagonal(a), ("x",)
    yield "diagonal(x4, 1, 1, 3)", lambda m, a: m.diagonal(a, 1, 1, 3), ("x4",)
    yield "diag(v, -1)", lambda m, a: m.diag(a, -1), ("v",)
    yield "diag(x)", lambda m, a: m.diag(a), ("x",)
    # contractions
    yield "trace(x)", lambda m, a: m.trace(a), ("x",)
    yield "trace(x4, axis1=2, axis2=3, dtype=float32)", lambda m, a: m.trace(
        a, axis1=2, axis2=3, dtype="float32"), ("x4",)
    yield "dot(x, v)", lambda m, a, b: m.dot(a, b), ("x", "v")
    yield "dot(s, x)", lambda m, a, b: m.dot(a, b), ("s", "x")
    yield "matmul(x, x2.T)", lambda m, a, b: m.matmul(a, m.transpose(b)), ("x", "x2")
    yield "matmul(x4, x4.mT)", lambda m, a: m.matmul(a, m.swapaxes(a, -1, -2)), ("x4",)
    yield "matmul(v, x.T)", lambda m, a, b: m.matmul(a, m.transpose(b)), ("v", "x")
    yield "matmul(z, v)", lambda m, a, b: m.matmul(a, b), ("z", "v")
    yield "vdot(x, x2)", lambda m, a, b: m.vdot(a, b), ("x", "x2")
    yield "inner(x, v)", lambda m, a, b: m.inner(a, b), ("x", "v")
    yield "outer(v, x)", lambda m, a, b: m.outer(a, b), ("v", "x")
    yield "tensordot(x, x2, ((1,), (1,)))", lambda m, a, b: m.tensordot(a, b, ((1,), (1,))), ("x", "x2")
    yield "tensordot(x4, x4, 2)", lambda m, a: m.tensordot(a, m.transpose(a, (2, 3, 0, 1)), 2), ("x4",)
    yield "einsum(ij,j->i)", lambda m, a, b: m.einsum("ij,j->i", a, b), ("x", "v")
    yield "einsum(ij,kj)", lambda m, a, b: m.einsum("ij,kj", a, b), ("x", "x2")
    yield "einsum(...j,j)", lambda m, a, b: m.einsum("...j,j", a, b), ("x", "v")
    yield "einsum(ii->i)", lambda m, a: m.einsum("ii->i", a[:, :2]), ("x",)
    # sorting and indexing
    yield "sort(x)", lambda m, a: m.sort(a), ("x",)
    yield "sort(x, axis=0, descending)", lambda m, a: m.sort(a, axis=0, descending=True), ("x",)
    yield "sort(special)", lambda m, a: m.sort(a), ("sp",)
    yield "sort(x, axis=None)", lambda m, a: m.sort(a, axis=None), ("x",)
    yield "argsort(x)", lambda m, a: m.argsort(a), ("x",)
    yield "argsort(special, descending)", lambda m, a: m.argsort(a, descending=True), ("sp",)
    yield "take(v, idx)", lambda m, a, i: m.take(a, i), ("v", "idx")
    yield "take(x, idx2, axis=1)", lambda m, a, i: m.take(a, i, axis=1), ("x", "idx2")
    yield "take(x, idx, mode=clip)", lambda m, a, i: m.take(a, i, mode="clip"), ("x", "idx")
    yield "take(v, [3, -4], mode=fill)", lambda m, a: m.take(a, np.array([3, -4]), mode="fill"), ("v",)
    yield "take_along_axis(x, idx2, 1)", lambda m, a, i: m.take_along_axis(a, i, 1), ("x", "idx2")
    yield "x[1]", lambda m, a: m.asarray(a)[1], ("x",)
    yield "x[:, ::-2]", lambda m, a: m.asarray(a)[:, ::-2], ("x",)
    yield "x[idx2]", lambda m, a, i: m.asarray(a)[i], ("v", "idx2")
    yield "x[mask-free None, ..., 1]", lambda m, a: m.asarray(a)[None, ..., 1], ("x",)
    yield "x4[:, i, ..., j]", lambda m, a, i: m.asarray(a)[:, i[:2], ..., i[:2]], ("x4", "idx")
    yield "x4[i, :, j]", lambda m, a, i: m.asarray(a)[i[:2], :, i[:2]], ("x4", "idx")
    yield "x4[:, s_idx, :, 1]", lambda m, a, i: m.asarray(a)[:, i[3], :, 1], ("x4", "idx")
    yield "x.at[0].set(1)", lambda m, a: m.asarray(a).at[0].set(1), ("x",)
    yield "x.at[:, idx].add(s)", lambda m, a, i, s: m.asarray(a).at[:, i[:2]].add(s), ("x", "idx", "s")
    yield "x.at[idx].get(mode=fill)", lambda m, a: m.asarray(a).at[np.array([0, 5])].get(
        mode="fill", fill_value=0), ("x",)
    yield "x.at[1:, -1].multiply(2)", lambda m, a: m.asarray(a).at[1:, -1].multiply(2), ("x",)
    yield "x.real", lambda m, a: m.asarray(a).real, ("x",)
    yield "x.imag", lambda m, a: m.asarray(a).imag, ("x",)
    yield "x.T", lambda m, a: m.asarray(a).T, ("x",)
    yield "x.sum(axis=0)", lambda m, a: m.asarray(a).sum(axis=0), ("x",)
    yield "x.astype(float32)", lambda m, a: m.asarray(a).astype("float32"), ("x",)
    yield "x.reshape(3, 2)", lambda m, a: m.asarray(a).reshape(3, 2), ("x",)
    yield "x.conj()", lambda m, a: m.asarray(a).conj(), ("x",)
    yield "imag(x)", lambda m, a: m.imag(a), ("x",)


def _promotion_cases():
    """Every pair of dtypes through a binary op, concatenate and where."""
    for a in DTYPES:
        for b in DTYPES:
            yield f"add({a}, {b})", lambda m, p=None, a=a, b=b: m.add(
                p.pools[a].x, p.pools[b].x2), ()
            yield f"concatenate({a}, {b})", lambda m, p=None, a=a, b=b: m.concatenate(
                [p.pools[a].v, p.pools[b].v]), ()
        yield f"add({a}, 1)", lambda m, p=None, a=a: m.add(p.pools[a].x, 1), ()
        yield f"add({a}, 1.0)", lambda m, p=None, a=a: m.add(p.pools[a].x, 1.0), ()
        yield f"add({a}, 1j)", lambda m, p=None, a=a: m.add(p.pools[a].x, 1j), ()
        yield f"where({a}, 2.0, 3)", lambda m, p=None, a=a: m.where(p.pools[a].mask, 2.0,
                                                                     p.pools[a].s), ()


SCALARS = [True, 3, -2.5, 1 + 2j]


def _scalar_cases():
    """Python scalars alone (weak types), and functions of Python numbers."""
    for v in SCALARS:
        for f in UNARY:
            yield f"{f}({v!r})", lambda m, f=f, v=v: getattr(m, f)(v), ()
        for f in ("add", "multiply", "maximum", "floor_divide", "power", "equal"):
            yield f"{f}({v!r}, 2)", lambda m, f=f, v=v: getattr(m, f)(v, 2), ()
        for f in ("sum", "max", "mean", "cumsum", "sort", "ravel", "atleast_1d",
                  "expand_dims", "asarray", "array", "zeros_like", "transpose"):
            args = (0,) if f == "expand_dims" else ()
            yield f"{f}({v!r})", lambda m, f=f, v=v, args=args: getattr(m, f)(v, *args), ()
        yield f"full(2, {v!r})", lambda m, v=v: m.full(2, v), ()
        yield f"where(True, {v!r}, 0)", lambda m, v=v: m.where(True, v, 0), ()
    for f in REDUCTIONS:
        yield f"{f}(python list)", lambda m, f=f: getattr(m, f)([1, 2, 3]), ()
    yield "arange(3.0)", lambda m: m.arange(3.0), ()
    yield "linspace(0, 1, 5)", lambda m: m.linspace(0, 1, 5), ()
    yield "zeros(3)", lambda m: m.zeros(3), ()
    yield "eye(2)", lambda m: m.eye(2), ()
    yield "asarray([1, 2.5])", lambda m: m.asarray([1, 2.5]), ()
    yield "asarray([[True], [False]])", lambda m: m.asarray([[True], [False]]), ()
    yield "hypot(1e25, 1e25) f32", lambda m: m.hypot(np.float32(1e25), np.float32(1e25)), (), VALUES
    yield "hypot(300, 400) f16", lambda m: m.hypot(np.float16(300), np.float16(400)), (), VALUES


XP = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)  # interp's sample points
QS = np.array([0.0, 0.25, 0.5, 0.9, 1.0], np.float32)  # quantiles


def _composite_cases():
    """Functions built of the others (no primitive of their own): fewer dtypes, as their
    building blocks' dtypes are covered above."""
    yield "select([mask, ~mask], [x, x2], s)", lambda m, c, a, b, s: m.select(
        [c, m.logical_not(c)], [a, b], s), ("mask", "x", "x2", "s")
    yield "select([mask], [x])", lambda m, c, a: m.select([c], [a]), ("mask", "x")
    yield "select([mask], [2.5], v)", lambda m, c, a: m.select([c], [2.5], a), ("mask", "v")
    yield "piecewise(x, [mask, ~mask], [f, 1])", lambda m, a, c: m.piecewise(
        a, [c, m.logical_not(c)], [lambda y: m.logical_not(y) if y.dtype == bool else y * 2, 1]
    ), ("x", "mask")
    yield "piecewise(x, [mask], [3, 5])", lambda m, a, c: m.piecewise(a, [c], [3, 5]), ("x", "mask")
    yield "append(x, v)", lambda m, a, b: m.append(a, b), ("x", "v"), TYPES
    yield "append(x, x2, axis=1)", lambda m, a, b: m.append(a, b, axis=1), ("x", "x2")
    yield "append(s, 1)", lambda m, a: m.append(a, 1), ("s",), TYPES
    yield "insert(v, 1, 5)", lambda m, a: m.insert(a, 1, 5), ("v",)
    yield "insert(x, 1, v, axis=0)", lambda m, a, b: m.insert(a, 1, b, axis=0), ("x", "v")
    yield "insert(v, idx, s)", lambda m, a, i, s: m.insert(a, i, s), ("v", "idx", "s"), KEY
    yield "insert(x, 0:2, 9, axis=1)", lambda m, a: m.insert(a, slice(0, 2), 9, axis=1), ("x",)
    yield "insert(v, [], 1)", lambda m, a: m.insert(a, np.array([]), 1), ("v",)
    yield "delete(v, 1)", lambda m, a: m.delete(a, 1), ("v",)
    yield "delete(x, [0, 2], axis=1)", lambda m, a: m.delete(a, np.array([0, 2]), axis=1), ("x",)
    yield "delete(x, 1:, axis=1)", lambda m, a: m.delete(a, slice(1, None), axis=1), ("x",)
    yield "delete(x, -1)", lambda m, a: m.delete(a, -1), ("x",), TYPES
    yield "delete(v, mask row)", lambda m, a: m.delete(a, np.array([True, False, True])), ("v",)
    yield "delete(v, idx[:2], assume_unique)", lambda m, a, i: m.delete(
        a, m.asarray(i)[:2], assume_unique_indices=True), ("v", "idx"), KEY
    yield "interp(x, XP, fp)", lambda m, a, f: m.interp(a, XP, m.asarray(f)[0, 0, :, 0]), ("x", "x4")
    yield "interp(x, XP, x4)", lambda m, a, f: m.interp(a, XP, f), ("x", "x4")
    yield "interp(x, XP, fp, left, right)", lambda m, a: m.interp(
        a, XP, XP * 2, left=-7, right=7.5), ("x",)
    yield "interp(x, XP, fp, extrapolate)", lambda m, a: m.interp(
        a, XP, XP ** 2, left="extrapolate", right="extrapolate"), ("x",), KEY
    yield "interp(x, XP, fp, period=1.5)", lambda m, a: m.interp(a, XP, XP + 1, period=1.5), ("x",), KEY
    yield "interp(s, v, v)", lambda m, a, b: m.interp(a, m.sort(b), b), ("s", "v")
    yield "diff(x)", lambda m, a: m.diff(a), ("x",)
    yield "diff(x4, 2, axis=1)", lambda m, a: m.diff(a, 2, axis=1), ("x4",)
    yield "diff(x, prepend=0, append=x2)", lambda m, a, b: m.diff(a, prepend=0, append=b), ("x", "x2"), KEY
    yield "diff(x, n=0)", lambda m, a: m.diff(a, n=0), ("x",), TYPES
    yield "diff(v, n=5)", lambda m, a: m.diff(a, n=5), ("v",)
    yield "diff(s)", lambda m, a: m.diff(a), ("s",)
    yield "ediff1d(x)", lambda m, a: m.ediff1d(a), ("x",), TYPES
    yield "ediff1d(x, to_end=s, to_begin=[1, 2])", lambda m, a, s: m.ediff1d(
        a, to_end=s, to_begin=np.array([1, 2])), ("x", "s")
    yield "trapezoid(x)", lambda m, a: m.trapezoid(a), ("x",), TYPES
    yield "trapezoid(x4, dx=0.5, axis=1)", lambda m, a: m.trapezoid(a, dx=0.5, axis=1), ("x4",)
    yield "trapezoid(x, v)", lambda m, a, b: m.trapezoid(a, b), ("x", "v"), KEY
    yield "trapezoid(x, x2, axis=0)", lambda m, a, b: m.trapezoid(a, b, axis=0), ("x", "x2")
    yield "gradient(x)", lambda m, a: m.gradient(a), ("x",)
    yield "gradient(x4, 2.0, axis=(0, 3))", lambda m, a: m.gradient(a, 2.0, axis=(0, 3)), ("x4",)
    yield "gradient(v, [0, 1, 3])", lambda m, a: m.gradient(a, np.array([0.0, 1.0, 3.0])), ("v",), KEY
    yield "gradient(x, 1.0, v, axis=(0, -1))", lambda m, a, b: m.gradient(
        a, 1.0, m.sort(b), axis=(0, -1)), ("x", "v")
    yield "gradient(z)", lambda m, a: m.gradient(a), ("z",), TYPES
    yield "select([mask], [])", lambda m, c: m.select([c], []), ("mask",)
    yield "select([], [])", lambda m: m.select([], []), ()
    yield "piecewise(x, [mask], [1, 2, 3])", lambda m, a, c: m.piecewise(a, [c], [1, 2, 3]), ("x", "mask")
    yield "diff(v, n=-1)", lambda m, a: m.diff(a, n=-1), ("v",)
    yield "gradient(v, edge_order=2)", lambda m, a: m.gradient(a, edge_order=2), ("v",)
    yield "gradient(v, 1.0, 2.0)", lambda m, a: m.gradient(a, 1.0, 2.0), ("v",)
    yield "interp(x, XP, XP, left=bad)", lambda m, a: m.interp(a, XP, XP, left="bad"), ("x",)
    yield "delete(v, [0.5])", lambda m, a: m.delete(a, np.array([0.5])), ("v",)
    yield "insert(v, [[1]], 0)", lambda m, a: m.insert(a, np.array([[1]]), 0), ("v",)
    yield "diff(list)", lambda m: m.diff([1, 2]), ()
    # comparisons and type predicates
    yield "isclose(x, x2)", lambda m, a, b: m.isclose(a, b), ("x", "x2")
    yield "isclose(sp, sp2, equal_nan)", lambda m, a, b: m.isclose(a, b, equal_nan=True), ("sp", "sp2"), KEY
    yield "isclose(sp, sp)", lambda m, a: m.isclose(a, a), ("sp",)
    yield "isclose(x, v, rtol=0.5, atol=1)", lambda m, a, b: m.isclose(a, b, rtol=0.5, atol=1), ("x", "v")
    yield "isclose(s, 1)", lambda m, a: m.isclose(a, 1), ("s",), TYPES
    yield "allclose(x, x + 1e-9)", lambda m, a: m.allclose(a, m.asarray(a) * 1), ("x",)
    yield "allclose(sp, sp, equal_nan)", lambda m, a: m.allclose(a, a, equal_nan=True), ("sp",)
    yield "array_equal(x, x2)", lambda m, a, b: m.array_equal(a, b), ("x", "x2")
    yield "array_equal(x, x)", lambda m, a: m.array_equal(a, a), ("x",), TYPES
    yield "array_equal(x, v)", lambda m, a, b: m.array_equal(a, b), ("x", "v")
    yield "array_equal(sp, sp, equal_nan)", lambda m, a: m.array_equal(a, a, equal_nan=True), ("sp",)
    yield "array_equiv(x, row)", lambda m, a, b: m.array_equiv(a, b), ("x", "row")
    yield "array_equiv(x, x4)", lambda m, a, b: m.array_equiv(a, b), ("x", "x4")
    yield "array_equiv(v, x[0])", lambda m, a, b: m.array_equiv(a, m.asarray(b)[1]), ("v", "x")
    yield "isin(x, v)", lambda m, a, b: m.isin(a, b), ("x", "v")
    yield "isin(x, v, invert)", lambda m, a, b: m.isin(a, b, invert=True), ("x", "v")
    yield "isin(x, x2, binary_search)", lambda m, a, b: m.isin(a, b, method="binary_search"), ("x", "x2"), KEY
    yield "isin(x, x2, sort, invert)", lambda m, a, b: m.isin(a, b, method="sort", invert=True), ("x", "x2")
    yield "isin(s, z)", lambda m, a, b: m.isin(a, b), ("s", "z")
    yield "isin(x, v, method=bad)", lambda m, a, b: m.isin(a, b, method="bad"), ("x", "v")
    for f in ("isposinf", "isneginf", "isreal", "iscomplex"):
        yield f"{f}(sp)", lambda m, a, f=f: getattr(m, f)(a), ("sp",)
        yield f"{f}(s)", lambda m, a, f=f: getattr(m, f)(a), ("s",)
        yield f"{f}(2.5)", lambda m, f=f: getattr(m, f)(2.5), ()
    # statistics
    for f in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
              "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count_nonzero", "median",
              "nanmedian"):
        yield f"{f}(sp)", lambda m, a, f=f: getattr(m, f)(a), ("sp",)
        yield f"{f}(x, axis=1)", lambda m, a, f=f: getattr(m, f)(a, axis=1), ("x",), TYPES
        yield f"{f}(s)", lambda m, a, f=f: getattr(m, f)(a), ("s",), TYPES
        if f[:6] not in ("nanarg", "nancum"):
            yield f"{f}(x4, axis=(1, 3), keepdims)", lambda m, a, f=f: getattr(m, f)(
                a, axis=(1, 3), keepdims=True), ("x4",), TYPES
        if f[:3] == "nan" and f[3:6] != "cum":
            yield f"{f}(all-NaN rows)", lambda m, a, c, f=f: getattr(m, f)(
                m.where(c, m.asarray(a) * np.nan, a), axis=0), ("x", "mask")
    yield "nansum(x, where=mask, initial=1)", lambda m, a, c: m.nansum(a, where=c, initial=1), ("x", "mask")
    yield "nanmax(sp, initial=0)", lambda m, a: m.nanmax(a, initial=0), ("sp",)
    yield "nanvar(x, axis=0, ddof=1)", lambda m, a: m.nanvar(a, axis=0, ddof=1), ("x",)
    yield "nanstd(sp, ddof=2, dtype=float32)", lambda m, a: m.nanstd(a, ddof=2, dtype="float32"), ("sp",)
    yield "nanmean(x, dtype=float32)", lambda m, a: m.nanmean(a, dtype="float32"), ("x",)
    yield "nanvar(x, axis=1, mean=...)", lambda m, a: m.nanvar(a, axis=1, mean=m.mean(
        a, axis=1, keepdims=True)), ("x",), KEY
    yield "nancumsum(x, axis=0, dtype=float32)", lambda m, a: m.nancumsum(a, 0, dtype="float32"), ("x",)
    yield "nanargmax(x, axis=0, keepdims)", lambda m, a: m.nanargmax(a, 0, keepdims=True), ("x",)
    yield "median(x4, axis=2, keepdims)", lambda m, a: m.median(a, axis=2, keepdims=True), ("x4",)
    yield "median(x, keepdims)", lambda m, a: m.median(a, keepdims=True), ("x",), TYPES
    for method in ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"):
        yield f"quantile(x4, qs, axis=1, {method})", lambda m, a, k=method: m.quantile(
            a, QS, axis=1, method=k), ("x4",), TYPES
        yield f"nanquantile(sp, 0.3, {method})", lambda m, a, k=method: m.nanquantile(
            a, 0.3, method=k), ("sp",), TYPES
        yield f"nanquantile(x4 with NaN, qs, axis=(0, 2), {method})", lambda m, a, k=method: m.nanquantile(
            m.where(m.asarray(a) > 1, np.nan, a), QS, axis=(0, 2), method=k), ("x4",), KEY
        yield f"quantile(sp, 0.5, {method})", lambda m, a, k=method: m.quantile(a, 0.5, method=k), ("sp",)
    yield "quantile(x, qs, axis=1, inverted_cdf, weights)", lambda m, a, b: m.quantile(
        a, QS, axis=1, method="inverted_cdf", weights=m.abs(b)), ("x", "x2")
    yield "nanquantile(x, 0.6, inverted_cdf, weights (2, 3))", lambda m, a, b: m.nanquantile(
        a, 0.6, method="inverted_cdf", weights=b, keepdims=True), ("x", "x2")
    yield "quantile(x4, qs, axis=(1, 3), weights, keepdims)", lambda m, a: m.quantile(
        a, QS, axis=(1, 3), method="inverted_cdf", weights=m.abs(m.asarray(a)[0, :, 0, :]),
        keepdims=True), ("x4",)
    yield "quantile(x, 0.5, weights, linear)", lambda m, a: m.quantile(a, 0.5, weights=a), ("x",)
    yield "quantile(x, 0)", lambda m, a: m.quantile(a, 0), ("x",)
    yield "quantile(x, qs, method=bad)", lambda m, a: m.quantile(a, QS, method="bad"), ("x",)
    yield "quantile(x, 2-d q)", lambda m, a: m.quantile(a, np.ones((2, 2)) / 2), ("x",)
    yield "percentile(x, 30)", lambda m, a: m.percentile(a, 30), ("x",), TYPES
    yield "percentile(x4, [10, 90], axis=(1, 2), keepdims)", lambda m, a: m.percentile(
        a, np.array([10, 90]), axis=(1, 2), keepdims=True), ("x4",)
    yield "nanpercentile(sp, [25, 50], method=nearest)", lambda m, a: m.nanpercentile(
        a, np.array([25.0, 50.0]), method="nearest"), ("sp",)
    yield "average(x)", lambda m, a: m.average(a), ("x",), TYPES
    yield "average(x, axis=1, weights=v, returned)", lambda m, a, w: m.average(
        a, axis=1, weights=w, returned=True), ("x", "v"), KEY
    yield "average(x4, axis=(1, 3), weights (3, 5))", lambda m, a: m.average(
        a, axis=(3, 1), weights=m.transpose(m.asarray(a)[0, :, 0, :]), keepdims=True), ("x4",)
    yield "average(x, axis=0, returned)", lambda m, a: m.average(a, axis=0, returned=True), ("x",)
    yield "average(x, weights=v)", lambda m, a, w: m.average(a, weights=w), ("x", "v")
    yield "cov(x)", lambda m, a: m.cov(a), ("x",)
    yield "cov(x, rowvar=False, bias=True)", lambda m, a: m.cov(a, rowvar=False, bias=True), ("x",)
    yield "cov(v, x)", lambda m, a, b: m.cov(a, b), ("v", "x")
    yield "cov(x, fweights, aweights)", lambda m, a, w: m.cov(
        a, fweights=np.array([1, 2, 1]), aweights=m.abs(w)), ("x", "v"), KEY
    yield "cov(x, ddof=0, aweights)", lambda m, a: m.cov(a, ddof=0, aweights=np.array([1.0, 2, 1])), ("x",)
    yield "cov(x, aweights, dtype=float32)", lambda m, a: m.cov(
        a, aweights=np.array([1.0, 2, 1]), dtype="float32"), ("x",)
    yield "cov(v)", lambda m, a: m.cov(a), ("v",), TYPES
    yield "cov(z)", lambda m, a: m.cov(a), ("z",)
    yield "cov(x4)", lambda m, a: m.cov(a), ("x4",)
    yield "cov(x, fweights=float)", lambda m, a: m.cov(a, fweights=np.ones(3)), ("x",)
    yield "corrcoef(x)", lambda m, a: m.corrcoef(a), ("x",)
    yield "corrcoef(v, x, rowvar=False)", lambda m, a, b: m.corrcoef(
        a, m.transpose(b), rowvar=False), ("v", "x")
    yield "corrcoef(v)", lambda m, a: m.corrcoef(a), ("v",)
    yield "count_nonzero(x, axis=(0, 1), keepdims)", lambda m, a: m.count_nonzero(
        a, axis=(0, 1), keepdims=True), ("x",)
    # index arrays, shapes, products, polynomials
    yield "meshgrid(v, row[0])", lambda m, a, b: m.meshgrid(a, m.ravel(b)), ("v", "row")
    yield "meshgrid(v, v[:2], v, ij, sparse)", lambda m, a: m.meshgrid(
        a, m.asarray(a)[:2], a, indexing="ij", sparse=True), ("v",)
    yield "meshgrid(x)", lambda m, a: m.meshgrid(a), ("x",), TYPES
    yield "meshgrid(v, indexing=bad)", lambda m, a: m.meshgrid(a, indexing="ab"), ("v",)
    yield "indices((2, 3))", lambda m: m.indices((2, 3)), ()
    yield "indices((2, 0, 3), dtype, sparse)", lambda m, p=None: m.indices(
        (2, 0, 3), dtype="int16", sparse=True), ()
    yield "indices(())", lambda m: m.indices(()), (), TYPES
    yield "ix_(idx, idx[:2])", lambda m, a: m.ix_(a, m.asarray(a)[:2]), ("idx",)
    yield "ix_(v[:0])", lambda m, a: m.ix_(m.asarray(a)[:0]), ("idx",), TYPES
    yield "ix_(mask[0])", lambda m, a: m.ix_(m.asarray(a)[0]), ("mask",)
    yield "tril_indices(3)", lambda m: m.tril_indices(3), ()
    yield "triu_indices(3, 1, 4)", lambda m: m.triu_indices(3, 1, 4), ()
    yield "tril_indices(4, -1, 2)", lambda m: m.tril_indices(4, -1, 2), ()
    yield "tril_indices_from(x, 1)", lambda m, a: m.tril_indices_from(a, 1), ("x",), TYPES
    yield "triu_indices_from(x4)", lambda m, a: m.triu_indices_from(a), ("x4",)
    yield "diag_indices(3, 3)", lambda m: m.diag_indices(3, 3), (), TYPES
    yield "diag_indices_from(x[:, :2])", lambda m, a: m.diag_indices_from(m.asarray(a)[:, :2]), ("x",), TYPES
    yield "diag_indices_from(x)", lambda m, a: m.diag_indices_from(a), ("x",)
    yield "unravel_index(idx, (2, 3))", lambda m, i: m.unravel_index(i, (2, 3)), ("idx",)
    yield "unravel_index(idx2 + 4, (3, 2))", lambda m, i: m.unravel_index(
        m.asarray(i) * 3 - 1, (3, 2)), ("idx2",)
    yield "unravel_index(7, 5)", lambda m: m.unravel_index(7, 5), (), TYPES
    yield "ravel_multi_index clip", lambda m, i, j: m.ravel_multi_index(
        (i, m.ravel(j)[:4]), (3, 4), mode="clip"), ("idx", "idx2")
    yield "ravel_multi_index wrap F int16", lambda m, i: m.ravel_multi_index(
        (i, i), (3, 4), mode="wrap", order="F", dtype="int16"), ("idx",)
    yield "ravel_multi_index raise static", lambda m: m.ravel_multi_index(
        (np.array([0, 2]), np.array([1, 3])), (3, 4)), ()
    yield "ravel_multi_index raise traced", lambda m, i: m.ravel_multi_index((i, i), (3, 4)), ("idx",)
    yield "broadcast_arrays(x, v, 1.5)", lambda m, a, b: m.broadcast_arrays(a, b, 1.5), ("x", "v")
    yield "broadcast_arrays(x, x4)", lambda m, a, b: m.broadcast_arrays(a, b), ("x", "x4"), TYPES
    yield "rot90(x)", lambda m, a: m.rot90(a), ("x",)
    yield "rot90(x4, 2, (1, 3))", lambda m, a: m.rot90(a, 2, (1, 3)), ("x4",)
    yield "rot90(x4, -1, (-1, 0))", lambda m, a: m.rot90(a, -1, (-1, 0)), ("x4",)
    yield "rot90(x, 4)", lambda m, a: m.rot90(a, 4), ("x",), TYPES
    yield "rot90(v)", lambda m, a: m.rot90(a), ("v",)
    yield "rollaxis(x4, 3, 1)", lambda m, a: m.rollaxis(a, 3, 1), ("x4",)
    yield "rollaxis(x4, 1, 4)", lambda m, a: m.rollaxis(a, 1, 4), ("x4",), TYPES
    yield "rollaxis(x4, 1, -5)", lambda m, a: m.rollaxis(a, 1, -5), ("x4",)
    yield "permute_dims(x4, (1, 0, 3, 2))", lambda m, a: m.permute_dims(a, (1, 0, 3, 2)), ("x4",), TYPES
    yield "permute_dims(x, (0, 0))", lambda m, a: m.permute_dims(a, (0, 0)), ("x",)
    yield "matrix_transpose(x4)", lambda m, a: m.matrix_transpose(a), ("x4",), TYPES
    yield "matrix_transpose(v)", lambda m, a: m.matrix_transpose(a), ("v",)
    yield "unstack(x)", lambda m, a: m.unstack(a), ("x",)
    yield "unstack(x4, axis=-2)", lambda m, a: m.unstack(a, axis=-2), ("x4",), TYPES
    yield "unstack(s)", lambda m, a: m.unstack(a), ("s",)
    yield "concat([x, x2], axis=1)", lambda m, a, b: m.concat([a, b], axis=1), ("x", "x2"), TYPES
    yield "concat(x4)", lambda m, a: m.concat(a), ("x4",)
    yield "concat([x, v], axis=None)", lambda m, a, b: m.concat([a, b], axis=None), ("x", "v"), TYPES
    yield "diagflat(x)", lambda m, a: m.diagflat(a), ("x",)
    yield "diagflat(v, -2)", lambda m, a: m.diagflat(a, -2), ("v",)
    yield "kron(x, v)", lambda m, a, b: m.kron(a, b), ("x", "v")
    yield "kron(s, x4)", lambda m, a, b: m.kron(a, b), ("s", "x4")
    yield "kron(x, 2)", lambda m, a: m.kron(a, 2), ("x",), TYPES
    yield "cross(x, x2)", lambda m, a, b: m.cross(a, b), ("x", "x2")
    yield "cross(x, row2)", lambda m, a, b: m.cross(a, m.asarray(b)[:, :2]), ("x", "row")
    yield "cross(x.T, x2.T, axis=0)", lambda m, a, b: m.cross(m.transpose(a), m.transpose(b), axis=0), ("x", "x2"), TYPES
    yield "cross(x4, x4, axisa=1, axisb=1, axisc=0)", lambda m, a: m.cross(
        a, a[::-1], axisa=1, axisb=1, axisc=0), ("x4",)
    yield "cross(x[:, :2], x2[:, :2])", lambda m, a, b: m.cross(
        m.asarray(a)[:, :2], m.asarray(b)[:, :2]), ("x", "x2")
    yield "cross(x4, x4)", lambda m, a: m.cross(a, a), ("x4",)
    yield "vander(v)", lambda m, a: m.vander(a), ("v",)
    yield "vander(v, 5, increasing)", lambda m, a: m.vander(a, 5, increasing=True), ("v",)
    yield "vander(x)", lambda m, a: m.vander(a), ("x",), TYPES
    for mode in ("full", "same", "valid"):
        yield f"convolve(v, x[0, :2], {mode})", lambda m, a, b, k=mode: m.convolve(
            a, m.asarray(b)[0, :2], mode=k), ("v", "x"), KEY
        yield f"convolve(v[:2], sp, {mode})", lambda m, a, b, k=mode: m.convolve(
            m.asarray(a)[:2], b, mode=k), ("v", "sp")
        yield f"correlate(sp, v, {mode})", lambda m, a, b, k=mode: m.correlate(a, b, mode=k), ("sp", "v"), KEY
        yield f"correlate(v[:2], x4 row, {mode})", lambda m, a, b, k=mode: m.correlate(
            m.asarray(a)[:2], m.asarray(b)[0, 0, 0], mode=k), ("v", "x4")
    yield "convolve(v, x)", lambda m, a, b: m.convolve(a, b), ("v", "x")
    yield "convolve(v, z[0])", lambda m, a, b: m.convolve(a, m.asarray(b)[:, 0]), ("v", "z")
    yield "convolve(v, v, bad)", lambda m, a: m.convolve(a, a, mode="bad"), ("v",)
    yield "convolve(v, v, preferred_element_type=float32)", lambda m, a: m.convolve(
        a, a, preferred_element_type="float32"), ("v",)
    yield "polyval(v, x)", lambda m, a, b: m.polyval(a, b), ("v", "x")
    yield "polyval(x, v)", lambda m, a, b: m.polyval(a, b), ("x", "v")
    yield "polyval(v, 2)", lambda m, a: m.polyval(a, 2), ("v",), TYPES
    yield "polyadd(v, x[0, :2])", lambda m, a, b: m.polyadd(a, m.asarray(b)[0, :2]), ("v", "x")
    yield "polyadd(v[:1], v)", lambda m, a: m.polyadd(m.asarray(a)[:1], a), ("v",), TYPES
    yield "polysub(v[:2], x4 row)", lambda m, a, b: m.polysub(m.asarray(a)[:2], m.asarray(b)[0, 0, 0]), ("v", "x4")
    yield "polymul(v, x[1])", lambda m, a, b: m.polymul(a, m.asarray(b)[1]), ("v", "x")
    yield "polymul(z[0], v)", lambda m, a, b: m.polymul(m.asarray(a)[:, 0], b), ("z", "v")
    yield "polyder(x4 row)", lambda m, a: m.polyder(m.asarray(a)[0, 0, 0]), ("x4",)
    yield "polyder(v, 2)", lambda m, a: m.polyder(a, 2), ("v",)
    yield "polyder(v, 4)", lambda m, a: m.polyder(a, 4), ("v",)
    yield "polyder(v, 0)", lambda m, a: m.polyder(a, 0), ("v",), TYPES
    yield "polyint(v)", lambda m, a: m.polyint(a), ("v",)
    yield "polyint(v, 2, s)", lambda m, a, s: m.polyint(a, 2, s), ("v", "s")
    yield "polyint(v, 3, k=v)", lambda m, a: m.polyint(a, 3, k=a), ("v",)
    yield "polyint(v, 2, k=v)", lambda m, a: m.polyint(a, 2, k=a), ("v",)
    # ufuncs
    for f in ("fabs", "rint", "positive", "frexp", "modf", "sinc", "nan_to_num", "spacing", "i0"):
        yield f"{f}(sp)", lambda m, a, f=f: getattr(m, f)(a), ("sp",)
        yield f"{f}(s)", lambda m, a, f=f: getattr(m, f)(a), ("s",), TYPES
        yield f"{f}(2)", lambda m, f=f: getattr(m, f)(2), (), TYPES
        yield f"{f}(numpy scalar)", lambda m, f=f, p=None: getattr(m, f)(p.n), (), TYPES
    for f in ("fmax", "fmin", "heaviside", "ldexp", "gcd", "lcm", "logaddexp2"):
        yield f"{f}(sp, sp2)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("sp", "sp2")
        yield f"{f}(x, v)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("x", "v")
        yield f"{f}(x, 3)", lambda m, a, f=f: getattr(m, f)(a, 3), ("x",), TYPES
        yield f"{f}(2.5, s)", lambda m, a, f=f: getattr(m, f)(2.5, a), ("s",), TYPES
    yield "ldexp(x, idx2)", lambda m, a, i: m.ldexp(a, i), ("x", "idx2"), KEY
    yield "ldexp(sp, 3)", lambda m, a: m.ldexp(a, 3), ("sp",)
    yield "gcd(idx2, 12)", lambda m, i: m.gcd(i, 12), ("idx2",), KEY
    yield "lcm(idx, idx[::-1])", lambda m, i: m.lcm(i, m.asarray(i)[::-1]), ("idx",), KEY
    yield "nan_to_num(sp, nan=1, posinf=2, neginf=s)", lambda m, a, s: m.nan_to_num(
        a, nan=1, posinf=2, neginf=s), ("sp", "s")
    yield "modf(x)", lambda m, a: m.modf(a), ("x",)
    yield "i0(x4 * 6)", lambda m, a: m.i0(m.asarray(a) * 6), ("x4",), KEY
    # set operations
    for f in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        yield f"{f}(x, x2, size=8)", lambda m, a, b, f=f: getattr(m, f)(a, b, size=8), ("x", "x2")
        yield f"{f}(idx2, idx, size=3, fill_value=9)", lambda m, a, b, f=f: getattr(m, f)(
            a, b, size=3, fill_value=9), ("idx2", "idx")
        yield f"{f}(x, x2)", lambda m, a, b, f=f: getattr(m, f)(a, b), ("x", "x2")
        yield f"{f}(z, v, size=2)", lambda m, a, b, f=f: getattr(m, f)(a, b, size=2), ("z", "v")
    yield "intersect1d(x, x2, return_indices, size=5)", lambda m, a, b: m.intersect1d(
        a, b, return_indices=True, size=5), ("x", "x2"), KEY
    yield "intersect1d(idx, idx2, assume_unique, return_indices, size=4)", lambda m, a, b: m.intersect1d(
        a, m.asarray(b)[0], assume_unique=True, return_indices=True, size=4), ("idx", "idx2")
    yield "setxor1d(idx, idx2[0], assume_unique, size=6)", lambda m, a, b: m.setxor1d(
        a, m.asarray(b)[0], assume_unique=True, size=6), ("idx", "idx2")
    yield "setdiff1d(v, x, assume_unique, size=2)", lambda m, a, b: m.setdiff1d(
        a, b, assume_unique=True, size=2), ("v", "x")



def _names_cases():
    """The names added with JAX's numpy coverage: index tricks, windows, shapes,
    selection, math, functional and histograms."""
    yield "mgrid[0:4, 1:2:3j]", lambda m: m.mgrid[0:4, 1:2:3j], ()
    yield "mgrid[:3]", lambda m: m.mgrid[:3], (), TYPES
    yield "ogrid[0:2, 0:1:0.25]", lambda m: m.ogrid[0:2, 0:1:0.25], ()
    yield "r_[v, 0, 1:3, x[0]]", lambda m, a, b: m.r_[a, 0, 1:3, m.asarray(b)[0]], ("v", "x"), KEY
    yield "r_['0,2,0', v, v]", lambda m, a: m.r_["0,2,0", a, a], ("v",), TYPES
    yield "r_['c', v, s]", lambda m, a, b: m.r_["c", a, b], ("v", "s"), TYPES
    yield "c_[x, x2]", lambda m, a, b: m.c_[a, b], ("x", "x2"), TYPES
    yield "c_[v, v]", lambda m, a: m.c_[a, a], ("v",)
    yield "r_['bad', v]", lambda m, a: m.r_["a,b", a], ("v",)
    yield "mask_indices(3, triu, 1)", lambda m: m.mask_indices(3, m.triu, 1), ()
    for f in ("bartlett", "blackman", "hamming", "hanning"):
        yield f"{f}(7)", lambda m, f=f: getattr(m, f)(7), (), KEY
        yield f"{f}(1)", lambda m, f=f: getattr(m, f)(1), (), TYPES
        yield f"{f}(-1)", lambda m, f=f: getattr(m, f)(-1), ()
    yield "kaiser(6, 2.5)", lambda m: m.kaiser(6, 2.5), (), KEY
    yield "kaiser(5, s)", lambda m, b: m.kaiser(5, b), ("s",)
    yield "atleast_3d(s, v, x, x4)", lambda m, *a: m.atleast_3d(*a), ("s", "v", "x", "x4")
    yield "block([[x, x2], [x2, x]])", lambda m, a, b: m.block([[a, b], [b, a]]), ("x", "x2")
    yield "block([v, s])", lambda m, a, b: m.block([a, b]), ("v", "s"), TYPES
    yield "block([[x], v])", lambda m, a, b: m.block([[a], b]), ("x", "v")
    yield "block((x,))", lambda m, a: m.block((a,)), ("x",)
    yield "hsplit(x, 3)", lambda m, a: m.hsplit(a, 3), ("x",)
    yield "hsplit(v, [1])", lambda m, a: m.hsplit(a, [1]), ("v",), TYPES
    yield "vsplit(x4, [1, 1])", lambda m, a: m.vsplit(a, [1, 1]), ("x4",), TYPES
    yield "dsplit(x4, 2)", lambda m, a: m.dsplit(a, 2), ("x4",)
    yield "hsplit(x, 2)", lambda m, a: m.hsplit(a, 2), ("x",)
    yield "dstack([x, x2])", lambda m, a, b: m.dstack([a, b]), ("x", "x2")
    yield "dstack(x4)", lambda m, a: m.dstack(a), ("x4",), TYPES
    yield "dstack([v, s], dtype=float32)", lambda m, a, b: m.dstack([a, a], dtype="float32"), ("v", "s")
    yield "resize(x, (4, 5))", lambda m, a: m.resize(a, (4, 5)), ("x",)
    yield "resize(z, 3)", lambda m, a: m.resize(a, 3), ("z",), TYPES
    yield "resize(s, (2, 0))", lambda m, a: m.resize(a, (2, 0)), ("s",), TYPES
    yield "copy(x)", lambda m, a: m.copy(a), ("x",)
    yield "copy(2.5)", lambda m: m.copy(2.5), (), TYPES
    yield "fill_diagonal(x, v)", lambda m, a, b: m.fill_diagonal(a, b, inplace=False), ("x", "v"), KEY
    yield "fill_diagonal(x4[0, :3, :3, :3], s)", lambda m, a, b: m.fill_diagonal(
        m.asarray(a)[0, :3, :3, :3], b, inplace=False), ("x4", "s"), TYPES
    yield "fill_diagonal(x4, s)", lambda m, a, b: m.fill_diagonal(a, b, inplace=False), ("x4", "s")
    yield "put(x, idx, v)", lambda m, a, i, b: m.put(a, i, b, inplace=False), ("x", "idx", "v")
    yield "put(x, idx2 * 3, s, clip)", lambda m, a, i, b: m.put(
        a, m.asarray(i) * 3, b, mode="clip", inplace=False), ("x", "idx2", "s")
    yield "put(x, idx2 * 3, v, wrap)", lambda m, a, i, b: m.put(
        a, m.asarray(i) * 3, b, mode="wrap", inplace=False), ("x", "idx2", "v"), KEY
    yield "put(x, idx, v, raise)", lambda m, a, i, b: m.put(a, i, b, mode="raise", inplace=False), ("x", "idx", "v")
    yield "put(x, idx, v) in place", lambda m, a, i, b: m.put(a, i, b), ("x", "idx", "v")
    yield "place(x, mask, v)", lambda m, a, c, b: m.place(a, c, b, inplace=False), ("x", "mask", "v"), KEY
    yield "place(x, mask, v) in place", lambda m, a, c, b: m.place(a, c, b), ("x", "mask", "v")
    # selection and sorting
    yield "choose(idx2, [x, x2, s], wrap)", lambda m, i, a, b, c: m.choose(
        i, [a, b, c], mode="wrap"), ("idx2", "x", "x2", "s"), KEY
    yield "choose(idx, [v[0], s], clip)", lambda m, i, a, c: m.choose(
        m.asarray(i)[:3], [a, c], mode="clip"), ("idx", "v", "s"), TYPES
    yield "choose(idx2, [x], raise)", lambda m, i, a: m.choose(i, [a]), ("idx2", "x")
    yield "choose(x, [x], wrap)", lambda m, a: m.choose(a, [a], mode="wrap"), ("x",)
    yield "compress(mask[0], x, axis=1, size=2)", lambda m, c, a: m.compress(
        m.asarray(c)[0], a, axis=1, size=2, fill_value=7), ("mask", "x")
    yield "compress(mask row, x4, axis=0, size=1)", lambda m, c, a: m.compress(
        m.asarray(c)[:, 0], a, axis=0, size=1), ("mask", "x4"), TYPES
    yield "compress(mask, x)", lambda m, c, a: m.compress(c, a), ("mask", "x")
    yield "extract(mask, x, size=4)", lambda m, c, a: m.extract(c, a, size=4), ("mask", "x")
    yield "extract(x, x2, size=6, fill_value=s)", lambda m, a, b, f: m.extract(
        a, b, size=6, fill_value=f), ("x", "x2", "s"), KEY
    yield "partition(sp, 3)", lambda m, a: m.partition(a, 3), ("sp",), KEY
    yield "partition(x4, 1, axis=1)", lambda m, a: m.partition(a, 1, axis=1), ("x4",)
    yield "argpartition(sp, 4)", lambda m, a: m.argpartition(a, 4), ("sp",), KEY
    yield "argpartition(x4, -2, axis=3)", lambda m, a: m.argpartition(a, -2, axis=3), ("x4",)
    yield "partition(v, 3)", lambda m, a: m.partition(a, 3), ("v",)
    yield "lexsort([x, x2])", lambda m, a, b: m.lexsort([a, b]), ("x", "x2"), KEY
    yield "lexsort((x4 rows), axis=1)", lambda m, a: m.lexsort(
        (m.asarray(a)[0], m.asarray(a)[1]), axis=1), ("x4",)
    yield "lexsort([s])", lambda m, a: m.lexsort([a]), ("s",)
    yield "lexsort([])", lambda m: m.lexsort([]), ()
    yield "sort_complex(x)", lambda m, a: m.sort_complex(a), ("x",)
    # math
    yield "angle(x)", lambda m, a: m.angle(a), ("x",)
    yield "angle(sp, deg=True)", lambda m, a: m.angle(a, deg=True), ("sp",), KEY
    yield "angle(s)", lambda m, a: m.angle(a), ("s",), TYPES
    yield "angle(2)", lambda m: m.angle(2), (), TYPES
    yield "unwrap(x4 * 3)", lambda m, a: m.unwrap(m.asarray(a) * 3), ("x4",)
    yield "unwrap(x, discont=1, axis=0, period=2.5)", lambda m, a: m.unwrap(
        a, discont=1, axis=0, period=2.5), ("x",), KEY
    yield "unwrap(idx2 * 5, period=6)", lambda m, a: m.unwrap(m.asarray(a) * 5, period=6), ("idx2",)
    yield "unwrap(z)", lambda m, a: m.unwrap(a), ("z",), TYPES
    yield "cumulative_sum(v)", lambda m, a: m.cumulative_sum(a), ("v",)
    yield "cumulative_sum(x, axis=1, include_initial)", lambda m, a: m.cumulative_sum(
        a, axis=1, include_initial=True), ("x",), KEY
    yield "cumulative_sum(x4, axis=-2, dtype=float32)", lambda m, a: m.cumulative_sum(
        a, axis=-2, dtype="float32"), ("x4",), TYPES
    yield "cumulative_sum(x)", lambda m, a: m.cumulative_sum(a), ("x",)
    yield "cumulative_sum(s, axis=0)", lambda m, a: m.cumulative_sum(a, axis=0), ("s",)
    yield "cumulative_prod(x, axis=0, include_initial)", lambda m, a: m.cumulative_prod(
        a, axis=0, include_initial=True), ("x",)
    yield "cumulative_prod(v, dtype=bool)", lambda m, a: m.cumulative_prod(a, dtype=bool), ("v",), TYPES
    yield "bitwise_count(x)", lambda m, a: m.bitwise_count(a), ("x",)
    yield "bitwise_count(idx2 * 37 - 50)", lambda m, a: m.bitwise_count(m.asarray(a) * 37 - 50), ("idx2",), KEY
    yield "bitwise_count(7)", lambda m: m.bitwise_count(7), (), TYPES
    yield "vecdot(x, x2)", lambda m, a, b: m.vecdot(a, b), ("x", "x2")
    yield "vecdot(x4[0], col, axis=0)", lambda m, a, b: m.vecdot(
        m.asarray(a)[0, :2], b, axis=0), ("x4", "col"), TYPES
    yield "vecdot(x, v, preferred_element_type=float32)", lambda m, a, b: m.vecdot(
        a, b, preferred_element_type="float32"), ("x", "v"), KEY
    yield "vecdot(x, row[:, :2])", lambda m, a, b: m.vecdot(a, m.asarray(b)[:, :2]), ("x", "row")
    yield "matvec(x4, x4[0, 0, 0])", lambda m, a: m.matvec(a, m.asarray(a)[0, 0, 0]), ("x4",)
    yield "matvec(x, v)", lambda m, a, b: m.matvec(a, b), ("x", "v"), TYPES
    yield "vecmat(v, x.T)", lambda m, a, b: m.vecmat(a, m.transpose(b)), ("v", "x"), KEY
    yield "vecmat(x, x4)", lambda m, a, b: m.vecmat(a, m.asarray(b)[:, :, :3, :]), ("x", "x4"), TYPES
    yield "poly(v)", lambda m, a: m.poly(a), ("v",)
    yield "poly(z[0])", lambda m, a: m.poly(m.asarray(a)[:, 0]), ("z",), TYPES
    yield "poly(x)", lambda m, a: m.poly(a), ("x",)
    yield "polydiv(x4 row, v[:2] + 3)", lambda m, a, b: m.polydiv(
        m.asarray(a)[0, 0, 0], m.asarray(b)[:2] + 3), ("x4", "v")
    yield "polydiv(v[:1] + 5, v)", lambda m, a: m.polydiv(m.asarray(a)[:1] + 5, a), ("v",), TYPES
    yield "packbits(x)", lambda m, a: m.packbits(a), ("x",)
    yield "packbits(x4, axis=3, little)", lambda m, a: m.packbits(a, axis=3, bitorder="little"), ("x4",), KEY
    yield "unpackbits(packbits(x4, axis=1), axis=1, count=5)", lambda m, a: m.unpackbits(
        m.packbits(m.asarray(a) > 0, axis=1), axis=1, count=5), ("x4",)
    yield "unpackbits(packbits(x), count=10, little)", lambda m, a: m.unpackbits(
        m.packbits(m.asarray(a) > 0), count=10, bitorder="little"), ("x",), KEY
    yield "unpackbits(x)", lambda m, a: m.unpackbits(a), ("x",)
    yield "packbits(v, bitorder=bad)", lambda m, a: m.packbits(a, bitorder="middle"), ("v",)
    # functional
    yield "vectorize(f)(x, v)", lambda m, a, b: m.vectorize(
        lambda p, q: m.where(p > q, p, q * 2))(a, b), ("x", "v")
    yield "vectorize(f, signature, excluded)(x4, x, 3)", lambda m, a, b: m.vectorize(
        lambda p, q, k: m.sum(p, axis=0)[:3] + q * k, signature="(n,m),(m)->(m)",
        excluded={2})(m.asarray(a)[..., :3], m.asarray(b)[0], 3), ("x4", "x"), KEY
    yield "vectorize(f, signature, 2 outputs)(col, x)", lambda m, a, b: m.vectorize(
        lambda p, q: (p + q.sum(), q[::-1]), signature="(),(n)->(),(n)")(a, b), ("col", "x")
    yield "vectorize(f, signature bad)(x)", lambda m, a: m.vectorize(
        lambda p: p, signature="(n)->(n,m)")(a), ("x",)
    yield "apply_along_axis(f, 1, x4)", lambda m, a: m.apply_along_axis(
        lambda r: m.stack([r.sum(), r[0]]), 1, a), ("x4",), KEY
    yield "apply_along_axis(diff, -1, x)", lambda m, a: m.apply_along_axis(m.diff, -1, a), ("x",), TYPES
    yield "apply_over_axes(sum, x4, [0, 2])", lambda m, a: m.apply_over_axes(m.sum, a, [0, 2]), ("x4",)
    yield "apply_over_axes(bad, x, [0])", lambda m, a: m.apply_over_axes(
        lambda y, ax: m.ravel(y), a, [0]), ("x",)
    yield "fromfunction(i * j, (3, 4))", lambda m: m.fromfunction(
        lambda i, j: i * 10 + j, (3, 4), dtype=int), ()
    yield "fromfunction(f, (2, 3), float)", lambda m, b: m.fromfunction(
        lambda i, j, k=None: i - j * k, (2, 3), k=b), ("s",), TYPES
    # histograms
    yield "histogram_bin_edges(x, 4)", lambda m, a: m.histogram_bin_edges(a, 4), ("x",)
    yield "histogram_bin_edges(x, v)", lambda m, a, b: m.histogram_bin_edges(a, m.sort(b)), ("x", "v"), TYPES
    yield "histogram_bin_edges(x, 3, range=(0, 0))", lambda m, a: m.histogram_bin_edges(
        a, 3, range=(0, 0)), ("x",)
    yield "histogram_bin_edges(x, 'auto')", lambda m, a: m.histogram_bin_edges(a, "auto"), ("x",)
    yield "histogram2d(x[0], x2[0], 3)", lambda m, a, b: m.histogram2d(
        m.asarray(a)[0], m.asarray(b)[0], 3), ("x", "x2")
    yield "histogram2d(v, v, [2, 3], range, weights, density)", lambda m, a, b: m.histogram2d(
        a, m.flip(a), [2, 3], range=[(-3, 3), (-1, 3)], weights=m.abs(b), density=True), ("v", "s"), KEY
    yield "histogram2d(v, v, XP)", lambda m, a: m.histogram2d(a, a, XP), ("v",)
    yield "histogramdd(x4[0, 0], 2)", lambda m, a: m.histogramdd(m.asarray(a)[0, 0], 2), ("x4",)
    yield "histogramdd(x.T, [XP, 2], density)", lambda m, a: m.histogramdd(
        m.transpose(a), [XP, 2], density=True), ("x",)
    yield "histogramdd(x.T, 2, weights=v)", lambda m, a, w: m.histogramdd(
        m.transpose(a), 2, weights=w), ("x", "v")
    yield "histogramdd(x, 2, range bad)", lambda m, a: m.histogramdd(a, 2, range=[(0, 1)]), ("x",)

FAMILIES = {"unary": _unary_cases, "binary": _binary_cases, "reductions": _reduction_cases,
            "arrays": _array_cases, "composite": _composite_cases, "names": _names_cases}
FAMILY_DTYPES = {"composite": ["bool", "int32", "float16", "float32", "complex64"],
                 "names": ["bool", "int32", "float32", "complex64"]}
FAMILY_EAGER = {"composite": ({"float32"}, 60), "names": ({"float32"}, 40)}  # (dtypes sampled eagerly, every how many)
STATIC_FAMILIES = {"promotion": _promotion_cases, "scalars": _scalar_cases}
# Compiling for values is what costs (XLA's compile time grows with every output), so
# types (shape, dtype, weak_type, raising) are checked abstractly for every case, and
# values for the cases marked VALUES, for every case of these families at these dtypes,
# and for transcendental functions at inexact dtypes only (ints reach them as float32).
ALL_VALUES = {"reductions": {"uint8", "float32", "complex64", "int64", "float64"},
              "composite": {"float32", "float64"}, "names": {"float32", "float64"},
              "arrays": {"uint8", "float32", "complex64", "int64", "float64"},
              "promotion": {None}}
# XLA's compile time grows with every output: the composite family compares the values
# of the first case of each function (and those marked KEY), the types of all
VALUES_PER_FUNCTION = {"composite": 1, "names": 0}
TRANSCENDENTAL = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                  "arcsinh", "arccosh", "arctanh", "exp", "exp2", "log", "log1p", "expm1",
                  "sqrt", "cbrt", "log2", "log10", "deg2rad", "rad2deg", "radians", "degrees",
                  "rsqrt", "arctan2", "logaddexp", "float_power", "hypot", "nextafter"}


def _cases(family, dtype):
    """(name, fn(m, *arrays), array names, values compared) for each case of family."""
    inexact = dtype is None or jnp.issubdtype(jnp.dtype(dtype), jnp.inexact)
    valued = collections.Counter()
    for case in (STATIC_FAMILIES.get(family) or FAMILIES[family])():
        name, fn, argnames = case[:3]
        values = (dtype in ALL_VALUES.get(family, ()) or case[3:] == (VALUES,)) and \
            case[3:] != (TYPES,)
        if values and family in VALUES_PER_FUNCTION and case[3:] != (KEY,):
            valued[name.split("(")[0]] += 1
            values = valued[name.split("(")[0]] <= VALUES_PER_FUNCTION[family]
        yield name, fn, argnames, values and (inexact or name.split("(")[0] not in TRANSCENDENTAL)


# ---------------------------------------------------------------- running a batch

class Raised:
    """A case that raised: its exception's nearest builtin type decides agreement."""

    def __init__(self, exc):
        self.type = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        first_line = str(exc).splitlines()[0][:150] if str(exc) else ""
        self.message = f"{type(exc).__name__}: {first_line}"


def _flat_args(cases, pool):
    return [getattr(pool, a) for case in cases for a in case[2]]


def _call(case, m, pool, arrays):
    fn = case[1]
    takes_pool = "p" in fn.__code__.co_varnames[:fn.__code__.co_argcount]
    return fn(m, *arrays, **({"p": pool} if takes_pool else {}))


def _batched(m, cases, pool, structure):
    """One function computing every case; a case that raises records its exception.
    structure[name] is (tree, [is a Python scalar per leaf]) or Raised."""
    def run(*flat):
        out, k = [], 0
        for case in cases:
            n = len(case[2])
            try:
                leaves, tree = jax.tree_util.tree_flatten(_call(case, m, pool, flat[k:k + n]))
                structure[case[0]] = (tree, [isinstance(x, (bool, int, float, complex))
                                             for x in leaves])
                out.extend(leaves)
            except Exception as exc:  # noqa: BLE001: the case's outcome, compared below
                structure[case[0]] = Raised(exc)
            k += n
        return out
    return run


def _evaluate(m, run, cases, pool):
    """{case name: (tree, [leaf]) | Raised}, leaves from run(fn, *args): abstract
    types or arrays. A batch that fails as a whole (XLA rejects it) is bisected."""
    structure = {}
    try:
        leaves = run(_batched(m, cases, pool, structure), *_flat_args(cases, pool))
    except Exception as exc:  # noqa: BLE001
        if len(cases) == 1:
            return {cases[0][0]: Raised(exc)}
        half = len(cases) // 2
        return {**_evaluate(m, run, cases[:half], pool), **_evaluate(m, run, cases[half:], pool)}
    results, k = {}, 0
    for name, *_ in cases:
        s = structure[name]
        if isinstance(s, Raised):
            results[name] = s
        else:
            results[name] = (s[0], list(zip(leaves[k:k + len(s[1])], s[1])))
            k += len(s[1])
    return results


def _ours_abstract(fn, *args):
    return tracehlo.make_ir(fn)(*args).out_types


def _jax_abstract(fn, *args):
    return jax.eval_shape(fn, *args)


def _ours_jit(fn, *args):
    """With XLA's fusion: a fusion bug (the fuzzer's business) must not hide or fake a
    disagreement of the frontend."""
    return tracehlo.jit(fn, fusion="xla")(*args)


def _jax_jit(fn, *args):
    return jax.jit(fn)(*args)


def _eager(cases, pool):
    results = {}
    for case in cases:
        try:
            leaves, tree = jax.tree_util.tree_flatten(
                _call(case, tnp, pool, _flat_args([case], pool)))
            results[case[0]] = (tree, [(x, isinstance(x, (bool, int, float, complex)))
                                       for x in leaves])
        except Exception as exc:  # noqa: BLE001
            results[case[0]] = Raised(exc)
    return results


TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "complex64": 2e-5,
             "float64": 1e-12, "complex128": 1e-12}


def _type(x):
    weak = x.weak if hasattr(x, "weak") else getattr(x, "weak_type", False)
    return f"{np.dtype(x.dtype).name}{list(x.shape)}{' weak' if weak else ''}"


def _disagreement(actual, expected):
    """Why actual (tracehlo) differs from expected (JAX), or None."""
    if isinstance(expected, Raised) or isinstance(actual, Raised):
        if isinstance(expected, Raised) and isinstance(actual, Raised):
            return None if issubclass(actual.type, expected.type) else \
                f"raised {actual.message}; JAX raised {expected.message}"
        if isinstance(actual, Raised):
            return f"raised {actual.message}"
        return f"returned; JAX raised {expected.message}"
    (atree, aleaves), (etree, eleaves) = actual, expected
    if atree != etree:
        return f"structure {atree} != {etree}"
    for i, ((a, a_py), (e, e_py)) in enumerate(zip(aleaves, eleaves)):
        where = f"output {i}: " if len(eleaves) > 1 else ""
        if a_py and not e_py:
            return f"{where}a Python scalar, not an array"
        if isinstance(e, jax.Array) and not isinstance(a, jax.Array):
            return f"{where}a {type(a).__name__}, not a jax.Array"
        if _type(a) != _type(e):
            return f"{where}{_type(a)} != {_type(e)}"
        if not isinstance(e, jax.Array):
            continue
        av, ev = np.asarray(a), np.asarray(e)
        if av.dtype.kind in "biu":
            if not np.array_equal(av, ev):
                return f"{where}values {av.ravel()[:10]} != {ev.ravel()[:10]}"
            continue
        tol = TOLERANCE.get(str(a.dtype), 2e-5)
        wide = np.complex128 if av.dtype.kind == "c" else np.float64
        av, ev = av.astype(wide), ev.astype(wide)
        zeros = ev.real == 0
        if not np.allclose(av, ev, rtol=tol, atol=tol, equal_nan=True) or not np.array_equal(
                np.signbit(av.real[zeros]), np.signbit(ev.real[zeros])):
            return f"{where}values {av.ravel()[:10]} != {ev.ravel()[:10]}"
    return None


def run_family(family, dtype, eager_every=None):
    """([(case id, mode, why)], number of checks) for family at dtype: every case's
    types abstractly, the value cases compiled, and every eager_every-th case eagerly
    (default: EAGER_EVERY for the dtypes in EAGER_DTYPES and the static families)."""
    cases = list(_cases(family, dtype))
    pool = Pool(dtype or "float32")
    if family in STATIC_FAMILIES:
        pool.pools = {d: Pool(d) for d in (X64_DTYPES if X64 else DTYPES)}
    expected = _evaluate(ORACLE, _jax_abstract, cases, pool)
    types = _evaluate(tnp, _ours_abstract, cases, pool)
    # values where both trace: what JAX refuses may not even compile (XLA can crash on it)
    valued = [c for c in cases if c[3] and not isinstance(expected[c[0]], Raised)
              and not isinstance(types[c[0]], Raised)]
    jax_values = _evaluate(ORACLE, _jax_jit, valued, pool)
    modes = {"types": (types, expected),
             "values": (_evaluate(tnp, _ours_jit, valued, pool), jax_values)}
    if eager_every is None:
        dtypes, every = FAMILY_EAGER.get(family, (EAGER_DTYPES, EAGER_EVERY))
        eager_every = every if dtype is None or dtype in dtypes else 0
    if eager_every:
        sample = cases[::eager_every]
        # JAX compiles only the sampled cases it has not computed for "values"
        rest = [c for c in sample if c[0] not in jax_values]
        modes["eager"] = (_eager(sample, pool),
                          {**jax_values, **_evaluate(ORACLE, _jax_jit, rest, pool)})
    failures, checks = [], 0
    for mode, (actual, wanted) in modes.items():
        for name in actual:
            checks += 1
            why = _disagreement(actual[name], wanted[name])
            if why:
                failures.append((f"{family}[{dtype}] {name}" if dtype else f"{family} {name}",
                                 mode, why))
    return failures, checks


# ---------------------------------------------------------------- listed cases

def _by_case(groups):
    """{reason: [case id]} -> {case id: reason}."""
    return {cid: reason for reason, ids in groups.items() for cid in ids}


JAX_INCONSISTENT = _by_case({  # JAX disagrees with itself: the oracle cannot decide
    ("jnp.argmax/argmin of complex: eval_shape accepts it, jit refuses it (gt does not "
     "accept complex64); we refuse it when tracing"): [
        'reductions[complex64] argmax(x)',
        'reductions[complex64] argmax(x, axis=0)',
        'reductions[complex64] argmax(s)',
        'reductions[complex64] argmax(z, axis=1)',
        'reductions[complex64] argmax(x4, axis=(1, 3))',
        'reductions[complex64] argmax(special)',
        'reductions[complex64] argmax(x, axis=-1, keepdims)',
        'reductions[complex64] argmin(x)',
        'reductions[complex64] argmin(x, axis=0)',
        'reductions[complex64] argmin(s)',
        'reductions[complex64] argmin(z, axis=1)',
        'reductions[complex64] argmin(x4, axis=(1, 3))',
        'reductions[complex64] argmin(special)',
        'reductions[complex64] argmin(x, axis=-1, keepdims)',
        'reductions[complex64] argmax(x, axis=1, keepdims)',
    ] + [f'composite[complex64] nanarg{f}({case})' for f in ("max", "min")
         for case in ("sp", "x, axis=1", "s", "all-NaN rows")] +
        ['composite[complex64] nanargmax(x, axis=0, keepdims)'],
    'jnp.var(x, dtype=int32) returns a weak float32: var ignores an integer dtype that sum and mean honour': [
        'reductions[bool] var(x, dtype=int32)',
        'reductions[int8] var(x, dtype=int32)',
        'reductions[int16] var(x, dtype=int32)',
        'reductions[int32] var(x, dtype=int32)',
        'reductions[uint8] var(x, dtype=int32)',
        'reductions[uint16] var(x, dtype=int32)',
        'reductions[uint32] var(x, dtype=int32)',
        'reductions[float16] var(x, dtype=int32)',
        'reductions[bfloat16] var(x, dtype=int32)',
        'reductions[float32] var(x, dtype=int32)',
    ],
})

JAX_INCONSISTENT.update(_by_case({
    ("jnp.quantile's inverted_cdf raises on float16 data (its lax.mul of float32 q and "
     "float16 weights), where every other method computes in q's dtype; we compute it"): [
        f'composite[float16] {case}' for case in (
            "quantile(x4, qs, axis=1, inverted_cdf)", "nanquantile(sp, 0.3, inverted_cdf)",
            "nanquantile(x4 with NaN, qs, axis=(0, 2), inverted_cdf)",
            "quantile(sp, 0.5, inverted_cdf)", "quantile(x, qs, axis=1, inverted_cdf, weights)",
            "nanquantile(x, 0.6, inverted_cdf, weights (2, 3))",
            "quantile(x4, qs, axis=(1, 3), weights, keepdims)")],
}))

NOT_YET_FIXED = _by_case({  # disagreements not fixed yet (issue 8); a listed case that passes fails
})

# what JAX 0.11 changed: tracehlo keeps 0.10.2's answers (numpy_helpers.JAX_RELEASE)
CHANGED_IN_JAX_0_11 = _by_case({
    "meshgrid and broadcast_arrays return a tuple, not a list, as NumPy 2's do": [
        f'composite[{dtype}] {case}' for dtype in FAMILY_DTYPES["composite"] for case in (
            "meshgrid(v, row[0])", "meshgrid(v, v[:2], v, ij, sparse)",
            "broadcast_arrays(x, v, 1.5)")],
    "permute_dims with a repeated axis raises ValueError (0.10.2: TypeError)": [
        f'composite[{dtype}] permute_dims(x, (0, 0))' for dtype in FAMILY_DTYPES["composite"]],
    "log2 of a Python scalar is weakly typed": [
        f'scalars log2({x})' for x in ("3", "-2.5", "(1+2j)")],
    "sinc(inf) is 0 (0.10.2, like NumPy: nan)": ['composite[float32] sinc(sp)'],
}) if JAX_RELEASE >= (0, 11) else {}

JAX_INCONSISTENT_X64 = _by_case({  # as JAX_INCONSISTENT, for the --x64 subset
    'jnp.var(x, dtype=int32) returns a weak float32: var ignores an integer dtype that sum and mean honour': [
        'reductions[int64] var(x, dtype=int32)',
        'reductions[float64] var(x, dtype=int32)',
    ],
})

NOT_YET_FIXED_X64 = _by_case({  # as NOT_YET_FIXED, for the --x64 subset
})


PARAMS = [(f, d) for f in FAMILIES for d in FAMILY_DTYPES.get(f, X64_DTYPES if X64 else DTYPES)] + \
    [(f, None) for f in STATIC_FAMILIES]


@pytest.mark.parametrize("family,dtype", PARAMS, ids=[f"{f}-{d}" if d else f for f, d in PARAMS])
def test_conformance(family, dtype):
    unexpected, now_passing = _unlisted(family, dtype, run_family(family, dtype)[0])
    assert not unexpected, f"{len(unexpected)} disagree with jax.numpy:\n" + "\n".join(unexpected)
    assert not now_passing, "listed as failing but agree now (remove them): " + ", ".join(now_passing)


def _unlisted(family, dtype, failures):
    """(failures not listed, listed cases of this family and dtype that agree now)."""
    listed = {**JAX_INCONSISTENT_X64, **NOT_YET_FIXED_X64} if X64 else \
        {**JAX_INCONSISTENT, **NOT_YET_FIXED, **CHANGED_IN_JAX_0_11}
    prefix = f"{family}[{dtype}] " if dtype else f"{family} "
    listed = {k for k in listed if k.startswith(prefix)}
    unexpected = [f"{cid} ({mode}): {why}" for cid, mode, why in failures if cid not in listed]
    return unexpected, sorted(listed - {f[0] for f in failures})


PREDICATE_INPUTS = [1, 2.5, 1j, True, None, "s", np.float32(1), np.complex64(1), [1, 2], [1j],
                    (1.5,), np.zeros(()), np.zeros(2, np.complex64), jnp.zeros(()),
                    jnp.zeros(3, jnp.bfloat16)]


def test_dtype_names_and_functions():
    """The dtype names and classes jax.numpy exports, and its dtype functions, as JAX's
    (aliases of the ufuncs are the ufuncs themselves)."""
    for name in ("bool", "double", "single", "cdouble", "csingle", "int_", "uint", "float_",
                 "complex_", "generic", "number", "integer", "signedinteger",
                 "unsignedinteger", "inexact", "floating", "complexfloating", "character",
                 "flexible"):
        assert np.dtype(getattr(tnp, name)) == np.dtype(getattr(jnp, name)) if name not in (
            "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating", "character", "flexible") else \
            getattr(tnp, name) is getattr(jnp, name), name
    types = [bool, int, float, complex, "bool", "int8", "uint8", "int16", "uint32", "int32",
             "int64", "uint64", "float16", jnp.bfloat16, "float32", "float64", "complex64",
             "complex128"]
    for a in types:
        for b in types:
            assert tnp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)
            if not isinstance(a, type) and not isinstance(b, type):
                assert tnp.can_cast(a, b) == jnp.can_cast(a, b), (a, b)
    classes = [np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
               np.inexact, np.floating, np.complexfloating, "float32", jnp.bfloat16]
    for a in types[4:] + [np.float32, jnp.bfloat16]:
        for c in classes:
            assert tnp.issubdtype(a, c) == jnp.issubdtype(a, c), (a, c)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("bool", "real floating"), "float32", np.int8]
    for a in types[4:]:
        for k in kinds:
            assert tnp.isdtype(a, k) == jnp.isdtype(a, k), (a, k)
    with pytest.raises(ValueError, match=r"Unrecognized kind='floats'"):
        tnp.isdtype("float32", "floats")
    for ours, theirs in (("acos", "arccos"), ("acosh", "arccosh"), ("asin", "arcsin"),
                         ("asinh", "arcsinh"), ("atan", "arctan"), ("atanh", "arctanh"),
                         ("atan2", "arctan2"), ("bitwise_invert", "invert"),
                         ("bitwise_left_shift", "left_shift"),
                         ("bitwise_right_shift", "right_shift")):
        assert getattr(tnp, ours) is getattr(tnp, theirs), ours


ERRORS = [  # (fn(m, *args), args, exception, JAX's message)
    (lambda m, a: m.select([a > 0], []), ValueError, "condlist must have length equal to choicelist"),
    (lambda m, a: m.diff(a, n=-1), ValueError, "order must be non-negative but got -1"),
    (lambda m, a: m.gradient(a, edge_order=2), NotImplementedError, "'edge_order' argument"),
    (lambda m, a: m.quantile(a, 0.5, method="cubic"), ValueError, "method can only be 'linear'"),
    (lambda m, a: m.isin(a, a, method="hash"), ValueError, "method='hash' is not implemented"),
    (lambda m, a: m.interp(a, a, a, left="clamp"), ValueError, "only valid string value of `left`"),
    (lambda m, a: m.convolve(a, a, mode="circular"), ValueError, "mode must be one of"),
    (lambda m, a: m.convolve(a, a, preferred_element_type="float16"), TypeError,
     "`preferred_element_type` must not be narrower than the original type."),
    (lambda m, a: m.rot90(a), ValueError, "rot90 requires its first argument to have ndim"),
    (lambda m, a: m.cov(m.stack([a, a]), fweights=a), TypeError, "fweights must be integer"),
    (lambda m, a: m.meshgrid(m.stack([a, a])), ValueError, "must be 1D"),
    (lambda m, a: m.ldexp(a, a), ValueError, "ldexp not supported for input types"),
    (lambda m, a: m.gcd(a, a), ValueError, "gcd must be integers"),
    (lambda m, a: m.diag_indices_from(a), ValueError, "input array must be at least 2-d"),
    (lambda m, a: m.ravel_multi_index((a,), (3,)), ValueError, "is not an integer type"),
    (lambda m, a: m.put(a, np.array([0]), a), ValueError, "cannot modify arrays in-place"),
    (lambda m, a: m.place(a, a > 1, a), ValueError, "Pass inplace=False"),
    (lambda m, a: m.fill_diagonal(m.outer(a, a), 0.0), NotImplementedError, "must use inplace=False"),
    (lambda m, a: m.choose(np.array([0, 3]), [a, a]), ValueError, "invalid entry in choice array"),
    (lambda m, a: m.compress(np.array([True, False, True, True]), a), ValueError,
     "condition contains entries that are out of bounds"),
    (lambda m, a: m.cumulative_sum(a[0]), ValueError, "The input must be non-scalar"),
    (lambda m, a: m.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(a, a[:2]), ValueError,
     "inconsistent size for core dimension 'n': 2 vs 3"),
    (lambda m, a: m.packbits(a), TypeError, "Expected an input array of integer or boolean"),
    (lambda m, a: m.block((a,)), ValueError, "block does not allow tuples"),
    (lambda m, a: m.hsplit(a, 2), ValueError, "does not result in an equal division: rest is 1"),
    (lambda m, a: m.r_["0,x", a], ValueError, "could not understand directive '0,x'"),
    (lambda m, a: m.unwrap(a * 1j), ValueError, "jnp.unwrap does not support complex inputs."),
    (lambda m, a: m.resize(a, (-1,)), ValueError, "all elements of `new_shape` must be non-negative"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_say_what_jax_says(k):
    """JAX's exception type and message, at the user's line (eagerly: no compile)."""
    fn, exc, match = ERRORS[k]
    a = np.array([1.0, 2.0, 4.0], np.float32)
    with pytest.raises(exc, match=re.escape(match)):
        fn(jnp, a)
    check_raises(fn, a, exc=exc, match=re.escape(match), jit=False)


def test_python_predicates():
    """isscalar, iscomplexobj, isrealobj return Python bools, as JAX's; a traced 0-d
    array is a scalar."""
    for f in ("isscalar", "iscomplexobj", "isrealobj"):
        for x in PREDICATE_INPUTS:
            got, want = getattr(tnp, f)(x), getattr(jnp, f)(x)
            assert type(got) is bool and got == want, (f, x, got, want)
    seen = []
    tracehlo.jit(lambda a, b: seen.extend(
        [tnp.isscalar(a), tnp.isscalar(b), tnp.iscomplexobj(b)]))(np.float32(1), np.zeros(2))
    assert seen == [True, False, False]


@pytest.mark.slow
def test_x64_subset():
    """The 64-bit defaults (TRACEHLO_ENABLE_X64=1 with JAX's x64 on) in a child process:
    both switches are read at import."""
    if X64:
        pytest.skip("already running with x64")
    env = {**os.environ, "TRACEHLO_ENABLE_X64": "1", "JAX_ENABLE_X64": "1"}
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--x64"], env=env,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stdout[-6000:] + child.stderr[-3000:]


def _report(families, dtypes):
    total = bad = unlisted = 0
    for family in families:
        for dtype in ([None] if family in STATIC_FAMILIES else
                      [d for d in FAMILY_DTYPES.get(family, dtypes) if d in dtypes]):
            failures, n = run_family(family, dtype)
            total += n
            bad += len(failures)
            print("\n".join(f"{cid} ({mode}): {why}" for cid, mode, why in failures), flush=True)
            unexpected, now_passing = _unlisted(family, dtype, failures)
            unlisted += len(unexpected) + len(now_passing)
            print("".join(f"UNLISTED {line}\n" for line in unexpected + now_passing), flush=True)
    print(f"agree: {total - bad} / {total} ({100 * (total - bad) / total:.1f}%); "
          f"{unlisted} unlisted failures or listed cases that agree now")
    return unlisted


if __name__ == "__main__":
    if "--x64" in sys.argv:
        assert X64 and jax.config.jax_enable_x64
        # int32 and float32 are the default run's; x64 changes what they promote to,
        # which "promotion" covers for every dtype
        sys.exit(1 if _report(["unary", "binary", "reductions", "promotion"],
                              ["int64", "float64"]) else 0)
    chosen = sys.argv[1:]  # families and dtypes to run; all by default
    _report([f for f in list(FAMILIES) + list(STATIC_FAMILIES) if f in chosen] or
            list(FAMILIES) + list(STATIC_FAMILIES), [d for d in DTYPES if d in chosen] or DTYPES)
