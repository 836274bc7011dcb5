"""The interpreter interface in core: bind dispatches to traces, lift makes constants
of the current trace, closure conversion, escaped tracers, eval_graph, and the import
graph of the package."""
import ast
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import core, lax


class CountingTrace(core.Trace):
    """A trace over concrete values that counts the primitives it sees: the shape of
    what jvp and vmap will be (process each primitive, bind on the lower values)."""

    def __init__(self):
        self.seen = []

    def process_primitive(self, prim, operands, params):
        self.seen.append(prim.name)
        values = [x.value if isinstance(x, Counted) and x._trace is self else x
                  for x in operands]
        outs = prim.bind(*values, **params)
        return [Counted(self, v) for v in (outs if prim.multiple_results else [outs])]

    def concrete(self, tracer, what):
        inner = tracer.value
        if isinstance(inner, core.Tracer):
            return inner._trace.concrete(inner, what)
        return np.asarray(inner)


class Counted(core.Tracer):
    __slots__ = ("value",)

    def __init__(self, trace, value):
        self._trace = trace
        self.value = value

    @property
    def type(self):
        return core.type_of(self.value)


def test_bind_goes_to_the_innermost_trace_of_the_operands():
    with core.new_trace(CountingTrace()) as counting:
        x = Counted(counting, jnp.arange(3.0))
        y = tnp.sin(x) * 2 + 1.0
        assert isinstance(y, Counted) and isinstance(y.value, jax.Array)
        assert counting.seen == ["sin", "mul", "add"]
        z = lax.cos(jnp.ones(2))  # no Counted operand: the current (evaluation) trace
        assert isinstance(z, jax.Array) and counting.seen == ["sin", "mul", "add"]
    np.testing.assert_allclose(y.value, np.sin(np.arange(3.0)) * 2 + 1, rtol=1e-6)


def test_a_tracer_over_a_concrete_value_answers_conversions():
    with core.new_trace(CountingTrace()) as counting:
        x = Counted(counting, jnp.array([2.0, -1.0], jnp.float32))
        s = tnp.sum(x * 3)
        assert bool(s > 0) and float(s) == 3.0 and int(s) == 3 and complex(s) == 3
        assert [1, 2, 3, 4][Counted(counting, jnp.int32(2))] == 3
        np.testing.assert_array_equal(np.asarray(x), [2.0, -1.0])


def test_a_staged_tracer_refuses_conversions_at_the_users_line():
    def f(x):
        return 1.0 if x[0] > 0 else 2.0
    with pytest.raises(tracehlo.TracerBoolConversionError,
                       match=r"test_core.py:\d+: a Python `if`, `while`, `and`/`or` or bool\(\) "
                             r"needs a concrete value, but this is a traced bool\[\]"):
        tracehlo.make_ir(f)(np.ones(2, np.float32))
    for convert, what in [(int, r"int\(\)"), (float, r"float\(\)"), (complex, r"complex\(\)"),
                          (np.asarray, "converting to a NumPy array"),
                          ([0, 1].__getitem__, "using a traced value as a Python index")]:
        with pytest.raises(tracehlo.ConcretizationError,
                           match=rf"test_core.py:\d+: {what} needs a concrete value"):
            tracehlo.make_ir(lambda x: convert(x))(np.int32(1))


def test_a_concrete_trace_inside_staging_stages_and_refuses_conversions():
    def f(a):  # the shape of jvp inside jit
        with core.new_trace(CountingTrace()) as counting:
            y = Counted(counting, a) * 2
            assert counting.seen == ["mul"] and isinstance(y.value, core.Tracer)
            with pytest.raises(tracehlo.TracerBoolConversionError):
                bool(y[0] > 0)
        return y.value
    g = tracehlo.make_ir(f)(np.ones(2, np.float32))
    assert str(g) == ("func @f(%0: f32[2]) -> (f32[2]) {\n"
                      "  %1: f32[2] = mul %0, 2.0:f32[]\n"
                      "  return %1\n}\n")


def test_lift_makes_constants_of_the_current_trace():
    eager = core.lift([1, 2, 3], np.float32)
    assert isinstance(eager, jax.Array) and eager.dtype == np.float32
    np.testing.assert_array_equal(eager, [1.0, 2.0, 3.0])
    weak = core.lift(2, np.float16, weak=True)
    assert weak.dtype == np.float16 and weak.aval.weak_type
    assert (weak + np.float16(1)).dtype == jnp.float16
    assert not core.lift(np.float32(2)).aval.weak_type
    big_endian = core.lift(np.arange(3, dtype=">i4"))
    np.testing.assert_array_equal(big_endian, [0, 1, 2])
    assert core.lift(1 + 2j, np.float32).item() == 1.0  # the real part, as astype

    def f(x):
        return (x * core.lift(2.0, np.float32, weak=True), x + core.lift(np.ones(3), np.float32),
                core.lift(np.int64(7)))
    g = tracehlo.make_ir(f)(np.zeros(3, np.float32))
    assert str(g) == ("func @f(%0: f32[3]) -> (f32[3], f32[3], i32[]) {\n"
                      "  %2: f32[3] = constant [1.0, 1.0, 1.0]\n"
                      "  %1: f32[3] = mul %0, 2.0:f32[]\n"
                      "  %3: f32[3] = add %0, %2\n"
                      "  return %1, %3, 7:i32[]\n}\n")
    np.testing.assert_allclose(tracehlo.jit(f)(np.ones(3, np.float32))[1], [2.0, 2.0, 2.0])


def test_eager_cache_keeps_weak_and_strong_results_apart():
    weak = lax.add(core.lift(1.0, np.float32, weak=True), core.lift(2.0, np.float32, weak=True))
    strong = lax.add(core.lift(1.0, np.float32), core.lift(2.0, np.float32))
    assert weak.aval.weak_type and not strong.aval.weak_type


def test_outer_tracer_in_a_nested_jit_becomes_an_input_of_the_callee():
    def outer(x):
        y = tnp.sin(x)
        return tracehlo.jit(lambda a: a * y)(x)
    g = tracehlo.make_ir(outer)(np.ones(3, np.float32))
    assert str(g) == (
        "func @outer(%0: f32[3]) -> (f32[3]) {\n"
        "  %1: f32[3] = sin %0\n"
        "  %2: f32[3] = pjit[name='lambda', graph=func @lambda(%0: f32[3], %1: f32[3]) -> (f32[3]) {\n"
        "      %2: f32[3] = mul %0, %1\n"
        "      return %2\n"
        "    }] %0, %1\n"
        "  return %2\n}\n")
    tracehlo.verify(g)
    x = np.linspace(0, 1, 3, dtype=np.float32)
    np.testing.assert_allclose(tracehlo.jit(outer)(x), x * np.sin(x), rtol=1e-6)


def test_closure_conversion_threads_through_every_level():
    def outer(x):
        y = x + 1.0

        def middle(a):
            return tracehlo.jit(lambda b: b * y)(a) - 1.0
        return tracehlo.jit(middle)(x)
    g = tracehlo.make_ir(outer)(np.ones(2, np.float32))
    middle_graph = g.eqns[-1].params["graph"]
    assert len(middle_graph.inputs) == 2 and g.eqns[-1].inputs[1] is g.eqns[0].outputs[0]
    assert len(middle_graph.eqns[0].params["graph"].inputs) == 2
    tracehlo.verify(g)
    np.testing.assert_allclose(tracehlo.jit(outer)(np.full(2, 2.0, np.float32)), [5.0, 5.0])


def test_tracer_of_an_ended_trace_is_an_escaped_error():
    leaked = []
    tracehlo.make_ir(lambda x: leaked.append(x * 2) or x)(np.zeros(2, np.float32))
    for use in (lambda: tracehlo.make_ir(lambda y: y + leaked[0])(np.zeros(2, np.float32)),
                lambda: tnp.sin(leaked[0]),
                lambda: tracehlo.jit(lambda y: tracehlo.jit(lambda z: z + leaked[0])(y))(
                    np.zeros(2, np.float32))):
        with pytest.raises(tracehlo.TracehloError,
                           match=r"test_core.py:\d+: a traced value escaped"):
            use()


EVAL_CASES = [
    ("mlp", lambda x, w: tracehlo.nn.relu(x @ w + np.arange(3, dtype=np.float32)) * 0.5,
     (np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))),
    ("multi", lambda x, i: (tnp.sort(x)[::-1], x[i], tnp.argmax(x), x > 2, -x.astype(np.int32)),
     (np.arange(6, dtype=np.float32), np.int32(1))),
    ("call", lambda x: tracehlo.jit(lambda a: tnp.exp(a) + 1)(x) * 2,
     (np.ones((2, 2), np.float32),)),
]


@pytest.mark.parametrize("name,fn,args", EVAL_CASES, ids=[c[0] for c in EVAL_CASES])
def test_eval_graph_reproduces_and_runs_the_graph(name, fn, args):
    g = tracehlo.make_ir(fn)(*args)

    def replay(*a):
        return core.eval_graph(g, *a)
    replay.__name__ = g.name
    assert str(tracehlo.make_ir(replay)(*args)) == str(g)
    eager = core.eval_graph(g, *map(jnp.asarray, args))
    for got, want in zip(eager, jax.tree_util.tree_leaves(tracehlo.jit(fn)(*args))):
        assert isinstance(got, jax.Array)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_no_import_cycle_through_core():
    package = pathlib.Path(tracehlo.__file__).parent
    edges = {}
    for path in package.rglob("*.py"):
        module = ".".join(path.relative_to(package).with_suffix("").parts)
        base = module.split(".")[:-1]  # the package a relative import starts from
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                parent = base[:len(base) - node.level + 1]
                names = [node.module] if node.module else [a.name for a in node.names]
                targets.update(".".join(parent + n.split(".")) for n in names)
        edges[module] = {t.removesuffix(".__init__") for t in targets}

    def reaches(start, goal, seen):
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and (seen.add(nxt) or reaches(nxt, goal, seen))):
                return True
        return False
    assert "eager" not in edges["core"]
    assert not reaches("core", "core", set()), edges["core"]


def test_lift_refuses_python_ints_out_of_range_and_dedupes_constants():
    with pytest.raises(OverflowError, match=r"test_core.py:\d+: Python int 300 is out of "
                                            r"range for i8"):
        core.lift(300, np.int8)
    w = np.arange(4, dtype=np.float32)

    def f(x):  # one object lifted twice is one constant; another dtype is another
        return x + core.lift(w) * core.lift(w), core.lift(w, np.int32)
    g = tracehlo.make_ir(f)(np.zeros(4, np.float32))
    assert [str(var.type) for var, _ in g.constants] == ["f32[4]", "i32[4]"]


def test_known_value_is_what_tracing_can_decide():
    assert core.known_value(3) == 3 and core.known_value(np.float32(2)).dtype == np.float32
    assert core.known_value(jnp.ones(2)) is None

    def f(x):
        assert core.known_value(x) is None
        assert core.known_value(core.lift(0.0, np.float32, weak=True)) == 0
        assert core.known_value(core.lift(np.ones(3))) is None  # a constant, not inline
        return x
    tracehlo.make_ir(f)(np.ones(3, np.float32))
