"""Python operators and NumPy-style methods on Tracers, mapped to tracehlo.numpy."""
from __future__ import annotations

from .core import Tracer, at_user_line


def _swap(fn):
    return lambda self, other: fn(other, self)


def install():
    from . import numpy as tnp
    from .numpy._indexing import IndexUpdateRef, getitem

    binary = {"add": tnp.add, "sub": tnp.subtract, "mul": tnp.multiply,
              "truediv": tnp.divide, "floordiv": tnp.floor_divide, "mod": tnp.remainder,
              "pow": tnp.power, "matmul": tnp.matmul, "and": tnp.bitwise_and,
              "or": tnp.bitwise_or, "xor": tnp.bitwise_xor, "lshift": tnp.left_shift,
              "rshift": tnp.right_shift}
    for name, fn in binary.items():
        setattr(Tracer, f"__{name}__", fn)
        setattr(Tracer, f"__r{name}__", _swap(fn))
    compare = {"eq": tnp.equal, "ne": tnp.not_equal, "lt": tnp.less, "le": tnp.less_equal,
               "gt": tnp.greater, "ge": tnp.greater_equal}
    for name, fn in compare.items():
        setattr(Tracer, f"__{name}__", fn)
    Tracer.__neg__ = tnp.negative
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = tnp.absolute
    Tracer.__invert__ = tnp.invert
    Tracer.__divmod__ = tnp.divmod
    Tracer.__getitem__ = getitem
    Tracer.__setitem__ = _refuse_item_assignment
    Tracer.at = property(lambda self: _AtIndexer(self, IndexUpdateRef))
    Tracer.T = property(lambda self: tnp.transpose(self))
    Tracer.real = property(tnp.real)
    Tracer.imag = property(tnp.imag)
    Tracer.mT = property(lambda self: tnp.swapaxes(self, -1, -2))
    Tracer.astype = tnp.astype
    Tracer.reshape = lambda self, *shape, order="C": tnp.reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order)
    Tracer.transpose = lambda self, *axes: tnp.transpose(
        self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any",
                 "squeeze", "var", "std", "cumsum", "cumprod", "ravel", "flatten",
                 "swapaxes", "take", "clip", "round", "dot", "trace", "diagonal", "sort",
                 "argsort", "repeat", "conj", "conjugate", "ptp"):
        fn = getattr(tnp, "ravel" if name == "flatten" else name, None)
        if fn is not None:
            setattr(Tracer, name, fn)


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
