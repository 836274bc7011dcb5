"""Array creation: full/zeros/ones/eye/arange/linspace/logspace/geomspace and the triangles."""
from __future__ import annotations

import builtins
import functools
import math

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from .. import core
from ..core import Tracer, at_user_line
from .. import numpy as _tnp
from ._util import (
    _as_dtype, _broadcast_shapes, _canon_axis, _inexact, _is_array, _operand, _shape,
    _shape_arg, _static, _static_int, _t, asarray, astype, bool_, broadcast_to, result_type,
    where)


def _new_shape(shape_):
    """The shape of a new array: checked here, since XLA would reject it without a line."""
    shape_ = _shape_arg(shape_)
    if builtins.any(n < 0 for n in shape_):
        raise ValueError(at_user_line(f"negative dimensions are not allowed: {shape_}"))
    if math.prod(shape_) >= 2 ** 63:
        raise ValueError(at_user_line(f"an array of shape {shape_} has {math.prod(shape_)} "
                                      "elements, more than int64 can count"))
    return shape_


def full(shape_, fill_value, dtype=None):
    """Weak, as in JAX, when dtype is None and fill_value is weak (a Python number)."""
    fill_value = _operand(fill_value)
    t = _t(fill_value)
    return _full(shape_, fill_value, t.dtype if dtype is None else dtype,
                 dtype is None and t.weak)


def _full(shape_, fill_value, dtype, weak):
    shape_ = _new_shape(shape_)
    value = _as_dtype(fill_value, _dtypes.canonicalize(dtype), weak)
    if _shape(value) == shape_:
        return value
    return broadcast_to(value, shape_) if _shape(value) else \
        lax.broadcast_in_dim(value, shape_, ())


def zeros(shape_, dtype=None):
    return full(shape_, 0, dtype or _dtypes.default_float())


def ones(shape_, dtype=None):
    return full(shape_, 1, dtype or _dtypes.default_float())


def empty(shape_, dtype=None):
    return zeros(shape_, dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    """a's dtype and, when dtype is None, a's weak type (JAX's lax.full_like)."""
    t = _t(_operand(a))
    return _full(t.shape if shape is None else shape, _operand(fill_value),
                 t.dtype if dtype is None else dtype, dtype is None and t.weak)


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    start, stop, step = (_static(v, "arange's bounds") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = _np.arange(start, stop, step)
    dt = _dtypes.canonicalize(dtype if dtype is not None else
                              (_dtypes.default_int() if values.dtype.kind in "iu" else
                               _dtypes.default_float()))
    if dt == _dtypes.bool_:
        raise TypeError(at_user_line("arange does not take dtype bool (as JAX's iota: integer, "
                                     "floating and complex dtypes)"))
    if start == 0 and step == 1:
        return lax.iota(dt, values.size)  # iota reads better in the IR than a constant
    return asarray(values.astype(dt))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """JAX's values bit for bit: JAX's interpolation start * (1 - t) + stop * t with
    t = iota / div (which recovers both ends exactly), written as XLA's simplifier
    rewrites it: t = iota * (1 / div), the reciprocal in float32 for bfloat16
    (which XLA CPU computes in float32), and for a scalar stop stop * t = iota *
    (stop / div). An integer dtype floors; the step is nan for num < 2 with the
    endpoint."""
    num = _static_int(num, "linspace's num")
    if num < 0:
        raise ValueError(at_user_line(f"Number of samples, {num}, must be non-negative."))
    return _as_jax_compiles(_linspace, (start, stop), num, endpoint, retstep, dtype, axis)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop), as JAX: computed in the inexact dtype, then cast
    (an integer dtype truncates)."""
    num = _static_int(num, "logspace's num")
    return _as_jax_compiles(_logspace, (start, stop, base), num, endpoint, dtype, axis)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """sign(start) * logspace(log10(|start|), log10(|stop|)) with stop's sign taken from
    start, as JAX computes it."""
    num = _static_int(num, "geomspace's num")
    return _as_jax_compiles(_geomspace, (start, stop), num, endpoint, dtype, axis)


def _as_jax_compiles(fn, operands: tuple, *static):
    """fn(*operands, *static); for concrete operands computed now as one program with
    XLA's own fusion, as JAX compiles it (its operands are arguments there, not
    constants): one primitive at a time or under our fusion XLA may round differently
    (an FMA contracted or not), and JAX's values are the reference."""
    if builtins.any(isinstance(x, Tracer) for x in operands):
        return fn(*operands, *static)
    with core.evaluating():
        return _compiled_by_xla(fn, len(operands))(*operands, *static)


@functools.lru_cache(maxsize=None)
def _compiled_by_xla(fn, n_operands: int):
    from ..api import jit
    return jit(fn, static_argnums=tuple(range(n_operands, fn.__code__.co_argcount)),
               fusion="xla")


def _inexact_dtypes(start, stop, dtype):
    """(result dtype, computation dtype): JAX's to_inexact_dtype of the bounds' type."""
    dt = _dtypes.canonicalize(dtype) if dtype is not None else _inexact_of(start, stop)
    return dt, (dt if _dtypes.is_inexact(dt) else _inexact(dt))


def _logspace(start, stop, base, num, endpoint, dtype, axis):
    dt, compute = _inexact_dtypes(start, stop, dtype)
    lin = _linspace(astype(_operand(start), compute), astype(_operand(stop), compute), num,
                    endpoint, False, None, axis)
    return astype(_tnp.power(base, lin), dt)


def _geomspace(start, stop, num, endpoint, dtype, axis):
    dt, compute = _inexact_dtypes(start, stop, dtype)
    start, stop = astype(_operand(start), compute), astype(_operand(stop), compute)
    sign = _tnp.sign(start)
    res = _tnp.multiply(sign, _logspace(_tnp.log10(_tnp.divide(start, sign)),
                                        _tnp.log10(_tnp.divide(stop, sign)), 10.0,
                                        num, endpoint, compute, 0))
    return astype(_tnp.moveaxis(res, 0, _canon_axis(axis, _tnp.ndim(res))), dt)


def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    dt, compute = _inexact_dtypes(start, stop, dtype)
    start, stop = astype(_operand(start), compute), astype(_operand(stop), compute)
    scalar_stop = stop if _shape(stop) == () else None
    bounds = _broadcast_shapes(_shape(start), _shape(stop))
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = _canon_axis(axis, len(bounds) + 1)
    with_axis = bounds[:axis] + (1,) + bounds[axis:]
    div = num - 1 if endpoint else num
    if num > 1:
        delta = lax.div(lax.sub(stop, start), _as_dtype(div, compute))
        out_shape = with_axis[:axis] + (div,) + with_axis[axis + 1:]
        real = _dtypes.finfo(compute).dtype  # a complex range steps in its real dtype
        wide = _dtypes.float32 if real == _dtypes.bfloat16 else real
        iota = astype(lax.broadcasted_iota(real, out_shape, axis), wide)
        recip = _as_dtype(_np.divide(wide.type(1), wide.type(div)), wide)
        steps = astype(astype(lax.mul(iota, recip), real), compute)
        if scalar_stop is not None and wide == real:
            stop_part = lax.mul(astype(iota, compute),
                                lax.mul(scalar_stop, astype(recip, compute)))
        else:
            stop_part = lax.mul(broadcast_to(lax.reshape(stop, with_axis), out_shape), steps)
        out = lax.add(lax.mul(broadcast_to(lax.reshape(start, with_axis), out_shape),
                              lax.sub(_as_dtype(1, compute), steps)), stop_part)
        if endpoint:
            out = lax.concatenate([out, lax.reshape(stop, with_axis)], axis)
    else:
        delta = lax.sub(stop, start) if num == 1 and not endpoint else \
            full((), _np.nan, compute)
        out = lax.reshape(start, with_axis) if num == 1 else \
            zeros(with_axis[:axis] + (0,) + with_axis[axis + 1:], compute)
    if _dtypes.is_int(dt):
        out = lax.floor(out)
    out = astype(out, dt)
    return (out, delta) if retstep else out


def _inexact_of(*args):
    dt = result_type(*args)
    return dt if _dtypes.is_inexact(dt) else _inexact(dt)


def eye(N, M=None, k=0, dtype=None):
    N, M = _new_shape((N, N if M is None else M))
    dt = _dtypes.canonicalize(dtype or _dtypes.default_float())
    rows = lax.broadcasted_iota(_dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(_dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(rows, k), cols), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    N, M = _new_shape((N, N if M is None else M))
    rows = lax.broadcasted_iota(_dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(_dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.le(cols, lax.add(rows, k)),
                                     _dtypes.canonicalize(dtype or _dtypes.default_float()))


def tril(m, k=0):
    m = _operand(m)
    mask = tri(*_shape(m)[-2:], k=k, dtype=bool_)
    return where(mask, m, zeros_like(m))


def triu(m, k=0):
    m = _operand(m)
    mask = tri(*_shape(m)[-2:], k=k - 1, dtype=bool_)
    return where(mask, zeros_like(m), m)
