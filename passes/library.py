"""Kernels XLA CPU's own library builds better than a loop fusion can: what the
XlaCpu backend's hooks reserve (backends.py).

XLA CPU hands each f32 sum/max/min reduce to YNNPACK (its library rewriter runs
whether XLA's fusion is on or off) and grows that library kernel down the chain of
single-user ops after it: reduce, broadcast back, elementwise math. One such kernel
computes a normalization like softmax's exp(x - max(x)) reading x once. A loop
fusion cannot: a reduce feeding a broadcast inside it is recomputed for every
element, so our best plan reads x twice (reduce, then the rest). Where the chain
ends in an expensive value other kernels read (one we would not recompute), or in a
cheap one that costs fewer bytes written once than recomputed by each reader, the
passes leave the reduce, its chain and the producers only they read unfused, and the
report says why. What XLA takes was measured on jaxlib 0.10.2 (the sizes, the ops);
test_passes_numerics checks that XLA still builds the library kernels planned for.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from . import opinfo
from .cost import read_bytes
from .capability import reshape_like
from .graph import DataflowGraph
from .report import short_loc

# ops YNNPACK takes into a library fusion, as stablehlo names (XLA's ynn_support)
_UNARY = {"abs", "ceil", "convert", "cosine", "exponential", "exponential_minus_one",
          "floor", "log", "log_plus_one", "negate", "round_nearest_even", "rsqrt", "sign",
          "sine", "sqrt", "tanh", "tan"}
# divide left out: XLA's simplifier turns x / broadcast(s) into x * broadcast(1 / s),
# and the small 1 / s ends the library kernel there
_BINARY = {"add", "maximum", "minimum", "multiply", "power", "subtract"}
_LIBRARY_OPS = frozenset(f"stablehlo.{n}" for n in _UNARY | _BINARY | {"broadcast_in_dim",
                                                                       "reshape"})
_REDUCERS = frozenset({"stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"})
# below this many elements XLA keeps a reduce, dot or elementwise op out of the library
# (measured, jaxlib 0.10.2: a max over 4095 elements stays a loop, over 4096 it is
# YNNPACK's; an elementwise op on fewer ends the library kernel's growth)
MIN_ELEMENTS = 4096


def library_chains(graph: DataflowGraph) -> dict[int, str]:
    """Nodes to leave to XLA CPU's library, each with the reason."""
    reserved: dict[int, str] = {}
    for r, op in enumerate(graph.nodes):
        if not library_reduce(op):
            continue
        chain = [r]
        while len(graph.users[chain[-1]]) == 1 and not graph.is_returned(chain[-1]):
            user = graph.users[chain[-1]][0]
            if not _library_op(graph.nodes[user]):
                break
            chain.append(user)
        end = graph.nodes[chain[-1]]
        members = _with_producers(graph, set(chain))
        # an expensive end we would not recompute, so our plan reads the input twice;
        # a cheap one if writing it once moves fewer bytes than each reader recomputing.
        # A function result counts as a reader: it is written anyway (XLA's simplifier
        # drops abs(exp(...)), leaving the exp returned and read: its library kernel
        # stays, as measured)
        readers = len(graph.users[chain[-1]]) + graph.is_returned(chain[-1])
        if _broadcasts(graph, chain) and readers > 1 and (
                opinfo.is_expensive(end) or _library_moves_less(graph, chain, members)):
            reason = (f"left to XLA CPU's library: it computes the reduce at "
                      f"{short_loc(op)}, the {len(chain) - 1} ops after it up to "
                      f"{opinfo.name(end)}{_and_producers(len(members) - len(chain))} in "
                      "one kernel, reading the reduce's input once")
            reserved.update((i, reason) for i in members)
        elif _keeps_minor_dim(op):
            members = _with_producers(graph, {r})
            reason = (f"left to XLA CPU's library: the reduce at {short_loc(op)} keeps "
                      "the minor dimension, which a loop fusion reads with a stride "
                      f"(measured 3-13x slower){_and_producers(len(members) - 1)}")
            reserved.update((i, reason) for i in members)
    return reserved


def _and_producers(n: int) -> str:
    return f", with the {n} op{'s' * (n > 1)} only it reads" if n else ""


def _keeps_minor_dim(op) -> bool:
    """A column reduction: the last dimension is not reduced."""
    rank = ir.RankedTensorType(op.operation.operands[0].type).rank
    return rank - 1 not in opinfo.int_array(op.attributes["dimensions"])


def _library_moves_less(graph: DataflowGraph, chain: list[int], members: set[int]) -> bool:
    """For a chain ending in a cheap value, which each reader could recompute from
    the chain's inputs: whether the library kernel, writing it once, moves fewer
    bytes. A dot (or expensive op) among the producers is written and read back in
    our plan, the library takes it into its kernel."""
    inputs = sum(read_bytes(graph, v) for v in graph.inputs(members))
    readers = len(graph.users[chain[-1]])
    end = sum(opinfo.type_bytes(r.type) for r in graph.results(chain[-1]))
    library = inputs + end * (1 + readers)
    reduced = opinfo.type_bytes(graph.nodes[chain[0]].operation.operands[0].type)
    if any(graph.name(i) == "stablehlo.dot_general" or graph.is_expensive(i)
           for i in members - set(chain)):
        ours = inputs + reduced * (2 + readers)
    else:
        ours = inputs * (1 + readers)
    return library < ours


def _with_producers(graph: DataflowGraph, members: set[int]) -> set[int]:
    """The library kernel also grows up into producers all of whose users it holds."""
    todo = [p for i in members for p in graph.operands[i]]
    while todo:
        p = todo.pop()
        if (p not in members and (_library_op(graph.nodes[p]) or _library_dot(graph.nodes[p]))
                and not graph.is_returned(p)
                and all(u in members for u in graph.users[p])):
            members.add(p)
            todo.extend(graph.operands[p])
    return members


def library_reduce(op) -> bool:
    """Whether XLA CPU gives this reduce to its library (YNNPACK): an f32 or f64 sum,
    max or min of 4096+ elements (measured, jaxlib 0.10.2; f16 and bf16 sums it adds
    up as a tree, tree_reductions.py)."""
    if opinfo.name(op) != opinfo.REDUCE or len(op.operation.operands) != 2:
        return False
    operand = op.operation.operands[0].type
    return (opinfo.static_tensor(operand) and opinfo.element_type(operand) in ("f32", "f64")
            and opinfo.num_elements(operand) >= MIN_ELEMENTS and not reshape_like(op)
            and opinfo.reducer(op) in _REDUCERS)


def _library_op(op) -> bool:
    n = opinfo.name(op)
    results = list(op.operation.results)
    return ((n in _LIBRARY_OPS or n == "stablehlo.divide" and opinfo.float_constant_divisor(op))
            and all(str(r.type.element_type) == "f32" for r in results)
            and (n in ("stablehlo.broadcast_in_dim", "stablehlo.reshape")
                 or opinfo.num_elements(results[0].type) >= MIN_ELEMENTS))


def _library_dot(op) -> bool:
    """A plain f32 matrix product, which XLA CPU's library also takes (and merges
    with a library kernel reading it)."""
    if opinfo.name(op) != "stablehlo.dot_general":
        return False
    dims = op.attributes["dot_dimension_numbers"]
    lhs, rhs = (ir.RankedTensorType(v.type) for v in op.operation.operands)
    return (str(dims) == "#stablehlo.dot<lhs_contracting_dimensions = [1], "
            "rhs_contracting_dimensions = [0]>"
            and lhs.rank == rhs.rank == 2 and str(lhs.element_type) == "f32"
            and str(rhs.element_type) == "f32" and min(lhs.shape[0], rhs.shape[1]) > 1
            and lhs.shape[0] * rhs.shape[1] >= MIN_ELEMENTS)


def _broadcasts(graph: DataflowGraph, chain: list[int]) -> bool:
    """Whether the chain spreads the reduced value back over more elements."""
    return any(graph.name(i) == "stablehlo.broadcast_in_dim"
               and opinfo.num_elements(graph.nodes[i].operation.results[0].type)
               > opinfo.num_elements(graph.nodes[i].operation.operands[0].type)
               for i in chain)
