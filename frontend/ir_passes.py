"""Graph -> Graph clean-ups run when staging ends, so that make_ir prints what the
StableHLO holds. Both keep every surviving value's name (nothing is renumbered) and
rely on all our primitives being free of side effects."""
from __future__ import annotations

import numpy as np

from .ir import Eqn, Graph


def simplify(graph: Graph) -> Graph:
    return eliminate_dead_code(eliminate_common_subexpressions(graph))


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """An equation repeating an earlier one (same primitive, operands and params) is
    dropped and its results read the earlier results."""
    replaced: dict = {}
    seen: dict = {}
    eqns = []
    for eqn in graph.eqns:
        if replaced and not replaced.keys().isdisjoint(eqn.inputs):
            eqn = Eqn(eqn.prim, [replaced.get(a, a) for a in eqn.inputs], eqn.params,
                      eqn.outputs, eqn.loc)
        key = (eqn.prim, tuple(eqn.inputs), tuple(eqn.params.items()))
        try:
            earlier = seen.get(key)
        except TypeError:  # array params (a gather's constant indices) compare by value
            key = key[:2] + (_hashable(key[2]),)
            earlier = seen.get(key)
        if earlier is not None:
            replaced.update(zip(eqn.outputs, earlier.outputs))
            continue
        seen[key] = eqn
        eqns.append(eqn)
    if not replaced:
        return graph
    return Graph(graph.name, graph.inputs, graph.constants, eqns,
                 [replaced.get(a, a) for a in graph.outputs], graph.next_id)


def _hashable(value):
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, (tuple, list)):
        return tuple(map(_hashable, value))
    return value


def eliminate_dead_code(graph: Graph) -> Graph:
    """Only the equations and constants some output depends on."""
    live = set(graph.outputs)
    kept = []
    for eqn in reversed(graph.eqns):
        if not live.isdisjoint(eqn.outputs):
            kept.append(eqn)
            live.update(eqn.inputs)
    constants = [(var, value) for var, value in graph.constants if var in live]
    if len(kept) == len(graph.eqns) and len(constants) == len(graph.constants):
        return graph
    return Graph(graph.name, graph.inputs, constants, kept[::-1], graph.outputs,
                 graph.next_id)
