"""dtypes, constants, and the conversion and promotion helpers every tracehlo.numpy
module (and nn, linalg, indexing) builds on: NumPy broadcasting with JAX's dtype and
weak-type promotion."""
from __future__ import annotations

import builtins
import operator
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax, runtime
from ..core import ConcretizationError, Tracer, at_user_line, lift, type_of
from ..ir import ArrayType


bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
bfloat16 = _dtypes.bfloat16.type
complex64, complex128 = _np.complex64, _np.complex128
dtype = _np.dtype
# NumPy's aliases and abstract classes, as JAX's numpy exports them (int_, uint, float_
# and complex_ are 64-bit names; without x64 their arrays are canonicalized to 32 bits)
double, single, cdouble, csingle = float64, float32, complex128, complex64
int_, uint, float_, complex_ = int64, uint64, float64, complex128
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating, character, flexible = (
    _np.inexact, _np.floating, _np.complexfloating, _np.character, _np.flexible)
can_cast = _np.can_cast
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
iinfo, finfo = _dtypes.iinfo, _dtypes.finfo


def _is_array(x) -> bool:
    return isinstance(x, Tracer) or hasattr(x, "shape") and hasattr(x, "dtype")


def _t(x) -> ArrayType:
    return type_of(x)


def _shape(x) -> tuple:
    return _t(x).shape


def ndim(x) -> int:
    return len(_shape(x))


def shape(x) -> tuple:
    return _shape(x)


def size(x) -> int:
    return _t(x).size


def result_type(*args):
    return _dtypes.result_type(*[(_t(a).dtype, _t(a).weak) if not isinstance(a, (type, _np.dtype))
                                 else (_np.dtype(a), False) for a in args])[0]


def _static_int(value, what):
    """A static integer argument (an axis, a dimension), named at the user's line."""
    try:
        return operator.index(value)
    except ConcretizationError:
        raise
    except TypeError:
        raise TypeError(at_user_line(f"{what} must be an integer, got {value!r}")) from None


def _canon_axis(axis, ndim_, name="axis"):
    axis = _static_int(axis, name)
    if not -ndim_ <= axis < ndim_:
        raise ValueError(at_user_line(f"{name} {axis} is out of bounds for an array of "
                                      f"dimension {ndim_}"))
    return axis % ndim_


def _canon_axes(axis, ndim_):
    if axis is None:
        return tuple(range(ndim_))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_canon_axis(a, ndim_) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(at_user_line(f"repeated axis in {axis}"))
    return out


def asarray(a, dtype=None):
    """An array from `a`: traced values pass through; host data becomes a constant
    inside a trace and a device array outside."""
    if isinstance(a, (list, tuple)) and _contains_tracer(a):
        from ._shapes import stack  # _shapes builds on this module
        return stack([asarray(x, dtype) for x in a])
    if isinstance(a, Tracer):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if dtype is None and runtime.is_device_array(a):
        return a
    return lift(a, dtype, weak=dtype is None and _dtypes.is_weak_scalar(a))


def _contains_tracer(a) -> bool:
    if isinstance(a, Tracer):
        return True
    return isinstance(a, (list, tuple)) and builtins.any(_contains_tracer(x) for x in a)


def array(a, dtype=None, copy=True):
    return asarray(a, dtype)


def astype(x, dtype):
    return lax.convert_element_type(_operand(x), dtype)


def _operand(x):
    """An operand for lax: Python scalars stay (weak); outside a trace host arrays move
    to the device, so eager results are jax.Arrays even when a function returns its
    operand unchanged (tnp.floor of ints). Lists are refused, as JAX refuses them."""
    if isinstance(x, Tracer) or _dtypes.is_python_scalar(x):
        return x
    if _is_array(x):
        return asarray(x)
    if isinstance(x, (list, tuple)):
        raise TypeError(at_user_line(
            f"a {type(x).__name__} is not an array: tracehlo.numpy functions take arrays and "
            "scalars, as JAX's do (convert it first with tracehlo.numpy.asarray)"))
    raise TypeError(at_user_line(f"{type(x).__name__} is not an array or a Python scalar"))


def _array(x):
    """x as an array to return to the user: a Python scalar that passed through a
    no-op (tnp.floor(3)) must not escape as one."""
    return asarray(x) if _dtypes.is_python_scalar(x) else x


def _as_dtype(x, dtype, weak=False):
    """x converted to dtype; Python scalars become weak literals (inline in the IR)."""
    if _dtypes.is_python_scalar(x):
        return lift(x, dtype, weak)
    return lax.convert_element_type(x, dtype, weak_type=weak)


def _broadcast_shapes(*shapes):
    try:
        return tuple(_np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(at_user_line(
            "shapes " + ", ".join(str(tuple(s)) for s in shapes) +
            " cannot be broadcast together (NumPy broadcasting rules)")) from None


def broadcast_to(x, shape):
    x = _operand(x)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    xs = _shape(x)
    if xs == shape:
        return _array(x)
    if len(shape) < len(xs) or builtins.any(a not in (1, b) for a, b in zip(xs[::-1], shape[::-1])):
        raise ValueError(at_user_line(f"cannot broadcast an array of shape {xs} to {shape}"))
    if _dtypes.is_python_scalar(x):
        x = _as_dtype(x, _t(x).dtype, True)
    # broadcast_in_dim expands size-1 axes itself: no reshape, which fuses badly
    lead = len(shape) - len(xs)
    return lax.broadcast_in_dim(x, shape, [lead + i for i in range(len(xs))])


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives shapes (ints count as 1-d shapes)."""
    return _broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes])


def broadcast_arrays(*args):
    """Each argument broadcast to their common shape, dtypes kept (a list, as JAX's)."""
    args = [_array(_operand(a)) for a in args]
    shape_ = _broadcast_shapes(*[_shape(a) for a in args])
    return [broadcast_to(a, shape_) for a in args]


def _inexact(dt):
    """The float an int or bool becomes in inexact arithmetic (JAX's to_inexact_dtype):
    float32 up to 32 bits, float64 for 64-bit ints (which exist under x64 only)."""
    return _dtypes.canonicalize(_dtypes.float64 if _np.dtype(dt).itemsize == 8 else
                                _dtypes.float32)


def _promote(*args, to_inexact=False):
    """NumPy broadcasting + JAX promotion. Rank-0 operands stay rank 0 (the primitives
    broadcast them), so `x * 2.` reads `mul %x, 2.0:f32[]` in the IR."""
    args = [_operand(a) for a in args]
    types = [_t(a) for a in args]
    dt, weak = _dtypes.result_type(*[(t.dtype, t.weak) for t in types])
    if to_inexact and not _dtypes.is_inexact(dt):
        dt = _inexact(dt)
    out_shape = _broadcast_shapes(*[t.shape for t in types])
    out = []
    for a, t in zip(args, types):
        # weak -> strong too, as JAX's promote_dtypes, which leaves a lone operand be
        if t.dtype != dt or (t.weak != weak and len(args) > 1) or \
                _dtypes.is_python_scalar(a):
            a = _as_dtype(a, dt, weak)
        if t.shape != out_shape and t.shape != ():
            a = broadcast_to(a, out_shape)
        out.append(a)
    return out


def _const(x, value):
    """value in x's dtype, weak only when x is a weak scalar (JAX's lax._const): so
    `weak_array != 0` is strong, as in JAX."""
    t = _t(x)
    return _as_dtype(value, t.dtype, t.weak and t.shape == ())


def _to_bool(x):
    x = _operand(x)
    return x if _t(x).dtype == _dtypes.bool_ else lax.ne(x, _const(x, 0))


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """where(condition, x, y) selects; where(condition) is nonzero(condition)."""
    if x is None and y is None:
        from ._searching import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError(at_user_line("Either both or neither of the x and y arguments "
                                      "should be provided to tracehlo.numpy.where"))
    cond = _to_bool(condition)
    x, y = _promote(x, y)
    shape_ = _broadcast_shapes(_shape(cond), _shape(x), _shape(y))
    cond, x, y = (a if _shape(a) in ((), shape_) else broadcast_to(a, shape_)
                  for a in (cond, x, y))
    if shape_ and builtins.all(_shape(a) == () for a in (x, y)):
        x = broadcast_to(x, shape_)
    return lax.select(cond, x, y)


def _shape_arg(shape_):
    shape_ = (shape_,) if _np.ndim(shape_) == 0 else tuple(shape_)
    return tuple(_static_int(n, "an array dimension") for n in shape_)


def _static(x, what):
    if isinstance(x, Tracer):
        raise ConcretizationError(at_user_line(
            f"{what} must be a concrete (static) value, but it is traced; pass it as a "
            "Python number or mark the argument static (static_argnums/static_argnames)"))
    return x


def _promote_no_broadcast(arrays):
    return _promote_dtypes(*arrays)


def _promote_dtypes(*args, to_inexact=False):
    """JAX's promote_dtypes (promote_dtypes_inexact with to_inexact): one dtype for
    all, shapes kept."""
    args = [asarray(a) if _dtypes.is_python_scalar(a) else a for a in args]
    dt, weak = _dtypes.result_type(*[(_t(a).dtype, _t(a).weak) for a in args])
    if to_inexact and not _dtypes.is_inexact(dt):
        dt = _inexact(dt)
    return [lax.convert_element_type(a, dt, weak_type=weak) for a in args]


def _promote_inexact(*args):
    return _promote_dtypes(*args, to_inexact=True)


_WEAK_NAMES = {int: "i*", float: "f*", complex: "c*"}


def promote_types(a, b):
    """JAX's promotion of two dtypes, not canonicalized (int64 stays int64 without x64);
    the Python types int, float and complex are weak, as in JAX."""
    nodes = [_WEAK_NAMES[x] if any(x is w for w in _WEAK_NAMES) else _np.dtype(x)
             for x in (a, b)]
    out = _dtypes._join(*nodes)
    if isinstance(out, str):  # weak: the Python type's dtype
        return _np.dtype({"i*": "int64", "f*": "float64", "c*": "complex128"}[out])
    # without x64 JAX's lattice joins uint32 and the signed ints below 64 bits at int32:
    # no 64-bit type is formed from narrower ones
    if out == _np.int64 and not _dtypes.config.enable_x64 and not builtins.any(
            isinstance(n, _np.dtype) and n.itemsize == 8 for n in nodes):
        return _np.dtype(_np.int32)
    return _np.dtype(out)


def issubdtype(arg1, arg2):
    """numpy.issubdtype, with bfloat16 a floating type (NumPy's hierarchy lacks it)."""
    a = arg1 if isinstance(arg1, type) and issubclass(arg1, _np.generic) else _np.dtype(arg1).type
    b = arg2 if isinstance(arg2, type) and issubclass(arg2, _np.generic) else _np.dtype(arg2).type
    if a is bfloat16:
        return b in (bfloat16, _np.floating, _np.inexact, _np.number, _np.generic)
    return bool(_np.issubdtype(a, b))


_DTYPE_KINDS = {
    "bool": {_np.dtype(bool)},
    "signed integer": {_np.dtype(d) for d in ("int8", "int16", "int32", "int64")},
    "unsigned integer": {_np.dtype(d) for d in ("uint8", "uint16", "uint32", "uint64")},
    "real floating": {_np.dtype(d) for d in ("float16", "float32", "float64")} |
                     {_np.dtype(bfloat16)},
    "complex floating": {_np.dtype("complex64"), _np.dtype("complex128")},
}
_DTYPE_KINDS["integral"] = _DTYPE_KINDS["signed integer"] | _DTYPE_KINDS["unsigned integer"]
_DTYPE_KINDS["numeric"] = (_DTYPE_KINDS["integral"] | _DTYPE_KINDS["real floating"] |
                           _DTYPE_KINDS["complex floating"])


def isdtype(dtype, kind):
    """The array API's dtype test: kind a dtype, a kind name, or a tuple of them."""
    options = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _DTYPE_KINDS:
            options |= _DTYPE_KINDS[k]
            continue
        try:
            options.add(_np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(at_user_line(
                    f"Unrecognized kind={k!r} expected one of {list(_DTYPE_KINDS)}, or a "
                    "compatible input for jnp.dtype()")) from None
            raise TypeError(at_user_line(
                f"Expected kind to be a dtype, string, or tuple; got kind={k!r}")) from e
    return _np.dtype(dtype) in options
