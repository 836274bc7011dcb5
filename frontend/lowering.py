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
            text = repr(float(x))  # exact: every float16/32 is a double
            # MLIR's float literal needs a point: repr(2e-06) does not parse
            return text if "." in text else text.replace("e", ".0e")
        bits = x.view(f"u{x.dtype.itemsize}")
        return f"0x{int(bits):0{2 * x.dtype.itemsize}X}"
    return str(int(x))


def dims_attr(dims) -> str:
    return f"array<i64{': ' if len(dims) else ''}{', '.join(map(str, dims))}>"


def mlir_loc(loc: Location | None) -> str:
    if loc is None:
        return ""
    return f' loc("{loc.file}":{loc.line}:0)'


class _Module:
    """The functions of one StableHLO module: @main, then one private function per
    called Graph. `platform` is the PJRT platform ('cpu', 'cuda', ...) the module is
    compiled for: a few rules lower as JAX does there (cholesky: LAPACK on CPU)."""

    def __init__(self, locations: bool, platform: str):
        self.locations = locations
        self.platform = platform
        self.functions: list[str] = []
        self.symbols: dict = {}  # id(Graph) -> symbol
        self.graphs: list = []   # keeps each Graph (and so its id) alive while lowering

    def symbol(self, graph: Graph, loc: Location | None) -> str:
        """The private function computing `graph`, lowered the first time it is called
        (at `loc`, which its arguments carry)."""
        name = self.symbols.get(id(graph))
        if name is None:
            taken = {"main", *self.symbols.values()}
            base = name = _symbol(graph.name)
            while name in taken:
                name = f"{base}_{len(taken)}"
            self.symbols[id(graph)] = name
            self.graphs.append(graph)
            self.functions.append(_function_text(self, graph, name, "private", (), loc))
        return name


class LoweringContext:
    """Emits the ops of one function body; rules call `op` and get SSA names back."""

    def __init__(self, module: _Module):
        self.module = module
        self.locations = module.locations
        self.platform = module.platform
        self.lines: list[str] = []
        self.indent = "    "
        self.loc: Location | None = None
        self._counter = 0
        self._scalar_constants: dict = {}
        self._splats: dict = {}  # SSA name -> the one value all its elements hold
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
        """A constant; scalars are shared within the function. One value repeated is a
        broadcast of its scalar, as JAX lowers it, which fusion copies into each
        reader. XLA's simplifier makes a splat constant such a broadcast before it
        fuses, but our passes keep non-scalar constants out of fusions, so it was a
        kernel of its own (a bf16 x != 0 then read its zero back from memory and
        took a subnormal x for 0; fuzz jit --loop 10450)."""
        value = np.asarray(value, dtype)
        t = ArrayType(tuple(shape), np.dtype(dtype))
        if value.shape != t.shape:
            value = np.broadcast_to(value, t.shape)
        if value.size > 1 and value.reshape(-1)[:1].tobytes() * value.size == value.tobytes():
            scalar = ArrayType((), t.dtype)
            return self.broadcast(self.constant(value.flat[0], dtype), scalar, t)
        # only function-level constants are shared: one made inside a region (a
        # reduce body) is not visible outside it
        key = (t, value.tobytes()) if value.size <= 1 and not self._region_depth else None
        if key is not None and key in self._scalar_constants:
            return self._scalar_constants[key]
        name = self.op(f"stablehlo.constant {dense_attr(value)} : {tensor_type(t)}")
        if key is not None:
            self._scalar_constants[key] = name
        if value.size == 1:
            self._splats[name] = value.flat[0]
        return name

    def splat_value(self, name: str):
        """The value of every element of `name` where the lowering made it a constant
        or a broadcast of one (so a rule may leave out guards it cannot need), else None."""
        return self._splats.get(name)

    def function(self, graph: Graph) -> str:
        """The symbol of a private function of this module that computes `graph`."""
        return self.module.symbol(graph, self.loc)

    def region(self, arg_types: list, result_types: list, body) -> str:
        """A single-block region in generic syntax; `body(*arg_names)` returns results."""
        saved_lines, saved_indent = self.lines, self.indent
        self.lines, self.indent = [], saved_indent + "    "
        self._region_depth += 1
        args = [self.fresh() for _ in arg_types]
        results = body(*args)
        results = results if isinstance(results, list) else [results]
        ret_types = ", ".join(tensor_type(t) for t in result_types)
        loc = mlir_loc(self.loc) if self.locations else ""  # else MLIR's parser invents one
        self.lines.append(f"{self.indent}stablehlo.return {', '.join(results)} : {ret_types}{loc}")
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
        name = self.op(f"stablehlo.broadcast_in_dim {operand}, dims = [{', '.join(map(str, dims))}]"
                       f" : ({tensor_type(from_type)}) -> {tensor_type(target)}")
        if operand in self._splats:
            self._splats[name] = self._splats[operand]
        return name


def lower_graph(graph: Graph, locations: bool = True, module_name: str | None = None,
                donated=(), loc: Location | None = None, platform: str = "cpu") -> str:
    """The StableHLO module for `graph` as its public @main function. Inputs whose
    index is in `donated` are marked buffer donors: XLA may reuse them for outputs.
    `loc` (the user's def line) is the location of the module, the function, its
    arguments and return: without one, MLIR's parser gives them its own ("-":line:col
    of this text), which fused modules would print. `platform` is the one the module
    will be compiled for (runtime.platform of the backend)."""
    module = _Module(locations, platform)
    main = _function_text(module, graph, "main", "public", donated, loc)
    name = module_name or graph.name
    return "\n".join([
        f"module @{_symbol(name)} attributes {{mhlo.num_partitions = 1 : i32, "
        "mhlo.num_replicas = 1 : i32} {", main, *module.functions,
        "}" + (mlir_loc(loc) if locations else ""), ""])


def _function_text(module: _Module, graph: Graph, name: str, visibility: str,
                   donated, loc: Location | None) -> str:
    ctx = LoweringContext(module)
    args = [f"%arg{i}" for i in range(len(graph.inputs))]
    outs = lower_body(ctx, graph, args)
    fn_loc = mlir_loc(loc) if module.locations else ""
    arg_decls = [f"{a}: {tensor_type(v.type)}"
                 f"{' {jax.buffer_donor = true}' if i in donated else ''}{fn_loc}"
                 for i, (a, v) in enumerate(zip(args, graph.inputs))]
    out_types = ", ".join(tensor_type(t) for t in graph.out_types)
    ret = f"{ctx.indent}return {', '.join(outs)} : {out_types}" if outs else f"{ctx.indent}return"
    return "\n".join([f"  func.func {visibility} @{name}({', '.join(arg_decls)}) -> "
                      f"({out_types}) {{", *ctx.lines, ret + fn_loc, "  }" + fn_loc])


def lower_body(ctx: LoweringContext, graph: Graph, args: list) -> list:
    """Emit `graph`'s equations into ctx (a function body or a region of a
    region-holding op) on operands `args`; returns the SSA names of its outputs."""
    env = dict(zip(graph.inputs, args))

    def read(atom):
        if isinstance(atom, Literal):
            return ctx.constant(atom.value, atom.type.dtype)
        return env[atom]

    for var, value in graph.constants:
        env[var] = ctx.constant(value, var.type.dtype, var.type.shape)
    outer_loc = ctx.loc
    for eqn in graph.eqns:
        ctx.loc = eqn.loc
        rule = lowering_rules.get(eqn.prim)
        if rule is None:
            raise NotImplementedError(f"no StableHLO lowering for primitive {eqn.prim.name}")
        results = rule(ctx, eqn, *[read(a) for a in eqn.inputs])
        env.update(zip(eqn.outputs, results if isinstance(results, list) else [results]))
    ctx.loc = outer_loc
    return [read(a) for a in graph.outputs]


def _symbol(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return safe if safe and not safe[0].isdigit() else f"m_{safe}"
