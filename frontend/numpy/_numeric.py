"""Functions composed of the other tracehlo.numpy functions, as JAX composes them:
select, piecewise, append, insert, delete, interp, diff, ediff1d, trapezoid, gradient.
Built only from primitives that have jvp, transpose and batching rules, so grad, vmap
and jit apply to them unchanged."""
from __future__ import annotations

import builtins
import operator

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import ConcretizationError, Tracer, at_user_line
from .. import numpy as t
from ._indexing import IndexUpdateRef as _At
from ._indexing import getitem as _ix
from ._util import (
    _broadcast_shapes, _canon_axes, _canon_axis, _operand, _promote, _promote_dtypes,
    _promote_inexact, _shape, _static, _static_int, _t, ndim)

# Eager values are jax.Arrays, whose operators and .at are JAX's own: the code below
# calls tracehlo.numpy functions, _ix (x[...]) and _At (x.at[...]) explicitly.


def _sl(a, axis, start=None, stop=None):
    """a[..., start:stop, ...] along axis, with Python's slice semantics."""
    lo, hi, _ = slice(start, stop).indices(_shape(a)[axis])
    return lax.slice_in_dim(a, lo, builtins.max(lo, hi), axis=axis)


def _arraylike(fn, *args):
    """JAX's check_arraylike: lists and tuples are refused (NumPy would take them)."""
    for a in args:
        if isinstance(a, (list, tuple)):
            raise TypeError(at_user_line(
                f"{fn} requires ndarray or scalar arguments, got {type(a).__name__} (convert "
                "it first with tracehlo.numpy.asarray, as in JAX)"))
    return [t.asarray(_operand(a)) for a in args]


def select(condlist, choicelist, default=0):
    """The first true condition's choice, else default (as NumPy's)."""
    if len(condlist) != len(choicelist):
        raise ValueError(at_user_line(
            f"condlist must have length equal to choicelist ({len(condlist)} vs "
            f"{len(choicelist)})"))
    if len(condlist) == 0:
        raise ValueError(at_user_line("condlist must be non-empty"))
    _arraylike("select", *condlist, *choicelist, default)
    default, *choices = _promote(default, *choicelist)
    conds = [t.astype(c, t.bool_) for c in condlist]
    out = t.broadcast_to(default, _broadcast_shapes(*map(_shape, [default, *choices, *conds])))
    for cond, choice in zip(reversed(conds), reversed(choices)):
        out = t.where(cond, choice, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """Every function runs on all of x and the last true condition picks (NumPy's
    order); results take x's dtype, as in JAX."""
    (x,) = _arraylike("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = funclist[-1:] + funclist[:-1]
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(at_user_line(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; "
            f"got {nf}"))
    conds = t.asarray(condlist, dtype=t.bool_)
    dt = _t(x).dtype

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return t.broadcast_to(t.astype(t.asarray(v), dt), _shape(x))

    out = value(funclist[0])
    for k, f in enumerate(funclist[1:]):
        out = t.where(_ix(conds, k), value(f), out)
    return out


def append(arr, values, axis=None):
    if axis is None:
        return t.concatenate([t.ravel(arr), t.ravel(values)], 0)
    return t.concatenate([arr, values], axis=axis)


def insert(arr, obj, values, axis=None):
    """values before the indices obj along axis; traced indices allowed, as in JAX."""
    a, _, values = _arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    if axis is None:
        a, axis = t.ravel(a), 0
    axis = _canon_axis(_static(axis, "axis argument of jnp.insert()"), ndim(a))
    indices = t.arange(*obj.indices(_shape(a)[axis])) if isinstance(obj, slice) else \
        t.asarray(obj)
    if ndim(indices) > 1:
        raise ValueError(at_user_line(
            "jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got "
            f"{obj}"))
    if not _dtypes.is_int(_t(indices).dtype):
        if t.size(indices) == 0 and not isinstance(obj, Tracer):
            indices = t.astype(indices, _dtypes.default_int())
        else:
            raise ValueError(at_user_line(
                f"jnp.insert(): index array must be integer typed; got {obj}"))
    values = t.astype(values, _t(a).dtype)
    if ndim(values) < ndim(a):
        values = t.reshape(values, (1,) * (ndim(a) - ndim(values)) + _shape(values))
    if t.size(indices) == 1:
        index = _ix(t.ravel(indices), 0)
        if ndim(indices) == 0:
            values = t.moveaxis(values, 0, axis)
        indices = t.full(_shape(values)[axis], index)
    n_input = _shape(a)[axis]
    n_insert = t.broadcast_shapes(_shape(indices), (_shape(values)[axis],))[0]
    out_shape = list(_shape(a))
    out_shape[axis] += n_insert
    out = t.zeros_like(a, shape=tuple(out_shape))
    indices = t.clip(t.where(t.less(indices, 0), t.add(indices, n_input), indices), 0, n_input)
    values_ind = _At(indices, t.argsort(indices)).add(
        t.arange(n_insert, dtype=_t(indices).dtype))
    arr_mask = _At(t.ones(n_input + n_insert, dtype=t.bool_), values_ind).set(False)
    arr_ind = t.where(arr_mask, size=n_input)[0]
    lead = (slice(None),) * axis
    out = _At(out, lead + (values_ind,)).set(values)
    return _At(out, lead + (arr_ind,)).set(a)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """a without the entries obj along axis: obj static, or traced with
    assume_unique_indices=True (as in JAX)."""
    (a,) = _arraylike("delete", arr)
    if axis is None:
        a, axis = t.ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    n = _shape(a)[axis]
    try:
        index = operator.index(obj)
    except TypeError:
        pass
    else:
        index = _canon_axis(index, n)
        return t.concatenate([_sl(a, axis, 0, index), _sl(a, axis, index + 1)], axis=axis)
    lead = (slice(None),) * axis
    if isinstance(obj, slice):
        obj, assume_unique_indices = _np.arange(n)[obj], True
    if isinstance(obj, (list, tuple)):
        _arraylike("delete", obj)
    if _dtypes.is_int(_t(obj).dtype) and assume_unique_indices:
        o = t.ravel(obj)
        o = t.sort(t.clip(t.where(t.less(o, 0), t.add(o, n), o), 0, n))
        dt = _t(o).dtype
        o = t.subtract(o, t.arange(t.size(o), dtype=dt))
        i = t.arange(n - t.size(o), dtype=dt)
        i = t.add(i, t.sum(t.greater_equal(t.expand_dims(i, 0), t.expand_dims(o, 1)), 0, dtype=dt))
        return _ix(a, lead + (i,))
    if isinstance(obj, Tracer):
        raise ConcretizationError(at_user_line(
            "'obj' array argument of jnp.delete() must be concrete (static); with traced "
            "unique integer indices pass assume_unique_indices=True"))
    obj = _np.asarray(obj)
    if _np.issubdtype(obj.dtype, _np.integer):
        mask = _np.ones(n, dtype=bool)
        mask[obj] = False
    elif obj.dtype == bool:
        if obj.shape != (n,):
            raise ValueError(at_user_line(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                "length matching specified axis."))
        mask = ~obj
    else:
        raise ValueError(at_user_line(
            f"np.delete(arr, obj): got obj.dtype={obj.dtype}; must be integer or bool."))
    return _ix(a, lead + (_np.flatnonzero(mask),))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (JAX's: a zero-width interval takes its left
    value, so no NaN gradient; left/right='extrapolate' extends the end segments)."""
    x, xp, fp = _arraylike("interp", x, xp, fp)
    if _shape(xp) != _shape(fp) or ndim(xp) != 1:
        raise ValueError(at_user_line("xp and fp must be one-dimensional arrays of equal size"))
    x, xp = _promote_inexact(x, xp)
    (fp,) = _promote_inexact(fp)
    extrapolate = []
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(at_user_line(
                f"the only valid string value of `{name}` is 'extrapolate', but got: {v!r}"))
        extrapolate.append(isinstance(v, str))
    if _dtypes.is_complex(_t(x).dtype):
        raise ValueError(at_user_line("jnp.interp: complex x values not supported."))
    if period is not None:
        if _np.ndim(period) != 0:
            raise ValueError(at_user_line(f"period must be a scalar; got {period}"))
        period = t.abs(period)
        x, xp = t.remainder(x, period), t.remainder(xp, period)
        order = t.argsort(xp)
        xp, fp = t.take(xp, order), t.take(fp, order)
        xp = t.concatenate([t.subtract(_sl(xp, 0, -1), period), xp,
                            t.add(_sl(xp, 0, 0, 1), period)])
        fp = t.concatenate([_sl(fp, 0, -1), fp, _sl(fp, 0, 0, 1)])
    i = t.clip(t.searchsorted(xp, x, side="right"), 1, _shape(xp)[0] - 1)
    fp0, xp0 = t.take(fp, t.subtract(i, 1)), t.take(xp, t.subtract(i, 1))
    df = t.subtract(t.take(fp, i), fp0)
    dx = t.subtract(t.take(xp, i), xp0)
    delta = t.subtract(x, xp0)
    epsilon = _np.spacing(_np.finfo(_t(xp).dtype).eps)
    dx0 = t.less_equal(t.abs(dx), epsilon)  # no NaN gradient where dx is ~0
    f = t.where(dx0, fp0, t.add(fp0, t.multiply(t.divide(delta, t.where(dx0, 1, dx)), df)))
    if period is None:
        if not extrapolate[0]:
            f = t.where(t.less(x, _ix(xp, 0)), _ix(fp, 0) if left is None else left, f)
        if not extrapolate[1]:
            f = t.where(t.greater(x, _ix(xp, -1)), _ix(fp, -1) if right is None else right, f)
    return f


def diff(a, n=1, axis=-1, prepend=None, append=None):
    (arr,) = _arraylike("diff", a)
    n = _static_int(_static(n, "'n' argument of jnp.diff"), "'n' argument of jnp.diff")
    axis = _static_int(_static(axis, "'axis' argument of jnp.diff"), "axis")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(at_user_line(f"order must be non-negative but got {n}"))
    if ndim(arr) == 0:
        raise ValueError(at_user_line(
            f"diff requires input that is at least one dimensional; got {a}"))
    axis = _canon_axis(axis, ndim(arr))
    combined = []
    for extra in (prepend, arr, append):
        if extra is None:
            continue
        if extra is not arr:
            (extra,) = _arraylike("diff", extra)
            if ndim(extra) == 0:
                extra = t.broadcast_to(extra, _shape(arr)[:axis] + (1,) + _shape(arr)[axis + 1:])
        combined.append(extra)
    if len(combined) > 1:
        arr = t.concatenate(combined, axis)
    op = t.not_equal if _t(arr).dtype == _dtypes.bool_ else t.subtract
    for _ in range(n):
        arr = op(_sl(arr, axis, 1), _sl(arr, axis, None, -1))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    (arr,) = _arraylike("ediff1d", ary)
    arr = t.ravel(arr)
    parts = [lax.sub(_sl(arr, 0, 1), _sl(arr, 0, None, -1))]
    if to_begin is not None:
        parts.insert(0, t.ravel(t.astype(_arraylike("ediff1d", to_begin)[0], _t(arr).dtype)))
    if to_end is not None:
        parts.append(t.ravel(t.astype(_arraylike("ediff1d", to_end)[0], _t(arr).dtype)))
    return t.concatenate(parts) if len(parts) > 1 else parts[0]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule; a constant spacing takes JAX's fast path (sum minus half
    the ends), so the values round as JAX's."""
    if x is None:
        (y,) = _arraylike("trapezoid", y)
        (y,) = _promote(y, to_inexact=True)
        dx = t.asarray(dx)
        if ndim(dx) > 0:
            dx = t.moveaxis(t.reshape(dx, (1,) * (ndim(y) - ndim(dx)) + _shape(dx)), axis, -1)
    else:
        y, x = _arraylike("trapezoid", y, x)
        y, x = _promote_inexact(y, x)
        dx = diff(x) if ndim(x) == 1 else t.moveaxis(diff(x, axis=axis), axis, -1)
    y = t.moveaxis(y, axis, -1)
    first, last = _ix(y, (Ellipsis, 0)), _ix(y, (Ellipsis, -1))
    if ndim(dx) == 0 or _shape(dx)[-1] == 1:
        dx = dx if ndim(dx) == 0 else _ix(dx, (Ellipsis, 0))
        return t.multiply(dx, t.subtract(t.sum(y, -1), t.multiply(0.5, t.add(first, last))))
    return t.multiply(0.5, t.sum(t.multiply(dx, t.add(_sl(y, -1 % ndim(y), 1),
                                                       _sl(y, -1 % ndim(y), None, -1))), -1))


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided at the edges (second-order edges,
    edge_order=2, are refused as in JAX)."""
    if edge_order is not None:
        raise NotImplementedError(at_user_line(
            "The 'edge_order' argument to jnp.gradient is not supported."))
    a, *spacing = _promote_inexact(*_arraylike("gradient", f, *varargs))

    def along(a, h, ax):
        upper = t.subtract(_sl(a, ax, 1, 2), _sl(a, ax, 0, 1))
        lower = t.subtract(_sl(a, ax, -1), _sl(a, ax, -2, -1))
        if ndim(h) == 0:
            inner = t.divide(t.multiply(t.subtract(_sl(a, ax, 2), _sl(a, ax, None, -2)), 0.5), h)
            lower, upper = t.divide(lower, h), t.divide(upper, h)
        elif ndim(h) == 1:
            if _shape(h)[0] != _shape(a)[ax]:
                raise ValueError(at_user_line(
                    "Spacing arrays must have the same length as the dimension along which "
                    "the gradient is calculated."))
            h = t.reshape(h, tuple(_shape(h)[0] if k == ax else 1 for k in range(ndim(a))))
            upper = t.divide(upper, t.subtract(_sl(h, ax, 1, 2), _sl(h, ax, 0, 1)))
            lower = t.divide(lower, t.subtract(_sl(h, ax, -1), _sl(h, ax, -2, -1)))
            dx1 = t.subtract(_sl(h, ax, 1, -1), _sl(h, ax, 0, -2))
            dx2 = t.subtract(_sl(h, ax, 2), _sl(h, ax, 1, -1))
            wa = t.divide(t.negative(dx2), t.multiply(dx1, t.add(dx1, dx2)))
            wb = t.divide(t.subtract(dx2, dx1), t.multiply(dx1, dx2))
            wc = t.divide(dx1, t.multiply(dx2, t.add(dx1, dx2)))
            inner = t.add(t.add(t.multiply(wa, _sl(a, ax, 0, -2)),
                                t.multiply(wb, _sl(a, ax, 1, -1))),
                          t.multiply(wc, _sl(a, ax, 2)))
        else:
            raise ValueError(at_user_line("Spacing arrays must be 1D arrays or scalars."))
        return t.concatenate((upper, inner, lower), axis=ax)

    axes = _canon_axes(axis, ndim(a))
    if not axes:
        return []
    if builtins.min(_shape(a)[k] for k in axes) < 2:
        raise ValueError(at_user_line(
            "Shape of array too small to calculate a numerical gradient, at least 2 "
            "elements are required."))
    if len(spacing) == 0:
        dx = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = spacing * len(axes)
    elif len(spacing) == len(axes):
        dx = spacing
    else:
        raise TypeError(at_user_line(
            f"Invalid number of spacing arguments {len(spacing)} for axis={axis}"))
    grads = [along(a, h, k) for k, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


def kron(a, b):
    a, b = _arraylike("kron", a, b)
    a, b = _promote_dtypes(a, b)
    if ndim(a) < ndim(b):
        a = t.reshape(a, (1,) * (ndim(b) - ndim(a)) + _shape(a))
    elif ndim(b) < ndim(a):
        b = t.reshape(b, (1,) * (ndim(a) - ndim(b)) + _shape(b))
    a2 = t.expand_dims(a, tuple(range(1, 2 * ndim(a), 2)))
    b2 = t.expand_dims(b, tuple(range(0, 2 * ndim(b), 2)))
    # lax.mul, as JAX's: bools are refused, not multiplied as a logical and
    return t.reshape(lax.mul(*t.broadcast_arrays(a2, b2)),
                     tuple(_np.multiply(_shape(a), _shape(b))))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    a, b = _arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = t.moveaxis(a, axisa, -1), t.moveaxis(b, axisb, -1)
    if _shape(a)[-1] not in (2, 3) or _shape(b)[-1] not in (2, 3):
        raise ValueError(at_user_line("Dimension must be either 2 or 3 for cross product"))
    part = lambda x, i: _ix(x, (Ellipsis, i))  # noqa: E731
    if _shape(a)[-1] == 2 and _shape(b)[-1] == 2:
        return t.subtract(t.multiply(part(a, 0), part(b, 1)), t.multiply(part(a, 1), part(b, 0)))
    a0, a1, b0, b1 = part(a, 0), part(a, 1), part(b, 0), part(b, 1)
    a2 = part(a, 2) if _shape(a)[-1] == 3 else t.zeros_like(a0)
    b2 = part(b, 2) if _shape(b)[-1] == 3 else t.zeros_like(b0)
    c = t.stack([t.subtract(t.multiply(a1, b2), t.multiply(a2, b1)),
                 t.subtract(t.multiply(a2, b0), t.multiply(a0, b2)),
                 t.subtract(t.multiply(a0, b1), t.multiply(a1, b0))])
    return t.moveaxis(c, 0, axisc)


def vander(x, N=None, increasing=False):
    (x,) = _arraylike("vander", x)
    if ndim(x) != 1:
        raise ValueError(at_user_line("x must be a one-dimensional array"))
    N = _shape(x)[0] if N is None else _static_int(_static(N, "'N' argument of jnp.vander()"), "N")
    if N < 0:
        raise ValueError(at_user_line("N must be nonnegative"))
    powers = lax.iota(_t(x).dtype, N)
    if not increasing:
        powers = lax.sub(_np.array(N - 1, _t(x).dtype), powers)
    return t.power(t.expand_dims(x, -1), t.expand_dims(powers, 0))


# ---------------------------------------------------------------- copy, angle, unwrap,
# packbits, unpackbits, choose, compress, extract

def copy(a, order=None):
    """Arrays are immutable: a itself, as an array."""
    return _arraylike("copy", a)[0]


def angle(z, deg=False):
    """atan2(imag, real); integers and real 0-d arrays in the default float dtype (JAX's
    rule: angle of a float16 scalar is float32)."""
    (z,) = _arraylike("angle", z)
    re, im = t.real(z), t.imag(z)
    if not _dtypes.is_inexact(_t(re).dtype) or (_dtypes.is_float(_t(z).dtype) and ndim(z) == 0):
        re, im = (lax.convert_element_type(x, _dtypes.default_float()) for x in (re, im))
    out = lax.atan2(im, re)
    return t.degrees(out) if deg else out


def unwrap(p, discont=None, axis=-1, period=2 * _np.pi):
    """p with jumps above discont along axis replaced by their complement mod period."""
    (p,) = _arraylike("unwrap", p)
    p, period = _promote_dtypes(p, period)
    if _dtypes.is_complex(_t(p).dtype):
        raise ValueError(at_user_line("jnp.unwrap does not support complex inputs."))
    axis = _canon_axis(axis, ndim(p))
    if _shape(p)[axis] == 0:
        return p
    if discont is None:
        discont = t.divide(period, 2)
    interval = (t.floor_divide if _dtypes.is_int(_t(p).dtype) else t.divide)(period, 2)
    dd = diff(p, axis=axis)
    ddmod = t.subtract(t.mod(t.add(dd, interval), period), interval)
    ddmod = t.where(t.logical_and(t.equal(ddmod, t.negative(interval)), t.greater(dd, 0)),
                    interval, ddmod)
    correct = t.where(t.less(t.abs(dd), discont), 0, t.subtract(ddmod, dd))
    return t.concatenate([_sl(p, axis, 0, 1),
                          t.add(_sl(p, axis, 1), t.cumsum(correct, axis=axis))], axis)


def _bit_order(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError(at_user_line("'order' must be either 'little' or 'big'"))


def packbits(a, axis=None, bitorder="big"):
    """Each 8 truth values along axis as the bits of a uint8 (zero padded at the end)."""
    (a,) = _arraylike("packbits", a)
    if not (_dtypes.is_int(_t(a).dtype) or _t(a).dtype == _dtypes.bool_):
        raise TypeError(at_user_line("Expected an input array of integer or boolean data type"))
    _bit_order(bitorder)
    bits = t.arange(8, dtype=t.uint8)
    if bitorder == "big":
        bits = t.flip(bits)
    if axis is None:
        a, axis = t.ravel(a), 0
    a = t.swapaxes(t.astype(t.not_equal(a, 0), t.uint8), axis, -1)
    pad = -_shape(a)[-1] % 8
    if pad:
        a = t.pad(a, [(0, 0)] * (ndim(a) - 1) + [(0, pad)])
    a = t.reshape(a, _shape(a)[:-1] + (_shape(a)[-1] // 8, 8))
    packed = t.astype(t.sum(t.left_shift(a, bits), axis=-1), t.uint8)
    return t.swapaxes(packed, axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The 8 bits of each uint8 along axis, as uint8 0s and 1s; count keeps (or zero
    pads to) that many."""
    (a,) = _arraylike("unpackbits", a)
    if _t(a).dtype != _np.uint8:
        raise TypeError(at_user_line("Expected an input array of unsigned byte data type"))
    _bit_order(bitorder)
    bits = t.left_shift(_np.uint8(1), t.arange(8, dtype=t.uint8))
    if bitorder == "big":
        bits = t.flip(bits)
    if axis is None:
        a, axis = t.ravel(a), 0
    a = t.swapaxes(a, axis, -1)
    out = t.astype(t.greater(t.bitwise_and(t.expand_dims(a, -1), bits), 0), t.uint8)
    out = t.reshape(out, _shape(out)[:-2] + (-1,))
    if count is not None:
        count = _static_int(count, "unpackbits's count")
        n = _shape(out)[-1]
        out = t.pad(out, [(0, 0)] * (ndim(out) - 1) + [(0, count - n)]) if count > n else \
            _sl(out, -1 % ndim(out), 0, count)
    return t.swapaxes(out, axis, -1)


def choose(a, choices, out=None, mode="raise"):
    """choices[a] elementwise; mode='raise' needs a concrete a (as in JAX), 'wrap' and
    'clip' work traced."""
    if out is not None:
        raise NotImplementedError(at_user_line(
            "The 'out' argument to jnp.choose is not supported."))
    a, *choices = _arraylike("choose", a, *choices)
    if not _dtypes.is_int(_t(a).dtype):
        raise ValueError(at_user_line("`a` array must be integer typed"))
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ConcretizationError(at_user_line(
                "jnp.choose with mode='raise' needs a concrete `a` (it was traced, under "
                "jit or a transformation). Use mode='wrap' or mode='clip' instead."))
        host = _np.asarray(a)
        if _np.any((host < 0) | (host >= n)):
            raise ValueError(at_user_line("invalid entry in choice array"))
    elif mode == "wrap":
        a = t.remainder(a, n)
    elif mode == "clip":
        a = t.clip(a, 0, n - 1)
    else:
        raise ValueError(at_user_line(
            f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'"))
    a, *choices = t.broadcast_arrays(a, *choices)
    return _ix(t.stack(choices), (a,) + t.indices(_shape(a), sparse=True))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where condition holds; with a static size, the first
    size of them, fill_value after (traceable, as in JAX)."""
    cond, arr, fill_value = _arraylike("compress", condition, a, fill_value)
    cond = t.astype(cond, t.bool_)
    if out is not None:
        raise NotImplementedError(at_user_line(
            "The 'out' argument to jnp.compress is not supported."))
    if ndim(cond) != 1:
        raise ValueError(at_user_line("condition must be a 1D array"))
    arr = t.ravel(arr) if axis is None else t.moveaxis(arr, axis, 0)
    axis = 0 if axis is None else axis
    n = _shape(arr)[0]
    cond, extra = _sl(cond, 0, None, n), _sl(cond, 0, n)
    arr = _sl(arr, 0, None, _shape(cond)[0])
    if size is None:
        if isinstance(cond, Tracer):
            raise ConcretizationError(at_user_line(
                "jnp.compress without size= needs a concrete condition (the result's length "
                "depends on it), but it is traced; pass a static size= (and fill_value=)"))
        if bool(t.any(extra)):
            raise ValueError(at_user_line("condition contains entries that are out of bounds"))
        result = _ix(arr, cond)
    else:
        size = _static_int(size, "compress's size")
        if not 0 <= size <= _shape(arr)[0]:
            raise ValueError(at_user_line(
                "size must be positive and not greater than the size of the array axis; "
                f"got size={size} for a.shape[axis]={_shape(arr)[0]}"))
        mask = t.expand_dims(cond, tuple(range(1, ndim(arr))))
        arr = t.where(mask, arr, t.astype(fill_value, _t(arr).dtype))
        result = _sl(_ix(arr, t.argsort(cond, stable=True, descending=True)), 0, None, size)
    return t.moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    _arraylike("extract", condition, arr, fill_value)
    return compress(t.ravel(condition), t.ravel(arr), size=size, fill_value=fill_value)
