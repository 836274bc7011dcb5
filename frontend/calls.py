"""Calls: a jit function used inside a trace is one `pjit` equation holding the
callee's Graph, not its equations inlined. It prints (and parses) inline, verifies
recursively and lowers to a private func.func plus func.call, which XLA inlines.
Derivatives of a call are calls too: of the jvp'd graph, and of a backward graph."""
from __future__ import annotations

import weakref

from . import pytree as tree_util

from . import ad, arguments, core, dtypes
from .config import config
from .batching import batch_graph
from .core import new_trace, staging
from .lowering import tensor_type
from .primitives import define


# Signature -> {argument tree, static values and leaf types: arguments.Traced}
_traced_calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def call(sig: arguments.Signature, args, kwargs):
    """sig.fn on these arguments as one pjit equation of the current trace. The callee is
    traced once per argument types (unless it closes over traced values), so what is
    derived from its graph, a jvp'd graph or an eager executable, is reused too."""
    dyn_args, dyn_kwargs, static = sig.split(args, kwargs)
    leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    key = (tree, static, config.enable_x64, tuple(map(arguments.leaf_type, leaves)))
    cache = _traced_calls.setdefault(sig, {})
    traced = cache.get(key)
    if traced is None:
        traced = arguments.trace(sig, args, kwargs)
        if not traced.captured:
            cache[key] = traced
    outs = pjit_p.bind(*leaves, *traced.captured, name=traced.graph.name, graph=traced.graph)
    return traced.results(outs)


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
    """A call of the jvp'd callee."""
    nonzero = [t for t in tangents if not ad.is_zero(t)]
    jvp_graph, has_tangent = _jvp_graph(graph, name, tuple(
        None if ad.is_zero(t) else core.type_of(t) for t in tangents))
    results = pjit_p.bind(*primals, *nonzero, name=jvp_graph.name, graph=jvp_graph)
    outs, t_outs = results[:len(graph.outputs)], iter(results[len(graph.outputs):])
    return outs, [next(t_outs) if t else ad.Zero.like(o) for t, o in zip(has_tangent, outs)]


# Graph -> {tangent types (None: zero) of its inputs: (jvp'd graph, which results have one)}
_jvp_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _jvp_graph(graph, name, tangent_types):
    """graph staged again under a JVPTrace, once per tangent types: it takes the primals
    and the nonzero tangents and returns the primal and the nonzero tangent results."""
    cache = _jvp_graphs.setdefault(graph, {})
    if tangent_types in cache:
        return cache[tangent_types]
    with staging(f"jvp_{name}") as staged:
        ins = [staged.new_input(t) for t in graph.in_types]
        t_ins = iter([staged.new_input(t) for t in tangent_types if t is not None])
        with new_trace(ad.JVPTrace()) as trace:
            outs = core.eval_graph(graph, *[x if t is None else ad.JVPTracer(trace, x, next(t_ins))
                                            for x, t in zip(ins, tangent_types)])
            pairs = [trace.unpack(o) for o in outs]
        jvp_graph = staged.build([p for p, _ in pairs]
                                 + [t for _, t in pairs if not ad.is_zero(t)])
    cache[tangent_types] = jvp_graph, [not ad.is_zero(t) for _, t in pairs]
    return cache[tangent_types]


def _pjit_vjp(cts, primals, outs, *, name, graph):
    """A call of the callee's backward graph. A call keeps no intermediates, so that
    graph runs the callee's forward pass again on the saved inputs (under jit, XLA's
    CSE merges it with the forward call once both are inlined)."""
    cts = [c for c, o in zip(cts, outs) if dtypes.is_inexact(core.type_of(o).dtype)]
    vjp_graph = _vjp_graph(graph, name, tuple(core.type_of(c) for c in cts))
    results = iter(pjit_p.bind(*primals, *cts, name=vjp_graph.name, graph=vjp_graph))
    return [next(results) if dtypes.is_inexact(t.dtype) else None for t in graph.in_types]


# Graph -> {cotangent types of its inexact results: the backward graph}
_vjp_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _vjp_graph(graph, name, ct_types):
    """The callee's backward graph, once per cotangent types: (its inputs, cotangents of
    its inexact results) -> cotangents of its inexact inputs."""
    cache = _vjp_graphs.setdefault(graph, {})
    if ct_types in cache:
        return cache[ct_types]
    with staging(f"vjp_{name}") as staged:
        ins = [staged.new_input(t) for t in graph.in_types]
        cts = iter([staged.new_input(t) for t in ct_types])
        _, f_vjp, _ = ad.vjp_of(lambda *xs: (core.eval_graph(graph, *xs), None), ins)
        got = f_vjp([next(cts) if dtypes.is_inexact(t.dtype) else None
                     for t in graph.out_types])
        cache[ct_types] = staged.build([ad.zeros(t) if g is None else g
                                        for g, t in zip(got, graph.in_types)
                                        if dtypes.is_inexact(t.dtype)])
    return cache[ct_types]


def _pjit_batch(values, dims, *, name, graph):
    """vmap of a call is a call of the batched graph."""
    batched, out_dims = batch_graph(graph, values, dims)
    return pjit_p.bind(*values, name=name, graph=batched), out_dims


pjit_p = define("pjit", shape=_pjit_shape, lower=_pjit_lowering, multiple_results=True,
                jvp=_pjit_jvp, vjp=_pjit_vjp,
                batch=_pjit_batch, linear="body")
