"""Every primitive in the registry, table-driven, with jax.lax as the oracle.

For each primitive and each sampled dtype, a few operand shapes (rank 0, size 0, an
ordinary shape): the shape rule accepts exactly what jax.lax accepts and computes its
result type; the accepted cases, all primitives of one dtype together, are traced into
one function, verified, lowered, compiled by XLA and compared value by value with the
same calls to jax.lax under jax.jit. A group that XLA rejects is retried one primitive
at a time so the failure names the primitive. One compile per dtype on each side.
"""
from __future__ import annotations

import dataclasses
import itertools

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import ml_dtypes
from jax._src import config as jax_config
from jax._src.lax import windowed_reductions
import numpy as np
import pytest

import tracehlo
from tracehlo import core, runtime
from tracehlo.lowering import lower_graph, lowering_rules

pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
          "bfloat16", "float32", "complex64"]
RNG = np.random.default_rng(0)


def i32(value):
    return np.int32(value)


def _conv_params(strides, padding, lhs_dilation, rhs_dilation, lhs_spec, rhs_spec=None,
                 groups=1):
    """conv_general_dilated's params, the output in the lhs's layout."""
    return dict(window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation,
                dimension_numbers=(lhs_spec, rhs_spec or lhs_spec, lhs_spec),
                feature_group_count=groups, batch_group_count=1)


@dataclasses.dataclass
class Case:
    """How to call one primitive: `instances` are (operand specs, params) pairs, where a
    spec is a shape (an operand of the dtype under test), a ("dtype", shape) pair or a
    fixed array; `oracle(*operands, **params)` is the same call through jax.lax."""
    oracle: object
    instances: list
    domain: tuple = (-2.0, 2.0)  # where float operands are sampled
    whole: tuple = ()  # positions of float operands sampled as whole numbers


def elementwise(arity, oracle, domain=(-2.0, 2.0)):
    """Rank 0, size 0 and 2x3 (a rank-0 operand broadcast: add, select and clamp)."""
    return Case(oracle, [([s] * arity, {}) for s in [(), (0,), (2, 3)]], domain)


POSITIVE, UNIT = (0.25, 3.0), (-0.9, 0.9)
UNARY = {"neg": (), "abs": (), "sign": (), "floor": (), "ceil": (), "exp": (), "exp2": (),
         "log": POSITIVE, "log1p": POSITIVE, "expm1": (), "sqrt": POSITIVE,
         "rsqrt": POSITIVE, "cbrt": (), "sin": (), "cos": (), "tan": UNIT, "tanh": (),
         "logistic": (), "asin": UNIT, "acos": UNIT, "atan": (), "sinh": (), "cosh": (),
         "asinh": (), "acosh": (1.25, 3.0), "atanh": UNIT, "erf": (), "erfc": (),
         "erf_inv": UNIT, "lgamma": POSITIVE, "digamma": POSITIVE, "is_finite": (),
         "population_count": (), "real": (), "imag": (), "conj": (), "stop_gradient": ()}
BINARY = {"add": (), "sub": (), "mul": (), "div": POSITIVE, "rem": POSITIVE,
          "pow": POSITIVE, "max": (), "min": (), "atan2": (), "nextafter": (),
          "shift_left": (), "shift_right_arithmetic": (), "shift_right_logical": (),
          "complex": ()}
LAX_NAME = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
            "xor": "bitwise_xor"}

CASES = {name: elementwise(1, getattr(jax.lax, name), domain or (-2.0, 2.0))
         for name, domain in UNARY.items()}
CASES.update({name: elementwise(2, getattr(jax.lax, name), domain or (-2.0, 2.0))
              for name, domain in BINARY.items()})
CASES.update({name: elementwise(1 if name == "not" else 2, getattr(jax.lax, lax_name))
              for name, lax_name in LAX_NAME.items()})
_ROUNDING = {"away_from_zero": jax.lax.RoundingMethod.AWAY_FROM_ZERO,
             "to_nearest_even": jax.lax.RoundingMethod.TO_NEAREST_EVEN}
CASES["add"].instances.append(([(2, 3), ()], {}))
CASES.update({
    "integer_pow": Case(jax.lax.integer_pow, [([s], {"y": n}) for s in [(), (0,), (2, 3)]
                                              for n in (0, 1, 3, -2)], POSITIVE),
    "round": Case(lambda x, method: jax.lax.round(x, _ROUNDING[method]),
                  [([s], {"method": m}) for s in [(), (0,), (2, 3)] for m in _ROUNDING],
                  (-3.0, 3.0)),
    "compare": Case(lambda x, y, direction: getattr(jax.lax, direction.lower())(x, y),
                    [([(2, 3), (2, 3)], {"direction": d})
                     for d in ("EQ", "NE", "LT", "LE", "GT", "GE")]
                    + [([s, s], {"direction": "LT"}) for s in [(), (0,)]]),
    "select": Case(jax.lax.select, [([("bool", s), s, s], {}) for s in [(), (0,), (2, 3)]]
                   + [([("bool", ()), (2, 3), (2, 3)], {})]),
    "clamp": Case(jax.lax.clamp, [([(), (2, 3), ()], {}), ([(2, 3)] * 3, {}),
                                  ([(0,)] * 3, {})]),
    "convert_element_type": Case(
        lambda x, new_dtype, weak_type: jax.lax.convert_element_type(x, new_dtype),
        [([(2, 3)], {"new_dtype": np.dtype(d), "weak_type": False})
         for d in ("bool", "int8", "uint32", "float16", "float32")]
        + [([s], {"new_dtype": np.dtype("int32"), "weak_type": False}) for s in [(), (0,)]]),
    "bitcast_convert_type": Case(
        jax.lax.bitcast_convert_type,
        [([(2, 3)], {"new_dtype": np.dtype(d)}) for d in ("int8", "uint16", "float32")]
        + [([s], {"new_dtype": np.dtype("int8")}) for s in [(), (0,)]]),
    "iota": Case(None, []),  # its operand-less instances are built per dtype below
    "broadcast_in_dim": Case(
        lambda x, shape, broadcast_dimensions: jax.lax.broadcast_in_dim(
            x, shape, broadcast_dimensions),
        [([(3,)], {"shape": (2, 3), "broadcast_dimensions": (1,)}),
         ([()], {"shape": (2,), "broadcast_dimensions": ()}),
         ([(0,)], {"shape": (2, 0), "broadcast_dimensions": (1,)})]),
    "reshape": Case(lambda x, new_sizes: jax.lax.reshape(x, new_sizes),
                    [([(2, 3)], {"new_sizes": (3, 2)}), ([(0, 3)], {"new_sizes": (3, 0)}),
                     ([()], {"new_sizes": (1, 1)})]),
    "squeeze": Case(jax.lax.squeeze, [([(1, 3)], {"dimensions": (0,)}),
                                      ([(1,)], {"dimensions": (0,)}),
                                      ([(1, 0)], {"dimensions": (0,)})]),
    "expand_dims": Case(jax.lax.expand_dims, [([(2, 3)], {"dimensions": (0, 2)}),
                                              ([()], {"dimensions": (0,)}),
                                              ([(0,)], {"dimensions": (1,)})]),
    "transpose": Case(jax.lax.transpose, [([(2, 3)], {"permutation": (1, 0)}),
                                          ([()], {"permutation": ()}),
                                          ([(0, 3)], {"permutation": (1, 0)})]),
    "rev": Case(jax.lax.rev, [([(2, 3)], {"dimensions": (0, 1)}), ([()], {"dimensions": ()}),
                              ([(0,)], {"dimensions": (0,)})]),
    "concatenate": Case(lambda *xs, dimension: jax.lax.concatenate(xs, dimension),
                        [([(2, 3), (2, 1)], {"dimension": 1}),
                         ([(0, 3), (2, 3)], {"dimension": 0})]),
    "pad": Case(jax.lax.pad, [([(2, 3), ()], {"padding_config": ((1, 2, 0), (0, -1, 1))}),
                              ([(), ()], {"padding_config": ()}),
                              ([(0,), ()], {"padding_config": ((1, 1, 0),)})]),
    "slice": Case(jax.lax.slice, [
        ([(4, 3)], {"start_indices": (1, 0), "limit_indices": (3, 3), "strides": (1, 2)}),
        ([()], {"start_indices": (), "limit_indices": (), "strides": ()}),
        ([(0,)], {"start_indices": (0,), "limit_indices": (0,), "strides": (1,)})]),
    "dynamic_slice": Case(lambda x, *i, slice_sizes: jax.lax.dynamic_slice(x, i, slice_sizes),
                          [([(4, 3), i32(1), i32(2)], {"slice_sizes": (2, 2)}),
                           ([()], {"slice_sizes": ()}),
                           ([(0, 3), i32(0), i32(5)], {"slice_sizes": (0, 2)})]),
    "dynamic_update_slice": Case(
        lambda x, u, *i: jax.lax.dynamic_update_slice(x, u, i),
        [([(4, 3), (2, 2), i32(3), i32(1)], {}), ([(), ()], {}),
         ([(0, 3), (0, 2), i32(0), i32(1)], {})]),
    "gather": Case(
        lambda x, i, **p: jax.lax.gather(x, i, jax.lax.GatherDimensionNumbers(
            offset_dims=p["offset_dims"], collapsed_slice_dims=p["collapsed_slice_dims"],
            start_index_map=p["start_index_map"]), p["slice_sizes"], mode="clip"),
        [([(4, 3), np.array([[2], [0], [9]], np.int32)], dict(
            offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
            operand_batching_dims=(), start_indices_batching_dims=(), index_vector_dim=1,
            slice_sizes=(1, 3), mode="clip"))]),
    "scatter": Case(
        lambda x, i, u, combiner, **p: getattr(jax.lax, {"set": "scatter"}.get(
            combiner, f"scatter_{combiner}"))(x, i, u, jax.lax.ScatterDimensionNumbers(
                update_window_dims=p["update_window_dims"],
                inserted_window_dims=p["inserted_window_dims"],
                scatter_dims_to_operand_dims=p["scatter_dims_to_operand_dims"]), mode="drop"),
        [([(4, 3), np.array([[2], [0], [7]], np.int32), (3, 3)], dict(
            update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,), index_vector_dim=1, combiner=c,
            indices_are_sorted=False, unique_indices=c == "add"))
         for c in ("set", "add", "mul", "min", "max")]),
    "dot_general": Case(jax.lax.dot_general, [
        ([(2, 3), (3, 4)], {"dimension_numbers": (((1,), (0,)), ((), ()))}),
        ([(2, 2, 3), (2, 3, 1)], {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}),
        ([(2, 0), (0, 3)], {"dimension_numbers": (((1,), (0,)), ((), ()))}),
        ([(), ()], {"dimension_numbers": (((), ()), ((), ()))})]),
    "conv_general_dilated": Case(
        lambda x, y, dimension_numbers, **p: jax.lax.conv_general_dilated(
            x, y, dimension_numbers=jax.lax.ConvDimensionNumbers(*dimension_numbers), **p),
        [([(2, 3, 5), (4, 3, 2)], _conv_params((1,), ((1, 0),), (1,), (2,), (0, 1, 2))),
         ([(2, 5, 4, 4), (3, 3, 2, 2)], _conv_params(
             (2, 1), ((0, 1), (1, -1)), (1, 2), (1, 1), (0, 3, 1, 2), (3, 2, 0, 1), groups=2)),
         ([(0, 3, 5), (4, 3, 2)], _conv_params((1,), ((0, 0),), (1,), (1,), (0, 1, 2)))]),
    "sort": Case(lambda *xs, dimension, num_keys: tuple(jax.lax.sort(
        xs, dimension=dimension, num_keys=num_keys)), [
        ([(2, 5)], {"dimension": 1, "num_keys": 1}),
        ([(3, 2), ("int32", (3, 2))], {"dimension": 0, "num_keys": 1}),
        ([(0,)], {"dimension": 0, "num_keys": 1})]),
    "top_k": Case(lambda x, k, axis: tuple(jax.lax.top_k(x, k, axis=axis)), [
        ([(2, 5)], {"k": 3, "axis": 1}), ([(3, 2)], {"k": 3, "axis": 0}),
        ([(0,)], {"k": 0, "axis": 0}), ([()], {"k": 0, "axis": 0})]),
    "optimization_barrier": Case(lambda *xs: tuple(jax.lax.optimization_barrier(xs)), [
        ([(2, 3), ("int32", (3,))], {}), ([()], {})]),
    "name": Case(lambda x, name: jax.ad_checkpoint.checkpoint_name(x, name), [
        ([(2, 3)], {"name": "h"}), ([()], {"name": "g"})]),
    "triangular_solve": Case(jax.lax.linalg.triangular_solve, [
        ([(3, 3), (3, 2)], dict(left_side=True, lower=True, transpose_a=False,
                                conjugate_a=False, unit_diagonal=False)),
        ([(2, 3, 3), (2, 4, 3)], dict(left_side=False, lower=False, transpose_a=True,
                                      conjugate_a=False, unit_diagonal=True)),
        ([(3, 3), (3, 1)], dict(left_side=True, lower=False, transpose_a=True,
                                conjugate_a=True, unit_diagonal=False)),
        ([(3, 3), (2, 3)], dict(left_side=False, lower=True, transpose_a=False,
                                conjugate_a=True, unit_diagonal=False)),
        ([(0, 0), (0, 2)], dict(left_side=True, lower=True, transpose_a=False,
                                conjugate_a=False, unit_diagonal=False))],
        (0.5, 2.0)),  # a dominant diagonal is not needed for n = 3 with positive entries
    "polygamma": Case(jax.lax.polygamma, [([s, s], {}) for s in [(), (0,), (2, 3)]],
                      (0.25, 3.0), whole=(0,)),  # the order m is a whole number
    "argmax": Case(lambda x, axes, index_dtype: jax.lax.argmax(x, axes[0], index_dtype), [
        ([(2, 3)], {"axes": (1,), "index_dtype": np.dtype("int32")}),
        ([(0, 3)], {"axes": (1,), "index_dtype": np.dtype("int32")})]),
})
CASES["argmin"] = dataclasses.replace(CASES["argmax"], oracle=lambda x, axes, index_dtype:
                                      jax.lax.argmin(x, axes[0], index_dtype))
for kind in ("sum", "prod", "max", "min", "and", "or"):
    CASES[f"reduce_{kind}"] = Case(getattr(jax.lax, f"reduce_{kind}"), [
        ([(2, 3)], {"axes": (1,)}), ([()], {"axes": ()}), ([(0, 3)], {"axes": (0,)}),
        ([(2, 0)], {"axes": (0, 1)})], (0.5, 1.5))
for kind in ("sum", "prod", "max", "min"):
    CASES[f"cum{kind}"] = Case(getattr(jax.lax, f"cum{kind}"), [
        ([(2, 3)], {"axis": 1, "reverse": False}), ([(2, 3)], {"axis": 0, "reverse": True}),
        ([(0, 3)], {"axis": 0, "reverse": False}), ([(2, 0)], {"axis": 1, "reverse": True}),
        ([()], {"axis": 0, "reverse": False})], (0.5, 1.5))
CASES["cumlogsumexp"] = dataclasses.replace(CASES["cumsum"], oracle=jax.lax.cumlogsumexp)
CASES["select_n"] = Case(jax.lax.select_n, [  # `which` out of range too: both clamp alike
    ([("int32", (2, 3)), (2, 3), (2, 3), (2, 3)], {}),
    ([("uint8", ()), (2, 3), (2, 3), (2, 3)], {}),
    ([("int32", (0,)), (0,), (0,), (0,), (0,)], {})])
CASES["reduce_precision"] = Case(jax.lax.reduce_precision, [
    ([s], {"exponent_bits": e, "mantissa_bits": m})
    for s, e, m in (((2, 3), 5, 2), ((), 4, 3), ((0,), 8, 7), ((2, 3), 11, 0))], (-300.0, 300.0))
# (operand shape, window params): padding, strides and both dilations, rank 0, size 0
_WINDOWS = [((3, 4), dict(window_dimensions=(2, 2), window_strides=(1, 2),
                          padding=((0, 1), (1, 0)), base_dilation=(1, 1), window_dilation=(1, 1))),
            ((3, 4), dict(window_dimensions=(2, 2), window_strides=(2, 1),
                          padding=((1, 1), (0, -1)), base_dilation=(2, 1), window_dilation=(1, 2))),
            ((), dict(window_dimensions=(), window_strides=(), padding=(), base_dilation=(),
                      window_dilation=())),
            ((0, 3), dict(window_dimensions=(1, 2), window_strides=(1, 1),
                          padding=((0, 0), (0, 0)), base_dilation=(1, 1), window_dilation=(1, 1)))]
for kind in ("sum", "max", "min"):
    CASES[f"reduce_window_{kind}"] = Case(
        getattr(windowed_reductions, f"reduce_window_{kind}_p").bind,
        [([s], p) for s, p in _WINDOWS])
_SELECT = {"ge": jax.lax.ge_p, "le": jax.lax.le_p}
CASES["select_and_gather_add"] = Case(
    lambda t, x, select_prim, **p: windowed_reductions._select_and_gather_add(
        t, x, _SELECT[select_prim], **p),
    [([s, s], dict(p, select_prim=k)) for (s, p), k in zip(_WINDOWS, ("ge", "le", "ge", "le"))])
CASES["select_and_scatter_add"] = Case(
    lambda s, x, select_prim, **p: windowed_reductions._select_and_scatter_add(
        s, x, _SELECT[select_prim], **p),
    # one case: XLA CPU takes 0.3 s to compile each; no rank 0: XLA aborts on JAX's
    [([(3, 2), (3, 4)], dict(select_prim="le", window_dimensions=(2, 2), window_strides=(1, 2),
                             padding=((0, 1), (1, 0))))])

# Where our shape rule accepts a dtype that jax.lax refuses, on purpose.
# These still go through verify, lowering and XLA; their values are not compared.
WIDER_THAN_JAX = {
    ("add", "bool"): "tracehlo.numpy's bool + lowers to it (StableHLO's i1 add is or)",
    ("mul", "bool"): "tracehlo.numpy's bool * lowers to it (StableHLO's i1 multiply is and)",
    ("pow", "int"): "tracehlo.numpy's integer ** lowers to it (jax.lax has integer_pow)",
    ("reduce_sum", "bool"): "tnp.trace and einsum sum bool operands as bool (any)",
    ("cummax", "bool"): "tnp.cummax keeps bool, as jax.numpy does (it converts around lax)",
    ("cummin", "bool"): "tnp.cummin keeps bool, as jax.numpy does (it converts around lax)",
}
# Where jax.lax's shape rule accepts a dtype that its lowering then fails on.
JAX_CANNOT_LOWER = {("argmax", "complex64"), ("argmin", "complex64")} | {
    ("cumlogsumexp", d) for d in ("int8", "int16", "int32", "uint8", "uint16", "uint32")}
# JAX's CPU lowering casts an infinite init to the operand's dtype, and has no GE/LE for
# complex numbers: ours refuses those dtypes in the shape rule
JAX_CANNOT_LOWER |= {("select_and_gather_add", d) for d in (
    "int8", "int16", "int32", "uint8", "uint16", "uint32", "complex64")} | {
    ("select_and_scatter_add", "complex64")}
# Primitives this table does not run, with the reason.
EXEMPT = {"pjit": "a call: its params hold a sub-Graph, not sampled operand types "
                  "(test_calls.py runs it against jax.jit)",
          **{name: "control flow: its params hold sub-Graphs, not sampled operand types "
                   "(test_control_flow.py runs it against Python references and JAX)"
             for name in ("cond", "while", "scan")},
          **{name: "a call carrying a user's derivative rule: its params hold a sub-Graph "
                   "and a Python rule, not sampled operand types (test_ad.py runs it "
                   "against JAX's custom rules, test_vmap.py batches it)"
             for name in ("custom_jvp_call", "custom_vjp_call")},
          "cholesky": "sampled operands are not positive definite, so every factor is NaN; "
                      "test_random.py runs it (on CPU LAPACK's potrf, as JAX's) against "
                      "jnp.linalg.cholesky bit for bit, lower and upper, and on non-PD input",
          **{name: "a LAPACK factorization with no lowering for the float16/bfloat16 and "
                   "empty operands this table samples (JAX's CPU lowering refuses float16 "
                   "too); test_numpy_linalg.py runs it against JAX bit for bit on every "
                   "LAPACK dtype and on tall, wide, batched and singular matrices"
             for name in ("lu", "qr", "eigh", "svd", "eig")},
          "fft": "jax.lax.fft converts its operand to complex (real for RFFT) before the "
                 "primitive, so this table's dtype sweep cannot compare which dtypes each "
                 "accepts; test_numpy_fft.py runs lax.fft and every jnp.fft function "
                 "against JAX bit for bit, with their derivatives"}


def _spec_dtype(spec, dtype):
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return np.dtype(spec[0]), spec[1]
    return np.dtype(dtype), spec


def sample(spec, dtype, domain):
    """A random operand for `spec` (see Case), seeded, in `domain` for floats."""
    if isinstance(spec, (np.ndarray, np.generic)):
        return spec
    dtype, shape = _spec_dtype(spec, dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -5
        return RNG.integers(lo, 6, shape).astype(dtype)
    if dtype.kind == "c":
        return (RNG.uniform(*domain, shape) + 1j * RNG.uniform(*domain, shape)).astype(dtype)
    return RNG.uniform(*domain, shape).astype(dtype)


def _abstract(spec, dtype):
    if isinstance(spec, (np.ndarray, np.generic)):
        return jax.ShapeDtypeStruct(np.shape(spec), spec.dtype)
    dtype, shape = _spec_dtype(spec, dtype)
    return jax.ShapeDtypeStruct(shape, dtype)


def _dtype_key(prim_name, dtype):
    kind = np.dtype(dtype).kind
    return (prim_name, "int") if kind in "iu" else (prim_name, dtype)


def instances(name, dtype):
    if name == "iota":
        return [([], {"dtype": np.dtype(dtype), "shape": s, "dimension": d})
                for s, d in (((4,), 0), ((2, 3), 1), ((0, 2), 0))]
    return CASES[name].instances


def oracle(name):
    if name == "iota":
        return lambda dtype, shape, dimension: jax.lax.broadcasted_iota(dtype, shape,
                                                                         dimension)
    return CASES[name].oracle


def accepted(name, dtype):
    """The instances both sides accept, after checking that both accept the same ones
    and agree on the result types: [(specs, params, jax's result types, or None where only
    we accept it)], problems."""
    prim, ok, problems = core.primitives[name], [], []
    for specs, params in instances(name, dtype):
        abstract = [_abstract(s, dtype) for s in specs]
        try:  # (JAX's traceback filtering would take a third of this file's time)
            with jax_config.traceback_filtering("off"):
                want = jax.eval_shape(lambda *a: oracle(name)(*a, **params), *abstract)
            if (name, dtype) in JAX_CANNOT_LOWER:
                want = None
        except (TypeError, ValueError):
            want = None
        try:
            got = core.shape_rules[prim](*[tracehlo.ArrayType(a.shape, a.dtype)
                                           for a in abstract], **params)
        except (TypeError, ValueError):
            got = None
        where = f"{name}{[a.shape for a in abstract]} {params or ''} on {dtype}"
        if want is None and got is not None:
            if _dtype_key(name, dtype) in WIDER_THAN_JAX:
                ok.append((specs, params, None))
            else:
                problems.append(f"{where}: accepted, jax.lax refuses it")
            continue
        if got is None:
            if want is not None:
                problems.append(f"{where}: refused, jax.lax accepts it")
            continue
        got = got if prim.multiple_results else [got]
        want = jax.tree_util.tree_leaves(want)
        if [(t.shape, t.dtype) for t in got] != [(w.shape, w.dtype) for w in want]:
            problems.append(f"{where}: result {got}, jax.lax gives {want}")
            continue
        ok.append((specs, params, want))
    return ok, problems


def _program(calls):
    """calls: [(name, n_operands, params, _)] -> fn(*operands) binding each in turn."""
    def fn(*operands):
        outs, k = [], 0
        for name, n, params, _ in calls:
            prim = core.primitives[name]
            out = prim.bind(*operands[k:k + n], **params)
            outs.extend(out if prim.multiple_results else [out])
            k += n
        return outs
    return fn


def _oracle_program(calls):
    def fn(*operands):
        outs, k = [], 0
        for name, n, params, _ in calls:
            outs.extend(jax.tree_util.tree_leaves(oracle(name)(*operands[k:k + n], **params)))
            k += n
        return outs
    return fn


def run_ours(calls, operands):
    """Trace, verify, lower, compile and run: the primitives' own path, no fusion passes."""
    graph = tracehlo.verify(tracehlo.make_ir(_program(calls))(*operands))
    exe = runtime.compile(lower_graph(graph), [(t.shape, t.dtype, t.weak)
                                                for t in graph.out_types])
    buffers = [runtime.as_buffer(x, v.type.dtype, exe.device)
               for x, v in zip(operands, graph.inputs)]
    return exe(buffers)


def _tolerance(dtype):
    return {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 2e-2}.get(
        np.dtype(dtype), 2e-5)


def compare(where, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), \
        f"{where}: {got.shape} {got.dtype} != {want.shape} {want.dtype}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        tol = _tolerance(got.dtype)
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol,
                                   equal_nan=True, err_msg=where)


def test_every_primitive_has_rules_and_a_case():
    missing = [f"{name}: no {table}" for name, prim in sorted(core.primitives.items())
               for table, rules in (("shape rule", core.shape_rules),
                                    ("lowering rule", lowering_rules))
               if prim not in rules and name not in EXEMPT]
    missing += [f"{name}: no case in test_primitives.CASES" for name in core.primitives
                if name not in CASES and name not in EXEMPT]
    assert missing == []
    assert set(EXEMPT) <= set(core.primitives)


@pytest.mark.parametrize("dtype", DTYPES)
def test_primitives_against_jax_lax(dtype):
    calls, operands, problems = [], [], []  # calls: (name, n_operands, params, want)
    for name in sorted(set(core.primitives) - set(EXEMPT)):
        ok, bad = accepted(name, dtype)
        problems += bad
        case = CASES[name]
        for specs, params, want in ok:
            calls.append((name, len(specs), params, want))
            ops = [sample(s, dtype, case.domain) for s in specs]
            operands.append([np.round(x.astype(np.float64)).astype(x.dtype) if i in case.whole
                             else x for i, x in enumerate(ops)])
    assert not problems, "\n".join(problems)
    try:
        got = run_ours(calls, [x for ops in operands for x in ops])
    except Exception:  # name the primitives that fail alone (slow path, only on failure)
        failures = []
        for call, ops in zip(calls, operands):
            try:
                run_ours([call], ops)
            except Exception as e:
                failures.append(f"{call[0]} {call[2]}: {str(e).splitlines()[0][:300]}")
        raise AssertionError(f"{dtype}: " + "\n".join(failures)) from None
    # jax.lax computes the values where there are any: empty results are only types
    valued = [(call, ops) for call, ops in zip(calls, operands)
              if call[3] and any(w.size for w in call[3])]
    want = iter(jax.jit(_oracle_program([c for c, _ in valued]))(
        *[x for _, ops in valued for x in ops]))
    got = iter(got)
    for (name, _, params, types), ops in zip(calls, operands):
        ours = [next(got) for _ in types or [None]]
        where = f"{dtype} {name}{[np.shape(x) for x in ops]} {params or ''}"
        for g, t in zip(ours, types or []):
            compare(where, g, next(want) if any(w.size for w in types) else
                    np.zeros(t.shape, t.dtype))


WEAK_DTYPES = ["bool", "int32", "float32"]


@pytest.mark.parametrize("dtype", WEAK_DTYPES)
def test_weak_types_agree_with_jax_lax(dtype):
    """Each shape rule's result weak type is jax.lax's, for every weak/strong choice of the
    operands of the dtype under test (fixed operands such as indices stay strong): most
    results are weak only if all operands are, some follow one operand (gather, scatter,
    dynamic_slice), some are never weak (logical reductions, argmax). Types only: no
    compile."""
    problems = []
    for name in sorted(set(core.primitives) - set(EXEMPT)):
        prim = core.primitives[name]
        for specs, params, _ in [c for c in accepted(name, dtype)[0] if c[2]][:1]:
            abstract = [_abstract(s, dtype) for s in specs]
            free = [k for k, s in enumerate(specs)
                    if isinstance(s, tuple) and not (s and isinstance(s[0], str))]
            for weak in itertools.product([False, True], repeat=len(free)):
                flags = [False] * len(specs)
                for k, w in zip(free, weak):
                    flags[k] = w
                with jax_config.traceback_filtering("off"):
                    want = jax.eval_shape(
                        lambda *a: oracle(name)(*a, **params),
                        *[jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=w)
                          for a, w in zip(abstract, flags)])
                got = core.shape_rules[prim](*[tracehlo.ArrayType(a.shape, a.dtype, w)
                                               for a, w in zip(abstract, flags)], **params)
                got = [t.weak for t in (got if prim.multiple_results else [got])]
                want = [w.weak_type for w in jax.tree_util.tree_leaves(want)]
                if got != want:
                    problems.append(f"{name} {params or ''} weak operands {flags}: "
                                    f"weak {got}, jax.lax's {want}")
    assert not problems, "\n".join(problems)
