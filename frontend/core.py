"""Primitives, the rule tables keyed by them, and tracing: the one interception point.

Every operation ends in `bind(prim, *operands, **params)`. Inside a trace it records
an equation in the current GraphBuilder and returns Tracers; outside, it runs the
primitive eagerly (one compiled executable per primitive signature, cached).
Each primitive's rules are registered next to its definition in primitives/*.py,
so a newcomer finds its shape rule and lowering by grepping its name.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from . import dtypes
from .ir import ArrayType, Eqn, Graph, Literal, Location, Var


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


# ---------------------------------------------------------------- source locations

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_DIRS = (_PACKAGE_DIR + os.sep,
              os.path.dirname(os.path.abspath(np.__file__)) + os.sep)


def user_location() -> Location | None:
    """The innermost stack frame outside tracehlo (and NumPy/jax pytree helpers)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIP_DIRS) and "/jax/_src/tree_util" not in filename:
            return Location(filename, frame.f_lineno)
        frame = frame.f_back
    return None


def at_user_line(message: str) -> str:
    loc = user_location()
    return f"{loc}: {message}" if loc else message


# ---------------------------------------------------------------- tracing

class GraphBuilder:
    """Records equations while a Python function runs on Tracers."""

    def __init__(self, name: str):
        self.name = "".join(c if c.isalnum() or c in "_." else "" for c in name) or "fn"
        self.inputs: list[Var] = []
        self.constants: list = []
        self._const_ids: dict[int, Var] = {}
        self._keep_alive: list = []  # constants' ids stay unique while we cache by id
        self.eqns: list[Eqn] = []
        self.next_id = 0

    def new_var(self, type: ArrayType) -> Var:
        var = Var(self.next_id, type)
        self.next_id += 1
        return var

    def new_input(self, type: ArrayType) -> "Tracer":
        var = self.new_var(type)
        self.inputs.append(var)
        return Tracer(self, var)

    def atom(self, x):
        """The IR operand for a bind() argument: a Var, a Literal, or a new constant."""
        if isinstance(x, Tracer):
            if x.builder is not self:
                raise TracehloError(at_user_line(
                    "a traced value escaped from the function that produced it (stored in a "
                    "global or closed over by another traced function); pass it as an argument"))
            return x.ir_var
        if isinstance(x, Literal):
            return x
        value = concrete_value(x)
        if value.ndim == 0:
            return Literal(value, ArrayType((), value.dtype, isinstance(x, (int, float, bool, complex))))
        var = self._const_ids.get(id(x))
        if var is None:
            var = self.new_var(ArrayType(value.shape, value.dtype))
            self.constants.append((var, value))
            self._const_ids[id(x)] = var
            self._keep_alive.append(x)
        return var

    def constant_tracer(self, x) -> "Tracer":
        """A concrete value staged into the graph as a constant (for asarray in a trace)."""
        value = concrete_value(x)
        var = self.new_var(ArrayType(value.shape, value.dtype))
        self.constants.append((var, value))
        return Tracer(self, var)

    def add_eqn(self, prim, operands, params, out_types) -> list[Var]:
        ins = [self.atom(x) for x in operands]  # constants get names before the results
        outs = [self.new_var(t) for t in out_types]
        self.eqns.append(Eqn(prim, ins, params, outs, user_location()))
        return outs

    def build(self, outputs) -> Graph:
        return Graph(self.name, self.inputs, self.constants, self.eqns,
                     [self.atom(x) for x in outputs], self.next_id)


trace_stack: list[GraphBuilder] = []  # the innermost trace is last


def current_builder() -> GraphBuilder | None:
    return trace_stack[-1] if trace_stack else None


class tracing:
    """Context manager: bind() records into `builder` while active."""

    def __init__(self, builder: GraphBuilder):
        self.builder = builder

    def __enter__(self):
        trace_stack.append(self.builder)
        return self.builder

    def __exit__(self, *exc):
        trace_stack.pop()


def concrete_value(x) -> np.ndarray:
    """A host value as a NumPy array of its device dtype (64-bit narrowed unless x64)."""
    if isinstance(x, (bool, int, float, complex)):
        dtype = dtypes.python_scalar_dtype(x)
        return np.asarray(x, dtypes.canonicalize(dtype))
    value = np.asarray(x)
    return value.astype(dtypes.canonicalize(value.dtype), copy=False)


def type_of(x) -> ArrayType:
    """The ArrayType of any operand: Tracer, Literal, jax/NumPy array or Python scalar."""
    if isinstance(x, (Tracer, Literal)):
        return x.type
    if isinstance(x, (bool, int, float, complex)):
        return ArrayType((), dtypes.canonicalize(dtypes.python_scalar_dtype(x)), True)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ArrayType(tuple(x.shape), dtypes.canonicalize(x.dtype),
                         bool(getattr(getattr(x, "aval", None), "weak_type", False)))
    if isinstance(x, (list, tuple)):
        value = concrete_value(x)
        return ArrayType(value.shape, value.dtype)
    raise TypeError(at_user_line(
        f"{type(x).__name__} is not an array type: tracehlo operations take arrays, "
        "Python scalars or nested lists of numbers"))


def bind(prim: Primitive, operands, params: dict):
    in_types = [type_of(x) for x in operands]
    try:
        out_types = shape_rules[prim](*in_types, **params)
    except (TypeError, ValueError) as e:  # ill-typed use: say where in the user's code
        if isinstance(e, TracehloError):
            raise
        raise type(e)(at_user_line(str(e))) from None
    if not prim.multiple_results:
        out_types = [out_types]
    builder = trace_stack[-1] if trace_stack else None
    if builder is not None:  # inside a trace everything is staged, concrete operands too
        outs = [Tracer(builder, v) for v in builder.add_eqn(prim, operands, params, out_types)]
    else:
        from .eager import run_eagerly  # eager depends on lowering, which depends on us
        outs = run_eagerly(prim, operands, in_types, params, out_types)
    return outs if prim.multiple_results else outs[0]


class Tracer:
    """A value inside a trace: carries its type; Python operators map to tracehlo.numpy."""
    __slots__ = ("builder", "ir_var")
    __array_priority__ = 1000  # NumPy defers `ndarray + Tracer` to us

    def __init__(self, builder: GraphBuilder, var: Var):
        self.builder = builder
        self.ir_var = var

    @property
    def type(self) -> ArrayType:
        return self.ir_var.type

    shape = property(lambda self: self.ir_var.type.shape)
    dtype = property(lambda self: self.ir_var.type.dtype)
    ndim = property(lambda self: len(self.ir_var.type.shape))
    size = property(lambda self: self.ir_var.type.size)

    def __len__(self):
        if not self.shape:
            raise TypeError(at_user_line("len() of a 0-d array"))
        return self.shape[0]

    def __repr__(self):
        return f"Tracer<{self.type}>"

    def __bool__(self):
        raise TracerBoolConversionError(at_user_line(
            f"a Python `if`, `while`, `and`/`or` or bool() needs a concrete value, but this "
            f"is a traced {self.type}. Use tracehlo.numpy.where(cond, a, b) to choose values "
            "inside the function, or mark the argument static (static_argnums/static_argnames)."))

    def _concrete(self, what):
        raise ConcretizationError(at_user_line(
            f"{what} needs a concrete value, but this is a traced {self.type}. Keep the "
            "computation in tracehlo.numpy, or mark the argument static "
            "(static_argnums/static_argnames)."))

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __complex__(self):
        self._concrete("complex()")

    def __index__(self):
        self._concrete("using a traced value as a Python index")

    def __array__(self, *args, **kwargs):
        self._concrete("converting to a NumPy array")

    def __iter__(self):
        if not self.shape:
            raise TypeError(at_user_line("iteration over a 0-d array"))
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # arrays are unhashable, as in NumPy and JAX
