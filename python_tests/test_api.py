"""compile / jit / make_ir: pytrees, static arguments, caching, signature errors,
tracing errors at the user's line, config switches, and the IR round trip."""
import collections
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import nn


def test_compile_exposes_every_stage():
    def f(a, b):
        return tnp.sum(a + tnp.sin(b) * 3.0)
    x, y = np.ones((8, 4), np.float32), np.arange(4, dtype=np.float32)
    c = tracehlo.compile(f, (x, y))
    assert "sin %1" in str(c.ir)
    assert "stablehlo.sine" in c.stablehlo
    assert "HloModule" in c.hlo
    assert c.cost_analysis()["flops"] > 0
    assert c.memory_analysis().argument_size_in_bytes == x.nbytes + y.nbytes
    out = c(x, y)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(out, np.sum(x + np.sin(y) * 3.0), rtol=1e-6)


def test_pytrees_in_and_out():
    Point = collections.namedtuple("Point", "x y")

    def f(params, pts):
        return {"sum": params["w"] @ pts[0].x + params["b"], "pair": (pts[1].y * 2, 1.0)}
    params = {"w": np.ones((2, 3), np.float32), "b": np.float32(1)}
    pts = [Point(np.ones(3, np.float32), 0), Point(0, np.arange(2, dtype=np.float32))]
    out = tracehlo.jit(f)(params, pts)
    assert set(out) == {"sum", "pair"}
    np.testing.assert_allclose(out["sum"], [4.0, 4.0])
    np.testing.assert_allclose(out["pair"][0], [0.0, 2.0])
    np.testing.assert_allclose(out["pair"][1], 1.0)


def test_outputs_interoperate_with_jax():
    x = tracehlo.jit(lambda a: a * 2)(np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(jax.jit(jnp.sin)(x), np.sin([0.0, 2.0, 4.0]), rtol=1e-6)
    y = tracehlo.jit(lambda a: a + 1)(jnp.arange(3.0))  # jax.Arrays go straight in
    np.testing.assert_allclose(y, [1.0, 2.0, 3.0])


def test_compiled_rejects_other_signatures_naming_the_argument():
    c = tracehlo.compile(lambda x, y: x + y, (np.zeros(4, np.float32), np.zeros(4, np.float32)))
    with pytest.raises(TypeError, match=r"argument y has shape f32\[5\], but the function "
                                        r"was compiled for f32\[4\]"):
        c(np.zeros(4, np.float32), np.zeros(5, np.float32))
    with pytest.raises(TypeError, match=r"argument x has dtype i32\[4\], but the function "
                                        r"was compiled for f32\[4\]"):
        c(np.zeros(4, np.int32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="tree structure"):
        c((np.zeros(4, np.float32),), np.zeros(4, np.float32))


def test_nested_argument_names_in_errors():
    c = tracehlo.compile(lambda p: p["w"] * 2, ({"w": np.zeros(3, np.float32)},))
    with pytest.raises(TypeError, match=r"argument p\['w'\] has shape f32\[2\]"):
        c({"w": np.zeros(2, np.float32)})


def test_jit_caches_per_signature_and_explains_misses(caplog):
    calls = []

    def f(x):
        calls.append(1)
        return x * 2
    jf = tracehlo.jit(f)
    tracehlo.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="tracehlo"):
            jf(np.zeros(3, np.float32))
            jf(np.ones(3, np.float32))
            jf(np.zeros(4, np.float32))
    finally:
        tracehlo.config.update("explain_cache_misses", False)
    assert len(calls) == 2  # traced once per signature
    assert "first call" in caplog.text
    assert "x: f32[3] -> f32[4]" in caplog.text


def test_log_compiles_reports_each_stage(caplog):
    tracehlo.config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="tracehlo"):
            tracehlo.jit(lambda x: x + 1)(np.zeros(2, np.float32))
    finally:
        tracehlo.config.update("log_compiles", False)
    assert re.search(r"trace [\d.]+ ms, lower [\d.]+ ms, passes [\d.]+ ms, "
                     r"xla_compile [\d.]+ ms", caplog.text)


def test_static_arguments():
    def f(x, n, *, mode):
        return x * n if mode == "mul" else x + n
    jf = tracehlo.jit(f, static_argnums=1, static_argnames="mode")
    np.testing.assert_allclose(jf(np.ones(2, np.float32), 3, mode="mul"), [3.0, 3.0])
    np.testing.assert_allclose(jf(np.ones(2, np.float32), 3, mode="add"), [4.0, 4.0])
    g = tracehlo.make_ir(f, static_argnums=1, static_argnames="mode")(
        np.ones(2, np.float32), 3, mode="mul")
    assert len(g.inputs) == 1 and "mul %0, 3.0:f32[]" in str(g)


def test_unhashable_static_argument_is_a_clear_error():
    jf = tracehlo.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(TypeError, match=r"static argument 1 of <lambda> is unhashable \(list\)"
                                        r".*Pass a tuple"):
        jf(np.zeros(4, np.float32), [2, 2])
    np.testing.assert_allclose(jf(np.zeros(4, np.float32), (2, 2)), np.zeros((2, 2)))


def test_python_if_on_traced_value_names_user_line():
    def f(x):
        if x.sum() > 0:  # the line the error must name
            return x
        return -x
    with pytest.raises(tracehlo.TracerBoolConversionError) as info:
        tracehlo.jit(f)(np.ones(3, np.float32))
    line = f.__code__.co_firstlineno + 1
    assert f"test_api.py:{line}:" in str(info.value)
    assert "tracehlo.numpy.where" in str(info.value) and "static_argnums" in str(info.value)


def test_concretization_errors():
    with pytest.raises(tracehlo.ConcretizationError, match="int\\(\\) needs a concrete value"):
        tracehlo.jit(lambda x: int(x))(np.float32(1))
    with pytest.raises(tracehlo.ConcretizationError, match="NumPy array"):
        tracehlo.jit(lambda x: np.asarray(x))(np.zeros(2, np.float32))


def test_non_array_argument_and_output_are_clear_errors():
    with pytest.raises(TypeError, match="str is not a valid argument.*static_argnums"):
        tracehlo.jit(lambda x: x)("hello")
    with pytest.raises(TypeError, match="str is not a valid argument"):
        tracehlo.jit(lambda x: (x, "label"))(np.zeros(2, np.float32))


def test_weak_types_follow_jax():
    x = np.ones(3, np.float16)
    assert tracehlo.jit(lambda a: a * 2)(x).dtype == np.float16
    assert tracehlo.jit(lambda a: a + 1.5)(np.ones(3, np.int32)).dtype == np.float32
    assert tracehlo.jit(lambda a: a / 2)(np.ones(3, np.int32)).dtype == np.float32
    # a Python scalar argument is weak too: it adopts the other operand's dtype
    assert tracehlo.jit(lambda a, s: a * s)(x, 2.0).dtype == np.float16


def test_enable_x64_switch():
    x = np.arange(3, dtype=np.float64)
    i = jax.device_put(np.arange(3, dtype=np.int32))
    double = tracehlo.jit(lambda a: a * 2)
    inner = tracehlo.jit(lambda a: a + tnp.arange(3))
    outer = tracehlo.jit(lambda a: inner(a))
    assert [double(x).dtype, double(0.3).dtype, outer(i).dtype] == [np.float32] * 2 + [np.int32]
    tracehlo.config.update("enable_x64", True)
    try:
        jax.config.update("jax_enable_x64", True)  # so jax.Arrays may hold 64 bits
        # the same jitted functions: their caches (and a nested call's) hold the mode
        assert [double(x).dtype, double(0.3).dtype] == [np.float64] * 2
        assert outer(i).dtype == np.int64
        assert tnp.arange(3).dtype == np.int64
    finally:
        tracehlo.config.update("enable_x64", False)
        jax.config.update("jax_enable_x64", False)
    with pytest.raises(AttributeError, match="no option 'enable_x46'"):
        tracehlo.config.update("enable_x46", True)


def test_eager_ops_return_jax_arrays():
    out = tnp.sin(np.ones(3, np.float32))
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(out, np.sin(np.ones(3)), rtol=1e-6)
    np.testing.assert_allclose(nn.softmax(np.array([1.0, 2.0, 3.0], np.float32)),
                               jax.nn.softmax(jnp.array([1.0, 2.0, 3.0])), rtol=1e-6)


def test_tracer_escaping_its_trace_is_an_error():
    leaked = []
    tracehlo.jit(lambda x: leaked.append(x) or x)(np.zeros(2, np.float32))
    with pytest.raises(tracehlo.TracehloError, match="escaped"):
        tracehlo.jit(lambda y: y + leaked[0])(np.zeros(2, np.float32))


def test_donated_argument_is_consumed():
    x = jnp.arange(4.0)
    out = tracehlo.jit(lambda a: a + 1, donate_argnums=0)(x)
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0, 4.0])
    assert x.is_deleted()


_nested = tracehlo.jit(lambda a, b: (tnp.tanh(a) * b, a - b))

IR_CASES = [
    ("mlp", lambda x, w, b: nn.log_softmax(nn.relu(x @ w + b)),
     (np.zeros((4, 8), np.float32), np.zeros((8, 3), np.float32), np.zeros(3, np.float32))),
    ("indexing", lambda x, i: (x[i], x[1:, ::-2], x[None, ..., 0], x.at[i].set(0.0)),
     (np.zeros((4, 5), np.float32), np.int32(2))),
    ("int_ops", lambda a, b: (a // b, a % b, a << 1, ~a, tnp.cumsum(a), tnp.sort(b)),
     (np.zeros(6, np.int32), np.ones(6, np.int32))),
    ("bool_and_constants", lambda m: (tnp.where(m, np.arange(20.0, dtype=np.float32), tnp.nan),
                                      tnp.all(m), tnp.eye(3, dtype=bool)),
     (np.zeros(20, bool),)),
    ("nested_jit", lambda x, y: _nested(_nested(x, y)[0], 2.0),
     (np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))),
]


@pytest.mark.parametrize("name,fn,args", IR_CASES, ids=[c[0] for c in IR_CASES])
def test_ir_round_trip_and_verify(name, fn, args):
    graph = tracehlo.make_ir(fn)(*args)
    tracehlo.verify(graph)
    for locations in (False, True):
        text = graph.to_text(locations=locations)
        again = tracehlo.parse_ir(text)
        assert again.to_text(locations=locations) == text
        tracehlo.verify(again)
    # the parsed graph lowers and runs like the original
    from tracehlo.lowering import lower_graph
    assert lower_graph(again) == lower_graph(graph)


def test_fusion_modes_choose_who_makes_the_kernels():
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    expected = jax.nn.softmax(x, axis=-1)
    kernels = {}
    for mode in ("tracehlo", "xla", "none"):
        c = tracehlo.compile(lambda a: nn.softmax(a, axis=-1), (x,), fusion=mode)
        np.testing.assert_allclose(c(x), expected, rtol=1e-6)
        kernels[mode] = len(c.kernels())
        assert (c.fused is not None) == (mode == "tracehlo")
        assert (c.fusion_report() is not None) == (mode == "tracehlo")
    # without any fusion each op is a kernel; ours and XLA's group them
    assert kernels["none"] > kernels["xla"] and kernels["none"] > kernels["tracehlo"]
    c = tracehlo.compile(lambda a: nn.softmax(a, axis=-1), (x,))
    assert '"mhlo.fusion"' in c.fused and c.fusion_report().fusions
    with pytest.raises(ValueError, match="fusion must be one of"):
        tracehlo.jit(lambda a: a, fusion="fastest")


def test_dead_code_and_repeated_code_are_gone_from_the_ir():
    def f(a):
        unused = tnp.exp(a) * np.arange(3, dtype=np.float32)
        return (unused, tnp.sin(a) + tnp.sin(a))[1]
    c = tracehlo.compile(f, (np.ones(3, np.float32),))
    assert str(c.ir) == ("func @f(%0: f32[3]) -> (f32[3]) {\n"
                         "  %4: f32[3] = sin %0\n"
                         "  %6: f32[3] = add %4, %4\n"
                         "  return %6\n}\n")
    assert "exponential" not in c.stablehlo and c.stablehlo.count("stablehlo.sine") == 1
    np.testing.assert_allclose(c(np.ones(3, np.float32)), 2 * np.sin(np.ones(3)), rtol=1e-6)


def test_lower_and_call_share_one_compilation():
    calls = []
    jf = tracehlo.jit(lambda p, x: calls.append(1) or p["w"] * x)
    args = ({"w": np.ones(2, np.float32)}, np.ones(2, np.float32))
    compiled = jf.lower(*args)
    jf(*args)
    assert len(calls) == 1 and "mul" in str(compiled.ir)


def test_verify_and_parse_ir_reject_bad_input_clearly():
    with pytest.raises(TypeError, match=r"verify takes a Graph \(from tracehlo.make_ir or "
                                        r"tracehlo.parse_ir\), got str; parse IR text with "
                                        r"tracehlo.parse_ir first"):
        tracehlo.verify("func @f() -> () {\n  return\n}")
    header = "func @f(%0: f32[{}]) -> () {{\n  return\n}}\n"
    assert str(tracehlo.parse_ir(header.format(2**63 - 1))) == header.format(2**63 - 1)
    with pytest.raises(ValueError, match=r"line 1: dimension 9223372036854775808 is larger "
                                         r"than the largest int64"):
        tracehlo.parse_ir(header.format(2**63))
    for bad in ("-3", "3.5", "n"):
        with pytest.raises(ValueError, match=rf"line 1: expected a dimension size, got '{bad}'"):
            tracehlo.parse_ir(header.format(bad))


def test_big_endian_arrays_are_byte_swapped_on_the_way_in():
    x = np.arange(6, dtype=">f4").reshape(2, 3)
    i = np.array([1, -2], dtype=">i2")
    out = tracehlo.jit(lambda a, b: a * 2 + b[0])(x, i)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x.astype(np.float32) * 2 + 1)
    np.testing.assert_allclose(tnp.sin(x), np.sin(x.astype(np.float32)), rtol=1e-6)
    g = tracehlo.make_ir(lambda a: a + x)(np.zeros((2, 3), np.float32))
    assert "%1: f32[2,3] = constant [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]" in str(g)
    assert tracehlo.jit(lambda a: a)(i).dtype == np.int16
