"""Dtypes: short names for the IR, JAX's promotion lattice, weak types, x64 narrowing."""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SHORT_NAMES = {
    bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
    complex64: "c64", complex128: "c128",
}
FROM_SHORT_NAME = {v: k for k, v in SHORT_NAMES.items()}
# MLIR element types, as StableHLO spells them.
MLIR_NAMES = {
    bool_: "i1", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "ui8", uint16: "ui16", uint32: "ui32", uint64: "ui64",
    float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
    complex64: "complex<f32>", complex128: "complex<f64>",
}

_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def is_float(dt) -> bool:
    return np.dtype(dt).kind == "f" or np.dtype(dt) == bfloat16


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def is_inexact(dt) -> bool:
    return is_float(dt) or is_complex(dt)


def is_int(dt) -> bool:
    return np.dtype(dt).kind in "iu"


def is_unsigned(dt) -> bool:
    return np.dtype(dt).kind == "u"


def canonicalize(dt) -> np.dtype:
    """The dtype a value of dtype `dt` gets on device: 64-bit narrowed unless enable_x64."""
    dt = np.dtype(dt)
    if dt not in SHORT_NAMES:
        raise TypeError(f"dtype {dt} is not supported by tracehlo")
    return dt if config.enable_x64 else _NARROW.get(dt, dt)


def default_float() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_int() -> np.dtype:
    return int64 if config.enable_x64 else int32


def default_complex() -> np.dtype:
    return complex128 if config.enable_x64 else complex64


def is_python_scalar(x) -> bool:
    """A Python bool/int/float/complex, weakly typed in JAX. NumPy scalars are strong,
    though np.float64 and np.complex128 subclass float and complex."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def is_weak_scalar(x) -> bool:
    """A Python scalar JAX types weakly: int, float or complex (a bool is strong)."""
    return is_python_scalar(x) and not isinstance(x, bool)


def python_scalar_dtype(x) -> np.dtype:
    """The dtype JAX gives a Python scalar (weakly typed)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


# JAX's type promotion lattice (jax/_src/dtypes.py): i*, f*, c* are the weak
# (Python scalar) kinds; the promoted type is the least upper bound.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_LATTICE = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8],
    uint8: [uint16, int16], uint16: [uint32, int32], uint32: [uint64, int64],
    uint64: [_WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [_WEAK_COMPLEX, bfloat16, float16],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64], float64: [complex128],
    _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


@functools.lru_cache(maxsize=None)
def _upper_bounds(node) -> frozenset:
    bounds = {node}
    for parent in _LATTICE[node]:
        bounds |= _upper_bounds(parent)
    return frozenset(bounds)


def _lattice_node(dtype, weak):
    if not weak:
        return dtype
    if is_complex(dtype):
        return _WEAK_COMPLEX
    if is_float(dtype):
        return _WEAK_FLOAT
    if is_int(dtype):
        return _WEAK_INT
    return dtype


@functools.lru_cache(maxsize=None)
def _join(a, b):
    common = _upper_bounds(a) & _upper_bounds(b)
    return next(n for n in common if _upper_bounds(n) == common)


@functools.lru_cache(maxsize=None)
def _result_type(nodes: tuple, x64: bool) -> tuple[np.dtype, bool]:
    node = functools.reduce(_join, nodes)
    weak = {_WEAK_INT: default_int, _WEAK_FLOAT: default_float, _WEAK_COMPLEX: default_complex}
    if node in weak:
        return canonicalize(weak[node]()), True
    return canonicalize(node), False


def result_type(*types: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote (dtype, weak) pairs as JAX does; returns (dtype, weak)."""
    return _result_type(tuple(_lattice_node(np.dtype(d), w) for d, w in types),
                        config.enable_x64)  # x64 is part of the cache key


def finfo(dt):
    return ml_dtypes.finfo(dt) if np.dtype(dt) == bfloat16 else np.finfo(dt)


def iinfo(dt):
    return np.iinfo(dt)
