"""Kernels a backend's own library builds better than a loop fusion can.

XLA CPU hands each f32 sum/max/min reduce to YNNPACK (its library rewriter runs
whether XLA's fusion is on or off) and grows that library kernel down the chain of
single-user ops after it: reduce, broadcast back, elementwise math. One such kernel
computes a normalization like softmax's exp(x - max(x)) reading x once. A loop
fusion cannot: a reduce feeding a broadcast inside it is recomputed for every
element, so our best plan reads x twice (reduce, then the rest). Where the chain
ends in an expensive value other kernels read (one we would not recompute), the
passes leave the reduce and its chain unfused, and the report says why.
"""
from __future__ import annotations

from . import ops as opinfo
from .graph import Graph
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


def library_chains(graph: Graph) -> dict[int, str]:
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
        if (opinfo.is_expensive(end) and _broadcasts(graph, chain)
                and len(graph.users[chain[-1]]) > 1):
            members = _with_producers(graph, set(chain))
            reason = (f"left to XLA CPU's library: it computes the reduce at "
                      f"{short_loc(op)}, the {len(chain) - 1} ops after it up to "
                      f"{opinfo.name(end)} and the {len(members) - len(chain)} ops only "
                      "they read in one kernel, reading the reduce's input once")
            reserved.update((i, reason) for i in members)
    return reserved


def _with_producers(graph: Graph, members: set[int]) -> set[int]:
    """The library kernel also grows up into producers all of whose users it holds."""
    todo = [p for i in members for p in graph.operands[i]]
    while todo:
        p = todo.pop()
        if (p not in members and _library_op(graph.nodes[p]) and not graph.is_returned(p)
                and all(u in members for u in graph.users[p])):
            members.add(p)
            todo.extend(graph.operands[p])
    return members


def library_reduce(op) -> bool:
    """Whether XLA CPU gives this reduce to its library (YNNPACK)."""
    if opinfo.name(op) != opinfo.REDUCE or len(op.operation.operands) != 2:
        return False
    operand = op.operation.operands[0].type
    body = list(op.operation.regions[0].blocks[0].operations)
    return (opinfo.static_tensor(operand) and str(operand.element_type) == "f32"
            and len(op.attributes["dimensions"]) > 0
            and len(body) == 2 and opinfo.name(body[0]) in _REDUCERS)


def _library_op(op) -> bool:
    return ((opinfo.name(op) in _LIBRARY_OPS
             or opinfo.name(op) == "stablehlo.divide" and opinfo.float_constant_divisor(op))
            and all(str(v.type.element_type) == "f32" for v in op.operation.results))


def _broadcasts(graph: Graph, chain: list[int]) -> bool:
    """Whether the chain spreads the reduced value back over more elements."""
    return any(graph.name(i) == "stablehlo.broadcast_in_dim"
               and opinfo.num_elements(graph.nodes[i].operation.results[0].type)
               > opinfo.num_elements(graph.nodes[i].operation.operands[0].type)
               for i in chain)
