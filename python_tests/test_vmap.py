"""vmap: every primitive's batching rule against a Python loop over the batch, and
vmap's API (pytree in_axes/out_axes, axis_size, nesting, jit either side, errors as
JAX words them, with jax.vmap as the oracle for the messages).

The table has one row per primitive (or per case of one): a function of one example's
operands. Each row runs with in_axes 0, 1, -1, mixed and None per operand, all rows of
one family (and dtype) traced into one jitted function that also stacks the
per-example results of a Python loop, so a family costs one compile.
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import jax.tree_util as tree_util
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import core, lax
from tracehlo.batching import batch_rules
from tracehlo.ad_checkpoint import checkpoint_name
from tracehlo.primitives.indexing import scatter_by_dims
from tracehlo.primitives.linalg import triangular_solve
from tracehlo.primitives.windowed import select_and_gather_add_p, select_and_scatter_add_p

from numpy_helpers import JAX_RELEASE

B = 3  # the batch size; example shapes avoid 3, so a wrong axis cannot pass unseen


def f32(*shape, lo=-1.0, hi=1.0):
    return lambda rng: rng.uniform(lo, hi, shape).astype(np.float32)


def i32(*shape, lo=-8, hi=8):
    return lambda rng: rng.integers(lo, hi, shape, dtype=np.int32)


def u8(*shape):
    return lambda rng: rng.integers(0, 256, shape, dtype=np.uint8)


def boolean(*shape):
    return lambda rng: rng.random(shape) < 0.5


def c64(*shape):
    return lambda rng: (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
                        ).astype(np.complex64)


def distinct(n, k, *trailing):
    """k distinct indices below n (a scatter with 'set' must not write one place twice)."""
    return lambda rng: rng.permutation(n)[:k].astype(np.int32).reshape((k,) + trailing)


class Row(NamedTuple):
    name: str          # the primitive's name, then "/case" if it has several rows
    family: str        # rows of one family run in one compiled function
    fn: Callable       # of one example's operands
    args: list         # one generator of an example's operand per argument


def unary(name, fn, gen=f32(2, 4), family="unary"):
    return Row(name, family, fn, [gen])


X = f32(2, 4)
POS = f32(2, 4, lo=0.1, hi=0.9)
dn_matmul = (((1,), (0,)), ((), ()))
inner = tracehlo.jit(lambda a, b: (tnp.tanh(a) * b, a - b))


def custom_calls(x, y):
    """A custom_jvp and a custom_vjp of x closing over y: where vmap batches y only, the
    staged custom call equation meets it, with y as a closed-over operand."""
    @tracehlo.custom_jvp
    def scaled_sin(a):
        return tnp.sin(a) * y
    scaled_sin.defjvp(lambda p, t: (scaled_sin(p[0]), tnp.cos(p[0]) * y * t[0]))

    @tracehlo.custom_vjp
    def scaled(a):
        return a * y
    scaled.defvjp(lambda a: (a * y, None), lambda r, g: (g * y,))
    return scaled_sin(x), scaled(x)


ROWS = [
    # elementwise, one operand
    unary("neg", lax.neg), unary("abs", lax.abs), unary("floor", lax.floor),
    unary("ceil", lax.ceil), unary("exp", lax.exp), unary("log", lax.log, POS),
    unary("log1p", lax.log1p), unary("expm1", lax.expm1), unary("sqrt", lax.sqrt, POS),
    unary("rsqrt", lax.rsqrt, POS), unary("cbrt", lax.cbrt),
    unary("integer_pow", lambda x: lax.integer_pow(x, 3) + lax.integer_pow(x, -2), POS), unary("sin", lax.sin),
    unary("cos", lax.cos), unary("tan", lax.tan), unary("tanh", lax.tanh),
    unary("logistic", lax.logistic), unary("asin", lax.asin), unary("acos", lax.acos),
    unary("atan", lax.atan), unary("sinh", lax.sinh), unary("cosh", lax.cosh),
    unary("asinh", lax.asinh), unary("acosh", lax.acosh, f32(2, 4, lo=1.1, hi=3.0)),
    unary("atanh", lax.atanh), unary("erf", lax.erf), unary("erfc", lax.erfc),
    unary("erf_inv", lax.erf_inv), unary("lgamma", lax.lgamma, POS),
    unary("digamma", lax.digamma, POS), unary("exp2", lax.exp2), unary("sign", lax.sign),
    unary("round", lambda x: lax.round(x * 4)), unary("stop_gradient", lax.stop_gradient),
    unary("name", lambda x: checkpoint_name(x, "h")),
    unary("is_finite", lambda x: lax.is_finite(lax.log(x))),
    # elementwise, several operands; rank-0 operands broadcast against the others
    Row("add", "binary", lax.add, [X, X]), Row("sub", "binary", lax.sub, [X, X]),
    Row("mul", "binary", lax.mul, [X, X]),
    Row("mul/scalar", "binary", lax.mul, [X, f32()]),
    Row("div", "binary", lax.div, [X, POS]), Row("rem", "binary", lax.rem, [X, POS]),
    Row("pow", "binary", lax.pow, [POS, X]), Row("max", "binary", lax.max, [X, X]),
    Row("min", "binary", lax.min, [X, X]), Row("atan2", "binary", lax.atan2, [X, X]),
    Row("nextafter", "binary", lax.nextafter, [X, X]),
    Row("polygamma", "binary", lax.polygamma,
        [lambda rng: rng.integers(0, 4, (2, 4)).astype(np.float32), POS]),
    Row("compare", "binary", lax.gt, [X, X]),
    Row("compare/scalar", "binary", lax.le, [f32(), X]),
    Row("select", "binary", lax.select, [boolean(2, 4), X, X]),
    Row("select/scalar_pred", "binary", lax.select, [boolean(), X, X]),
    Row("select_n", "binary", lax.select_n, [i32(2, 4, lo=0, hi=3), X, X, X]),
    Row("select_n/scalar_which", "binary", lax.select_n, [i32(lo=-1, hi=4), X, X, X, X]),
    Row("reduce_precision", "unary", lambda x: lax.reduce_precision(x, 4, 3), [X]),
    Row("clamp", "binary", lax.clamp, [f32(lo=-1, hi=0), X, f32(lo=0, hi=1)]),
    Row("not", "int", lax.bitwise_not, [i32(2, 4)]),
    Row("population_count", "int", lax.population_count, [i32(2, 4)]),
    Row("and", "int", lax.bitwise_and, [i32(2, 4), i32(2, 4)]),
    Row("or", "int", lax.bitwise_or, [i32(2, 4), i32(2, 4)]),
    Row("xor", "int", lax.bitwise_xor, [i32(2, 4), i32(2, 4)]),
    Row("shift_left", "int", lax.shift_left, [i32(2, 4), i32(2, 4, lo=0, hi=31)]),
    Row("shift_right_arithmetic", "int", lax.shift_right_arithmetic,
        [i32(2, 4), i32(2, 4, lo=0, hi=31)]),
    Row("shift_right_logical", "int", lax.shift_right_logical,
        [i32(2, 4), i32(2, 4, lo=0, hi=31)]),
    Row("div/int", "int", lax.div, [i32(2, 4), i32(2, 4, lo=1, hi=5)]),
    Row("real", "complex", lax.real, [c64(2, 4)]),
    Row("imag", "complex", lax.imag, [c64(2, 4)]),
    Row("conj", "complex", lax.conj, [c64(2, 4)]),
    Row("complex", "complex", lax.complex, [X, X]),
    Row("convert_element_type", "convert", lambda x: lax.convert_element_type(x * 9, np.int32),
        [X]),
    Row("bitcast_convert_type", "convert", lambda x: lax.bitcast_convert_type(x, np.int32),
        [X]),
    Row("bitcast_convert_type/narrower", "convert",
        lambda x: lax.bitcast_convert_type(x, np.uint8), [X]),
    Row("bitcast_convert_type/wider", "convert",
        lambda x: lax.bitcast_convert_type(x, np.uint32), [u8(2, 4)]),
    # reductions
    Row("reduce_sum", "reduce", lambda x: lax.reduce_sum(x, (1,)), [X]),
    Row("reduce_sum/all", "reduce", lambda x: lax.reduce_sum(x, (0, 1)), [X]),
    Row("reduce_prod", "reduce", lambda x: lax.reduce_prod(x, (0,)), [X]),
    Row("reduce_max", "reduce", lambda x: lax.reduce_max(x, (1,)), [X]),
    Row("reduce_min", "reduce", lambda x: lax.reduce_min(x, (0,)), [X]),
    Row("reduce_and", "reduce", lambda x: lax.reduce_and(x, (1,)), [boolean(2, 4)]),
    Row("reduce_or", "reduce", lambda x: lax.reduce_or(x, (0, 1)), [boolean(2, 4)]),
    Row("argmax", "reduce", lambda x: lax.argmax(x, 1), [X]),
    Row("argmin", "reduce", lambda x: lax.argmin(x, 0), [X]),
    Row("cumsum", "reduce", lambda x: lax.cumsum(x, 1), [X]),
    Row("cumprod", "reduce", lambda x: lax.cumprod(x, 0, reverse=True), [X]),
    Row("cummax", "reduce", lambda x: lax.cummax(x, 1, reverse=True), [X]),
    Row("cummin", "reduce", lambda x: lax.cummin(x, 0), [X]),
    Row("cumlogsumexp", "reduce", lambda x: lax.cumlogsumexp(x, 1, reverse=True), [X]),
    # shapes
    Row("broadcast_in_dim", "shape",
        lambda x: lax.broadcast_in_dim(x, (5, 2, 4, 2), (1, 2)), [X]),
    Row("broadcast_in_dim/expand", "shape",
        lambda x: lax.broadcast_in_dim(x, (2, 5, 4), (0, 2)), [f32(2, 1)]),
    Row("reshape", "shape", lambda x: lax.reshape(x, (4, 2)), [X]),
    Row("squeeze", "shape", lambda x: lax.squeeze(x, (0, 2)), [f32(1, 4, 1)]),
    Row("expand_dims", "shape", lambda x: lax.expand_dims(x, (0, 2)), [X]),
    Row("expand_dims/last", "shape", lambda x: lax.expand_dims(x, (2,)), [X]),
    Row("transpose", "shape", lambda x: lax.transpose(x, (2, 0, 1)), [f32(2, 4, 5)]),
    Row("rev", "shape", lambda x: lax.rev(x, (1,)), [X]),
    Row("concatenate", "shape", lambda x, y: lax.concatenate([x, y, x], 1), [X, f32(2, 5)]),
    Row("pad", "shape", lambda x, v: lax.pad(x, v, ((1, 2, 0), (0, -1, 1))), [X, f32()]),
    Row("slice", "shape", lambda x: lax.slice(x, (0, 1), (2, 4), (1, 2)), [X]),
    Row("dynamic_slice", "shape", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)),
        [f32(4, 5), i32(lo=-5, hi=6), i32(lo=-6, hi=7)]),
    Row("dynamic_update_slice", "shape",
        lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        [f32(4, 5), f32(2, 2), i32(lo=-5, hi=6), i32(lo=-6, hi=7)]),
    # indexing, dot, sort, calls
    Row("gather", "gather", lambda x, i: lax.gather(
        x, i, lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4)),
        [f32(5, 4), i32(2, 1, lo=0, hi=5)]),
    Row("gather/batching_dims", "gather", lambda x, i: lax.gather(
        x, i, lax.GatherDimensionNumbers((), (1,), (1,), (0,), (0,)), (1, 1)),
        [X, i32(2, 1, lo=0, hi=4)]),
    Row("gather/fill", "gather", lambda x, i: lax.gather(
        x, i, lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4), mode="fill"),
        [f32(5, 4), i32(2, 1, lo=-2, hi=7)]),
    Row("scatter", "gather", lambda x, i, u: lax.scatter_add(
        x, i, u, lax.ScatterDimensionNumbers((1,), (0,), (0,))),
        [f32(5, 4), i32(2, 1, lo=0, hi=5), X]),
    # an index vector left implicit: StableHLO's form, which JAX's lax.scatter never makes
    Row("scatter/set_implicit_vector", "gather", lambda x, i, u: scatter_by_dims(
        x, i, u, update_window_dims=(1,), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,), index_vector_dim=1), [f32(5, 4), distinct(5, 2), X]),
    Row("scatter/scatter_mul_clip", "gather", lambda x, i, u: lax.scatter_mul(
        x, i, u, lax.ScatterDimensionNumbers((1,), (0,), (0,)), mode="clip"),
        [f32(5, 4), i32(2, 1, lo=-2, hi=7), X]),
    Row("scatter/scatter_min_batching_dims", "gather", lambda x, i, u: lax.scatter_min(
        x, i, u, lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))),
        [X, i32(2, 1, 1, lo=0, hi=4), f32(2, 1)]),
    Row("slice/index_in_dim", "shape", lambda x: lax.index_in_dim(x, -2, 1, False), [X]),
    Row("reshape/collapse", "shape", lambda x: lax.collapse(x, 0, 2), [f32(2, 4, 5)]),
    Row("dot_general", "dot", lambda a, b: lax.dot_general(a, b, dn_matmul),
        [X, f32(4, 5)]),
    Row("dot_general/batch", "dot", lambda a, b: lax.dot_general(
        a, b, (((2,), (1,)), ((0,), (0,)))), [f32(2, 5, 4), f32(2, 4, 5)]),
    Row("dot_general/vector", "dot", lambda a, b: lax.dot_general(
        a, b, (((0,), (0,)), ((), ()))), [f32(4), f32(4)]),
    Row("conv_general_dilated", "dot", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        [f32(2, 4, 5, 2), f32(2, 2, 2, 4)]),
    Row("conv_general_dilated/feature_groups", "dot", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), ((1, 0),), rhs_dilation=(2,), feature_group_count=2),
        [f32(2, 4, 5), f32(4, 2, 2)]),
    Row("conv_general_dilated/batch_groups", "dot", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "VALID", batch_group_count=2), [f32(4, 2, 5), f32(4, 2, 2)]),
    Row("cholesky", "dot", lambda m: tnp.linalg.cholesky(
        tnp.matmul(m, m.T) + 4 * tnp.eye(4, dtype=np.float32)), [f32(4, 4)]),
    Row("triangular_solve", "dot", lambda a, b: triangular_solve(
        a + 4 * tnp.eye(4, dtype=np.float32), b, left_side=True, lower=True),
        [f32(4, 4), f32(4, 2)]),
    Row("triangular_solve/right_transposed", "dot", lambda a, b: triangular_solve(
        a + 4 * tnp.eye(4, dtype=np.float32), b, transpose_a=True), [f32(4, 4), f32(2, 4)]),
    Row("lu", "dot", lambda a: lax.linalg.lu(a), [f32(4, 4)]),
    Row("qr", "dot", lambda a: lax.linalg.qr(a), [f32(4, 2)]),
    Row("eigh", "dot", lambda a: lax.linalg.eigh(a), [f32(4, 4)]),
    Row("svd", "dot", lambda a: lax.linalg.svd(a), [f32(4, 2)]),
    Row("svd/values", "dot", lambda a: lax.linalg.svd(a, compute_uv=False), [f32(2, 4)]),
    Row("qr/wide_reduced", "dot", lambda a: lax.linalg.qr(a, full_matrices=False), [f32(2, 4)]),
    Row("lu/wide", "dot", lambda a: lax.linalg.lu(a), [f32(2, 4)]),
    Row("eig", "dot", lambda a: lax.linalg.eig(a), [f32(4, 4)]),
    Row("fft", "dot", lambda x: lax.fft(x, "rfft", (4,)), [X]),
    Row("fft/irfft", "dot", lambda c: lax.fft(c, "irfft", (2, 4)), [c64(2, 3)]),
    Row("sort", "sort", lambda k, v: lax.sort([k, v], dimension=1, num_keys=1), [X, X]),
    Row("sort/axis0", "sort", lambda k: lax.sort(k, dimension=0), [f32(4, 2)]),
    Row("top_k", "sort", lambda x: lax.top_k(x, 2), [X]),
    Row("top_k/axis0", "sort", lambda x: lax.top_k(x, 2, axis=0), [f32(4, 2)]),
    Row("reduce_window_sum", "window", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (2, 1)), [X]),
    Row("reduce_window_max", "window", lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (2, 2), (1, 1), "SAME"), [X]),
    Row("reduce_window_min", "window", lambda x: lax.reduce_window(
        x, np.inf, lax.min, (1, 3), (1, 2), "VALID"), [X]),
    Row("select_and_gather_add", "window", lambda t, x: select_and_gather_add_p.bind(
        t, x, select_prim="ge", window_dimensions=(2, 2), window_strides=(1, 1),
        padding=((0, 1), (1, 0)), base_dilation=(1, 2), window_dilation=(1, 1)), [X, X]),
    # the operand shared (both batched: test_reduce_window.py's vmap of grad), as XLA CPU
    # takes 0.2 s to compile each select_and_scatter
    Row("select_and_scatter_add", "window", lambda s: select_and_scatter_add_p.bind(
        s, np.arange(8, dtype=np.float32).reshape(2, 4) % 3, select_prim="le",
        window_dimensions=(2, 2), window_strides=(1, 2), padding=((0, 1), (1, 0))),
        [f32(2, 2)]),
    Row("optimization_barrier", "sort", lambda x, y: lax.optimization_barrier((x, y)), [X, X]),
    Row("pjit", "call", lambda x, y: inner(x, y), [X, X]),
    Row("custom_jvp_call", "call", lambda x, y: custom_calls(x, y)[0], [X, X]),
    Row("custom_vjp_call", "call", lambda x, y: custom_calls(x, y)[1], [X, X]),
    # control flow: a per-example predicate and a shared one
    Row("cond", "control", lambda p, x, y: lax.cond(p > 0, lambda a, b: a * b,
                                                    lambda a, b: a - b, x, y), [f32(), X, X]),
    Row("cond/switch", "control", lambda i, x: lax.switch(
        i, [lambda a: a, lambda a: -a, lambda a: a * 2], x), [i32(lo=-1, hi=4), X]),
    Row("while", "control", lambda x, n: lax.while_loop(
        lambda c: c[1] < n, lambda c: (c[0] * 1.5 + 1, c[1] + 1), (x, 0))[0],
        [X, i32(lo=0, hi=4)]),
    Row("scan", "control", lambda c, xs: lax.scan(lambda h, r: (h * r + 1, h - r), c, xs),
        [f32(4), X]),
]

EXEMPT = {"iota": "it has no operands, so it never meets a batched value: its result is "
                  "the same for every example"}


def variants(ranks):
    """in_axes to try: all 0, all 1, all -1, each operand unbatched in turn, mixed.
    Axis 1 of a rank-0 example is its only axis, 0."""
    n = len(ranks)
    out = [(0,) * n, (1,) * n, (-1,) * n]
    if n > 1:
        out += [tuple(None if j == k else 0 for j in range(n)) for k in range(n)]
        out.append(tuple((1, -1, 0)[j % 3] for j in range(n)))
    out = [tuple(a if a is None or a <= r else r for a, r in zip(v, ranks)) for v in out]
    return list(dict.fromkeys(out))


def family_program(rows):
    """vmap of every row under every in_axes, beside the stacked loop over examples."""

    def program(data):
        out = {}
        for row in rows:
            stacked = data[row.name]
            loops = {}  # the loop depends only on which operands are shared
            for axes in variants([x.ndim - 1 for x in stacked]):
                args = [x[0] if a is None else tnp.moveaxis(x, 0, a)
                        for x, a in zip(stacked, axes)]
                key = f"{row.name} in_axes={axes}"
                out[key] = tracehlo.vmap(row.fn, in_axes=axes)(*args)
                shared = tuple(a is None for a in axes)
                if shared not in loops:
                    loops[shared] = tree_util.tree_map(lambda *ys: tnp.stack(ys), *[
                        row.fn(*[x[0] if s else x[i] for x, s in zip(stacked, shared)])
                        for i in range(B)])
                out[key + " loop"] = loops[shared]
        return out
    return program


FAMILIES = sorted({row.family for row in ROWS})


@pytest.mark.parametrize("family", FAMILIES)
def test_batching_rule_matches_a_loop_over_the_batch(family):
    rows = [row for row in ROWS if row.family == family]
    rng = np.random.default_rng(0)
    data = {row.name: [np.stack([gen(rng) for _ in range(B)]) for gen in row.args]
            for row in rows}
    compiled = tracehlo.compile(family_program(rows), (data,), fusion="none")  # faster XLA compile
    tracehlo.verify(compiled.ir)
    results = compiled(data)
    failures = []
    for key in results:
        if key.endswith(" loop"):
            continue
        for got, want in zip(tree_util.tree_leaves(results[key]),
                             tree_util.tree_leaves(results[key + " loop"])):
            try:
                assert got.dtype == want.dtype, (got.dtype, want.dtype)
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
            except AssertionError as e:
                failures.append(f"{key}: {e}")
    assert not failures, "\n".join(failures)


def test_every_primitive_has_a_batching_rule_and_a_row():
    names = set(core.primitives) - set(EXEMPT)
    assert {p.name for p in batch_rules} == names
    assert {row.name.split("/")[0] for row in ROWS} == names


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row_binds_its_primitive(row):
    """A row tests the rule it is named after: its function binds that primitive."""
    example = [gen(np.random.default_rng(0)) for gen in row.args]
    graph = tracehlo.make_ir(row.fn)(*example)
    assert row.name.split("/")[0] in {eqn.prim.name for eqn in graph.eqns}


def test_a_primitive_without_a_rule_is_an_error(monkeypatch):
    from tracehlo.primitives.elementwise import sin_p
    monkeypatch.delitem(batch_rules, sin_p)
    with pytest.raises(NotImplementedError, match=r"test_vmap.py:\d+: vmap has no batching "
                                                  r"rule for sin"):
        tracehlo.vmap(tnp.sin)(np.ones(3, np.float32))


# ---------------------------------------------------------------- the API

A = np.arange(12, dtype=np.float32).reshape(3, 4)
V = np.array([1.0, -2.0, 0.5], np.float32)


def test_eager_vmap_runs_on_concrete_values():
    got = tracehlo.vmap(lambda x, y: tnp.dot(x, y) + 1.0, in_axes=(1, None))(A, V)
    np.testing.assert_allclose(got, A.T @ V + 1.0, rtol=1e-6)


def test_python_control_flow_on_an_unbatched_argument_works():
    def f(x, n):
        return x * 2.0 if n > 0 else -x
    np.testing.assert_allclose(tracehlo.vmap(f, in_axes=(0, None))(A, 1), A * 2)
    np.testing.assert_allclose(tracehlo.vmap(f, in_axes=(0, None))(A, -1), -A)


def test_python_control_flow_on_a_batched_value_is_an_error():
    def f(x):
        return x if tnp.sum(x) > 0 else -x
    with pytest.raises(tracehlo.TracerBoolConversionError,
                       match=r"test_vmap.py:\d+: bool\(\) needs one concrete value, but under "
                             r"vmap this bool\[\] has one value per example"):
        tracehlo.vmap(f)(A)
    with pytest.raises(tracehlo.ConcretizationError, match=r"float\(\) needs one concrete"):
        tracehlo.vmap(lambda x: float(x))(V)


def test_nested_vmap_is_an_outer_operation():
    def f(x, y):
        return tnp.sin(x) * y
    outer = tracehlo.vmap(tracehlo.vmap(f, in_axes=(None, 0)), in_axes=(0, None))
    want = np.sin(V)[:, None] * A[0][None, :]
    np.testing.assert_allclose(outer(V, A[0]), want, rtol=1e-6)
    graph = tracehlo.make_ir(outer)(V, A[0])
    tracehlo.verify(graph)
    np.testing.assert_allclose(tracehlo.jit(outer)(V, A[0]), want, rtol=1e-6)


def test_nested_vmap_closing_over_the_outer_batch():
    def per_row(row):
        return tracehlo.vmap(lambda x: x * tnp.sum(row))(row)
    np.testing.assert_allclose(tracehlo.vmap(per_row)(A), A * A.sum(1, keepdims=True))


def test_nested_vmap_matches_jax_on_the_inner_axis():
    f = lambda x, w: tnp.tanh(x @ w)
    jf = lambda x, w: jnp.tanh(x @ w)
    x = np.random.default_rng(1).standard_normal((2, 4, 5)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    ours = tracehlo.vmap(tracehlo.vmap(f, in_axes=(1, None)), in_axes=(0, None), out_axes=1)
    theirs = jax.vmap(jax.vmap(jf, in_axes=(1, None)), in_axes=(0, None), out_axes=1)
    np.testing.assert_allclose(ours(x, w), theirs(x, w), rtol=1e-5, atol=1e-6)


SCALE = tracehlo.jit(lambda a, k: tnp.cos(a) * k)


def test_vmap_of_jit_is_a_call_of_the_batched_graph():
    graph = tracehlo.make_ir(tracehlo.vmap(SCALE, in_axes=(1, None)))(A, 2.0)
    tracehlo.verify(graph)
    assert [e.prim.name for e in graph.eqns] == ["pjit", "transpose"]
    callee = graph.eqns[0].params["graph"]
    assert [t.shape for t in callee.in_types] == [(3, 4), ()]
    # as JAX's jaxpr: the weak scalar k is made strong before the multiply
    assert [e.prim.name for e in callee.eqns] == ["cos", "convert_element_type", "mul"]
    want = (np.cos(A) * 2).T
    np.testing.assert_allclose(tracehlo.vmap(SCALE, in_axes=(1, None))(A, 2.0), want, rtol=1e-6)
    np.testing.assert_allclose(tracehlo.jit(tracehlo.vmap(SCALE, in_axes=(1, None)))(A, 2.0),
                               want, rtol=1e-6)


def test_a_callee_is_batched_once_per_batch_dims_and_types():
    """So an eager vmap(jit(f)) reuses the executable of the batched call."""
    from tracehlo.batching import batch_graph
    graph = tracehlo.make_ir(lambda a, k: tnp.cos(a) * k)(A[:, 0], 2.0)
    first = batch_graph(graph, [A, np.float32(2)], [1, None])
    assert batch_graph(graph, [A + 1, np.float32(3)], [1, None]) is first
    assert batch_graph(graph, [A, np.float32(2)], [0, None]) is not first
    assert first[1] == [1]


def test_vmap_of_jit_with_a_batched_and_an_unbatched_output():
    f = tracehlo.jit(lambda x, k: (x * k, k + 1.0))
    got, k1 = tracehlo.vmap(f, in_axes=(0, None), out_axes=(0, None))(A, 3.0)
    np.testing.assert_allclose(got, A * 3)
    assert float(k1) == 4.0


def test_jit_of_vmap():
    f = tracehlo.jit(tracehlo.vmap(lambda x: tnp.max(x) - x, in_axes=1, out_axes=-1))
    np.testing.assert_allclose(f(A), A.max(0) - A)


def test_pytree_in_axes_and_out_axes():
    params = {"w": A[0], "b": V}  # w shared, b one per example

    def f(p, x):
        return {"y": p["w"] * x + p["b"], "w": p["w"]}, x.sum()

    out, s = tracehlo.vmap(f, in_axes=({"w": None, "b": 0}, 0),
                           out_axes=({"y": 1, "w": None}, 0))(params, A)
    np.testing.assert_allclose(out["y"], (A[0] * A + V[:, None]).T)
    np.testing.assert_allclose(out["w"], A[0])
    np.testing.assert_allclose(s, A.sum(1))


def test_list_in_axes_and_keyword_arguments_mapped_along_axis_0():
    f = tracehlo.vmap(lambda x, y, *, z: x - y + z, in_axes=[1, None])
    np.testing.assert_allclose(f(A, V[0], z=A.T), A.T - V[0] + A.T)


def test_unbatched_output_is_broadcast_to_out_axes():
    got = tracehlo.vmap(lambda x: (x, V), out_axes=(0, 1))(A)
    np.testing.assert_allclose(got[1], np.broadcast_to(V[:, None], (3, 3)))


def test_unbatched_output_with_out_axes_none_is_returned_as_the_function_returned_it():
    """As in JAX: not lifted to a device array (a NumPy array or a Python number stays
    one, and keeps its identity)."""
    for value in (V, 2.0, 3):
        for M in (tracehlo, jax):
            assert M.vmap(lambda x: value, out_axes=None)(A) is value
            got = M.vmap(lambda x, y: (x * 2.0, y), in_axes=(0, None), out_axes=(0, None))(
                A, value)
            assert got[1] is value
    shared = tnp.ones(3)
    assert tracehlo.vmap(lambda x: shared, out_axes=None)(A) is shared
    inner = tracehlo.vmap(lambda x, y: y, in_axes=(0, None), out_axes=None)
    np.testing.assert_allclose(tracehlo.vmap(inner, in_axes=(None, 0))(A, A), A)


def test_axis_size_without_a_mapped_argument():
    got = tracehlo.vmap(lambda x: x * 2.0, in_axes=None, axis_size=4)(V)
    np.testing.assert_allclose(got, np.broadcast_to(V * 2, (4, 3)))


def test_a_per_example_type_error_names_the_user_line():
    with pytest.raises(TypeError, match=r"test_vmap.py:\d+: add needs operands of one shape "
                                        r"\(or rank 0\), got f32\[4\], f32\[3\]"):
        tracehlo.vmap(lambda x, y: lax.add(x, y))(A, np.ones((3, 3), np.float32))


def test_vmap_takes_jax_s_arguments_in_jax_s_order():
    """axis_name comes before axis_size, as in JAX, so a positional call means the same;
    a bad axis_size or a non-callable is refused when vmap is called, not inside XLA; an
    output that is no array is named as one."""
    got = tracehlo.vmap(lambda x: x * 2.0, None, 0, "i", 4)(V)
    np.testing.assert_allclose(got, jax.vmap(lambda x: x * 2.0, None, 0, "i", 4)(V))
    for bad in (-1, 3.0):
        with pytest.raises(TypeError, match=r"test_vmap.py:\d+: vmap's axis_size must be a "
                                            r"non-negative int"):
            tracehlo.vmap(lambda x: x, in_axes=None, axis_size=bad)(V)
    with pytest.raises(TypeError, match=r"test_vmap.py:\d+: Expected a callable value, got 3"):
        tracehlo.vmap(3)
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):
        tracehlo.vmap(lambda x: x, spmd_axis_name="d")
    with pytest.raises(TypeError, match=r"test_vmap.py:\d+: Output from batched function 's' "
                                        r"with type <class 'str'> is not a valid array type"):
        tracehlo.vmap(lambda x: "s")(V)


def test_key_arrays_are_mapped_along_their_keys_axes():
    """A key array's axes are its keys', not its data's (which has the words last)."""
    import jax.random as jr
    import tracehlo.random as tr

    def shapes(M, R):
        keys = R.split(R.key(0), 3)
        return [M.vmap(lambda k: k, in_axes=-1)(keys).shape,
                M.vmap(R.split, out_axes=-1)(keys).shape,
                M.vmap(lambda k: R.normal(k, (2,)), in_axes=-1, out_axes=-1)(keys).shape]
    assert shapes(tracehlo, tr) == shapes(jax, jr) == [(3,), (2, 3), (2, 3)]
    for M, R in ((jax, jr), (tracehlo, tr)):
        for bad in (lambda: M.vmap(lambda k: k, in_axes=1)(R.split(R.key(0), 3)),
                    lambda: M.vmap(R.split, out_axes=2)(R.split(R.key(0), 3)),
                    lambda: M.vmap(lambda k: k)(R.key(0))):
            with pytest.raises(ValueError, match="axis|rank"):
                bad()


def test_an_empty_batch_gives_empty_results():
    """No example to compute: a batched gather or dynamic slice over an empty batch
    gives an empty result of the right type, as in JAX (a rule's slice of size 1 would
    not fit the empty axis)."""
    empty, no_index = np.zeros((0, 4), np.float32), np.zeros(0, np.int32)

    def cases(M, L, np_):
        return [M.vmap(lambda a, i: a[i])(empty, no_index),
                M.vmap(lambda a, s: L.dynamic_slice(a, (s,), (2,)))(empty, no_index),
                M.jit(M.vmap(lambda a: np_.take_along_axis(a, np_.argsort(a), axis=0)))(empty),
                M.vmap(lambda a: np_.sum(a) + 1)(empty)]
    for got, want in zip(cases(tracehlo, lax, tnp), cases(jax, jax.lax, jnp)):
        assert (got.shape, got.dtype) == (want.shape, want.dtype)


# JAX's messages, read from jax.vmap itself; ours may add the user's line in front.
ERROR_CASES = {
    "inconsistent sizes": (lambda x, y: x + y, {}, (A, np.ones(4, np.float32))),
    "most axes": (lambda x, y, z: x + y, {}, (V, V, np.ones((4, 3), np.float32))),
    "axis_size disagrees": (lambda x: x, {"axis_size": 4}, (V,)),
    "in_axes too long": (lambda x: x, {"in_axes": (0, 1)}, (V,)),
    "rank too small": (lambda x: x, {"in_axes": 1}, (V,)),
    "no mapped argument": (lambda x: x, {"in_axes": None}, (V,)),
    "batched output with out_axes None": (lambda x: (x, x), {"out_axes": (0, None)}, (V,)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_say_what_jax_says(case):
    fn, kwargs, args = ERROR_CASES[case]
    with pytest.raises(ValueError) as theirs:
        jax.vmap(fn, **kwargs)(*args)
    with pytest.raises(ValueError) as ours:
        tracehlo.vmap(fn, **kwargs)(*args)
    ours_text = re.sub(r"^\S+test_vmap.py:\d+: ", "", str(ours.value))
    theirs_text = str(theirs.value)
    if JAX_RELEASE >= (0, 11):  # which ends the in_axes-too-long message with a period
        ours_text, theirs_text = ours_text.rstrip("."), theirs_text.rstrip(".")
    assert ours_text == theirs_text
    assert "test_vmap.py" in str(ours.value)


def test_in_axes_of_a_wrong_type():
    with pytest.raises(TypeError, match=re.escape(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            "positional arguments passed to the function, but got 0.5.")):
        tracehlo.vmap(lambda x: x, in_axes=0.5)
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or"):
        tracehlo.vmap(lambda x: x, out_axes=(0, "a"))


def test_in_axes_not_a_prefix_of_the_arguments():
    with pytest.raises(ValueError, match=re.escape(
            "vmap in_axes specification must be a tree prefix of the corresponding value, "
            "got specification ({'b': 0},) for value tree PyTreeDef(({'a': *},))")):
        tracehlo.vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": V})
    with pytest.raises(ValueError, match=r"vmap out_axes specification must be a tree prefix"):
        tracehlo.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(V)


def test_list_containers_in_in_axes_and_out_axes():
    """A list in the axes is a container of axes, as in JAX."""
    x, y = tracehlo.vmap(lambda p: [p[0] + p[1], p[1]], in_axes=([0, None],),
                         out_axes=[1, None])([A, V[:1]])
    np.testing.assert_allclose(x, (A + V[:1]).T)
    np.testing.assert_allclose(y, V[:1])


# tracehlo.numpy functions under vmap, against jax.numpy under jax.vmap: (fn, in_axes)
# with fn taking the numpy module, then x (5, 4) and i (an int) per example.
NUMPY_CASES = {
    "index": (lambda np_: lambda x, i: x[i], (0, 0)),
    "index_column": (lambda np_: lambda x, i: x[:, i], (1, 0)),
    "at_set": (lambda np_: lambda x, i: x.at[i].set(0.0), (0, 0)),
    "at_add_shared_index": (lambda np_: lambda x, i: x.at[i, 1].add(5.0), (0, None)),
    "argsort_take_along_axis": (lambda np_: lambda x, i: np_.take_along_axis(
        x, np_.argsort(x, axis=1), axis=1), (2, None)),
    "einsum": (lambda np_: lambda x, i: np_.einsum("ij,kj->ik", x, x), (-1, None)),
    "softmax": (lambda np_: lambda x, i: np_.exp(x) / np_.sum(np_.exp(x), -1, keepdims=True),
                (0, None)),
    "where": (lambda np_: lambda x, i: np_.where(x > 0, x, i * 1.0), (1, 0)),
    "pad": (lambda np_: lambda x, i: np_.pad(x, ((1, 0), (0, 2))), (0, None)),
    "roll": (lambda np_: lambda x, i: np_.roll(x, 2, axis=0), (0, None)),
    "mean_var": (lambda np_: lambda x, i: (np_.mean(x, 0), np_.var(x)), (-1, None)),
    "matmul": (lambda np_: lambda x, i: x @ x.T, (0, None)),
    "sort": (lambda np_: lambda x, i: np_.sort(x, axis=0), (2, None)),
    "concatenate": (lambda np_: lambda x, i: np_.concatenate([x, x * 2], axis=1), (0, None)),
    "cumsum_argmax": (lambda np_: lambda x, i: (np_.cumsum(x, 1), np_.argmax(x, 0)), (1, None)),
    "nanmean_median_cov": (lambda np_: lambda x, i: (
        np_.nanmean(x, 0), np_.median(x, axis=1), np_.cov(x)), (1, None)),
    "convolve_polyval_cross": (lambda np_: lambda x, i: (
        np_.convolve(x[0], x[1]), np_.polyval(x[:, 0], x), np_.cross(x[:, :3], x[:, 1:])),
        (1, None)),
    "gcd": (lambda np_: lambda x, i: np_.gcd(i, 6), (0, 0)),
    "diff_select": (lambda np_: lambda x, i: (
        np_.diff(x, axis=0, append=i * 1.0), np_.select([x > 0], [x * 2], i)), (2, 0)),
    "partition_unwrap_vecdot": (lambda np_: lambda x, i: (
        np_.partition(x, 1, axis=0), np_.argpartition(x, 2), np_.unwrap(x * 3, axis=0),
        np_.cumulative_sum(x, axis=1, include_initial=True), np_.vecdot(x, x[::-1])), (1, None)),
}


def test_numpy_functions_under_vmap_match_jax():
    x = np.random.default_rng(3).standard_normal((3, 5, 4)).astype(np.float32)
    i = np.array([1, -1, 3], np.int32)
    ours = tracehlo.jit(lambda x, i: {name: tracehlo.vmap(make(tnp), in_axes=axes)(
        tnp.moveaxis(x, 0, axes[0]), i)
        for name, (make, axes) in NUMPY_CASES.items()})(x, i)
    for name, (make, axes) in NUMPY_CASES.items():
        xa = np.moveaxis(x, 0, axes[0])
        theirs = jax.jit(jax.vmap(make(jnp), in_axes=axes))(xa, i)  # one compile, not one per op
        for got, want in zip(tree_util.tree_leaves(ours[name]), tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_nested_jit_closing_over_a_batched_value():
    """The callee takes the batched value as an extra input, so the call is batched."""
    f = tracehlo.vmap(lambda x: tracehlo.jit(lambda y: y * x)(2.0))
    np.testing.assert_allclose(f(V), V * 2)
    graph = tracehlo.make_ir(f)(V)
    tracehlo.verify(graph)
    (eqn,) = graph.eqns
    assert eqn.prim.name == "pjit" and eqn.inputs[1] is graph.inputs[0]
    assert [t.shape for t in eqn.params["graph"].in_types] == [(), (3,)]
    np.testing.assert_allclose(tracehlo.jit(f)(V), V * 2)


# ---------------------------------------------------------------- vmap of grad

def mlp_loss(np_, logsumexp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return logsumexp(logits) - np_.sum(y * logits)
    return loss


def test_per_example_gradients_match_jax_and_a_loop_of_grad():
    rng = np.random.default_rng(4)
    sizes = [6, 5, 4]
    params = [(rng.standard_normal((m, n)).astype(np.float32) * 0.5,
               rng.standard_normal(n).astype(np.float32) * 0.1)
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((7, 6)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 7)]
    ours = tracehlo.grad(mlp_loss(tnp, tracehlo.nn.logsumexp))
    theirs = jax.grad(mlp_loss(jnp, jax.nn.logsumexp))
    per_example = tracehlo.vmap(ours, in_axes=(None, 0, 0))
    want = jax.vmap(theirs, in_axes=(None, 0, 0))(params, x, y)
    graph = tracehlo.make_ir(per_example)(params, x, y)
    tracehlo.verify(graph)
    jitted = tracehlo.jit(per_example)
    loop = tracehlo.jit(ours)
    loop = [loop(params, x[i], y[i]) for i in range(len(x))]
    for got in (per_example(params, x, y), jitted(params, x, y),
                tree_util.tree_map(lambda *g: np.stack(g), *loop)):
        assert tree_util.tree_structure(got) == tree_util.tree_structure(want)
        for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@tracehlo.custom_jvp
def sin_with_slope_two(x):
    return tnp.sin(x)


@sin_with_slope_two.defjvp
def _sin_with_slope_two_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sin_with_slope_two(x), 2.0 * t


def test_vmap_of_grad_of_a_custom_jvp_uses_the_rule():
    np.testing.assert_allclose(tracehlo.vmap(tracehlo.grad(sin_with_slope_two))(V), 2.0)


def test_grad_of_vmap_of_a_custom_jvp_uses_the_rule():
    got = tracehlo.grad(lambda v: tnp.sum(tracehlo.vmap(sin_with_slope_two)(v)))(V)
    np.testing.assert_allclose(got, 2.0)
    _, t = tracehlo.jvp(tracehlo.vmap(sin_with_slope_two), (V,), (V,))
    np.testing.assert_allclose(t, 2.0 * V)


def _scaled_bwd(custom_vjp, np_):
    """x * w whose bwd scales the cotangent of x by 10 (JAX's or ours)."""
    @custom_vjp
    def f(w, x):
        return w * x
    f.defvjp(lambda w, x: (w * x, (w, x)), lambda res, g: (g * res[1], 10.0 * g * res[0]))
    return lambda w, v: np_.sum(f(w, v) ** 2)


def test_grad_of_vmap_of_a_custom_vjp_uses_bwd_and_sums_unbatched_cotangents():
    ours, theirs = _scaled_bwd(tracehlo.custom_vjp, tnp), _scaled_bwd(jax.custom_vjp, jnp)
    w = np.float32(1.5)
    for batched in ((None, 0), (0, 0)):
        ws = w if batched[0] is None else np.full(V.shape[0], w, np.float32)
        got = tracehlo.grad(lambda w, v: tracehlo.vmap(ours, batched)(w, v).sum(), (0, 1))(ws, V)
        want = jax.grad(lambda w, v: jax.vmap(theirs, batched)(w, v).sum(), (0, 1))(ws, V)
        for g, x in zip(got, want):
            np.testing.assert_allclose(g, x, rtol=1e-5)
