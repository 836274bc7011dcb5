"""conv_general_dilated: XLA's convolution, behind lax.conv and conv_with_general_padding.
Its derivatives are convolutions too (JAX's transposes: strides and lhs dilation swap
places), and vmap folds the batch axis into the operands' batch or feature dimensions."""
from __future__ import annotations

import operator
from typing import NamedTuple, Sequence

import numpy as np

from .. import ad, dtypes
from ..batching import not_mapped
from ..core import at_user_line, type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define
from .elementwise import _real_dtype, add, convert_element_type
from .shape_ops import reshape, rev, transpose


class ConvDimensionNumbers(NamedTuple):
    """Each operand's axes in the order (batch, feature, spatial...), the kernel's as
    (output feature, input feature, spatial...): JAX's fields, and JAX's own instances
    are taken too (conv_dimension_numbers reads any triple of axis sequences)."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


# conv_general_dilated[window_strides, padding=((lo, hi), ...), lhs_dilation, rhs_dilation,
#   dimension_numbers=(lhs_spec, rhs_spec, out_spec), feature_group_count, batch_group_count]
# The specs are ConvDimensionNumbers as plain tuples, so the IR prints and parses them.
def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _conv_shape(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count):
    """JAX's checks and messages, in its order."""
    if lhs.dtype != rhs.dtype:
        raise TypeError("lax.conv_general_dilated requires arguments to have the same "
                        f"dtypes, got {lhs.dtype}, {rhs.dtype}.")
    if lhs.ndim != rhs.ndim:
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if any(sorted(spec) != list(range(lhs.ndim)) for spec in dimension_numbers):
        raise ValueError(f"conv_general_dilated dimension_numbers {dimension_numbers} are not "
                         f"each a permutation of the {lhs.ndim} axes of its operand")
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}.")
    lhs_features, in_features = lhs.shape[lhs_spec[1]], rhs.shape[rhs_spec[1]]
    out_features = rhs.shape[rhs_spec[0]]
    if lhs_features % feature_group_count:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{lhs_features}.")
    if lhs_features // feature_group_count != in_features:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {lhs_features} // {feature_group_count} != {in_features}.")
    if out_features % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {out_features} is not a "
                         f"multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive "
                         f"integer, got {batch_group_count}.")
    batch = lhs.shape[lhs_spec[0]]
    if batch_group_count > 1 and batch % batch_group_count:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide {batch}.")
    if out_features % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {out_features} is not a "
                         f"multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be "
                         f"> 1, got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")
    n = lhs.ndim - 2
    if len(window_strides) != n:
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {n} and {len(window_strides)}")
    if any(s < 1 for s in window_strides):
        raise ValueError(f"conv_general_dilated window_strides must be positive, "
                         f"got {window_strides}")
    for name, dilation in (("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(dilation) != n:
            raise ValueError(f"conv_general_dilated {name} must have {n} entries, one per "
                             f"spatial dimension, got {dilation}")
        if any(d < 1 for d in dilation):
            raise TypeError(f"All dilations must be positive, got {dilation}.")
    if len(padding) != n:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{n}, got {len(padding)}.")
    lhs_sizes = [_dilate(lhs.shape[a], d) for a, d in zip(lhs_spec[2:], lhs_dilation)]
    window = [_dilate(rhs.shape[a], d) for a, d in zip(rhs_spec[2:], rhs_dilation)]
    padded = [size + lo + hi for size, (lo, hi) in zip(lhs_sizes, padding)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={padding} for lhs_shape[2:]="
                         f"{tuple(lhs.shape[a] for a in lhs_spec[2:])}")
    spatial = [max((p - w) // s + 1, 0) for p, w, s in zip(padded, window, window_strides)]
    out = [0] * lhs.ndim
    for axis, size in zip(out_spec, [batch // batch_group_count, out_features, *spatial]):
        out[axis] = size
    return ArrayType(tuple(out), lhs.dtype, lhs.weak and rhs.weak)


def _labels(spec, batch, feature):
    labels = [""] * len(spec)
    for k, axis in enumerate(spec):
        labels[axis] = batch if k == 0 else feature if k == 1 else str(k - 2)
    return f"[{', '.join(labels)}]"


def _emit_conv(ctx, lhs, rhs, in_types, out_type, p):
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    n = len(p["window_strides"])
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in p["padding"])
    attrs = {"dimension_numbers": f"#stablehlo.conv<{_labels(lhs_spec, 'b', 'f')}x"
                                  f"{_labels(rhs_spec, 'o', 'i')}->{_labels(out_spec, 'b', 'f')}>",
             "window_strides": dims_attr(p["window_strides"]),
             "padding": f"dense<[{pads}]> : tensor<{n}x2xi64>" if n else None,
             "lhs_dilation": dims_attr(p["lhs_dilation"]),
             "rhs_dilation": dims_attr(p["rhs_dilation"]),
             "feature_group_count": f"{p['feature_group_count']} : i64",
             "batch_group_count": f"{p['batch_group_count']} : i64"}
    return ctx.generic("stablehlo.convolution", [lhs, rhs], in_types, [out_type],
                       {k: v for k, v in attrs.items() if v is not None})


def _conv_lowering(ctx, eqn, lhs, rhs):
    """A complex convolution lowers as JAX's does on CPU and GPU: three real ones
    (Gauss's product), as XLA:GPU has none and XLA:CPU's is a slow loop."""
    in_types, out_type = [a.type for a in eqn.inputs], eqn.outputs[0].type
    if not dtypes.is_complex(out_type.dtype) or ctx.platform == "tpu":
        return _emit_conv(ctx, lhs, rhs, in_types, out_type, eqn.params)
    real = [t._replace(dtype=_real_dtype(t.dtype)) for t in in_types]
    out_real = out_type._replace(dtype=_real_dtype(out_type.dtype))

    def part(op, x, t, rt):
        return ctx.op(f"stablehlo.{op} {x} : ({tensor_type(t)}) -> {tensor_type(rt)}")

    def binary(op, a, b, t):
        return ctx.op(f"stablehlo.{op} {a}, {b} : {tensor_type(t)}")

    def conv(a, b):
        return _emit_conv(ctx, a, b, real, out_real, eqn.params)

    x_re, x_im = part("real", lhs, in_types[0], real[0]), part("imag", lhs, in_types[0], real[0])
    y_re, y_im = part("real", rhs, in_types[1], real[1]), part("imag", rhs, in_types[1], real[1])
    k1 = conv(binary("add", x_re, x_im, real[0]), y_re)
    k2 = conv(x_re, binary("subtract", y_im, y_re, real[1]))
    k3 = conv(x_im, binary("add", y_re, y_im, real[1]))
    re, im = binary("subtract", k1, k3, out_real), binary("add", k1, k2, out_real)
    return ctx.op(f"stablehlo.complex {re}, {im} : ({tensor_type(out_real)}, "
                  f"{tensor_type(out_real)}) -> {tensor_type(out_type)}")


def _conv_jvp(primals, tangents, **params):
    """Bilinear: conv(t_lhs, rhs) + conv(lhs, t_rhs), skipping zero tangents."""
    (x, y), (tx, ty) = primals, tangents
    out = conv_general_dilated_p.bind(x, y, **params)
    terms = [conv_general_dilated_p.bind(a, b, **params)
             for a, b, t in ((tx, y, tx), (x, ty, ty)) if not ad.is_zero(t)]
    return [out], [terms[0] if len(terms) == 1 else add(*terms)]


def _reshape_axis_into(src, dst, x):
    """x with axis `src` merged into axis `dst` (numbered with `src` removed) as its
    major part."""
    shape = list(type_of(x).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    size = shape.pop(src)
    shape[dst] *= size
    return reshape(x, shape, perm)


def _reshape_axis_out_of(src, size, x):
    """x with axis `src` split into (size, rest)."""
    shape = list(type_of(x).shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return reshape(x, shape)


def _swap(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _vjp_lhs_padding(lhs_sizes, window, strides, out_sizes, padding, lhs_dilation,
                     rhs_dilation):
    """The padding that makes the transposed convolution cover the dilated lhs."""
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(lhs_sizes, window, strides, out_sizes, padding,
                                          lhs_dilation, rhs_dilation):
        before = _dilate(k, rd) - lo - 1
        pads.append((before, _dilate(n, ld) + _dilate(k, rd) - 1 - _dilate(o, s) - before))
    return tuple(pads)


def _vjp_rhs_padding(lhs_sizes, window, strides, out_sizes, padding, lhs_dilation,
                     rhs_dilation):
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(lhs_sizes, window, strides, out_sizes, padding,
                                          lhs_dilation, rhs_dilation):
        pads.append((lo, _dilate(o, s) - _dilate(n, ld) + _dilate(k, rd) - lo - 1))
    return tuple(pads)


def _ct_lhs(g, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
            dimension_numbers, feature_group_count, batch_group_count):
    """g convolved with the spatially reversed kernel, its features swapped: the
    strides become lhs dilation and the lhs dilation strides. Groups move from the
    kernel's output features to its input features."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1],
                                 _reshape_axis_out_of(rhs_spec[0], groups, rhs))
    shape = lambda x, spec: [type_of(x).shape[a] for a in spec[2:]]
    pads = _vjp_lhs_padding(shape(lhs, lhs_spec), shape(rhs, rhs_spec), window_strides,
                            shape(g, out_spec), padding, lhs_dilation, rhs_dilation)
    out = conv_general_dilated_p.bind(
        g, rev(rhs, rhs_spec[2:]), window_strides=lhs_dilation, padding=pads,
        lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=(out_spec, _swap(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1)
    if batch_group_count > 1:
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0],
                                 _reshape_axis_out_of(lhs_spec[1], batch_group_count, out))
    return out


def _ct_rhs(g, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
            dimension_numbers, feature_group_count, batch_group_count):
    """lhs convolved with g, batch and features swapped on both: the strides become
    rhs dilation. Feature groups become batch groups and batch groups feature groups."""
    if type_of(g).size == 0:  # no window to form: a zero cotangent
        return ad.Zero.like(rhs)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    shape = lambda x, spec: [type_of(x).shape[a] for a in spec[2:]]
    pads = _vjp_rhs_padding(shape(lhs, lhs_spec), shape(rhs, rhs_spec), window_strides,
                            shape(g, out_spec), padding, lhs_dilation, rhs_dilation)
    return conv_general_dilated_p.bind(
        lhs, g, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=(_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count)


@ad.takes_needed
def _conv_vjp(cts, primals, outs, *, needed, **params):
    (x, y), g = primals, cts[0]
    return [_ct_lhs(g, x, y, **params) if needed[0] else None,
            _ct_rhs(g, x, y, **params) if needed[1] else None]


def _conv_batch(values, dims, **params):
    """As JAX's rule: a batched lhs alone folds its batch axis into the batch dimension
    (into each batch group's), a batched rhs alone into the output features (into
    each group's), and both together become that many more feature groups (or batch
    groups)."""
    (lhs, rhs), (dl, dr) = values, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    groups, batch_groups = params["feature_group_count"], params["batch_group_count"]
    bind = conv_general_dilated_p.bind
    if dl is not not_mapped and dr is not not_mapped:
        size = type_of(lhs).shape[dl]
        rhs = _reshape_axis_into(dr, rhs_spec[0], rhs)
        if batch_groups > 1:
            lhs = _reshape_axis_into(dl, lhs_spec[0], lhs)
            params = dict(params, batch_group_count=batch_groups * size)
        else:
            lhs = _reshape_axis_into(dl, lhs_spec[1], lhs)
            params = dict(params, feature_group_count=groups * size)
        return [_reshape_axis_out_of(out_spec[1], size, bind(lhs, rhs, **params))], \
            [out_spec[1]]
    if dr is not_mapped:
        size = type_of(lhs).shape[dl]
        if batch_groups > 1:  # (groups, n, batch / groups): each group's batch takes n
            lhs = _reshape_axis_out_of(lhs_spec[0] + (dl <= lhs_spec[0]), batch_groups, lhs)
            lhs = _reshape_axis_into(dl + (lhs_spec[0] < dl), lhs_spec[0] + 1, lhs)
            lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], lhs)
        else:
            lhs = _reshape_axis_into(dl, lhs_spec[0], lhs)
        return [_reshape_axis_out_of(out_spec[0], size, bind(lhs, rhs, **params))], \
            [out_spec[0]]
    size = type_of(rhs).shape[dr]
    if groups == batch_groups == 1:
        rhs = _reshape_axis_into(dr, rhs_spec[0], rhs)
        return [_reshape_axis_out_of(out_spec[1], size, bind(lhs, rhs, **params))], \
            [out_spec[1]]
    # (groups, n, features / groups): each group's output features take n
    count = max(groups, batch_groups)
    rhs = _reshape_axis_out_of(rhs_spec[0] + (dr <= rhs_spec[0]), count, rhs)
    rhs = _reshape_axis_into(dr + (rhs_spec[0] < dr), rhs_spec[0] + 1, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], rhs)
    out = _reshape_axis_out_of(out_spec[1], count, bind(lhs, rhs, **params))
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return [_reshape_axis_into(out_spec[1], out_spec[1] + 1, out)], [out_spec[1]]


conv_general_dilated_p = define("conv_general_dilated", shape=_conv_shape,
                                lower=_conv_lowering, jvp=_conv_jvp, vjp=_conv_vjp,
                                batch=_conv_batch, linear="each")


def conv_general_permutations(dimension_numbers):
    """The ConvDimensionNumbers of a string triple such as ("NHWC", "HWIO", "NHWC"):
    spatial axes are ordered as the kernel's string orders their letters."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = ("N", "C"), ("O", "I"), ("N", "C")
    for i, (a, b) in enumerate(pairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError("convolution dimension_numbers elements must each have the same "
                        f"set of spatial characters, got {tuple(dimension_numbers)}.")

    def perm(spec, pair):
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                         key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, pairs))


def _is_spec(spec):
    return not isinstance(spec, str) and all(
        isinstance(a, (int, np.integer)) for a in spec)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """JAX's: None (NCHW, OIHW, NCHW for any rank), a string triple, or
    ConvDimensionNumbers (ours or JAX's: any triple of axis sequences)."""
    if isinstance(dimension_numbers, (list, tuple)) and len(dimension_numbers) == 3 and all(
            _is_spec(s) for s in dimension_numbers):
        return ConvDimensionNumbers(*(tuple(map(int, s)) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(s)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) pads for "SAME" (odd extra at the end), "SAME_LOWER" (at the start)
    or "VALID" (none)."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def _ints(name, values):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"conv_general_dilated {name} must be a sequence of integers, "
                        f"got {values}") from None


def _int(name, value):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"conv_general_dilated {name} must be an integer, got {value!r}"
                        ) from None


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """JAX's lax.conv_general_dilated. `preferred_element_type` converts the operands
    first, as dot_general does; `precision` is a hint XLA CPU does not read."""
    lt, rt = type_of(lhs), type_of(rhs)
    try:
        dnums = conv_dimension_numbers(lt.shape, rt.shape, dimension_numbers)
        n = len(dnums.rhs_spec) - 2
        window_strides = _ints("window_strides", window_strides)
        groups = {name: _int(name, count) for name, count in (
            ("feature_group_count", feature_group_count),
            ("batch_group_count", batch_group_count))}
        lhs_dilation = (1,) * n if lhs_dilation is None else _ints("lhs_dilation", lhs_dilation)
        rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation", rhs_dilation)
        if isinstance(padding, str):
            if any(d != 1 for d in lhs_dilation):
                raise ValueError(
                    "String padding is not implemented for transposed convolution using "
                    "this op. Please either exactly specify the required padding or use "
                    "conv_transpose.")
            window = [_dilate(rt.shape[a], d) for a, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
            padding = padtype_to_pads([lt.shape[a] for a in dnums.lhs_spec[2:]], window,
                                      window_strides, padding)
        else:
            try:
                padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
            except (ValueError, TypeError) as e:
                raise ValueError("padding argument to conv_general_dilated should be a string "
                                 f"or a sequence of (low, high) pairs, got {padding}") from e
    except (TypeError, ValueError, RuntimeError) as e:
        raise type(e)(at_user_line(str(e))) from None
    if preferred_element_type is not None:
        want = dtypes.canonicalize(preferred_element_type)
        lhs, rhs = (x if type_of(x).dtype == want else convert_element_type(x, want)
                    for x in (lhs, rhs))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=tuple(padding),
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=tuple(dnums),
        **groups)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """JAX's padding of a transposed convolution's dilated input, for a window of k
    and a stride of s, such that "SAME" gives s times the input size."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        raise ValueError("Padding mode must be `SAME` or `VALID`.")
    return low, total - low


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """JAX's lax.conv_transpose: the lhs dilated by the strides, then convolved (the
    gradient of a strided convolution when `transpose_kernel`, which flips the kernel's
    window and swaps its feature axes). Its layouts default to channels last."""
    lt, rt = type_of(lhs), type_of(rhs)
    try:
        if lt.ndim != rt.ndim or lt.ndim < 2:
            raise ValueError("conv_transpose needs lhs and rhs of one rank, at least 2, "
                             f"got {lt.shape} and {rt.shape}")
        if dimension_numbers is None:
            if lt.ndim not in _TRANSPOSE_LAYOUTS:
                raise ValueError("No 4+ dimensional dimension_number defaults.")
            dimension_numbers = _TRANSPOSE_LAYOUTS[lt.ndim]
        dnums = conv_dimension_numbers(lt.shape, rt.shape, dimension_numbers)
        n = lt.ndim - 2
        strides = _ints("strides", strides)
        rhs_dilation = (1,) * n if rhs_dilation is None else _ints("rhs_dilation", rhs_dilation)
        if isinstance(padding, str):
            window = [_dilate(rt.shape[a], d) for a, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
            padding = [_transpose_padding(k, s, padding) for k, s in zip(window, strides)]
    except (TypeError, ValueError) as e:
        raise type(e)(at_user_line(str(e))) from None
    if transpose_kernel:
        o, i = dnums.rhs_spec[:2]
        permutation = list(range(rt.ndim))
        permutation[o], permutation[i] = i, o
        rhs = transpose(rev(rhs, dnums.rhs_spec[2:]), tuple(permutation))
    return conv_general_dilated(lhs, rhs, (1,) * n, padding, strides, rhs_dilation, dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
