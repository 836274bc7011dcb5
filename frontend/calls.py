"""Calls: a jit function used inside a trace is one `pjit` equation holding the
callee's Graph, not its equations inlined. It prints (and parses) inline, verifies
recursively and lowers to a private func.func plus func.call, which XLA inlines."""
from __future__ import annotations

import jax.tree_util as tree_util

from . import ad, arguments, core
from .batching import batch_graph
from .core import new_trace, staging
from .lowering import tensor_type
from .primitives import define


def call(sig: arguments.Signature, args, kwargs):
    """sig.fn on these arguments as one pjit equation of the current trace."""
    traced = arguments.trace(sig, args, kwargs)
    leaves = tree_util.tree_leaves(sig.split(args, kwargs)[:2])
    outs = pjit_p.bind(*leaves, *traced.captured, name=traced.graph.name, graph=traced.graph)
    return tree_util.tree_unflatten(traced.out_tree, outs)


def _pjit_shape(*in_types, name, graph):
    if list(in_types) != graph.in_types:
        raise TypeError(f"pjit {name} takes {', '.join(map(str, graph.in_types))}, "
                        f"got {', '.join(map(str, in_types))}")
    return graph.out_types


def _pjit_lowering(ctx, eqn, *args):
    graph = eqn.params["graph"]
    callee = ctx.function(graph)
    ins = ", ".join(tensor_type(t) for t in graph.in_types)
    outs = ", ".join(tensor_type(t) for t in graph.out_types)
    results = ctx.op(f"func.call @{callee}({', '.join(args)}) : ({ins}) -> ({outs})",
                     len(graph.outputs))
    return results if isinstance(results, list) else [results]


def _pjit_jvp(primals, tangents, *, name, graph):
    """A call of the jvp'd callee: its graph staged again under a JVPTrace, taking the
    primals and the nonzero tangents, returning the primal and nonzero tangent results."""
    nonzero = [t for t in tangents if not ad.is_zero(t)]
    with staging(f"jvp_{name}") as staged:
        ins = [staged.new_input(t) for t in graph.in_types]
        t_ins = iter([staged.new_input(core.type_of(t)) for t in nonzero])
        with new_trace(ad.JVPTrace()) as trace:
            outs = core.eval_graph(graph, *[x if ad.is_zero(t) else ad.JVPTracer(trace, x, next(t_ins))
                                            for x, t in zip(ins, tangents)])
            pairs = [trace.unpack(o) for o in outs]
        t_outs = [t for _, t in pairs if not ad.is_zero(t)]
        jvp_graph = staged.build([p for p, _ in pairs] + t_outs)
    results = pjit_p.bind(*primals, *nonzero, *staged.captured_values(),
                          name=jvp_graph.name, graph=jvp_graph)
    n = len(graph.outputs)
    nonzero_outs = iter(results[n:])
    return results[:n], [t if ad.is_zero(t) else next(nonzero_outs) for _, t in pairs]


def _pjit_batch(values, dims, *, name, graph):
    """vmap of a call is a call of the batched graph."""
    batched, out_dims = batch_graph(graph, values, dims)
    return pjit_p.bind(*values, name=name, graph=batched), out_dims


pjit_p = define("pjit", shape=_pjit_shape, lower=_pjit_lowering, multiple_results=True,
                jvp=_pjit_jvp, vjp=ad.inline,
                batch=_pjit_batch)
