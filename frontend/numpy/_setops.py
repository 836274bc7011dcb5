"""Set operations on flattened arrays: intersect1d, union1d, setdiff1d, setxor1d.

Their result's length depends on the values, so under a trace they take a static
`size=` (as JAX's): the sorted result is padded to it with fill_value, or by JAX's
default (setdiff1d: 0; the others: the smallest value found, 0 if none)."""
from __future__ import annotations

import numpy as _np

from ..core import ConcretizationError, Tracer, at_user_line
from .. import numpy as t
from ._indexing import IndexUpdateRef as _At
from ._numeric import _arraylike
from ._util import _promote_dtypes, _shape, _static_int, _t


def _size_or_count(fn, size, keep, *operands):
    """size if given, else how many elements keep marks (the operands concrete)."""
    if size is not None:
        return _static_int(size, f"{fn}'s size")
    if any(isinstance(x, Tracer) for x in operands):
        raise ConcretizationError(at_user_line(
            f"The size argument of jnp.{fn} must be statically specified to use jnp.{fn} "
            "within JAX transformations."))
    return int(_np.asarray(t.sum(keep))) if keep is not None else None


def _compact(values, keep, size, fill_value, default):
    """The kept values (sorted, as values are) in front, padded to size."""
    n = _shape(values)[0]
    if n == 0:
        vals = t.zeros(size, _t(values).dtype)
    else:
        idx = t.nonzero(keep, size=size, fill_value=n)[0]
        vals = _At(values, idx).get(mode="fill", fill_value=0)
    if size == 0:
        return vals
    found = t.less(t.arange(size), t.sum(keep, dtype=t.int32))
    if fill_value is not None:
        return t.where(found, vals, t.astype(t.asarray(fill_value), _t(vals).dtype))
    if default == "min":  # JAX's: the padding becomes the max, then the min of the values
        vals = t.where(found, vals, t.max(vals))
        return t.where(found, vals, t.min(vals))
    return t.where(found, vals, t.zeros((), _t(vals).dtype))


def _distinct(x):
    """(sorted distinct values of x padded to x's length, which of them are real)."""
    if _shape(x)[0] == 0:
        return x, t.zeros(0, t.bool_)
    values, counts = t.unique(x, return_counts=True, size=_shape(x)[0])
    return values, t.greater(counts, 0)


def _operands(fn, ar1, ar2):
    a1, a2 = _arraylike(fn, ar1, ar2)
    return [t.ravel(a) for a in _promote_dtypes(a1, a2)]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    a1, a2 = _operands("intersect1d", ar1, ar2)
    values, real = _distinct(a1)
    keep = t.logical_and(real, t.isin(values, a2))
    size = _size_or_count("intersect1d", size, keep, a1, a2)
    out = _compact(values, keep, size, fill_value, "min")
    if not return_indices:
        return out
    found = t.less(t.arange(size), t.sum(keep, dtype=t.int32))

    def first_index(a):
        """Where each value first occurs in a; a's length for the padding."""
        if _shape(a)[0] == 0 or size == 0:
            return t.full(size, _shape(a)[0], t.int32)
        hit = t.equal(t.expand_dims(out, 1), t.expand_dims(a, 0))
        return t.where(found, t.argmax(hit, axis=1), _shape(a)[0])

    return out, first_index(a1), first_index(a2)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    a1, a2 = _arraylike("union1d", ar1, ar2)
    if size is None:
        _size_or_count("union1d", None, None, a1, a2)
    return t.unique(t.concatenate((a1, a2), axis=None), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    a1, a2 = _arraylike("setdiff1d", ar1, ar2)
    a1, a2 = t.ravel(a1), t.ravel(a2)
    values, real = _distinct(a1)
    keep = t.logical_and(real, t.isin(values, a2, invert=True))
    size = _size_or_count("setdiff1d", size, keep, a1)
    return _compact(values, keep, size, fill_value, "zero")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The values in exactly one of ar1 and ar2."""
    a1, a2 = _operands("setxor1d", ar1, ar2)
    values, real = _distinct(t.concatenate((a1, a2)))
    keep = t.logical_and(real, t.not_equal(t.isin(values, a1), t.isin(values, a2)))
    size = _size_or_count("setxor1d", size, keep, a1, a2)
    return _compact(values, keep, size, fill_value, "min")
