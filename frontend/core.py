"""Primitives, the rule tables keyed by them, and the interpreters behind bind().

Every operation ends in `bind(prim, *operands, **params)`, which hands it to a Trace
(JAX's design, as in Autodidax): the innermost trace among the operands' tracers, else
the current dynamic one, which is a staging trace while a function is traced to a
Graph and otherwise the evaluation trace that eager.py installs at the bottom. A new
interpretation (jvp, vmap) is a new Trace, not a new case in bind. The trace stack is
a context variable, so two threads never see each other's traces.
Each primitive's rules are registered next to its definition in primitives/*.py,
so a newcomer finds its shape rule and lowering by grepping its name.
"""
from __future__ import annotations

import contextlib
import contextvars
import operator
import os
import sys

import jax.tree_util as tree_util
import numpy as np

from . import dtypes
from .ir import ArrayType, Eqn, Graph, Literal, Location, Var
from .ir_passes import simplify


class Primitive:
    __slots__ = ("name", "multiple_results")

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *operands, **params):
        return bind(self, operands, params)

    def __repr__(self) -> str:
        return self.name


# The interpretations of a primitive, each a table keyed by primitive.
primitives: dict[str, Primitive] = {}      # by name, for the IR parser
shape_rules: dict = {}     # prim -> (*in_types, **params) -> ArrayType | [ArrayType]


def primitive(name: str, multiple_results: bool = False) -> Primitive:
    prim = Primitive(name, multiple_results)
    primitives[name] = prim
    return prim


class TracehloError(Exception):
    """An error in the user's program, reported at the user's own source line."""


class TracerBoolConversionError(TracehloError, TypeError):
    pass


class ConcretizationError(TracehloError, TypeError):
    pass


class UnexpectedTracerError(TracehloError, TypeError):
    pass


# ---------------------------------------------------------------- source locations

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_DIRS = (_PACKAGE_DIR + os.sep,
              os.path.dirname(os.path.abspath(np.__file__)) + os.sep,
              # JAX's package: tree_util.py sits at its top
              os.path.dirname(os.path.abspath(tree_util.__file__)) + os.sep)


_library_code: dict = {}  # code object -> whether it is ours (or NumPy's, or JAX's)


def user_location() -> Location | None:
    """The innermost stack frame outside tracehlo, NumPy and JAX (pytree helpers, or
    a JAX numpy function handed a traced value)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        library = _library_code.get(code)
        if library is None:  # decided once per function: this runs for every equation
            filename = code.co_filename
            library = _library_code[code] = filename.startswith(_SKIP_DIRS)
        if not library:
            return Location(code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


_location_override: contextvars.ContextVar = contextvars.ContextVar(
    "tracehlo_location", default=None)


@contextlib.contextmanager
def source_location(loc: Location | None):
    """Equations staged while active take `loc` as their source line: a backward pass
    gives its equations the line of the forward operation they differentiate."""
    token = _location_override.set(loc)
    try:
        yield
    finally:
        _location_override.reset(token)


def current_location() -> Location | None:
    """The source line of an equation staged now."""
    return _location_override.get() or user_location()


def at_user_line(message: str) -> str:
    loc = user_location()
    return f"{loc}: {message}" if loc else message


# ---------------------------------------------------------------- host values and types

def _device_dtype(dt) -> np.dtype:
    """The dtype a host value of dtype `dt` gets on device: 64 bits narrowed unless x64,
    big-endian NumPy data byte-swapped (as JAX converts it)."""
    try:
        return dtypes.canonicalize(dt)
    except TypeError:
        dt = np.dtype(dt)
        if dt.isnative:
            raise
        return dtypes.canonicalize(dt.newbyteorder("="))


def concrete_value(x) -> np.ndarray:
    """A host value as a NumPy array of its device dtype (64-bit narrowed unless x64)."""
    if isinstance(x, (bool, int, float, complex)):
        dtype = dtypes.python_scalar_dtype(x)
        return np.asarray(x, dtypes.canonicalize(dtype))
    value = np.asarray(x)
    return value.astype(_device_dtype(value.dtype), copy=False)


def type_of(x) -> ArrayType:
    """The ArrayType of any operand: Tracer, Literal, jax/NumPy array or Python scalar."""
    if isinstance(x, (Tracer, Literal)):
        return x.type
    if dtypes.is_python_scalar(x):
        return ArrayType((), dtypes.canonicalize(dtypes.python_scalar_dtype(x)),
                         dtypes.is_weak_scalar(x))
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ArrayType(tuple(x.shape), _device_dtype(x.dtype),
                         bool(getattr(getattr(x, "aval", None), "weak_type", False)))
    if isinstance(x, (list, tuple)):
        value = concrete_value(x)
        return ArrayType(value.shape, value.dtype)
    raise TypeError(at_user_line(
        f"{type(x).__name__} is not an array type: tracehlo operations take arrays, "
        "Python scalars or nested lists of numbers"))


def check_callable(fun) -> None:
    """A transformation is given a function: JAX's error, at once, where not."""
    if not callable(fun):
        raise TypeError(at_user_line(f"Expected a callable value, got {fun}"))


def result_types(prim: Primitive, in_types: list, params: dict) -> list:
    """The output types the primitive's shape rule gives, errors at the user's line."""
    try:
        out_types = shape_rules[prim](*in_types, **params)
    except (TypeError, ValueError) as e:  # ill-typed use: say where in the user's code
        if isinstance(e, TracehloError):
            raise
        raise type(e)(at_user_line(str(e))) from None
    return out_types if prim.multiple_results else [out_types]


# ---------------------------------------------------------------- traces

class Trace:
    """One interpretation of primitives. `level` is its depth in the trace stack."""
    dynamic = False  # a dynamic trace takes every bind while it is the innermost one
    level = 0

    def process_primitive(self, prim: Primitive, operands, params: dict) -> list:
        """Apply `prim` to operands (this trace's tracers, outer values, host values)."""
        raise NotImplementedError

    def lift(self, x, dtype, weak: bool):
        """A host value, converted to dtype (None: its own), as a value of this trace."""
        raise NotImplementedError

    def known_value(self, tracer: "Tracer"):
        """The value of one of this trace's tracers if known without computing, else None."""
        return None

    def concrete(self, tracer: "Tracer", what: str):
        """The concrete value behind one of this trace's tracers, for a Python
        conversion (`what`); a trace that has none (staging) says why not."""
        if what == "bool()":
            raise TracerBoolConversionError(at_user_line(
                f"a Python `if`, `while`, `and`/`or` or bool() needs a concrete value, but "
                f"this is a traced {tracer.type}. Use tracehlo.numpy.where(cond, a, b) to "
                "choose values inside the function, or mark the argument static "
                "(static_argnums/static_argnames)."))
        raise ConcretizationError(at_user_line(
            f"{what} needs a concrete value, but this is a traced {tracer.type}. Keep the "
            "computation in tracehlo.numpy, or mark the argument static "
            "(static_argnums/static_argnames)."))


# (stack of active traces with the evaluation trace at index 0, innermost dynamic trace)
_trace_state: contextvars.ContextVar = contextvars.ContextVar("tracehlo_trace_state")
_base_state: tuple = ((), None)


def install_evaluation_trace(trace: Trace) -> None:
    """The bottom of every thread's trace stack: what bind does outside any trace."""
    global _base_state
    trace.level = 0
    _base_state = ((trace,), trace)


@contextlib.contextmanager
def evaluating():
    """While active, bind evaluates, as outside any trace: a constant computed from
    static values (under jit too) gets the value its own compiled program gives."""
    token = _trace_state.set(_base_state)
    try:
        yield
    finally:
        _trace_state.reset(token)


@contextlib.contextmanager
def new_trace(trace: Trace):
    """Make `trace` the innermost one in this thread (and context) while active."""
    stack, dynamic = _trace_state.get(_base_state)
    trace.level = len(stack)
    token = _trace_state.set((stack + (trace,), trace if trace.dynamic else dynamic))
    try:
        yield trace
    finally:
        _trace_state.reset(token)


def tracing() -> bool:
    """Whether any trace besides evaluation is active (a call must then bind, not run)."""
    return len(_trace_state.get(_base_state)[0]) > 1


def _is_active(trace: Trace, stack: tuple) -> bool:
    return trace.level < len(stack) and stack[trace.level] is trace


def _escaped_error() -> TracehloError:
    return TracehloError(at_user_line(
        "a traced value escaped from the function that produced it (stored in a "
        "global or closed over by another traced function); pass it as an argument"))


def bind(prim: Primitive, operands, params: dict):
    outs = find_trace(operands).process_primitive(prim, operands, params)
    return outs if prim.multiple_results else outs[0]


def find_trace(operands) -> Trace:
    """The trace that interprets an operation on these operands: the innermost one among
    their tracers, else the current dynamic one. (custom_jvp/custom_vjp/checkpoint ask
    it too, to decide whether their rule applies.)"""
    stack, trace = _trace_state.get(_base_state)
    for x in operands:
        if isinstance(x, Tracer) and x._trace is not trace:
            return _innermost_trace(operands, trace, stack)
    return trace


def _innermost_trace(operands, trace: Trace, stack: tuple) -> Trace:
    for x in operands:
        if isinstance(x, Tracer) and x._trace.level >= trace.level and x._trace is not trace:
            if not _is_active(x._trace, stack):
                raise _escaped_error()
            trace = x._trace
    return trace


def lift(x, dtype=None, weak: bool = False):
    """A host value (Python scalar, NumPy array or scalar, nested list), converted to
    `dtype`, as an array of the current trace: a constant of the graph being staged
    (a scalar as an inline literal, `2.0:f32[]`) or a device array when evaluating.
    `weak` marks it weakly typed, as JAX types Python scalars."""
    return _trace_state.get(_base_state)[1].lift(x, dtype, weak)


def host_value(x, dtype=None) -> np.ndarray:
    """A host value as a NumPy array of `dtype` (default: the dtype the device gives it).
    A complex value keeps its real part for a real dtype, as astype does; a Python int
    out of the dtype's range is an error, as in JAX."""
    if dtype is None:
        return concrete_value(x)
    dtype = dtypes.canonicalize(dtype)
    if isinstance(x, complex) and not dtypes.is_complex(dtype):
        x = x.real
    if isinstance(x, (bool, int, float, complex)):
        try:
            return np.asarray(x, dtype)
        except OverflowError:
            raise OverflowError(at_user_line(
                f"Python int {x} is out of range for {dtypes.SHORT_NAMES[dtype]}")) from None
    value = np.asarray(x)
    if dtypes.is_complex(value.dtype) and not dtypes.is_complex(dtype):
        value = value.real
    return value.astype(dtype, copy=False)


def known_value(x) -> np.ndarray | None:
    """x's value if it is known without computing anything (a host value, or a
    scalar staged inline), else None: lets a function decide a case while tracing."""
    if isinstance(x, Tracer):
        return x._trace.known_value(x)
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic, list, tuple)):
        return concrete_value(x)
    return None


class Tracer:
    """A value of a trace: carries its type; Python operators map to tracehlo.numpy.
    Conversions to Python values ask the trace, which may know a concrete value."""
    __slots__ = ("_trace",)
    __array_priority__ = 1000  # NumPy defers `ndarray + Tracer` to us

    @property
    def type(self) -> ArrayType:
        raise NotImplementedError

    shape = property(lambda self: self.type.shape)
    dtype = property(lambda self: self.type.dtype)
    ndim = property(lambda self: len(self.type.shape))
    size = property(lambda self: self.type.size)

    def __len__(self):
        if not self.shape:
            raise TypeError(at_user_line("len() of a 0-d array"))
        return self.shape[0]

    def __repr__(self):
        return f"Tracer<{self.type}>"

    def __bool__(self):
        return bool(self._trace.concrete(self, "bool()"))

    def __int__(self):
        return int(self._trace.concrete(self, "int()"))

    def __float__(self):
        return float(self._trace.concrete(self, "float()"))

    def __complex__(self):
        return complex(self._trace.concrete(self, "complex()"))

    def __index__(self):
        return operator.index(self._trace.concrete(
            self, "using a traced value as a Python index"))

    def item(self, *args):
        """The value as a Python scalar, where the trace has it (a transformation outside
        jit: without its derivative, as JAX's item)."""
        return np.asarray(self._trace.concrete(self, "item()")).item(*args)

    def tolist(self):
        return np.asarray(self).tolist()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._trace.concrete(self, "converting to a NumPy array"), dtype)

    def __iter__(self):
        if not self.shape:
            raise TypeError(at_user_line("iteration over a 0-d array"))
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # arrays are unhashable, as in NumPy and JAX


# ---------------------------------------------------------------- staging

class GraphBuilder:
    """The state of a staging trace: the equations recorded so far, by IR atoms."""

    def __init__(self, name: str):
        self.name = "".join(c if c.isalnum() or c in "_." else "" for c in name) or "fn"
        self.inputs: list[Var] = []
        self.constants: list = []
        self._const_ids: dict = {}  # (id, dtype) -> Var
        self._keep_alive: list = []  # constants' ids stay unique while we cache by id
        self.eqns: list[Eqn] = []
        self.next_id = 0

    def new_var(self, type: ArrayType) -> Var:
        var = Var(self.next_id, type)
        self.next_id += 1
        return var

    def new_constant(self, value: np.ndarray) -> Var:
        var = self.new_var(ArrayType(value.shape, value.dtype))
        self.constants.append((var, value))
        return var

    def host_atom(self, x, dtype=None, weak=None):
        """A host value as an atom: a Literal if 0-d (weak as type_of says unless
        given), else a constant, one per object and dtype."""
        value = host_value(x, dtype)
        if value.ndim == 0:
            return Literal(value, ArrayType((), value.dtype,
                                            type_of(x).weak if weak is None else weak))
        key = (id(x), value.dtype)
        var = self._const_ids.get(key)
        if var is None:
            var = self._const_ids[key] = self.new_constant(value)
            self._keep_alive.append(x)
        return var

    def add_eqn(self, prim, ins: list, params: dict, out_types) -> list[Var]:
        first = self.next_id
        outs = [Var(first + i, t) for i, t in enumerate(out_types)]
        self.next_id = first + len(outs)
        self.eqns.append(Eqn(prim, ins, params, outs, current_location()))
        return outs

    def build(self, inputs: list, outputs: list) -> Graph:
        """The Graph, simplified: what make_ir prints is what lowering emits."""
        return simplify(Graph(self.name, inputs, self.constants, self.eqns, outputs,
                              self.next_id))


class StagingTrace(Trace):
    """Records every primitive as an equation of a Graph instead of running it.

    A tracer of an enclosing trace (staging, vmap, ...) used here (closed over by a nested
    jit, a future cond branch or scan body) becomes an extra input of this graph: the
    caller passes the outer value in (closure conversion), which its trace interprets."""
    dynamic = True

    def __init__(self, name: str):
        self.builder = GraphBuilder(name)
        self.captured: dict = {}  # outer Var -> (input Var here, the outer tracer)

    def new_input(self, type: ArrayType) -> "StagingTracer":
        var = self.builder.new_var(type)
        self.builder.inputs.append(var)
        return StagingTracer(self, var)

    def process_primitive(self, prim, operands, params):
        ins = [x.atom if x.__class__ is StagingTracer and x._trace is self else self.atom(x)
               for x in operands]  # constants get names before the results
        out_types = result_types(prim, [a.type for a in ins], params)
        return [StagingTracer(self, v)
                for v in self.builder.add_eqn(prim, ins, params, out_types)]

    def lift(self, x, dtype, weak):
        return StagingTracer(self, self.builder.host_atom(x, dtype, weak))

    def known_value(self, tracer):
        return tracer.atom.value if isinstance(tracer.atom, Literal) else None

    def atom(self, x):
        """The IR operand for a bind() argument: a Var, a Literal, or a new constant."""
        if isinstance(x, Tracer):
            return x.atom if x._trace is self else self._capture(x)
        if isinstance(x, Literal):
            return x
        return self.builder.host_atom(x)

    def _capture(self, tracer: "Tracer"):
        outer = tracer._trace
        if outer.level >= self.level or not _is_active(outer, _trace_state.get(_base_state)[0]):
            raise _escaped_error()
        staged = isinstance(tracer, StagingTracer)
        if staged and isinstance(tracer.atom, Literal):
            return tracer.atom
        key = tracer.atom if staged else id(tracer)  # the entry keeps the tracer alive
        entry = self.captured.get(key)
        if entry is None:
            entry = self.captured[key] = (self.builder.new_var(tracer.type), tracer)
        return entry[0]

    def captured_values(self) -> list:
        """The outer tracers this graph closed over, in the order of its extra inputs."""
        return [tracer for _, tracer in self.captured.values()]

    def build(self, outputs) -> Graph:
        """The staged Graph: explicit inputs, then one input per captured outer value.
        The outputs are converted first: one may be an outer value returned unchanged,
        captured only now, and it must be an input too."""
        out_atoms = [self.atom(x) for x in outputs]
        inputs = self.builder.inputs + [var for var, _ in self.captured.values()]
        return self.builder.build(inputs, out_atoms)


class StagingTracer(Tracer):
    """A value of a graph being staged: a Var, or a Literal written inline."""
    __slots__ = ("atom",)

    def __init__(self, trace: StagingTrace, atom):
        self._trace = trace
        self.atom = atom

    @property
    def type(self) -> ArrayType:
        return self.atom.type


def staging(name: str):
    """`with staging(name) as trace:` bind() records into a new Graph while active."""
    return new_trace(StagingTrace(name))


def eval_graph(graph: Graph, *args, apply=None) -> list:
    """Bind every equation of `graph` again, under whatever traces are active: on device
    arrays it runs the graph, under a staging trace it copies it into that trace (and
    later under jvp or vmap, transforms it). Constants are lifted at first use, so a
    re-staged graph names its values as the original did. `apply(eqn, operands) ->
    outputs`, if given, replaces the bind (checkpoint reuses saved outputs there)."""
    env = dict(zip(graph.inputs, args))
    constants = dict(graph.constants)

    def read(atom):
        if isinstance(atom, Literal):
            return lift(atom.value, atom.type.dtype, atom.type.weak)
        value = env.get(atom)
        if value is None:
            value = env[atom] = lift(constants[atom])
        return value

    for eqn in graph.eqns:
        ins = [read(a) for a in eqn.inputs]
        if apply is not None:
            env.update(zip(eqn.outputs, apply(eqn, ins)))
            continue
        outs = bind(eqn.prim, ins, eqn.params)
        env.update(zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]))
    return [read(a) for a in graph.outputs]
