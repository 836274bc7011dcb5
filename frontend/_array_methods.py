"""Python operators and NumPy-style methods on Tracers, mapped to tracehlo.numpy.

An eager result is a jax.Array, whose methods are JAX's: a function that closes over
one and is then traced hands JAX our tracers (`a[i]`, `a.at[i].set(t)`, `a.take(i)`),
which JAX cannot read. So the same methods are installed on jax.Array's class, each
deferring to JAX unless one of its arguments holds a tracer of ours."""
from __future__ import annotations

import jax.tree_util as tree_util

from . import runtime
from .core import Tracer, at_user_line


def _swap(fn):
    return lambda self, other: fn(other, self)


def install():
    from . import numpy as tnp
    from .numpy._indexing import IndexUpdateRef, getitem

    methods = {"__getitem__": getitem, "__divmod__": tnp.divmod,
               "__rdivmod__": _swap(tnp.divmod), "astype": tnp.astype,
               "reshape": lambda self, *shape, order="C": tnp.reshape(
                   self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int)
                   else shape, order),
               "transpose": lambda self, *axes: tnp.transpose(
                   self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int)
                          else axes) or None)}
    binary = {"add": tnp.add, "sub": tnp.subtract, "mul": tnp.multiply,
              "truediv": tnp.divide, "floordiv": tnp.floor_divide, "mod": tnp.remainder,
              "pow": tnp.power, "matmul": tnp.matmul, "and": tnp.bitwise_and,
              "or": tnp.bitwise_or, "xor": tnp.bitwise_xor, "lshift": tnp.left_shift,
              "rshift": tnp.right_shift}
    for name, fn in binary.items():
        methods[f"__{name}__"] = fn
        methods[f"__r{name}__"] = _swap(fn)
    compare = {"eq": tnp.equal, "ne": tnp.not_equal, "lt": tnp.less, "le": tnp.less_equal,
               "gt": tnp.greater, "ge": tnp.greater_equal}
    for name, fn in compare.items():
        methods[f"__{name}__"] = fn
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any",
                 "squeeze", "var", "std", "cumsum", "cumprod", "ravel", "flatten",
                 "swapaxes", "take", "clip", "round", "dot", "trace", "diagonal", "sort",
                 "argsort", "repeat", "conj", "conjugate", "ptp"):
        fn = getattr(tnp, "ravel" if name == "flatten" else name, None)
        if fn is not None:
            methods[name] = fn
    for name, fn in methods.items():
        setattr(Tracer, name, fn)
    Tracer.__neg__ = tnp.negative
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = tnp.absolute
    Tracer.__invert__ = tnp.invert
    Tracer.__setitem__ = _refuse_item_assignment
    Tracer.at = property(lambda self: _AtIndexer(self, IndexUpdateRef))
    Tracer.T = property(lambda self: tnp.transpose(self))
    Tracer.real = property(tnp.real)
    Tracer.imag = property(tnp.imag)
    Tracer.mT = property(lambda self: tnp.swapaxes(self, -1, -2))
    _defer_to_tracers(runtime.ArrayImpl, methods, IndexUpdateRef)


def _holds_tracer(args) -> bool:
    """Whether a method's arguments hold a tracer of ours (a slice's bounds included)."""
    for leaf in tree_util.tree_leaves(args):
        if isinstance(leaf, Tracer) or isinstance(leaf, slice) and any(
                isinstance(v, Tracer) for v in (leaf.start, leaf.stop, leaf.step)):
            return True
    return False


def _defer_to_tracers(cls, methods: dict, update_ref) -> None:
    """cls's own methods (and .at[]), unless an argument holds a tracer: then ours."""
    for name, ours in methods.items():
        theirs = getattr(cls, name, None)
        if callable(theirs):
            setattr(cls, name, _deferring(theirs, ours))
    their_at = cls.at.fget
    cls.at = property(lambda self: _AtIndexer(
        self, lambda x, index: _DeferringUpdateRef(x, index, their_at(x), update_ref)))


def _deferring(theirs, ours):
    def method(self, *args, **kwargs):
        fn = ours if _holds_tracer((args, kwargs)) else theirs
        return fn(self, *args, **kwargs)
    method.__name__, method.__doc__ = theirs.__name__, theirs.__doc__
    return method


class _DeferringUpdateRef:
    """`x.at[index]` of a jax.Array: JAX's update unless the index or the update's
    arguments hold a tracer of ours."""
    __slots__ = ("x", "index", "their_at", "ours")

    def __init__(self, x, index, their_at, ours):
        self.x, self.index, self.their_at, self.ours = x, index, their_at, ours

    def __getattr__(self, method):
        def update(*args, **kwargs):
            ref = (self.ours(self.x, self.index) if _holds_tracer((self.index, args, kwargs))
                   else self.their_at[self.index])
            return getattr(ref, method)(*args, **kwargs)
        return update


def _refuse_item_assignment(self, index, value):
    raise TypeError(at_user_line(
        "tracehlo arrays are immutable and do not support in-place item assignment. "
        "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method "
        "(set, add, multiply, min, max, get, apply: JAX's semantics)."))


class _AtIndexer:
    __slots__ = ("x", "ref")

    def __init__(self, x, ref):
        self.x, self.ref = x, ref

    def __getitem__(self, index):
        return self.ref(self.x, index)
