"""Our IR: a Graph of equations `outs = prim[params] ins`, and its printer.

Names are fixed when a value is created, so a rewrite that inserts one equation
changes one line of the printout. The printed form parses back (see ir_parser.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dtypes


class ArrayType(NamedTuple):
    """Shape and dtype of a value; `weak` marks a Python-scalar-derived dtype (as in JAX)."""
    shape: tuple
    dtype: np.dtype
    weak: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def strong(self) -> "ArrayType":
        return self._replace(weak=False) if self.weak else self

    def __str__(self) -> str:
        return f"{dtypes.SHORT_NAMES[self.dtype]}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other):  # weak-ness is a tracing-time hint, not part of the IR type
        return (isinstance(other, ArrayType) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.shape, self.dtype))


class Location(NamedTuple):
    """The user's source line an equation came from."""
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Var:
    """A value defined once: a graph input, a constant or an equation output."""
    __slots__ = ("id", "type")

    def __init__(self, id: int, type: ArrayType):
        self.id = id
        self.type = type

    def __repr__(self) -> str:
        return f"%{self.id}"


class Literal:
    """A scalar constant written inline where it is used (`3.0:f32[]`)."""
    __slots__ = ("value", "type")

    def __init__(self, value, type: ArrayType):
        self.value = np.asarray(value, type.dtype)
        self.type = type

    def __repr__(self) -> str:
        return f"{format_scalar(self.value)}:{self.type}"

    def _key(self):
        return self.type.dtype, self.type.weak, self.value.tobytes()

    # equal literals are one value: common-subexpression elimination compares operands
    def __eq__(self, other):
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


class Eqn:
    __slots__ = ("prim", "inputs", "params", "outputs", "loc")

    def __init__(self, prim, inputs: list, params: dict, outputs: list, loc: Location | None):
        self.prim = prim
        self.inputs = inputs
        self.params = params
        self.outputs = outputs
        self.loc = loc


class Graph:
    """Typed inputs, constants, equations and outputs. Sub-graphs appear as params."""

    def __init__(self, name: str, inputs: list, constants: list, eqns: list, outputs: list,
                 next_id: int):
        self.name = name
        self.inputs = inputs          # [Var]
        self.constants = constants    # [(Var, np.ndarray)]
        self.eqns = eqns              # [Eqn]
        self.outputs = outputs        # [Var | Literal]
        self.next_id = next_id        # names below it are taken, used or not

    def new_var(self, type: ArrayType) -> Var:
        """A fresh name for a rewrite: never reuses or renumbers existing ones."""
        self.next_id += 1
        return Var(self.next_id - 1, type)

    @property
    def in_types(self) -> list:
        return [v.type for v in self.inputs]

    @property
    def out_types(self) -> list:
        return [v.type for v in self.outputs]

    def to_text(self, locations: bool = False) -> str:
        return "\n".join(_graph_lines(self, locations, "")) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"<Graph @{self.name}: {len(self.eqns)} equations>"


# ---------------------------------------------------------------- printing

def format_scalar(value: np.ndarray) -> str:
    """Shortest text that parses back to exactly this value of its dtype."""
    v = value.item() if isinstance(value, np.ndarray) else value
    if value.dtype == dtypes.bool_:
        return "true" if v else "false"
    if dtypes.is_complex(value.dtype):
        return f"({format_scalar(value.real)}, {format_scalar(value.imag)})"
    if dtypes.is_float(value.dtype):
        text = str(np.asarray(value)[()])  # numpy's shortest round-trip repr for the dtype
        return text if any(c in text for c in ".eanf") else text + ".0"
    return str(int(v))


_INLINE_ELEMENTS = 16


def format_constant(value: np.ndarray) -> str:
    """Small constants as nested lists; large ones as raw little-endian hex, like MLIR."""
    if value.size <= _INLINE_ELEMENTS:
        def nest(a):
            if a.ndim == 0:
                return format_scalar(a)
            return "[" + ", ".join(nest(a[i]) for i in range(a.shape[0])) + "]"
        return nest(np.asarray(value))
    return f'dense<"{hex_bytes(value)}">'


def hex_bytes(value: np.ndarray) -> str:
    """Raw little-endian bytes as MLIR's `0x...` hex (bools one byte each), exact for
    every dtype: used by our IR printer and by the StableHLO lowering."""
    value = np.asarray(value)
    if value.dtype == dtypes.bool_:
        value = value.astype(np.uint8)
    data = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<"), copy=False)
    return "0x" + data.tobytes().hex().upper()


def format_param(value, indent: str, locations: bool = False) -> str:
    if isinstance(value, Graph):
        body = _graph_lines(value, locations, indent + "  ")  # its `}` under the equation's
        return "\n".join(body)[len(indent) + 2:]
    if isinstance(value, tuple):
        inner = ", ".join(format_param(v, indent, locations) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.dtype):
        return dtypes.SHORT_NAMES[value]
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "none"
    if isinstance(value, str):
        return repr(value)
    if hasattr(value, "__name__"):  # a custom call's Python rule: parsed back, its name
        return repr(value.__name__)
    if isinstance(value, (int, float)):
        return format_scalar(np.asarray(value))
    if isinstance(value, np.ndarray):
        return f"array<{ArrayType(value.shape, value.dtype)}, {format_constant(value)}>"
    raise TypeError(f"cannot print parameter value {value!r}")


def _graph_lines(g: Graph, locations: bool, indent: str) -> list:
    args = ", ".join(f"{v!r}: {v.type}" for v in g.inputs)
    outs = ", ".join(str(t) for t in g.out_types)
    lines = [f"{indent}func @{g.name}({args}) -> ({outs}) {{"]
    inner = indent + "  "
    for var, value in g.constants:
        lines.append(f"{inner}{var!r}: {var.type} = constant {format_constant(value)}")
    for eqn in g.eqns:
        outs = ", ".join(f"{v!r}: {v.type}" for v in eqn.outputs)
        params = ""
        if eqn.params:
            params = "[" + ", ".join(f"{k}={format_param(v, inner, locations)}"
                                     for k, v in eqn.params.items()) + "]"
        ins = ", ".join(map(repr, eqn.inputs))
        line = f"{inner}{outs} = {eqn.prim.name}{params}{' ' + ins if ins else ''}"
        if locations and eqn.loc is not None:
            line += f'  loc("{eqn.loc.file}":{eqn.loc.line})'
        lines.append(line)
    lines.append(f"{inner}return" + "".join(f"{',' if i else ''} {a!r}"
                                            for i, a in enumerate(g.outputs)))
    lines.append(f"{indent}}}")
    return lines
