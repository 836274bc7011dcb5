"""Graph -> StableHLO text: a loop over equations with an environment.

Each primitive's lowering rule (in primitives/*.py, registered in
lowering_rules below) gets a LoweringContext and its operands' SSA names and emits
ops as text. We print text directly rather than build MLIR objects: it is what
the user reads, and it keeps the frontend fast; jaxlib's parser verifies it.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .ir import ArrayType, Graph, Literal, Location, hex_bytes

lowering_rules: dict = {}  # prim -> (ctx, eqn, *operand_ssa_names) -> ssa | [ssa]


def tensor_type(t: ArrayType) -> str:
    dims = "".join(f"{d}x" for d in t.shape)
    return f"tensor<{dims}{dtypes.MLIR_NAMES[t.dtype]}>"


def dense_attr(value: np.ndarray) -> str:
    """An MLIR dense elements attribute, exact for every dtype."""
    value = np.asarray(value)
    if value.size == 0:
        return "dense<>"
    if value.ndim == 0 or value.size == 1 or np.all(value == value.flat[0]):
        return f"dense<{_scalar_text(value.reshape(-1)[0] if value.size else value)}>"
    return f'dense<"{hex_bytes(value)}">'


def _scalar_text(x) -> str:
    x = np.asarray(x)
    if x.dtype == dtypes.bool_:
        return "true" if x else "false"
    if dtypes.is_complex(x.dtype):
        return f"({_scalar_text(x.real)}, {_scalar_text(x.imag)})"
    if dtypes.is_float(x.dtype):
        if np.isfinite(x):
            return repr(float(x))  # exact: every float16/32 is a double
        bits = x.view(f"u{x.dtype.itemsize}")
        return f"0x{int(bits):0{2 * x.dtype.itemsize}X}"
    return str(int(x))


def dims_attr(dims) -> str:
    return f"array<i64{': ' if len(dims) else ''}{', '.join(map(str, dims))}>"


def mlir_loc(loc: Location | None) -> str:
    if loc is None:
        return ""
    return f' loc("{loc.file}":{loc.line}:0)'


class LoweringContext:
    """Emits the ops of one function body; rules call `op` and get SSA names back."""

    def __init__(self, locations: bool):
        self.locations = locations
        self.lines: list[str] = []
        self.indent = "    "
        self.loc: Location | None = None
        self._counter = 0
        self._scalar_constants: dict = {}
        self._region_depth = 0

    def fresh(self) -> str:
        self._counter += 1
        return f"%{self._counter - 1}"

    def op(self, text: str, num_results: int = 1):
        """Emit `%r = text` with the current location; returns the result name(s)."""
        name = self.fresh()
        loc = mlir_loc(self.loc) if self.locations else ""
        if num_results == 1:
            self.lines.append(f"{self.indent}{name} = {text}{loc}")
            return name
        self.lines.append(f"{self.indent}{name}:{num_results} = {text}{loc}")
        return [f"{name}#{i}" for i in range(num_results)]

    def constant(self, value, dtype, shape=()) -> str:
        """A splat or dense constant; scalars are shared within the function."""
        value = np.asarray(value, dtype)
        t = ArrayType(tuple(shape), np.dtype(dtype))
        if value.shape != t.shape:
            value = np.broadcast_to(value, t.shape)
        # only function-level constants are shared: one made inside a region (a
        # reduce body) is not visible outside it
        key = (t, value.tobytes()) if value.size <= 1 and not self._region_depth else None
        if key is not None and key in self._scalar_constants:
            return self._scalar_constants[key]
        name = self.op(f"stablehlo.constant {dense_attr(value)} : {tensor_type(t)}")
        if key is not None:
            self._scalar_constants[key] = name
        return name

    def region(self, arg_types: list, result_types: list, body) -> str:
        """A single-block region in generic syntax; `body(*arg_names)` returns results."""
        saved_lines, saved_indent = self.lines, self.indent
        self.lines, self.indent = [], saved_indent + "    "
        self._region_depth += 1
        args = [self.fresh() for _ in arg_types]
        results = body(*args)
        results = results if isinstance(results, list) else [results]
        ret_types = ", ".join(tensor_type(t) for t in result_types)
        self.lines.append(f"{self.indent}stablehlo.return {', '.join(results)} : {ret_types}")
        block_args = ", ".join(f"{a}: {tensor_type(t)}" for a, t in zip(args, arg_types))
        text = ("{\n" + f"{saved_indent}  ^bb0({block_args}):\n" + "\n".join(self.lines)
                + f"\n{saved_indent}}}")
        self.lines, self.indent = saved_lines, saved_indent
        self._region_depth -= 1
        return text

    def generic(self, name: str, operands, in_types, out_types, attrs: dict | None = None,
                regions=()):
        """An op in MLIR's generic syntax, which every op accepts: no per-op grammar."""
        attr_text = (" {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"
                     if attrs else "")
        region_text = f" ({', '.join(regions)})" if regions else ""
        outs = ", ".join(tensor_type(t) for t in out_types)
        outs = outs if len(out_types) == 1 else f"({outs})"
        ins = ", ".join(tensor_type(t) for t in in_types)
        return self.op(f'"{name}"({", ".join(operands)}){region_text}{attr_text} : '
                       f"({ins}) -> {outs}", len(out_types))

    # Helpers shared by many rules.
    def broadcast(self, operand: str, from_type: ArrayType, to_type: ArrayType,
                  dims=None) -> str:
        """broadcast_in_dim of `operand` (rank-0 by default) to `to_type`'s shape."""
        dims = () if dims is None else dims
        target = ArrayType(to_type.shape, from_type.dtype)
        return self.op(f"stablehlo.broadcast_in_dim {operand}, dims = [{', '.join(map(str, dims))}]"
                       f" : ({tensor_type(from_type)}) -> {tensor_type(target)}")


def lower_graph(graph: Graph, locations: bool = True, module_name: str | None = None,
                donated=()) -> str:
    """The StableHLO module for `graph` as its public @main function. Inputs whose
    index is in `donated` are marked buffer donors: XLA may reuse them for outputs."""
    ctx = LoweringContext(locations)
    env: dict = {}

    def read(atom):
        if isinstance(atom, Literal):
            return ctx.constant(atom.value, atom.type.dtype)
        return env[atom]

    args = []
    for i, var in enumerate(graph.inputs):
        name = f"%arg{i}"
        env[var] = name
        donor = " {jax.buffer_donor = true}" if i in donated else ""
        args.append(f"{name}: {tensor_type(var.type)}{donor}")
    for var, value in graph.constants:
        env[var] = ctx.constant(value, var.type.dtype, var.type.shape)
    for eqn in live_equations(graph):
        ctx.loc = eqn.loc
        rule = lowering_rules.get(eqn.prim)
        if rule is None:
            raise NotImplementedError(f"no StableHLO lowering for primitive {eqn.prim.name}")
        results = rule(ctx, eqn, *[read(a) for a in eqn.inputs])
        results = results if isinstance(results, list) else [results]
        env.update(zip(eqn.outputs, results))
    ctx.loc = None
    outs = [read(a) for a in graph.outputs]
    out_types = ", ".join(tensor_type(t) for t in graph.out_types)
    ret = f"{ctx.indent}return {', '.join(outs)} : {out_types}" if outs else f"{ctx.indent}return"
    name = module_name or graph.name
    return "\n".join([
        f"module @{_symbol(name)} attributes {{mhlo.num_partitions = 1 : i32, "
        "mhlo.num_replicas = 1 : i32} {",
        f"  func.func public @main({', '.join(args)}) -> ({out_types}) {{",
        *ctx.lines, ret, "  }", "}", ""])


def live_equations(graph: Graph) -> list:
    """The equations some output depends on, in order: traced code that computes a
    value nobody uses is not lowered (all our primitives are free of side effects)."""
    live = {id(a) for a in graph.outputs}
    kept = []
    for eqn in reversed(graph.eqns):
        if any(id(v) in live for v in eqn.outputs):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs)
    return kept[::-1]


def _symbol(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return safe if safe and not safe[0].isdigit() else f"m_{safe}"
