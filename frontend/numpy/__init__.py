"""tracehlo.numpy: NumPy's API with JAX's semantics (dtype promotion, weak types,
immutable arrays), built on tracehlo.lax. Works inside a trace and eagerly."""
from ._util import (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
    float64, bfloat16, complex64, complex128, dtype, pi, e, inf, nan, newaxis, iinfo,
    finfo, ndim, shape, size, result_type, asarray, array, astype, broadcast_to, where,
    broadcast_arrays, broadcast_shapes, double, single, cdouble, csingle, int_, uint, float_,
    complex_, generic, number, integer, signedinteger, unsignedinteger, inexact, floating,
    complexfloating, character, flexible, can_cast, promote_types, issubdtype, isdtype)
from ._util import bool_ as bool  # noqa: A001: JAX's numpy name for its bool type
from ._creation import (
    full, zeros, ones, empty, full_like, zeros_like, ones_like, empty_like, arange,
    linspace, logspace, geomspace, eye, identity, tri, tril, triu)
from ._ufuncs import (
    sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh,
    exp, exp2, log, log1p, expm1, sqrt, cbrt, negative, sign, arctan2, add, subtract,
    multiply, true_divide, divide, nextafter, log2, log10, rsqrt, absolute, abs, floor,
    ceil, round, around, trunc, square, reciprocal, maximum, minimum, power, pow,
    float_power, remainder, mod, fmod, floor_divide, divmod, equal, not_equal, less,
    less_equal, greater, greater_equal, bitwise_and, bitwise_or, bitwise_xor,
    left_shift, right_shift, invert, bitwise_not, logical_and, logical_or, logical_xor,
    logical_not, isfinite, isinf, isnan, clip, copysign, signbit, deg2rad, rad2deg,
    radians, degrees, hypot, logaddexp, conj, conjugate, real, imag, acos, acosh, asin, asinh,
    atan, atanh, atan2, bitwise_invert, bitwise_left_shift, bitwise_right_shift, fabs, fmax,
    fmin, rint, positive, heaviside, frexp, ldexp, modf, gcd, lcm, sinc, logaddexp2,
    nan_to_num, spacing, i0)
from ._sorting import (
    sort, argsort, take, take_along_axis)
from ._shapes import (
    reshape, ravel, transpose, swapaxes, moveaxis, expand_dims, squeeze, atleast_1d,
    atleast_2d, concatenate, stack, hstack, vstack, column_stack, split, array_split,
    tile, repeat, flip, fliplr, flipud, roll, pad, diagonal, diag, diagflat, rot90, rollaxis,
    permute_dims, matrix_transpose, unstack, concat)
from ._reductions import (
    sum, prod, max, min, amax, amin, all, any, mean, var, std, argmax, argmin, cumsum,
    cumprod, cummax, cummin, ptp)
from ._contractions import (
    trace, dot, matmul, vdot, inner, outer, tensordot, einsum)
from ._searching import (
    nonzero, flatnonzero, argwhere, unique, unique_all, unique_counts, unique_inverse,
    unique_values, searchsorted, digitize, histogram, bincount, put_along_axis)
from ._numeric import (
    select, piecewise, append, insert, delete, interp, diff, ediff1d, trapezoid, gradient,
    kron, cross, vander)
from ._logic import (
    isclose, allclose, array_equal, array_equiv, isin, isposinf, isneginf, isreal, iscomplex,
    isscalar, iscomplexobj, isrealobj)
from ._statistics import (
    nansum, nanprod, nanmax, nanmin, nanmean, nanvar, nanstd, nanargmax, nanargmin, nancumsum,
    nancumprod, count_nonzero, quantile, nanquantile, percentile, nanpercentile, median,
    nanmedian, average, cov, corrcoef)
from ._index_tricks import (
    meshgrid, indices, ix_, tril_indices, triu_indices, tril_indices_from, triu_indices_from,
    diag_indices, diag_indices_from, unravel_index, ravel_multi_index)
from ._polynomial import (
    convolve, correlate, polyval, polyadd, polysub, polymul, polyder, polyint, polyfit, roots)
from ._setops import intersect1d, union1d, setdiff1d, setxor1d
# ---- names added with JAX's numpy coverage (index tricks, windows, shapes, selection,
# math, functional, histograms)
from ._index_tricks import mgrid, ogrid, r_, c_, s_, index_exp, mask_indices
from ._windows import bartlett, blackman, hamming, hanning, kaiser
from ._shapes import (
    atleast_3d, block, dsplit, dstack, hsplit, vsplit, resize, trim_zeros)
from ._searching import (
    put, place, fill_diagonal, histogram_bin_edges, histogram2d, histogramdd)
from ._sorting import partition, argpartition, lexsort, sort_complex
from ._numeric import (
    copy, angle, unwrap, packbits, unpackbits, choose, compress, extract)
from ._reductions import cumulative_sum, cumulative_prod
from ._ufuncs import bitwise_count
from ._polynomial import poly, polydiv
from ._functional import (
    vectorize, apply_along_axis, apply_over_axes, fromfunction, iterable, vecdot, matvec,
    vecmat)
euler_gamma = 0.5772156649015329
# ---- end of the added names
from . import fft, linalg
from .._array_methods import install as _install_array_methods

__all__ = [
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "arccos",
    "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin",
    "argsort", "argwhere", "around", "array", "array_split", "asarray", "astype",
    "atleast_1d", "atleast_2d", "bfloat16", "bincount", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "bool_", "broadcast_arrays", "broadcast_shapes", "broadcast_to", "cbrt", "ceil", "clip",
    "column_stack", "complex128", "complex64", "concatenate", "conj", "conjugate",
    "copysign", "cos", "cosh", "cummax", "cummin", "cumprod", "cumsum", "deg2rad",
    "degrees", "diag", "diagonal", "digitize", "divide", "divmod", "dot", "dtype", "e",
    "einsum", "empty", "empty_like", "equal", "exp", "exp2", "expand_dims", "expm1",
    "eye", "fft", "finfo", "flatnonzero", "flip", "fliplr", "flipud", "float16", "float32",
    "float64", "float_power", "floor", "floor_divide", "fmod", "full", "full_like", "geomspace",
    "greater", "greater_equal", "histogram", "hstack", "hypot", "identity", "iinfo",
    "imag", "inf", "inner", "int16", "int32", "int64", "int8", "invert", "isfinite",
    "isinf", "isnan", "left_shift", "less", "less_equal", "linalg", "linspace", "log",
    "log10", "log1p", "log2", "logaddexp",
    "logspace", "logical_and", "logical_not", "logical_or",
    "logical_xor", "matmul", "max", "maximum", "mean", "min", "minimum", "mod",
    "moveaxis", "multiply", "nan", "ndim", "negative", "newaxis", "nextafter",
    "nonzero", "not_equal", "ones", "ones_like", "outer", "pad", "pi", "pow", "power",
    "prod", "ptp", "put_along_axis", "rad2deg", "radians", "ravel", "real",
    "reciprocal", "remainder", "repeat", "reshape", "result_type", "right_shift",
    "roll", "round", "rsqrt", "searchsorted", "shape", "sign", "signbit", "sin", "sinh",
    "size", "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract",
    "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile",
    "trace", "transpose", "tri", "tril", "triu", "true_divide", "trunc", "uint16",
    "uint32", "uint64", "uint8", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "var", "vdot", "vstack", "where", "zeros",
    "zeros_like",
    "select", "piecewise", "append", "insert", "delete", "interp", "diff", "ediff1d",
    "trapezoid", "gradient", "isclose", "allclose", "array_equal", "array_equiv", "isin",
    "isposinf", "isneginf", "isreal", "iscomplex", "isscalar", "iscomplexobj", "isrealobj",
    "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
    "nanargmin", "nancumsum", "nancumprod", "count_nonzero", "quantile", "nanquantile",
    "percentile", "nanpercentile", "median", "nanmedian", "average", "cov", "corrcoef",
    "diagflat", "rot90", "rollaxis", "permute_dims", "matrix_transpose", "unstack", "concat",
    "meshgrid", "indices", "ix_", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "diag_indices", "diag_indices_from", "unravel_index",
    "ravel_multi_index", "kron", "cross", "vander", "convolve", "correlate", "polyval",
    "polyadd", "polysub", "polymul", "polyder", "polyint", "polyfit", "roots", "acos", "acosh",
    "asin", "asinh", "atan", "atanh", "atan2", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift",
    "fabs", "fmax", "fmin", "rint", "positive", "heaviside", "frexp", "ldexp", "modf", "gcd",
    "lcm", "sinc", "logaddexp2", "nan_to_num", "spacing", "i0", "intersect1d", "union1d",
    "setdiff1d", "setxor1d", "bool", "double", "single", "cdouble", "csingle", "int_",
    "uint", "float_", "complex_", "generic", "number", "integer", "signedinteger",
    "unsignedinteger", "inexact", "floating", "complexfloating", "character", "flexible",
    "can_cast", "promote_types", "issubdtype", "isdtype"]
__all__ += [  # the names added with JAX's numpy coverage (the block above)
    "mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "mask_indices", "bartlett", "blackman",
    "hamming", "hanning", "kaiser", "atleast_3d", "block", "dsplit", "dstack", "hsplit",
    "vsplit", "resize", "trim_zeros", "put", "place", "fill_diagonal", "histogram_bin_edges",
    "histogram2d", "histogramdd", "partition", "argpartition", "lexsort", "sort_complex",
    "copy", "angle", "unwrap", "packbits", "unpackbits", "choose", "compress", "extract",
    "cumulative_sum", "cumulative_prod", "bitwise_count", "poly", "polydiv", "vectorize",
    "apply_along_axis", "apply_over_axes", "fromfunction", "iterable", "vecdot", "matvec",
    "vecmat", "euler_gamma"]

_install_array_methods()
