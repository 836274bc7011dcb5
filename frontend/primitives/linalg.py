"""dot_general: the one contraction primitive behind dot, matmul, tensordot and einsum;
cholesky: the one factorization StableHLO has an op for; triangular_solve, which its
derivative needs; lu, LAPACK's getrf on CPU, behind solve, inv, det and slogdet."""
from __future__ import annotations

import functools

import numpy as np

from .. import ad, core, dtypes
from ..batching import axis_size, batch_at, not_mapped, shifted
from ..core import type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define
from .elementwise import (_complex_dtype, _real_dtype, add, conj, convert_element_type, div,
                          eq, ge, le, lower_conj, mul, neg, real, select, sub)
from .shape_ops import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, pad,
                        slice as slice_, squeeze, transpose)

# dot_general[dimension_numbers=((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))]
# Result axes: batch, then lhs free axes, then rhs free axes (XLA's order).
def _dot_general_shape(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general needs operands of one dtype, got {lhs} and {rhs}")
    if len(lc) != len(rc) or len(lb) != len(rb) or any(
            lhs.shape[a] != rhs.shape[b] for a, b in zip(lc + lb, rc + rb)):
        raise TypeError(f"dot_general: contracting/batch dimensions {dimension_numbers} do not "
                        f"match between {lhs} and {rhs}")
    lhs_free = [n for i, n in enumerate(lhs.shape) if i not in lc and i not in lb]
    rhs_free = [n for i, n in enumerate(rhs.shape) if i not in rc and i not in rb]
    shape = tuple(lhs.shape[i] for i in lb) + tuple(lhs_free) + tuple(rhs_free)
    return ArrayType(shape, lhs.dtype, lhs.weak and rhs.weak)


def _dims(name, dims):
    return f"{name} = [{', '.join(map(str, dims))}]" if dims else None


def _dot_general_lowering(ctx, eqn, lhs, rhs):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    fields = [f for f in (_dims("lhs_batching_dimensions", lb), _dims("rhs_batching_dimensions", rb),
                          _dims("lhs_contracting_dimensions", lc),
                          _dims("rhs_contracting_dimensions", rc)) if f]
    return ctx.generic("stablehlo.dot_general", [lhs, rhs], [a.type for a in eqn.inputs],
                       [eqn.outputs[0].type],
                       {"dot_dimension_numbers": f"#stablehlo.dot<{', '.join(fields)}>"})


def _dot_general_batch(values, dims, *, dimension_numbers):
    """Both operands batched: their batch axes pair up as the first batch dimension.
    One batched: its batch axis is one more free axis, which keeps its place among the
    result's axes from that operand."""
    (lhs, rhs), (dl, dr) = values, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def free_before(d, contracting, batch):
        return sum(i not in contracting and i not in batch for i in range(d))

    if dl is not not_mapped and dr is not not_mapped:
        return [dot_general(lhs, rhs, ((shifted(lc, dl), shifted(rc, dr)),
                                       ((dl,) + shifted(lb, dl), (dr,) + shifted(rb, dr))))], [0]
    if dr is not_mapped:
        return [dot_general(lhs, rhs, ((shifted(lc, dl), rc), (shifted(lb, dl), rb)))], \
            [len(lb) + free_before(dl, lc, lb)]
    lhs_free = type_of(lhs).ndim - len(lc) - len(lb)
    return [dot_general(lhs, rhs, ((lc, shifted(rc, dr)), (lb, shifted(rb, dr))))], \
        [len(lb) + lhs_free + free_before(dr, rc, rb)]


def _dot_general_jvp(primals, tangents, *, dimension_numbers):
    """Bilinear: dot(tx, y) + dot(x, ty), skipping zero tangents."""
    (x, y), (tx, ty) = primals, tangents
    out = dot_general_p.bind(x, y, dimension_numbers=dimension_numbers)
    terms = [dot_general_p.bind(a, b, dimension_numbers=dimension_numbers)
             for a, b, t in ((tx, y, tx), (x, ty, ty)) if not ad.is_zero(t)]
    return [out], [terms[0] if len(terms) == 1 else add(*terms)]


def _remaining(n, *removed):
    return [i for i in range(n) if not any(i in r for r in removed)]


def _dot_general_ct_lhs(g, x, y, dimension_numbers, swap_ans=False):
    """The cotangent of dot_general's lhs x: g contracted with y over y's free axes, then
    x's axes put back in order (JAX's transpose rule), by the operand order that needs
    no transpose when there is one (x @ w's cotangent for w is dot(x, g))."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(type_of(x).ndim, x_contract, x_batch)
    y_kept = _remaining(type_of(y).ndim, y_contract, y_batch)
    nb = len(x_batch)
    first, second = (y_kept, x_kept) if swap_ans else (x_kept, y_kept)
    ans_y_start = nb + (0 if swap_ans else len(first))
    ans_y = tuple(range(ans_y_start, ans_y_start + len(y_kept)))
    dims = ((ans_y, tuple(y_kept)), (tuple(range(nb)), tuple(y_batch)))
    x_contract_by_y = [x_contract[i] for i in sorted(range(len(y_contract)),
                                                     key=lambda i: y_contract[i])]
    order = list(x_batch) + x_kept + x_contract_by_y
    if order != sorted(order) and list(x_batch) + x_contract_by_y + x_kept == sorted(order):
        (g_c, y_c), (g_b, y_b) = dims  # y first puts x's axes in order: no transpose
        return dot_general_p.bind(y, g, dimension_numbers=((y_c, g_c), (y_b, g_b)))
    out_axes = sorted(range(len(order)), key=lambda i: order[i])
    return transpose(dot_general_p.bind(g, y, dimension_numbers=dims), out_axes)


@ad.takes_needed
def _dot_general_vjp(cts, primals, outs, *, dimension_numbers, needed):
    (x, y), g = primals, cts[0]
    (xc, yc), (xb, yb) = dimension_numbers
    return [_dot_general_ct_lhs(g, x, y, dimension_numbers) if needed[0] else None,
            _dot_general_ct_lhs(g, y, x, ((yc, xc), (yb, xb)), swap_ans=True)
            if needed[1] else None]


dot_general_p = define("dot_general", shape=_dot_general_shape, lower=_dot_general_lowering,
                       jvp=_dot_general_jvp, vjp=_dot_general_vjp,
                       batch=_dot_general_batch, linear="each")


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """JAX's lax.dot_general. `preferred_element_type` (the result's dtype, which XLA
    accumulates in) converts the operands to it first: the same products, summed in
    that type. `precision` is a hint XLA CPU does not read; it is taken and left."""
    if preferred_element_type is not None:
        want = dtypes.canonicalize(preferred_element_type)
        lhs, rhs = (x if type_of(x).dtype == want else convert_element_type(x, want)
                    for x in (lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    return dot_general_p.bind(lhs, rhs, dimension_numbers=(
        (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Matrix/vector product contracting lhs's last axis with rhs's first."""
    return dot_general(lhs, rhs, (((type_of(lhs).ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


# cholesky: the lower-triangular factor L of x = L Lᴴ, over the last two axes. What it
# leaves above the diagonal is unspecified (the wrapper zeroes it) and a matrix that is
# not positive definite gives NaNs. On CPU it lowers as JAX's does there, to LAPACK's
# potrf, so factors (and multivariate normals) are JAX's bit for bit; elsewhere, and for
# f16/bf16 (which JAX's CPU lowering refuses), to stablehlo.cholesky, which XLA expands
# into HLO loops that agree with potrf to rounding only.
def _cholesky_shape(x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or not dtypes.is_inexact(x.dtype):
        raise TypeError(f"cholesky needs square float or complex matrices (..., n, n), got {x}")
    return ArrayType(x.shape, x.dtype, x.weak)




def _layout(minor_to_major) -> str:
    """A custom call's operand or result layout: its dimensions, minor to major."""
    dims = ", ".join(map(str, minor_to_major))
    return f"dense<{f'[{dims}]' if dims else ''}> : tensor<{len(minor_to_major)}xindex>"


def _column_major(rank) -> str:
    """The layout LAPACK reads: each matrix column-major, the batch axes major."""
    return _layout((rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1)))


def _lapack_names(real, complex_=None):
    """LAPACK's kernel names by dtype (some complex routines have names of their own)."""
    return {dt: f"lapack_{c}{routine}_ffi" for dt, c, routine in [
        (dtypes.float32, "s", real), (dtypes.float64, "d", real),
        (dtypes.complex64, "c", complex_ or real), (dtypes.complex128, "z", complex_ or real)]}


_LAPACK_POTRF, _LAPACK_GETRF, _LAPACK_TRSM = map(_lapack_names, ("potrf", "getrf", "trsm"))
_LAPACK_GEQRF, _LAPACK_ORGQR = _lapack_names("geqrf"), _lapack_names("orgqr", "ungqr")


def _lapack_target(table, op, t, ctx):
    """The LAPACK FFI kernel for t's dtype on CPU; elsewhere NotImplementedError at the
    user's line (JAX's GPU lowerings call cuSOLVER, which we do not)."""
    target = table.get(t.dtype) if ctx.platform == "cpu" else None
    if target is None:
        raise NotImplementedError(
            f"{ctx.loc}: {op} of {t} is not supported on platform {ctx.platform!r}: tracehlo "
            f"lowers it to CPU's LAPACK only, for float32, float64, complex64 and complex128")
    return target


def _lapack_call(ctx, target, operands, in_types, out_types, backend_config="{}",
                 matrices=(0,), in_place=True):
    """A typed FFI call of a LAPACK kernel as JAX's module spells it (api_version 1 with
    a dictionary mhlo.backend_config, which XLA imports as API_VERSION_TYPED_FFI):
    column-major matrices, vectors batch-major, the first result written over the
    first operand if in_place. `matrices` are the results that are matrices (the first
    operand is)."""
    def layouts(types, matrices):
        return "[" + ", ".join(
            _column_major(len(t.shape)) if i in matrices else
            _layout(range(len(t.shape) - 1, -1, -1)) for i, t in enumerate(types)) + "]"
    attrs = {
        "api_version": "1 : i32", "backend_config": '""', "call_target_name": f'"{target}"',
        "operand_layouts": layouts(in_types, (0,)), "result_layouts": layouts(out_types, matrices)}
    if in_place:
        attrs["output_operand_aliases"] = (
            "[#stablehlo.output_operand_alias<output_tuple_indices = "
            f"[{'0' if len(out_types) > 1 else ''}], operand_index = 0, "
            "operand_tuple_indices = []>]")
    attrs["mhlo.backend_config"] = backend_config
    attrs["mhlo.frontend_attributes"] = f'{{num_batch_dims = "{len(in_types[0].shape) - 2}"}}'
    return ctx.generic("stablehlo.custom_call", operands, in_types, out_types, attrs)


def _cholesky_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    target = _LAPACK_POTRF.get(t.dtype) if ctx.platform == "cpu" else None
    if target is None:
        return ctx.generic("stablehlo.cholesky", [x], [t], [t], {"lower": "true"})
    return _lapack_cholesky(ctx, target, x, t)


def _lapack_cholesky(ctx, target, x, t):
    """JAX's CPU lowering: XLA's FFI call of potrf on the lower triangle (uplo 'L') of
    column-major matrices, factoring in place, with a status per matrix; a matrix whose
    status is not 0 (not positive definite) becomes NaNs. Its upper triangle keeps x's."""
    status_type = ArrayType(t.shape[:-2], dtypes.int32)
    factor, status = _lapack_call(ctx, target, [x], [t], [t, status_type],
                                  f"{{uplo = {ord('L')} : ui8}}")
    return _nan_unless(ctx, status, "EQ", factor, t)


def _cholesky_batch(values, dims):
    """Each matrix is factored alone: the batch axis goes to the front, among the others."""
    (x,), (d,) = values, dims
    return [cholesky_p.bind(batch_at(x, d, type_of(x).shape[d], 0))], [0]


def _phi(x):
    """The lower triangle of x with its diagonal halved: the part of a Hermitian
    matrix's tangent that a change of its lower factor accounts for."""
    lower = _triangle(x, lower=True)
    return select(eq(_column_minus_row(x), 0), mul(lower, 0.5), lower)


def _cholesky_jvp(primals, tangents):
    """L̇ = L φ(L⁻¹ Ȧ L⁻ᴴ) (Murray 2016, as JAX). The primal keeps what cholesky leaves
    above the diagonal; its tangent is zero there."""
    (x,), (t,) = primals, tangents
    out = cholesky_p.bind(x)
    factor = _triangle(out, lower=True)
    t_factor_h = triangular_solve(factor, ad.instantiate(t), left_side=False, lower=True,
                                  transpose_a=True, conjugate_a=True)
    return [out], [_matmul(factor, _phi(triangular_solve(factor, t_factor_h,
                                                         left_side=True, lower=True)))]


def _cholesky_vjp(cts, primals, outs):
    """The transpose of the JVP's map: Ā = L⁻ᵀ φ(Lᵀ L̄) conj(L)⁻¹."""
    factor = _triangle(outs[0], lower=True)
    inner = triangular_solve(factor, _phi(_matmul(_swap(factor), cts[0])), left_side=True,
                             lower=True, transpose_a=True)
    return [triangular_solve(factor, inner, left_side=False, lower=True, conjugate_a=True)]


cholesky_p = define("cholesky", shape=_cholesky_shape, lower=_cholesky_lowering,
                    jvp=_cholesky_jvp, vjp=_cholesky_vjp, batch=_cholesky_batch)


# triangular_solve[left_side, lower, transpose_a, conjugate_a, unit_diagonal] a, b: x with
# op(a) x = b (left_side) or x op(a) = b, where op is the identity, a transpose, a
# conjugate or both, read from a's lower or upper triangle only (a unit diagonal not
# read at all), as JAX's lax.linalg.triangular_solve. Batch axes lead and are equal.
def _triangular_solve_shape(a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    if (a.ndim < 2 or a.shape[-1] != a.shape[-2] or not dtypes.is_inexact(a.dtype)
            or b.dtype != a.dtype or b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]
            or b.shape[-2 if left_side else -1] != a.shape[-1]):
        raise TypeError(f"triangular_solve needs a float or complex (..., m, m) matrix a and b "
                        f"of its dtype and batch axes, with m {'rows' if left_side else 'columns'}"
                        f" (left_side={left_side}), got {a} and {b}")
    return ArrayType(b.shape, b.dtype, a.weak and b.weak)


def _triangular_solve_lowering(ctx, eqn, a, b):
    """On CPU, as JAX's: LAPACK's trsm through XLA's FFI (XLA's own expansion of
    stablehlo.triangular_solve rounds differently and compiles slowly); elsewhere, and
    for f16/bf16, stablehlo.triangular_solve."""
    p, a_type = eqn.params, eqn.inputs[0].type
    t = eqn.outputs[0].type
    if p["conjugate_a"] and not p["transpose_a"] and dtypes.is_complex(a_type.dtype):
        a = lower_conj(ctx, a, a_type)  # neither conjugates without a transpose
    target = _LAPACK_TRSM.get(t.dtype) if ctx.platform == "cpu" else None
    if target is not None:
        layout = _column_major(len(t.shape))
        flags = {"side": "LR"[not p["left_side"]], "uplo": "UL"[p["lower"]],
                 "trans_x": "N" if not p["transpose_a"] else "C" if p["conjugate_a"] else "T",
                 "diag": "NU"[p["unit_diagonal"]]}
        return ctx.generic("stablehlo.custom_call", [a, b], [a_type, t], [t], {
            "api_version": "1 : i32", "backend_config": '""',
            "call_target_name": f'"{target}"', "operand_layouts": f"[{layout}, {layout}]",
            "result_layouts": f"[{layout}]",
            "output_operand_aliases": "[#stablehlo.output_operand_alias<output_tuple_indices "
                                      "= [], operand_index = 1, operand_tuple_indices = []>]",
            "mhlo.backend_config": "{" + ", ".join(f"{k} = {ord(v)} : ui8"
                                                   for k, v in flags.items()) + "}",
            "mhlo.frontend_attributes": f'{{num_batch_dims = "{len(t.shape) - 2}"}}'})
    transpose = ("NO_TRANSPOSE" if not p["transpose_a"] else
                 "ADJOINT" if p["conjugate_a"] else "TRANSPOSE")
    flag = lambda v: "true" if v else "false"  # noqa: E731
    return ctx.generic("stablehlo.triangular_solve", [a, b], [a_type, t], [t], {
        "left_side": flag(p["left_side"]), "lower": flag(p["lower"]),
        "unit_diagonal": flag(p["unit_diagonal"]),
        "transpose_a": f"#stablehlo<transpose {transpose}>"})




def _triangular_solve_batch(values, dims, **params):
    """One more leading batch axis on both operands."""
    size = axis_size(values, dims)
    a, b = (batch_at(x, d, size, 0) for x, d in zip(values, dims))
    return [triangular_solve_p.bind(a, b, **params)], [0]


def _op_a(x, transpose_a, conjugate_a):
    """op(x) as the solve applies it to a (its own transpose in JAX's convention)."""
    x = _swap(x) if transpose_a else x
    return conj(x) if conjugate_a and dtypes.is_complex(type_of(x).dtype) else x


def _triangle_of_a(x, lower, unit_diagonal):
    """The part of a that the solve reads."""
    return _triangle(x, lower, strict=unit_diagonal)


def _triangular_solve_jvp(primals, tangents, **p):
    """Linear in b; in a, ẋ = -op(a)⁻¹ op(ȧ) x (left side) or -x op(ȧ) op(a)⁻¹."""
    (a, b), (ta, tb) = primals, tangents
    out = triangular_solve_p.bind(a, b, **p)
    terms = [] if ad.is_zero(tb) else [triangular_solve_p.bind(a, tb, **p)]
    if not ad.is_zero(ta):
        g = neg(_op_a(_triangle_of_a(ta, p["lower"], p["unit_diagonal"]), p["transpose_a"],
                      p["conjugate_a"]))
        terms.append(triangular_solve_p.bind(
            a, _matmul(g, out) if p["left_side"] else _matmul(out, g), **p))
    return [out], [terms[0] if len(terms) == 1 else add(*terms)]


@ad.takes_needed
def _triangular_solve_vjp(cts, primals, outs, *, needed, **p):
    """b̄ solves with op(a) transposed; ā = -op(b̄ xᵀ) (left side) or -op(xᵀ b̄) on a's
    triangle."""
    a, out = primals[0], outs[0]
    ct_b = triangular_solve_p.bind(a, cts[0], **dict(p, transpose_a=not p["transpose_a"]))
    if not needed[0]:
        return [None, ct_b]
    m = _matmul(ct_b, _swap(out)) if p["left_side"] else _matmul(_swap(out), ct_b)
    ct_a = _triangle_of_a(neg(_op_a(m, p["transpose_a"], p["conjugate_a"])), p["lower"],
                          p["unit_diagonal"])
    return [ct_a, ct_b if needed[1] else None]


triangular_solve_p = define("triangular_solve", shape=_triangular_solve_shape,
                            lower=_triangular_solve_lowering, jvp=_triangular_solve_jvp,
                            vjp=_triangular_solve_vjp, batch=_triangular_solve_batch,
                            linear=(1,))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """JAX's lax.linalg.triangular_solve signature and defaults (note left_side=False);
    as in JAX, b of one axis fewer than a is a batch of vectors."""
    vector = type_of(b).ndim == type_of(a).ndim - 1
    if vector:
        b = expand_dims(b, (type_of(b).ndim - (not left_side),))
    out = triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a) and dtypes.is_complex(type_of(a).dtype),
        unit_diagonal=bool(unit_diagonal))
    return squeeze(out, (type_of(out).ndim - 1 - (not left_side),)) if vector else out


def _check_matrices(name: str, x):
    """JAX's errors for a factorization's operand: a stack of float or complex matrices."""
    if x.ndim < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={x.shape}")
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"{name} does not accept dtype {x.dtype} at position 0. Accepted dtypes "
                        "at position 0 are subtypes of floating, complexfloating.")


# lu[] x -> (lu, pivots, permutation): P x = L U with partial pivoting over the last two
# axes of (..., m, n) matrices, as JAX's lu_p: L (unit diagonal, not stored) and U packed
# in one matrix; the pivots, the 0-based row swapped in at each of the min(m, n) steps;
# the permutation those swaps make of the m rows (both int32). Only CPU has a lowering:
# LAPACK's getrf, as JAX's.
def _lu_shape(x):
    _check_matrices("lu", x)
    return [ArrayType(x.shape, x.dtype, x.weak),
            ArrayType(x.shape[:-2] + (min(x.shape[-2:]),), dtypes.int32),
            ArrayType(x.shape[:-1], dtypes.int32)]




def _lu_lowering(ctx, eqn, x):
    """JAX's CPU lowering: getrf through XLA's FFI on column-major matrices, in place,
    1-based pivots and a status per matrix; a negative status (a bad argument) gives
    NaNs, a positive one (a zero pivot: singular) keeps the factors, as LAPACK's. The
    permutation is a call of lu_pivots_to_permutation's graph, as JAX lowers it."""
    t, pivots_type, permutation_type = (v.type for v in eqn.outputs)
    status_type = ArrayType(t.shape[:-2], dtypes.int32)
    factors, pivots, status = _lapack_call(ctx, _lapack_target(_LAPACK_GETRF, "lu", t, ctx),
                                           [x], [t], [t, pivots_type, status_type])
    one = ctx.broadcast(ctx.constant(1, dtypes.int32), ArrayType((), dtypes.int32), pivots_type)
    pivots = ctx.op(f"stablehlo.subtract {pivots}, {one} : {tensor_type(pivots_type)}")
    callee = ctx.function(_permutation_graph(pivots_type, t.shape[-2]))
    permutation = ctx.op(f"func.call @{callee}({pivots}) : ({tensor_type(pivots_type)}) -> "
                         f"{tensor_type(permutation_type)}")
    return [_nan_unless(ctx, status, "GE", factors, t), pivots, permutation]


@functools.lru_cache(maxsize=None)
def _permutation_graph(pivots_type, m):
    from ..lax_linalg import lu_pivots_to_permutation
    with core.staging("lu_pivots_to_permutation") as staged:
        pivots = staged.new_input(pivots_type)
        return staged.build([lu_pivots_to_permutation(pivots, m)])


def _nan_unless(ctx, status, direction, x, t, core_rank=2):
    """x where `status direction 0` holds for its matrix (or vector: core_rank 1), NaNs
    elsewhere."""
    batch = t.shape[:len(t.shape) - core_rank]
    status_type, ok_type = ArrayType(batch, dtypes.int32), ArrayType(batch, dtypes.bool_)
    ok = ctx.op(f"stablehlo.compare {direction}, {status}, "
                f"{ctx.constant(0, dtypes.int32, batch)}, SIGNED : ({tensor_type(status_type)}, "
                f"{tensor_type(status_type)}) -> {tensor_type(ok_type)}")
    ok = ctx.broadcast(ok, ok_type, t, range(len(batch)))
    nan = ctx.constant(complex("nan+nanj") if dtypes.is_complex(t.dtype) else float("nan"),
                       t.dtype)
    nan = ctx.broadcast(nan, ArrayType((), t.dtype), t)
    pred_type = ArrayType(t.shape, dtypes.bool_)
    return ctx.op(f"stablehlo.select {ok}, {x}, {nan} : ({tensor_type(pred_type)}, "
                  f"{tensor_type(t)}, {tensor_type(t)}) -> {tensor_type(t)}")


def _lu_batch(values, dims):
    (x,), (d,) = values, dims
    return lu_p.bind(batch_at(x, d, type_of(x).shape[d], 0)), [0, 0, 0]


def _lu_factors(lu):
    """L (m, m) and U (n, n) from the packed factors, padded with the identity where
    m != n, so that both are square and invertible (JAX's _lu_jvp_inner)."""
    *batch, m, n = type_of(lu).shape
    k = min(m, n)
    zero = core.lift(0, type_of(lu).dtype)
    keep = [(0, 0, 0)] * len(batch)
    lower = slice_(lu, (0,) * (len(batch) + 2), (*batch, m, k))
    lower = pad(_triangle(lower, lower=True, strict=True), zero,
                keep + [(0, 0, 0), (0, m - k, 0)])
    upper = slice_(lu, (0,) * (len(batch) + 2), (*batch, k, n))
    upper = pad(_triangle(upper, lower=False), zero, keep + [(0, n - k, 0), (0, 0, 0)])
    return add(lower, _eye_like(lower, 0)), add(upper, _eye_like(upper, k))


def _eye_like(x, start):
    """Ones on x's diagonal from entry `start` on, zeros elsewhere, in x's type."""
    t = type_of(x)
    diagonal = eq(_column_minus_row(x), 0)
    on = select(diagonal, ge(broadcasted_iota(dtypes.int32, t.shape, len(t.shape) - 2), start),
                diagonal)
    return select(on, _ones_like(x), ad.zeros(t))


def _permute_rows(x, permutation):
    """x's rows taken in permutation's order: row i of the result is row perm[i]."""
    from ..numpy import expand_dims, take_along_axis
    return take_along_axis(x, expand_dims(permutation, -1), -2)


def _lu_jvp(primals, tangents):
    """De Hoog, Anderssen and Lukas, as JAX: with M = L⁻¹ P ẋ U⁻¹,
    L̇ = L tril(M, -1) and U̇ = triu(M) U, packed as the factors are."""
    (x,), (t,) = primals, tangents
    lu, pivots, permutation = outs = lu_p.bind(x)
    lower, upper = _lu_factors(lu)
    pt = _permute_rows(ad.instantiate(t), permutation)
    inner = triangular_solve(lower, pt, left_side=True, lower=True, unit_diagonal=True)
    inner = triangular_solve(upper, inner, left_side=False, lower=False)
    t_lu = add(_matmul(lower, _triangle(inner, lower=True, strict=True)),
               _matmul(_triangle(inner, lower=False), upper))
    return outs, [t_lu, ad.Zero.like(pivots), ad.Zero.like(permutation)]


def _lu_vjp(cts, primals, outs):
    """The JVP's map transposed: M̄ = tril(Lᵀ C, -1) + triu(C Uᵀ), then
    x̄ = Pᵀ L⁻ᵀ M̄ U⁻ᵀ."""
    lu, _, permutation = outs
    lower, upper = _lu_factors(lu)
    ct = cts[0]
    inner = add(_triangle(_matmul(_swap(lower), ct), lower=True, strict=True),
                _triangle(_matmul(ct, _swap(upper)), lower=False))
    inner = triangular_solve(upper, inner, left_side=False, lower=False, transpose_a=True)
    inner = triangular_solve(lower, inner, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=True)
    from ..numpy import argsort
    return [_permute_rows(inner, argsort(permutation, axis=-1))]


lu_p = define("lu", shape=_lu_shape, lower=_lu_lowering, multiple_results=True,
              jvp=_lu_jvp, vjp=_lu_vjp, batch=_lu_batch)


# qr[full_matrices] x -> (q, r): x = Q R over the last two axes of (..., m, n) matrices,
# Q with orthonormal columns ((m, m) if full_matrices, else (m, min(m, n))), R upper
# triangular, as JAX's qr_p without pivoting. Only CPU has a lowering: LAPACK's geqrf,
# then orgqr (JAX's householder_product) on its reflectors, as JAX's.
def _qr_shape(x, *, full_matrices):
    _check_matrices("qr", x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [ArrayType((*batch, m, k), x.dtype, x.weak), ArrayType((*batch, k, n), x.dtype, x.weak)]


def _qr_lowering(ctx, eqn, x):
    """JAX's _qr_lowering: geqrf; Q from the reflectors (the square head of a wide
    matrix, the factors padded to m columns for a full Q of a tall one); R the upper
    triangle of the factors (their first n rows for a reduced tall one)."""
    t = eqn.inputs[0].type
    q_type, r_type = (v.type for v in eqn.outputs)
    *batch, m, n = t.shape
    k = min(m, n)
    taus_type = ArrayType((*batch, k), t.dtype)
    factors, taus = _lapack_call(ctx, _lapack_target(_LAPACK_GEQRF, "qr", t, ctx), [x], [t],
                                 [t, taus_type])
    head = lambda rows, cols: _lower_slice(ctx, factors, t, (*batch, rows, cols))  # noqa: E731
    if m < n:
        reflectors = head(m, m)
    elif q_type.shape[-1] != n:
        reflectors = ctx.generic("stablehlo.pad", [factors, ctx.constant(0, t.dtype)],
                                 [t, ArrayType((), t.dtype)], [q_type], {
                                     "edge_padding_low": dims_attr([0] * len(t.shape)),
                                     "edge_padding_high": dims_attr([0] * (len(t.shape) - 1)
                                                                    + [m - n]),
                                     "interior_padding": dims_attr([0] * len(t.shape))})
    else:
        reflectors = factors
    q = _lapack_call(ctx, _lapack_target(_LAPACK_ORGQR, "qr", t, ctx), [reflectors, taus],
                     [q_type, taus_type], [q_type])
    r = factors if r_type.shape == t.shape else head(*r_type.shape[-2:])
    return [q, _lower_triu(ctx, r, r_type)]


def _lower_slice(ctx, x, t, limits):
    out = ArrayType(tuple(limits), t.dtype)
    return ctx.generic("stablehlo.slice", [x], [t], [out], {
        "start_indices": dims_attr([0] * len(limits)), "limit_indices": dims_attr(limits),
        "strides": dims_attr([1] * len(limits))})


def _lower_triu(ctx, x, t):
    """x's upper triangle, zeros below (column >= row over the last two axes)."""
    i32 = ArrayType(t.shape[-2:], dtypes.int32)
    rows, cols = (ctx.op(f"stablehlo.iota dim = {d} : {tensor_type(i32)}") for d in (0, 1))
    pred = ArrayType(t.shape[-2:], dtypes.bool_)
    keep = ctx.op(f"stablehlo.compare GE, {cols}, {rows}, SIGNED : ({tensor_type(i32)}, "
                  f"{tensor_type(i32)}) -> {tensor_type(pred)}")
    keep = ctx.broadcast(keep, pred, ArrayType(t.shape, dtypes.bool_),
                         (len(t.shape) - 2, len(t.shape) - 1))
    zero = ctx.broadcast(ctx.constant(0, t.dtype), ArrayType((), t.dtype), t)
    return ctx.op(f"stablehlo.select {keep}, {x}, {zero} : "
                  f"({tensor_type(ArrayType(t.shape, dtypes.bool_))}, {tensor_type(t)}, "
                  f"{tensor_type(t)}) -> {tensor_type(t)}")


def _qr_batch(values, dims, **params):
    (x,), (d,) = values, dims
    return qr_p.bind(batch_at(x, d, type_of(x).shape[d], 0), **params), [0, 0]


def _adjoint(x):
    return conj(_swap(x)) if dtypes.is_complex(type_of(x).dtype) else _swap(x)


def _thin_qr_jvp(q, r, dx):
    """m >= n (J. Townsend's derivation, as JAX): with C = Qᴴ ẋ R⁻¹ and Ω = tril(C, -1)
    - tril(C, -1)ᴴ (+ i Im diag C), Q̇ = Q (Ω - C) + ẋ R⁻¹ and Ṙ = (C - Ω) R."""
    dx_rinv = triangular_solve(r, dx)
    c = _matmul(_adjoint(q), dx_rinv)
    lower = _triangle(c, lower=True, strict=True)
    omega = sub(lower, _adjoint(lower))
    if dtypes.is_complex(type_of(c).dtype):
        imaginary = sub(c, convert_element_type(real(c), type_of(c).dtype))
        omega = add(omega, mul(_eye_like(c, 0), imaginary))
    return add(_matmul(q, sub(omega, c)), dx_rinv), _matmul(sub(c, omega), r)


def _qr_jvp(primals, tangents, *, full_matrices):
    """JAX's qr_jvp_rule, every shape: a wide matrix's square head is a thin QR and the
    rest of R is Qᴴ x; a full Q of a tall matrix extends the thin one (arXiv 2409.13374,
    eqs. 32-33)."""
    (x,), (dx,) = primals, tangents
    q, r = outs = qr_p.bind(x, full_matrices=full_matrices)
    dx = ad.instantiate(dx)
    *batch, m, n = type_of(x).shape
    rank = len(batch) + 2
    cut = lambda v, rows, cols, r0=0, c0=0: slice_(  # noqa: E731
        v, (0,) * (rank - 2) + (r0, c0), (*batch, rows, cols))
    if m < n:
        dq, dr1 = _thin_qr_jvp(q, cut(r, m, m), cut(dx, m, m))
        dr2 = add(_matmul(_adjoint(dq), cut(x, m, n, 0, m)),
                  _matmul(_adjoint(q), cut(dx, m, n, 0, m)))
        return outs, [dq, concatenate([dr1, dr2], rank - 1)]
    q_mn, r_nn = (cut(q, m, n), cut(r, n, n)) if full_matrices else (q, r)
    dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
    if full_matrices and m != n:
        from ..lax_linalg import lu
        from ..numpy.linalg import _lu_solve
        q_nn, q_pn, q_mp = cut(q_mn, n, n), cut(q_mn, m, n, n), cut(q, m, m, 0, n)
        dq_nn, dq_pn = cut(dq, n, n), cut(dq, m, n, n)
        factors, _, permutation = lu(_adjoint(sub(q_nn, _eye_like(q_nn, 0))))
        z_pn_h = _lu_solve(factors, permutation, _adjoint(q_pn))
        z_pn = _adjoint(z_pn_h)
        dq_mp = sub(_matmul(dq, z_pn_h), _matmul(add(q_mn, _matmul(q_mp, z_pn)),
                                                  _adjoint(sub(dq_pn, _matmul(z_pn, dq_nn)))))
        dq = concatenate([dq, dq_mp], rank - 1)
        dr = concatenate([dr, ad.zeros(ArrayType((*batch, m - n, n), type_of(dr).dtype))],
                         rank - 2)
    return outs, [dq, dr]


qr_p = define("qr", shape=_qr_shape, lower=_qr_lowering, multiple_results=True,
              jvp=_qr_jvp, vjp_fwd=ad.vjp_fwd_from_jvp(_qr_jvp), batch=_qr_batch)


# eigh[lower] x -> (v, w): x = V diag(w) Vᴴ for Hermitian (..., n, n) x, reading its lower
# (or upper) triangle; eigenvalues ascending, real; as JAX's eigh_p on CPU (LAPACK's
# syevd/heevd, NaNs where it fails). Only CPU has a lowering.
def _eigh_shape(x, *, lower):
    _check_matrices("eigh", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, "
                         f"n], got shape {x.shape}")
    return [ArrayType(x.shape, x.dtype, x.weak),
            ArrayType(x.shape[:-1], _real_dtype(x.dtype), x.weak)]


_LAPACK_EVD = _lapack_names("syevd", "heevd")


def _eigh_lowering(ctx, eqn, x):
    v_type, w_type = (o.type for o in eqn.outputs)
    status_type = ArrayType(v_type.shape[:-2], dtypes.int32)
    flags = f"{{mode = {ord('V')} : ui8, uplo = {ord('L' if eqn.params['lower'] else 'U')} : ui8}}"
    v, w, status = _lapack_call(ctx, _lapack_target(_LAPACK_EVD, "eigh", v_type, ctx), [x],
                                [v_type], [v_type, w_type, status_type], flags)
    return [_nan_unless(ctx, status, "EQ", v, v_type),
            _nan_unless(ctx, status, "EQ", w, w_type, core_rank=1)]


def _eigh_batch(values, dims, **params):
    (x,), (d,) = values, dims
    return eigh_p.bind(batch_at(x, d, type_of(x).shape[d], 0), **params), [0, 0]


def _eigh_jvp(primals, tangents, *, lower):
    """JAX's rule (nondegenerate perturbation theory), on the symmetrized input as JAX's:
    with F_ij = 1 / (w_j - w_i) off the diagonal (0 on it) and Ȧ' = Vᴴ Ȧ V,
    V̇ = V (F ∘ Ȧ') and ẇ = Re diag Ȧ'."""
    (x,), (t,) = primals, tangents
    v, w = outs = eigh_p.bind(mul(add(x, _adjoint(x)), 0.5), lower=lower)
    dtype = type_of(x).dtype
    w = convert_element_type(w, dtype)
    *batch, n = type_of(w).shape
    shape = (*batch, n, n)
    gaps = sub(broadcast_in_dim(w, shape, (*range(len(batch)), len(batch) + 1)),
               broadcast_in_dim(w, shape, (*range(len(batch)), len(batch))))
    eye = _eye_like(gaps, 0)
    f = sub(div(_ones_like(eye), add(eye, gaps)), eye)
    rotated = _matmul(_matmul(_adjoint(v), ad.instantiate(t)), v)
    diagonal = _diagonal(real(rotated) if dtypes.is_complex(dtype) else rotated)
    return outs, [_matmul(v, mul(f, rotated)), diagonal]


def _diagonal(x):
    """The diagonal of x's last two axes (a masked sum: no gather)."""
    from .reductions import reduce_sum
    n = type_of(x).ndim
    return reduce_sum(select(eq(_column_minus_row(x), 0), x, ad.zeros(type_of(x))), (n - 1,))


eigh_p = define("eigh", shape=_eigh_shape, lower=_eigh_lowering, multiple_results=True,
                jvp=_eigh_jvp, vjp_fwd=ad.vjp_fwd_from_jvp(_eigh_jvp), batch=_eigh_batch)


# svd[full_matrices, compute_uv] x -> (s, u, vt) (or s alone): x = U diag(s) Vᴴ over the
# last two axes, singular values descending and real, as JAX's svd_p on CPU (LAPACK's
# gesdd; NaNs where it fails). Only CPU has a lowering.
def _svd_shape(x, *, full_matrices, compute_uv):
    _check_matrices("svd", x)
    *batch, m, n = x.shape
    k = min(m, n)
    s = ArrayType((*batch, k), _real_dtype(x.dtype), x.weak)
    if not compute_uv:
        return [s]
    return [s, ArrayType((*batch, m, m if full_matrices else k), x.dtype, x.weak),
            ArrayType((*batch, n if full_matrices else k, n), x.dtype, x.weak)]


_LAPACK_GESDD = _lapack_names("gesdd")


def _svd_lowering(ctx, eqn, x):
    p, t = eqn.params, eqn.inputs[0].type
    *batch, m, n = t.shape
    k = min(m, n)
    s_type = ArrayType((*batch, k), _real_dtype(t.dtype))
    wide = m if p["full_matrices"] else k
    u_type = ArrayType((*batch, m, wide), t.dtype)
    vt_type = ArrayType((*batch, n if p["full_matrices"] else k, n), t.dtype)
    if m == 0 or n == 0:  # gesdd fails (bad_alloc): JAX's _empty_svd, identity factors
        eye = lambda rt: ctx.constant(np.eye(*rt.shape[-2:]), rt.dtype, rt.shape)  # noqa: E731
        return [ctx.constant(0, s_type.dtype, s_type.shape)] + (
            [eye(u_type), eye(vt_type)] if p["compute_uv"] else [])
    mode = "N" if not p["compute_uv"] else "A" if p["full_matrices"] else "S"
    status_type = ArrayType(tuple(batch), dtypes.int32)
    _, s, u, vt, status = _lapack_call(
        ctx, _lapack_target(_LAPACK_GESDD, "svd", t, ctx), [x], [t],
        [t, s_type, u_type, vt_type, status_type], f"{{mode = {ord(mode)} : ui8}}",
        matrices=(0, 2, 3))
    out = [_nan_unless(ctx, status, "EQ", s, s_type, core_rank=1)]
    if p["compute_uv"]:
        out += [_nan_unless(ctx, status, "EQ", u, u_type),
                _nan_unless(ctx, status, "EQ", vt, vt_type)]
    return out


def _svd_batch(values, dims, **params):
    (x,), (d,) = values, dims
    outs = svd_p.bind(batch_at(x, d, type_of(x).shape[d], 0), **params)
    return outs, [0] * len(outs)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    """JAX's rule (no full U or V of a non-square matrix, as JAX): with dS = Uᴴ Ȧ V,
    ṡ = Re diag dS, and U̇, V̇ from F_ij = 1 / (s_j² - s_i²) off the diagonal."""
    (x,), (dx,) = primals, tangents
    *batch, m, n = type_of(x).shape
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(core.at_user_line(
            "Singular value decomposition JVP not implemented for full matrices"))
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True)
    dtype = type_of(x).dtype
    v = _adjoint(vt)
    ds_mat = _matmul(_matmul(_adjoint(u), ad.instantiate(dx)), v)
    ds = _diagonal(real(ds_mat) if dtypes.is_complex(dtype) else ds_mat)
    if not compute_uv:
        return [s], [ds]
    k = type_of(s).shape[-1]
    shape = (*batch, k, k)
    lead = tuple(range(len(batch)))
    s_row = broadcast_in_dim(s, shape, (*lead, len(batch) + 1))  # s_j at (i, j)
    s_col = broadcast_in_dim(s, shape, (*lead, len(batch)))      # s_i at (i, j)
    eye = _eye_like(s_row, 0)
    f = sub(div(_ones_like(eye), add(mul(add(s_row, s_col), sub(s_row, s_col)), eye)), eye)
    as_x = lambda y: convert_element_type(y, dtype)  # noqa: E731
    dss = mul(as_x(s_row), ds_mat)
    sds = mul(as_x(s_col), ds_mat)
    s_zero = convert_element_type(eq(s, 0), type_of(s).dtype)
    s_inv = sub(div(_ones_like(s), add(s, s_zero)), s_zero)
    s_inv_mat = mul(eye, broadcast_in_dim(s_inv, shape, (*lead, len(batch) + 1)))
    du_diag = mul(mul(sub(ds_mat, _adjoint(ds_mat)), 0.5), as_x(s_inv_mat))
    du = _matmul(u, add(mul(as_x(f), add(dss, _adjoint(dss))), du_diag))
    dv = _matmul(v, mul(as_x(f), add(sds, _adjoint(sds))))
    s_cols = lambda rows: as_x(broadcast_in_dim(s, (*batch, rows, k),  # noqa: E731
                                                (*lead, len(batch) + 1)))
    if m > n:
        dav = _matmul(ad.instantiate(dx), v)
        du = add(du, div(sub(dav, _matmul(u, _matmul(_adjoint(u), dav))), s_cols(m)))
    if n > m:
        dahu = _matmul(_adjoint(ad.instantiate(dx)), u)
        dv = add(dv, div(sub(dahu, _matmul(v, _matmul(vt, dahu))), s_cols(n)))
    return [s, u, vt], [ds, du, _adjoint(dv)]


def _ones_like(x):
    t = type_of(x)
    return broadcast_in_dim(core.lift(1, t.dtype), t.shape, ())


svd_p = define("svd", shape=_svd_shape, lower=_svd_lowering, multiple_results=True,
               jvp=_svd_jvp, vjp_fwd=ad.vjp_fwd_from_jvp(_svd_jvp), batch=_svd_batch)


# eig[compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs] x ->
# (w, vl?, vr?): eigenvalues and left/right eigenvectors (columns) of general square
# (..., n, n) x, complex, as JAX's eig_p on CPU (LAPACK's geev, each vector of unit norm
# with its largest component real; NaNs where it fails). Only CPU has a lowering.
def _eig_shape(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
               enable_eigvec_derivs):
    _check_matrices("eig", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {x.shape[-2:]}.")
    dtype = _complex_dtype(x.dtype)
    count = compute_left_eigenvectors + compute_right_eigenvectors
    return [ArrayType(x.shape[:-1], dtype, x.weak)] + [ArrayType(x.shape, dtype, x.weak)] * count


_LAPACK_GEEV = _lapack_names("geev")


def _eig_lowering(ctx, eqn, x):
    """JAX's _eig_cpu_lowering: geev (real input: real and imaginary parts of w apart,
    the eigenvectors already complex), then NaNs where its status is not 0."""
    left, right = (eqn.params[f"compute_{side}_eigenvectors"] for side in ("left", "right"))
    t = eqn.inputs[0].type
    w_type, vectors_type = eqn.outputs[0].type, ArrayType(t.shape, eqn.outputs[0].type.dtype)
    real = not dtypes.is_complex(t.dtype)
    status_type = ArrayType(t.shape[:-2], dtypes.int32)
    mode = lambda on: ord("V" if on else "N")  # noqa: E731
    outs = _lapack_call(
        ctx, _lapack_target(_LAPACK_GEEV, "eig", t, ctx), [x], [t],
        [ArrayType(t.shape[:-1], t.dtype)] * (1 + real) + [vectors_type] * 2 + [status_type],
        f"{{compute_left = {mode(left)} : ui8, compute_right = {mode(right)} : ui8}}",
        matrices=(1 + real, 2 + real), in_place=False)
    *w, vl, vr, status = outs
    if real:
        w = [ctx.op(f"stablehlo.complex {w[0]}, {w[1]} : {tensor_type(w_type)}")]
    out = [_nan_unless(ctx, status, "EQ", w[0], w_type, core_rank=1)]
    for on, v in ((left, vl), (right, vr)):
        if on:
            out.append(_nan_unless(ctx, status, "EQ", v, vectors_type))
    return out


def _eig_batch(values, dims, **params):
    (x,), (d,) = values, dims
    outs = eig_p.bind(batch_at(x, d, type_of(x).shape[d], 0), **params)
    return outs, [0] * len(outs)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    """JAX's eig_jvp_rule: ẇ = diag(V⁻¹ Ȧ V); eigenvector derivatives only when opted
    in (they assume distinct eigenvalues, which cannot be checked), as JAX's."""
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(core.at_user_line(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that tracehlo cannot check (see the enable_eigvec_derivs argument to "
            "tracehlo.lax.linalg.eig). Pass enable_eigvec_derivs=True to "
            "tracehlo.lax.linalg.eig to opt in."))
    outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=True,
                      enable_eigvec_derivs=enable_eigvec_derivs)
    w, vr = outs[0], outs[-1]
    da = convert_element_type(ad.instantiate(da), type_of(vr).dtype)
    if not vectors:
        from .reductions import reduce_sum
        return [w], [reduce_sum(mul(_eig_solve(vr, da), _swap(vr)), (type_of(vr).ndim - 1,))]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        primal_out.append(outs[1])
        tangent_out.append(_eig_vec_jvp(conj(w), outs[1], _adjoint(da))[1])
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


def _eig_solve(v, b):
    """v⁻¹ b from v's LU factors (JAX's _solve, whose factors are constants)."""
    from ..lax_linalg import lu
    from ..numpy.linalg import _lu_solve
    factors, _, permutation = lu(v)
    return _lu_solve(factors, permutation, b)


def _eig_vec_jvp(w, v, da):
    """JAX's _eig_vec_jvp (nondegenerate perturbation theory): with P = V⁻¹ Ȧ V and
    F_ij = 1 / (w_j - w_i) off the diagonal, ẇ = diag P and V̇ = V (F ∘ P) + V diag(c),
    c fixing each vector's norm and its largest component's phase as geev does."""
    from .reductions import argmax, reduce_sum
    from .elementwise import abs as abs_, complex as complex_, imag
    vt = type_of(v)
    *batch, n = type_of(w).shape
    lead = tuple(range(len(batch)))
    shape = (*batch, n, n)
    eye = _eye_like(v, 0)
    f = sub(div(_ones_like(eye), sub(add(eye, broadcast_in_dim(w, shape, (*lead, len(batch) + 1))),
                                     broadcast_in_dim(w, shape, (*lead, len(batch))))), eye)
    p = _matmul(_eig_solve(v, da), v)
    u = _matmul(v, mul(f, p))
    rows = vt.ndim - 2
    per_column = lambda y: broadcast_in_dim(y, vt.shape, (*lead, rows + 1))  # noqa: E731
    k = argmax(abs_(v), rows, dtypes.int32)
    mask = convert_element_type(eq(broadcasted_iota(dtypes.int32, vt.shape, rows),
                                   per_column(k)), vt.dtype)
    c = complex_(neg(real(reduce_sum(mul(conj(v), u), (rows,)))),
                 div(neg(imag(reduce_sum(mul(mask, u), (rows,)))),
                     real(reduce_sum(mul(mask, v), (rows,)))))
    return _diagonal(p), add(u, mul(v, per_column(c)))


eig_p = define("eig", shape=_eig_shape, lower=_eig_lowering, multiple_results=True,
               jvp=_eig_jvp, vjp_fwd=ad.vjp_fwd_from_jvp(_eig_jvp), batch=_eig_batch)


# ---------------------------------------------------------------- matrix helpers

def _swap(x):
    """x with its last two axes swapped."""
    n = type_of(x).ndim
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul(x, y):
    """Matrix products over the last two axes, the leading axes batch axes of both."""
    n = type_of(x).ndim
    batch = tuple(range(n - 2))
    return dot_general(x, y, (((n - 1,), (n - 2,)), (batch, batch)))


def _column_minus_row(x):
    """column - row at each position of x's last two axes (0 on the diagonal)."""
    shape = type_of(x).shape
    return sub(broadcasted_iota(dtypes.int32, shape, len(shape) - 1),
               broadcasted_iota(dtypes.int32, shape, len(shape) - 2))


def _triangle(x, lower, strict=False):
    """x's lower (or upper) triangle over its last two axes, zeros elsewhere; strictly
    below (above) the diagonal if strict."""
    offset = _column_minus_row(x)
    inside = le(offset, -int(strict)) if lower else ge(offset, int(strict))
    return select(inside, x, ad.zeros(type_of(x)))
