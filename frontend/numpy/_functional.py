"""Functions over Python callables: vectorize, apply_along_axis, apply_over_axes,
fromfunction, built on tracehlo.vmap as JAX builds them on its vmap, so the callable
is traced once (not called per element) and the result differentiates and batches."""
from __future__ import annotations

import functools
import re

import numpy as _np

from ..batching import vmap
from ..core import at_user_line
from .. import numpy as t
from ._numeric import _arraylike
from ._util import _canon_axis, _shape, _shape_arg, ndim

_DIM = r"\w+"
_ARGUMENT = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGUMENTS = f"{_ARGUMENT}(?:,{_ARGUMENT})*"


def _parse_signature(signature):
    """([core dims of each input], [core dims of each output]) of '(n,m),(m)->(n)'."""
    if not re.match(f"^{_ARGUMENTS}->{_ARGUMENTS}$", signature):
        raise ValueError(at_user_line(f"not a valid gufunc signature: {signature}"))
    return ([tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARGUMENT, side)]
            for side in signature.split("->"))


def _core_sizes(sizes, shape, core, context, is_input):
    """Record the sizes of the core dims at the end of shape in sizes, checking them."""
    if is_input and len(shape) < len(core):
        raise ValueError(at_user_line(
            f"input with shape {shape!r} does not have enough dimensions for all core "
            f"dimensions {core!r} {context}"))
    if not is_input and len(shape) != len(core):
        raise ValueError(at_user_line(
            f"output shape {shape!r} does not match core dimensions {core!r} {context}"))
    for dim, n in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(dim, n) != n:
            raise ValueError(at_user_line(
                f"inconsistent size for core dimension {dim!r}: {n!r} vs {sizes[dim]!r} "
                f"{context}"))


def _checking_outputs(fn, sizes, out_core, context):
    def checked(*args):
        out = fn(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(at_user_line(
                f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                f"{context}"))
        if len(outs) != len(out_core):
            raise TypeError(at_user_line(
                f"wrong number of output arguments: expected {len(out_core)!r}, got "
                f"{len(outs)!r} {context}"))
        seen = dict(sizes)
        for o, core in zip(outs, out_core):
            _core_sizes(seen, _np.shape(o) if not hasattr(o, "shape") else tuple(o.shape),
                        core, context, False)
        return out
    return checked


def _without(fn, excluded, args, kwargs):
    """(fn taking only the other arguments, those positional ones, those keywords)."""
    if not excluded:
        return fn, args, kwargs
    fixed = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
             if i < len(args)]
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}

    def rest_fn(*rest, **kw):
        rest = list(rest)
        for i, a in fixed:
            rest.insert(i, a)
        return fn(*rest, **kw, **fixed_kw)
    return (rest_fn, [a for i, a in enumerate(args) if i not in excluded],
            {k: v for k, v in kwargs.items() if k not in excluded})


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc broadcast over its arguments' leading (non-core) axes, one vmap per
    broadcast axis; size-1 axes are not mapped but re-inserted, as JAX does."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(at_user_line(
            "jnp.vectorize can only exclude integer or string arguments, but "
            f"excluded={excluded!r}"))
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(at_user_line(f"excluded={excluded!r} contains negative numbers"))

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and " \
                  f"signature={signature!r}"
        fn, args, kwargs = _without(pyfunc, excluded, args, kwargs)
        if signature is None:
            in_core, out_core = [()] * len(args), None
        else:
            in_core, out_core = _parse_signature(signature)
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(in_core[i] != () for i in nones):
                raise ValueError(at_user_line(
                    f"Cannot pass None at locations {nones} with signature={signature!r}"))
            fn, args, _ = _without(fn, nones, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in nones]
        args = [t.asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(at_user_line(
                f"wrong number of positional arguments: expected {len(in_core)!r}, got "
                f"{len(args)!r} {context}"))
        sizes = {}
        for a, core in zip(args, in_core):
            _core_sizes(sizes, _shape(a), core, context, True)
        outer = [_shape(a)[:ndim(a) - len(core)] for a, core in zip(args, in_core)]
        shape = t.broadcast_shapes(*outer)
        if out_core is not None:
            fn = _checking_outputs(fn, sizes, out_core, context)
        squeezed = [t.squeeze(a, tuple(i for i, n in enumerate(o) if n == 1))
                    for a, o in zip(args, outer)]
        filled = [((1,) * (len(shape) - len(o)) + o)[::-1] for o in outer]
        expand = []
        for negdim, axis_sizes in enumerate(zip(*filled)):
            in_axes = tuple(None if n == 1 else 0 for n in axis_sizes)
            if all(a is None for a in in_axes):
                expand.append(len(shape) - 1 - negdim)
            else:
                fn = vmap(fn, in_axes)
        out = fn(*squeezed, **kwargs)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(t.expand_dims(o, expand) for o in out)
        return t.expand_dims(out, expand)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d on every 1-d slice of arr along axis; its outputs' axes replace axis."""
    (arr,) = _arraylike("apply_along_axis", arr)
    axis = _canon_axis(axis, ndim(arr))

    def func(a):
        return func1d(a, *args, **kwargs)
    for i in range(1, ndim(arr) - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) for each axis in turn, a reduced axis kept as size 1."""
    (a,) = _arraylike("apply_over_axes", a)
    for axis in axes:
        b = func(a, axis)
        if ndim(b) == ndim(a) - 1:
            b = t.expand_dims(b, axis)
        elif ndim(b) != ndim(a):
            raise ValueError(at_user_line(
                "function is not returning an array of the correct shape"))
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function of the index arrays, called once under one vmap per axis."""
    shape = _shape_arg(shape)
    for i in range(len(shape)):
        function = vmap(function, in_axes=tuple(0 if i == j else None
                                                 for j in range(len(shape)))[::-1])
    return function(*(t.arange(n, dtype=dtype) for n in shape), **kwargs)


iterable = _np.iterable


# ---------------------------------------------------------------- vecdot, matvec, vecmat
# (JAX defines them by vectorize over vdot and matmul)

def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along axis, the other axes broadcast; preferred_element_type
    is the dtype the products are accumulated in."""
    x1, x2 = _arraylike("jnp.vecdot", x1, x2)
    if _shape(x1)[axis] != _shape(x2)[axis]:
        raise ValueError(at_user_line(
            f"axes must match; got shapes {_shape(x1)} and {_shape(x2)} with axis={axis}"))
    x1, x2 = t.moveaxis(x1, axis, -1), t.moveaxis(x2, axis, -1)
    if preferred_element_type is not None:
        x1, x2 = t.astype(x1, preferred_element_type), t.astype(x2, preferred_element_type)
    return vectorize(t.vdot, signature="(n),(n)->()")(x1, x2)


def matvec(x1, x2, /):
    """The matrix-vector product over the leading (broadcast) axes."""
    x1, x2 = _arraylike("matvec", x1, x2)
    return vectorize(t.matmul, signature="(n,m),(m)->(n)")(x1, x2)


def vecmat(x1, x2, /):
    """conj(x1) @ x2 over the leading (broadcast) axes."""
    x1, x2 = _arraylike("vecmat", x1, x2)
    return vectorize(t.matmul, signature="(n),(n,m)->(m)")(t.conj(x1), x2)
