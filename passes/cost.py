"""The cost model: bytes each kernel moves, its flops, and a fixed launch cost.

A kernel reads each of its inputs once and writes each of its outputs once; what
flows between ops inside a fusion stays in registers. The numbers are coarse on
purpose: they rank legal choices, they do not predict run time.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import opinfo
from .graph import DataflowGraph

TRANSCENDENTAL_FLOPS = 10  # an exp or a divide against an add


@dataclass(frozen=True)
class CostParams:
    bytes_per_s: float
    flops_per_s: float
    launch_s: float  # per kernel: a thunk on CPU, a kernel launch on GPU


COST_PARAMS = {
    # CPU: an exp costs about 10 adds; 1M exps measured ~0.7 ms on one core, so an
    # "add" is ~1e10/s (the softmax probe in the fusion report notes)
    "cpu": CostParams(bytes_per_s=20e9, flops_per_s=10e9, launch_s=0.2e-6),
    "gpu": CostParams(bytes_per_s=2e12, flops_per_s=50e12, launch_s=3e-6),
}


def op_flops(op) -> int:
    if opinfo.name(op) == opinfo.FUSION:
        return sum(op_flops(inner) for inner in opinfo.fusion_body(op))
    operation = op.operation
    if not operation.results or not opinfo.static_tensor(operation.results[0].type):
        return 0
    if opinfo.name(op) == opinfo.REDUCE:
        return sum(opinfo.num_elements(v.type) for v in operation.operands
                   if opinfo.static_tensor(v.type))
    weight = TRANSCENDENTAL_FLOPS if opinfo.is_expensive(op) else 1
    return weight * opinfo.num_elements(operation.results[0].type)


def node_flops(graph: DataflowGraph, i: int) -> int:
    """op_flops of node `i`, kept in the graph: the merger asks for a fusion's with
    every user it may merge into, and each time walked its body."""
    flops = graph.flops.get(i)
    if flops is None:
        flops = graph.flops[i] = (sum(map(op_flops, graph.fusion_body(i)))
                                  if graph.name(i) == opinfo.FUSION else op_flops(graph.nodes[i]))
    return flops


def group_bytes(graph: DataflowGraph, group: set[int], owned: set[int] | None = None) -> int:
    """Bytes one kernel running `group` reads and writes."""
    return (sum(map(graph.bytes, graph.inputs(group)))
            + sum(map(graph.bytes, graph.outputs(group, owned))))


_EXPANDS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.iota",
                      "stablehlo.constant"})


def read_bytes(graph: DataflowGraph, value) -> int:
    """Bytes a kernel reading `value` moves, if it fuses cheap expansions (a
    broadcast, an iota, a constant) rather than reading their result. Kept in the
    graph: every candidate group reading `value` asks."""
    n = graph.read_bytes.get(value)
    if n is None:
        p = graph.producer(value)
        n = graph.read_bytes[value] = (
            sum(read_bytes(graph, v) for v in graph.reads[p])
            if p is not None and graph.name(p) in _EXPANDS else graph.bytes(value))
    return n


def seconds(params: CostParams, nbytes: int, flops: int, kernels: int) -> float:
    return nbytes / params.bytes_per_s + flops / params.flops_per_s + kernels * params.launch_s
