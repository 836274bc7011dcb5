"""Control flow that stays inside one program: cond/switch, while_loop/fori_loop,
scan/map, as primitives whose params are sub-Graphs (like pjit in calls.py).

A branch or loop body is the user's function staged to a Graph on abstract values of
its operands' types; outer tracers it closes over become extra operands (closure
conversion), appended after the explicit ones. Equations:

    cond[branches=(g0, g1, ...)] index, *operands, *captured
    while[cond=c, body=b]        *carry, *cond_captured, *body_captured
    scan[body=b, length=n, reverse=r, num_carry=k] *init, *xs, *captured

A graph's inputs are (explicit values, captured values) in that order: cond branches
take the operands, while's cond/body take the carry, scan's body takes (carry, x).
Every rule builds new sub-graphs by staging an old one again (`_restage`): jvp of a
cond is a cond of jvp'd branches, of a loop a loop over (primal, tangent) carries;
the VJP of a cond is a cond of the branches' backward graphs (which run the branch
again from its operands); reverse mode of a scan is two loops, as in JAX: its forward
rule (ad.vjp_fwd_rules) emits the scan of a body that also returns the residuals its
backward step reads, and the backward pass is one reverse scan of that step
(_SplitBody); a while_loop has no VJP (its trip count is dynamic), as in JAX. vmap
of a cond with a batched predicate runs every branch and selects; of a while_loop
with a batched predicate runs while any example is active.
"""
from __future__ import annotations

import inspect
import weakref

from . import pytree as tree_util

from . import ad, core, dtypes
from .batching import batch_at, batch_graph, moveaxis, not_mapped, vmap
from .calls import _vjp_graph
from .core import at_user_line, type_of
from .ir import ArrayType, Graph, Literal
from .ir_passes import eliminate_dead_code
from .lowering import dims_attr, lower_body
from .primitives import define, unchanged
from .primitives.elementwise import (add, bitwise_or, clamp, convert_element_type, eq, ne,
                                     select)
from .primitives.reductions import reduce_or
from .primitives.shape_ops import (broadcast_in_dim, concatenate, pad, reshape, rev,
                                   slice_in_dim)

_int32 = dtypes.canonicalize("int32")


# ---------------------------------------------------------------- tracing user functions

# fn -> {(name, argument tree, leaf types): (Graph, [], output tree)}
_traced: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _trace(fn, name, in_tree, in_types):
    """fn staged on abstract leaves: (Graph, captured outer tracers, output tree).
    Traced once per argument types unless it closes over traced values, so a loop of
    eager conds on one function compiles once (the executable is keyed by the Graph)."""
    key = (name, in_tree, tuple((t.shape, t.dtype, t.weak) for t in in_types))
    try:
        cache = _traced.setdefault(fn, {})
    except TypeError:  # not weakly referenceable (a functools.partial is)
        cache = {}
    if key in cache:
        return cache[key]
    with core.staging(name) as staged:
        ins = [staged.new_input(t) for t in in_types]
        out = fn(*tree_util.tree_unflatten(in_tree, ins))
        leaves, out_tree = tree_util.tree_flatten(out)
        for leaf in leaves:
            type_of(leaf)  # outputs must be arrays: a clear error otherwise
        graph = staged.build(leaves)
    captured = staged.captured_values()
    if not captured:
        cache[key] = graph, captured, out_tree
    return graph, captured, out_tree


def _leaf_paths(tree) -> list:
    """`[0]`, `['w']`, ...: each leaf's path in a pytree of this structure ('' for a leaf)."""
    dummy = tree_util.tree_unflatten(tree, range(tree.num_leaves))
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def _leaf_names(tree) -> list:
    return [p or "(the value)" for p in _leaf_paths(tree)]


def _as_arrays(leaves):
    return [unchanged(x) for x in leaves]


def _restage(name, in_types, fn):
    """A new Graph on inputs of these types computing fn(*inputs) (a list)."""
    with core.staging(name) as staged:
        outs = fn(*[staged.new_input(t) for t in in_types])
        return staged.build(list(outs))


def _text(types) -> str:
    return ", ".join(str(t) for t in types)


def _types(values):
    return [type_of(x) for x in values]


def _inexact(t) -> bool:
    return dtypes.is_inexact(t.dtype)


# ---------------------------------------------------------------- cond / switch

def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), both staged (as in JAX,
    even for a concrete pred: Python never branches on it) into one cond equation."""
    t = type_of(pred)
    if t.shape != ():
        raise TypeError(at_user_line(
            f"Pred must be a scalar, got {pred} of shape {t.shape}."))
    if not (t.dtype == dtypes.bool_ or dtypes.is_int(t.dtype)):
        raise TypeError(at_user_line(
            f"Pred type must be either boolean or number, got {t.dtype.name}."))
    index = convert_element_type(pred if t.dtype == dtypes.bool_ else ne(pred, 0), _int32)
    return _cond(index, (false_fun, true_fun), operands, ("false_fun", "true_fun"))


def switch(index, branches, *operands):
    """branches[index](*operands), the index clamped to the branches' range (as JAX)."""
    branches = tuple(branches)
    if not branches:
        raise ValueError(at_user_line("Empty branch sequence"))
    t = type_of(index)
    if t.shape != () or not dtypes.is_int(t.dtype):
        raise TypeError(at_user_line(
            f"Branch index must be scalar integer, got {t}."))
    if len(branches) == 1:
        return branches[0](*operands)
    index = clamp(0, convert_element_type(index, _int32), len(branches) - 1)
    return _cond(index, branches, operands,
                 [f"branches[{i}]" for i in range(len(branches))])


def _cond(index, branches, operands, names):
    leaves, in_tree = tree_util.tree_flatten(operands)
    leaves = _as_arrays(leaves)
    in_types = _types(leaves)
    traced = [_trace(fn, f"branch{i}", in_tree, in_types) for i, fn in enumerate(branches)]
    first, _, out_tree = traced[0]
    for (graph, _, tree), name in zip(traced[1:], names[1:]):
        if tree != out_tree:
            raise TypeError(at_user_line(
                f"branches of a cond/switch must return the same pytree structure: "
                f"{names[0]} returns {out_tree} but {name} returns {tree}"))
        for leaf, a, b in zip(_leaf_names(out_tree), first.out_types, graph.out_types):
            if a != b:
                raise TypeError(at_user_line(
                    f"branches of a cond/switch must return the same types: output {leaf} "
                    f"is {a} in {names[0]} but {b} in {name}; convert one (astype) or "
                    "reshape it so both branches agree"))
    captured = []  # every branch's closed-over values, each once
    for _, caps, _ in traced:
        captured += [c for c in caps if all(c is not d for d in captured)]
    n = len(leaves)
    graphs = tuple(_restage(g.name, in_types + _types(captured),
                            lambda *xs, g=g, caps=caps: core.eval_graph(
                                g, *xs[:n], *[xs[n + _index_of(captured, c)] for c in caps]))
                   if captured else g for g, caps, _ in traced)
    outs = cond_p.bind(index, *leaves, *captured, branches=graphs)
    return tree_util.tree_unflatten(out_tree, outs)


def _index_of(values, x) -> int:
    return next(i for i, v in enumerate(values) if v is x)


def _cond_shape(index_type, *in_types, branches):
    if index_type.shape != () or index_type.dtype != _int32:
        raise TypeError(f"cond takes an i32[] index, got {index_type}")
    for i, g in enumerate(branches):
        if g.in_types != list(in_types):
            raise TypeError(f"cond branch {i} takes {_text(g.in_types)}, "
                            f"got {_text(in_types)}")
        if g.out_types != branches[0].out_types:
            raise TypeError(f"cond branch {i} returns {_text(g.out_types)}, "
                            f"branch 0 {_text(branches[0].out_types)}")
    return branches[0].out_types


def _cond_lowering(ctx, eqn, index, *operands):
    out_types = [v.type for v in eqn.outputs]
    regions = [ctx.region([], out_types, lambda g=g: lower_body(ctx, g, list(operands)))
               for g in eqn.params["branches"]]
    results = ctx.generic("stablehlo.case", [index], [eqn.inputs[0].type], out_types,
                          regions=regions)
    return results if isinstance(results, list) else [results]


def _jvp_graph(graph, nonzero):
    """graph's jvp: (inputs, tangents of the `nonzero` ones) -> (outputs, tangents of
    every inexact output, zeros where the tangent is symbolically zero), so that
    branches and loop steps agree on which results have tangents."""
    n = len(graph.inputs)
    t_types = [ArrayType(t.shape, t.dtype) for t, nz in zip(graph.in_types, nonzero) if nz]

    def jvp(*xs):
        tangents = iter(xs[n:])
        pairs, _ = ad._jvp_flat(lambda *ins: (core.eval_graph(graph, *ins), None), list(xs[:n]),
                                [next(tangents) if nz else None for nz in nonzero])
        return [p for p, _ in pairs] + [ad.zeros(type_of(p).strong()) if ad.is_zero(t) else t
                                        for p, t in pairs if _inexact(type_of(p))]
    return _restage(f"jvp_{graph.name}", graph.in_types + t_types, jvp)


def _nonzero_tangent_outputs(graph, nonzero) -> list[bool]:
    """Which of graph's outputs get a tangent that is not symbolically zero when the
    `nonzero` inputs have tangents (staged once to find out, then dropped)."""
    found = []

    def jvp(*xs):
        tangents = iter(xs[len(graph.inputs):])
        pairs, _ = ad._jvp_flat(lambda *ins: (core.eval_graph(graph, *ins), None),
                                list(xs[:len(graph.inputs)]),
                                [next(tangents) if nz else None for nz in nonzero])
        found[:] = [not ad.is_zero(t) for _, t in pairs]
        return [p for p, _ in pairs]
    _restage(f"jvp_{graph.name}", graph.in_types + [
        t for t, nz in zip(graph.in_types, nonzero) if nz], jvp)
    return found


def _carry_nonzero(body, carry_nz, rest_nz) -> list[bool]:
    """Which carry leaves have nonzero tangents in every iteration, as JAX's fixed
    point: nonzero on entry, or made so by the body (a carry that only ever goes
    through floor, say, has none, so reverse mode through the loop sees no tangent)."""
    k = len(carry_nz)
    while True:
        out_nz = _nonzero_tangent_outputs(body, carry_nz + rest_nz)[:k]
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            return carry_nz
        carry_nz = new


def _split_tangents(outs, n):
    """(primal results, their tangents) from a jvp'd equation's results."""
    primals, tangents = outs[:n], iter(outs[n:])
    return primals, [next(tangents) if _inexact(type_of(p)) else ad.Zero.like(p)
                     for p in primals]


def _cond_jvp(primals, tangents, *, branches):
    index, operands = primals[0], primals[1:]
    nonzero = [not ad.is_zero(t) for t in tangents[1:]]
    graphs = tuple(_jvp_graph(g, nonzero) for g in branches)
    outs = cond_p.bind(index, *operands, *[t for t in tangents[1:] if not ad.is_zero(t)],
                       branches=graphs)
    return _split_tangents(outs, len(branches[0].outputs))


def _cond_vjp(cts, primals, outs, *, branches):
    """A cond of the branches' backward graphs, each running its branch again."""
    cts = [c for c, o in zip(cts, outs) if _inexact(type_of(o))]
    ct_types = tuple(type_of(c) for c in cts)
    graphs = tuple(_vjp_graph(g, g.name, ct_types) for g in branches)
    results = iter(cond_p.bind(*primals, *cts, branches=graphs))
    return [None] + [next(results) if _inexact(t) else None for t in branches[0].in_types]


def _force(graph, values, dims, out_forced, size, name=None):
    """graph batched for operands with these dims, as a Graph whose outputs marked in
    out_forced are batched along axis 0 (broadcast if need be); returns it and the
    out dims (0 or not_mapped)."""
    batched, out_dims = batch_graph(graph, values, dims)
    forced = [f or d is not not_mapped for f, d in zip(out_forced, out_dims)]

    def run(*xs):
        outs = core.eval_graph(batched, *xs)
        return [batch_at(o, d, size, 0) if f else o
                for o, d, f in zip(outs, out_dims, forced)]
    return (_restage(name or graph.name, _types(values), run),
            [0 if f else not_mapped for f in forced])


def _axis_size(values, dims):
    return next(type_of(x).shape[d] for x, d in zip(values, dims) if d is not not_mapped)


def _cond_batch(values, dims, *, branches):
    size = _axis_size(values, dims)
    index, operands = values[0], values[1:]
    if dims[0] is not_mapped:
        # an output is batched where some branch batches it, as in JAX's cond: one no
        # branch batches stays unbatched (jacfwd's primal outputs)
        forced = [False] * len(branches[0].outputs)
        for g in branches:
            forced = [f or d is not not_mapped
                      for f, d in zip(forced, batch_graph(g, operands, dims[1:])[1])]
        graphs = tuple(_force(g, operands, dims[1:], forced, size)[0] for g in branches)
        return (cond_p.bind(index, *operands, branches=graphs),
                [0 if f else not_mapped for f in forced])
    # a predicate per example: every branch runs, then each example picks its results
    index = moveaxis(index, dims[0], 0)
    results = None
    for k, g in enumerate(branches):
        batched, out_dims = batch_graph(g, operands, dims[1:])
        outs = [batch_at(o, d, size, 0)
                for o, d in zip(core.eval_graph(batched, *operands), out_dims)]
        if results is None:
            results = outs
            continue
        results = [select(broadcast_in_dim(eq(index, k), type_of(o).shape, (0,)), o, r)
                   for o, r in zip(outs, results)]
    return results, [0] * len(results)


cond_p = define("cond", shape=_cond_shape, lower=_cond_lowering, multiple_results=True,
                jvp=_cond_jvp, vjp=_cond_vjp, batch=_cond_batch, linear="body")


# ---------------------------------------------------------------- while_loop / fori_loop

def while_loop(cond_fun, body_fun, init_val):
    """Repeat body_fun on the carry while cond_fun(carry) holds, in one while equation."""
    leaves, tree = tree_util.tree_flatten(init_val)
    args_tree = tree_util.tree_structure((init_val,))

    def trace(types):
        cond_graph, cond_caps, cond_tree = _trace(cond_fun, "cond_fun", args_tree, types)
        if cond_tree.num_leaves != 1 or cond_graph.out_types[0] != ArrayType((), dtypes.bool_):
            raise TypeError(at_user_line(
                "cond_fun must return a boolean scalar, but got output type(s) "
                f"{_text(cond_graph.out_types)}."))
        body_graph, body_caps, body_tree = _trace(body_fun, "body_fun", args_tree, types)
        return (cond_graph, cond_caps, body_graph, body_caps), body_tree, body_graph.out_types
    leaves, (cond_graph, cond_caps, body_graph, body_caps) = _trace_carry(
        "while_loop body", body_fun, tree, _as_arrays(leaves), trace)
    outs = while_p.bind(*leaves, *cond_caps, *body_caps, cond=cond_graph, body=body_graph)
    return tree_util.tree_unflatten(tree, outs)


def _trace_carry(name, fn, tree, leaves, trace):
    """A loop body traced by trace(carry types) -> (traced, out carry tree, out carry
    types) in JAX's two passes, so a Python scalar can start a carry the body widens: a
    weakly typed leaf the body returns as another type is converted to the promotion of
    the two, and the body traced again. Returns (carry leaves, traced)."""
    types = _types(leaves)
    traced, out_tree, out_types = trace(types)
    promote = [t.weak and t != o for t, o in zip(types, out_types)] if out_tree == tree else []
    if any(promote):
        leaves = [convert_element_type(x, dtypes.result_type((t.dtype, True),
                                                             (o.dtype, o.weak))[0]) if p else x
                  for x, t, o, p in zip(leaves, types, out_types, promote)]
        types = _types(leaves)
        traced, out_tree, out_types = trace(types)
    _check_carry(name, fn, tree, types, out_tree, out_types)
    return leaves, traced


def _check_carry(name, fn, tree, types, out_tree, out_types):
    """JAX's errors for a carry the body changes, naming its leaves after fn's carry
    parameter as JAX does."""
    if out_tree != tree:
        raise TypeError(at_user_line(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nthe input tree structure is:\n{tree}\n"
            f"the output tree structure is:\n{out_tree}\n\nRevise the function so that the "
            "carry output has the same pytree structure as the carry input."))
    changed = [(path, a, b) for path, a, b in zip(_leaf_paths(tree), types, out_types)
               if a != b]
    if not changed:
        return
    try:  # only for the message: the body's signature is not read on the way through
        carry = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError):
        carry = None
    diffs = [_carry_diff(carry, path, a, b) for path, a, b in changed]
    if len(diffs) == 1:
        differences = f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
    else:  # as JAX joins them
        differences = ("\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n")
    raise TypeError(at_user_line(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{differences}\nRevise the function so that all output types match the "
        "corresponding input types."))


def _carry_diff(carry, path, a, b) -> str:
    """One carry leaf's line in JAX's error: `carry` is the body's parameter name."""
    if carry:
        leaf = f"the input carry component {carry}{path}" if path else f"the input carry {carry}"
    else:
        leaf = f"the input carry at path {path}" if path else "the input carry"
    return (f"{leaf} has type {_long_name(a)} but the corresponding output carry component "
            f"has type {_long_name(b)}{_mismatch(a, b)}")


def _long_name(t) -> str:
    """A type as JAX's errors write it: float32[2,3]."""
    return f"{t.dtype.name}[{','.join(str(d) for d in t.shape)}]"


def _mismatch(a, b) -> str:
    """How two types differ, as JAX's errors end: ', so the shapes do not match'."""
    what = [w for w, differ in [("the dtypes do not match", a.dtype != b.dtype),
                                ("the shapes do not match", a.shape != b.shape)] if differ]
    return ", so " + ", and ".join(what) if what else ""


def fori_loop(lower, upper, body_fun, init_val):
    """body_fun(i, x) for i in [lower, upper). With Python int bounds it is a scan (so
    reverse mode differentiates it, as in JAX), otherwise a while_loop."""
    static = all(isinstance(b, int) or (hasattr(b, "dtype") and not isinstance(b, core.Tracer)
                                        and getattr(b, "ndim", 1) == 0)
                 for b in (lower, upper))
    dtype = next((type_of(b).dtype for b in (lower, upper) if not dtypes.is_python_scalar(b)),
                 _int32)
    # the loops' carry parameter is JAX's name for it: errors name `loop_carry[1]` as JAX's
    if static:
        lo, hi = int(lower), int(upper)

        def step(loop_carry, _):
            i, x = loop_carry
            return (add(i, 1), body_fun(i, x)), None
        (_, out), _ = scan(step, (core.lift(lo, dtype), init_val), None, length=max(hi - lo, 0))
        return out
    lo = convert_element_type(lower, dtype)
    hi = convert_element_type(upper, dtype)
    _, _, out = while_loop(lambda loop_carry: loop_carry[0] < loop_carry[1],
                           lambda loop_carry: (add(loop_carry[0], 1), loop_carry[1],
                                               body_fun(loop_carry[0], loop_carry[2])),
                           (lo, hi, init_val))
    return out


def _while_parts(values, cond, body):
    """(carry, cond's captured values, body's captured values)."""
    n, m = len(body.outputs), len(cond.inputs)
    return values[:n], values[n:m], values[m:]


def _while_shape(*in_types, cond, body):
    carry, cond_caps, body_caps = _while_parts(list(in_types), cond, body)
    if cond.in_types != carry + cond_caps or body.in_types != carry + body_caps:
        raise TypeError("while's cond and body take the carry, then their captured values")
    if body.out_types != carry or cond.out_types != [ArrayType((), dtypes.bool_)]:
        raise TypeError("while's body returns the carry, its cond a bool[]")
    return body.out_types  # a weakly typed init takes the body's strong type, as in JAX


def _while_lowering(ctx, eqn, *args):
    cond, body = eqn.params["cond"], eqn.params["body"]
    carry, cond_caps, body_caps = _while_parts(list(args), cond, body)
    types = body.out_types
    regions = [ctx.region(types, [ArrayType((), dtypes.bool_)],
                          lambda *c: lower_body(ctx, cond, [*c, *cond_caps])),
               ctx.region(types, types, lambda *c: lower_body(ctx, body, [*c, *body_caps]))]
    results = ctx.generic("stablehlo.while", carry, types, types, regions=regions)
    return results if isinstance(results, list) else [results]


def _while_jvp(primals, tangents, *, cond, body):
    """A while over (carry, tangents of the inexact leaves whose tangents are not
    zero throughout: _carry_nonzero)."""
    n = len(body.outputs)
    carry, cond_caps, body_caps = _while_parts(primals, cond, body)
    _, _, caps_t = _while_parts(tangents, cond, body)
    caps_nz = [not ad.is_zero(t) for t in caps_t]
    carry_nz = _carry_nonzero(body, [_inexact(type_of(c)) and not ad.is_zero(t)
                                     for c, t in zip(carry, tangents[:n])], caps_nz)
    if not any(carry_nz):
        return list(while_p.bind(*primals, cond=cond, body=body)), [
            ad.Zero.like(c) for c in carry]
    jvp_body = _jvp_graph(body, carry_nz + caps_nz)
    carry_t = [ad.instantiate(t) if not ad.is_zero(t) else ad.zeros(type_of(c).strong())
               for c, t, nz in zip(carry, tangents[:n], carry_nz) if nz]
    caps_t = [t for t in caps_t if not ad.is_zero(t)]
    nt, nb = len(carry_t), len(body_caps)
    # the jvp'd body takes (carry, captured, carry tangents, captured tangents)
    new_body = _restage(body.name, _types(carry) + _types(carry_t) + _types(body_caps)
                        + _types(caps_t), lambda *xs: core.eval_graph(
                            jvp_body, *xs[:n], *xs[n + nt:n + nt + nb], *xs[n:n + nt],
                            *xs[n + nt + nb:]))
    new_cond = _restage(cond.name, _types(carry) + _types(carry_t) + _types(cond_caps),
                        lambda *xs: core.eval_graph(cond, *xs[:n], *xs[n + nt:]))
    outs = while_p.bind(*carry, *carry_t, *cond_caps, *body_caps, *caps_t,
                        cond=new_cond, body=new_body)
    tangents_out = iter(outs[n:])
    return outs[:n], [next(tangents_out) if nz else ad.Zero.like(c)
                      for c, nz in zip(outs[:n], carry_nz)]


@ad.takes_needed
def _while_vjp(cts, primals, outs, needed, *, cond, body):
    """Zero cotangents where no tangent of the needed operands reaches the results
    (as JAX's linearized loop then holds no while); else JAX's error."""
    n = len(body.outputs)
    nz = [need and _inexact(type_of(x)) for x, need in zip(primals, needed)]
    _, _, caps_nz = _while_parts(nz, cond, body)
    if not any(_carry_nonzero(body, nz[:n], caps_nz)):
        return [None] * len(primals)
    raise ValueError(at_user_line(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
        "static start/stop."))


def _carry_batched(body, carry, carry_dims, rest, rest_dims, size, k):
    """Which carry leaves are batched in every iteration: the fixed point of 'batched on
    input, or made batched by the body' (`rest`: the body's other operands)."""
    batched = [d is not not_mapped for d in carry_dims]
    while True:
        ins = [_Abstract(_batched_type(type_of(c), d, size) if b else type_of(c))
               for c, d, b in zip(carry, carry_dims, batched)]
        _, out_dims = batch_graph(body, ins + _abstract(rest),
                                  [0 if b else not_mapped for b in batched] + rest_dims)
        new = [b or d is not not_mapped for b, d in zip(batched, out_dims[:k])]
        if new == batched:
            return batched
        batched = new


def _batched_type(t, d, size) -> ArrayType:
    """The type of a value batched along 0, from its own type and batch dim."""
    if d is not_mapped:
        return ArrayType((size,) + t.shape, t.dtype)
    return ArrayType((t.shape[d],) + t.shape[:d] + t.shape[d + 1:], t.dtype)


class _Abstract:
    """A placeholder of a type, for rules that batch a graph on values they do not have
    (a scan step's x slice): batch_graph only reads its operands' types."""
    __slots__ = ("shape", "dtype")

    def __init__(self, type):
        self.shape, self.dtype = type.shape, type.dtype


def _abstract(values):
    return [v if isinstance(v, _Abstract) else _Abstract(type_of(v)) for v in values]


def _while_batch(values, dims, *, cond, body):
    size = _axis_size(values, dims)
    n = len(body.outputs)
    carry, cond_caps, body_caps = _while_parts(values, cond, body)
    carry_d, cond_d, body_d = _while_parts(dims, cond, body)
    batched = _carry_batched(body, carry, carry_d, body_caps, body_d, size, n)
    ins = [batch_at(c, d, size, 0) if b else c for c, d, b in zip(carry, carry_d, batched)]
    in_d = [0 if b else not_mapped for b in batched]
    _, (pred_d,) = batch_graph(cond, ins + cond_caps, in_d + cond_d)
    if pred_d is not_mapped:
        new_body, out_d = _force(body, ins + body_caps, in_d + body_d, batched, size)
        new_cond, _ = _force(cond, ins + cond_caps, in_d + cond_d, [False], size)
        return while_p.bind(*ins, *cond_caps, *body_caps, cond=new_cond, body=new_body), out_d
    # a predicate per example: run while any is active; finished examples keep their carry
    ins = [batch_at(c, d, size, 0) for c, d in zip(carry, carry_d)]
    in_d = [0] * n
    pred_graph, _ = _force(cond, ins + cond_caps, in_d + cond_d, [True], size)
    step_graph, _ = _force(body, ins + body_caps, in_d + body_d, [True] * n, size)
    nc = len(cond_caps)

    def any_active(*xs):
        (pred,) = core.eval_graph(pred_graph, *xs)
        return [reduce_or(pred, (0,))]

    def masked_step(*xs):
        (pred,) = core.eval_graph(pred_graph, *xs[:n + nc])
        new = core.eval_graph(step_graph, *xs[:n], *xs[n + nc:])
        return [select(broadcast_in_dim(pred, type_of(o).shape, (0,)), o, c)
                for o, c in zip(new, xs[:n])]
    new_cond = _restage(cond.name, _types(ins) + _types(cond_caps), any_active)
    new_body = _restage(body.name, _types(ins) + _types(cond_caps) + _types(body_caps),
                        masked_step)
    return (while_p.bind(*ins, *cond_caps, *cond_caps, *body_caps, cond=new_cond,
                         body=new_body), in_d)


while_p = define("while", shape=_while_shape, lower=_while_lowering, multiple_results=True,
                 jvp=_while_jvp, vjp=_while_vjp, batch=_while_batch, linear="body")


# ---------------------------------------------------------------- scan / map

def scan(f, init, xs, length=None, reverse=False, unroll=1):
    """f(carry, x) -> (carry, y) over the leading axis of xs, as JAX's lax.scan: the final
    carry and the stacked ys. `unroll` is accepted for JAX compatibility; XLA decides."""
    del unroll
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    x_leaves = _as_arrays(x_leaves)
    x_types = _types(x_leaves)
    for t in x_types:
        if t.shape == ():
            raise ValueError(at_user_line(
                f"scan got value with no leading axis to scan over: {t}."))
    lengths = sorted({t.shape[0] for t in x_types})
    if length is not None:
        length = int(length)
        if any(n != length for n in lengths):
            raise ValueError(at_user_line(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {lengths}."))
    elif len(lengths) == 1:
        length = lengths[0]
    elif not lengths:
        raise ValueError(at_user_line("scan got no values to scan over and `length` not "
                                      "provided."))
    else:
        raise ValueError(at_user_line(
            f"scan got values with different leading axis sizes: {lengths}."))
    c_leaves, c_tree = tree_util.tree_flatten(init)
    slice_types = [ArrayType(t.shape[1:], t.dtype, t.weak) for t in x_types]
    in_tree = tree_util.tree_structure((init, tree_util.tree_unflatten(x_tree, [0] * len(x_types))))

    def trace(c_types):
        graph, caps, out_tree = _trace(f, "scan_body", in_tree, c_types + slice_types)
        pair = tree_util.tree_unflatten(out_tree, range(out_tree.num_leaves))
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(at_user_line(
                "scan body function must return a pair (carry, y), got "
                f"{out_tree}"))
        carry_tree = tree_util.tree_structure(pair[0])
        return (graph, caps, pair), carry_tree, graph.out_types[:carry_tree.num_leaves]
    c_leaves, (graph, caps, pair) = _trace_carry("scan body", f, c_tree, _as_arrays(c_leaves),
                                                 trace)
    k = len(c_leaves)
    outs = scan_p.bind(*c_leaves, *x_leaves, *caps, body=graph, length=length,
                       reverse=bool(reverse), num_carry=k, num_consts=len(caps))
    return (tree_util.tree_unflatten(c_tree, outs[:k]),
            tree_util.tree_unflatten(tree_util.tree_structure(pair[1]), outs[k:]))


def map(f, xs, *, batch_size=None):
    """f applied to each slice of xs along its leading axis, stacked: a scan. With
    batch_size, as JAX's: a scan of f vmapped over chunks of batch_size rows, and f
    vmapped once more over the remaining rows (batch_size=0: all of them)."""
    leaves, tree = tree_util.tree_flatten(xs)
    if batch_size is None or not leaves:  # no leaves: scan's error
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    leaves = _as_arrays(leaves)
    n = type_of(leaves[0]).shape[0]
    num, rest = divmod(n, batch_size) if batch_size else (0, n)
    done = num * batch_size
    parts = []
    if num:
        chunks = [reshape(slice_in_dim(x, 0, done), (num, batch_size) + type_of(x).shape[1:])
                  for x in leaves]
        ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_util.tree_unflatten(tree, chunks))[1]
        parts.append(tree_util.tree_map(lambda y: reshape(y, (done,) + type_of(y).shape[2:]), ys))
    if rest:
        parts.append(vmap(f)(tree_util.tree_unflatten(
            tree, [slice_in_dim(x, done, n) for x in leaves])))
    if len(parts) == 1:
        return parts[0]
    return tree_util.tree_map(lambda a, b: concatenate([a, b], 0), *parts)


def _scan_parts(values, num_carry, num_consts):
    """(carry, xs, captured) of a scan's operands (or of its body's inputs)."""
    n = len(values) - num_consts
    return values[:num_carry], values[num_carry:n], values[n:]


def _scan_shape(*in_types, body, length, reverse, num_carry, num_consts):
    carry, xs, caps = _scan_parts(list(in_types), num_carry, num_consts)
    if body.in_types != carry + [ArrayType(t.shape[1:], t.dtype) for t in xs] + caps:
        raise TypeError(f"scan body takes {_text(body.in_types)}, got operands "
                        f"{_text(in_types)}")
    if any(t.shape[:1] != (length,) for t in xs):
        raise TypeError(f"scan of length {length} over {_text(xs)}")
    if body.out_types[:num_carry] != carry:
        raise TypeError("scan body must return its carry's types first")
    return body.out_types[:num_carry] + [ArrayType((length,) + t.shape, t.dtype, t.weak)
                                         for t in body.out_types[num_carry:]]


def _scan_lowering(ctx, eqn, *args):
    """A stablehlo.while over (i, carry, stacked ys): step i reads xs[i] (xs[n-1-i] in
    reverse) by dynamic_slice and writes ys there by dynamic_update_slice."""
    body, length, reverse, k, nc = (eqn.params[p] for p in (
        "body", "length", "reverse", "num_carry", "num_consts"))
    carry, xs, caps = _scan_parts(list(args), k, nc)
    x_types = [a.type for a in eqn.inputs[k:k + len(xs)]]
    ys_types = [v.type for v in eqn.outputs[k:]]
    i32 = ArrayType((), _int32)
    ys0 = [ctx.constant(0, t.dtype, t.shape) for t in ys_types]
    if length == 0:  # no step runs; its slice of 1 row of an empty xs would not verify
        return list(carry) + ys0
    zero, one, n = (ctx.constant(v, _int32) for v in (0, 1, length))
    types = [i32] + [v.type for v in eqn.outputs[:k]] + ys_types

    def cond(i, *_):
        return ctx.generic("stablehlo.compare", [i, n], [i32, i32], [ArrayType((), dtypes.bool_)],
                           {"comparison_direction": "#stablehlo<comparison_direction LT>"})

    def step(i, *state):
        c, ys = list(state[:k]), list(state[k:])
        last = ctx.constant(length - 1, _int32) if reverse else None
        idx = ctx.generic("stablehlo.subtract", [last, i], [i32, i32], [i32]) if reverse else i
        z = ctx.constant(0, _int32) if any(len(t.shape) > 1 for t in x_types + ys_types) \
            else None  # the start index of every other axis
        x_slices = []
        for x, t in zip(xs, x_types):
            one_row = ArrayType((1,) + t.shape[1:], t.dtype)
            row = ctx.generic("stablehlo.dynamic_slice", [x, idx] + [z] * (len(t.shape) - 1),
                              [t] + [i32] * len(t.shape), [one_row],
                              {"slice_sizes": dims_attr(one_row.shape)})
            x_slices.append(ctx.generic("stablehlo.reshape", [row], [one_row],
                                        [ArrayType(t.shape[1:], t.dtype)]))
        outs = lower_body(ctx, body, c + x_slices + list(caps))
        new_ys = []
        for y, ys_, t in zip(outs[k:], ys, ys_types):
            row_t = ArrayType((1,) + t.shape[1:], t.dtype)
            row = ctx.generic("stablehlo.reshape", [y], [ArrayType(t.shape[1:], t.dtype)],
                              [row_t])
            new_ys.append(ctx.generic("stablehlo.dynamic_update_slice",
                                      [ys_, row, idx] + [z] * (len(t.shape) - 1),
                                      [t, row_t] + [i32] * len(t.shape), [t]))
        return [ctx.generic("stablehlo.add", [i, one], [i32, i32], [i32])] + outs[:k] + new_ys

    regions = [ctx.region(types, [ArrayType((), dtypes.bool_)], cond),
               ctx.region(types, types, step)]
    results = ctx.generic("stablehlo.while", [zero] + carry + ys0, types, types,
                          regions=regions)
    return (results if isinstance(results, list) else [results])[1:]


def _scan_jvp(primals, tangents, *, body, length, reverse, num_carry, num_consts):
    """A scan over (carry, carry tangents), (xs, xs tangents) of the jvp'd body."""
    k = num_carry
    carry, xs, caps = _scan_parts(primals, k, num_consts)
    _, xs_t, caps_t = _scan_parts(tangents, k, num_consts)
    carry_nz = [_inexact(type_of(c)) for c in carry]
    xs_nz = [not ad.is_zero(t) for t in xs_t]
    caps_nz = [not ad.is_zero(t) for t in caps_t]
    jvp_body = _jvp_graph(body, carry_nz + xs_nz + caps_nz)
    carry_t = [ad.instantiate(t) if not ad.is_zero(t) else ad.zeros(type_of(c).strong())
               for c, t, nz in zip(carry, tangents[:k], carry_nz) if nz]
    xs_t = [t for t in xs_t if not ad.is_zero(t)]
    caps_t = [t for t in caps_t if not ad.is_zero(t)]
    sizes = [k, len(xs), len(caps), len(carry_t), len(xs_t), len(caps_t)]
    n_out = len(body.outputs)
    out_inexact = [_inexact(t) for t in body.out_types]
    nct = sum(out_inexact[:k])

    def step(*xs_in):  # (carry, carry_t, x, x_t, caps, caps_t) -> jvp_body's order
        c, ct, x, xt, cp, cpt = _split(xs_in, [sizes[0], sizes[3], sizes[1], sizes[4],
                                               sizes[2], sizes[5]])
        outs = core.eval_graph(jvp_body, *c, *x, *cp, *ct, *xt, *cpt)
        prim, tan = outs[:n_out], outs[n_out:]
        return prim[:k] + tan[:nct] + prim[k:] + tan[nct:]
    slice_t = [ArrayType(type_of(x).shape[1:], type_of(x).dtype) for x in xs + xs_t]
    nx = len(xs)
    new_body = _restage(body.name, _types(carry) + _types(carry_t) + slice_t[:nx]
                        + slice_t[nx:] + _types(caps) + _types(caps_t), step)
    outs = scan_p.bind(*carry, *carry_t, *xs, *xs_t, *caps, *caps_t, body=new_body,
                       length=length, reverse=reverse, num_carry=k + len(carry_t),
                       num_consts=len(caps) + len(caps_t))
    c_out, ct_out = outs[:k], iter(outs[k:k + len(carry_t)])
    ys, yt = outs[k + len(carry_t):k + len(carry_t) + n_out - k], iter(
        outs[k + len(carry_t) + n_out - k:])
    primal_outs = c_out + ys
    tangent_outs = ([next(ct_out) if nz else ad.Zero.like(o) for o, nz in
                     zip(c_out, out_inexact[:k])]
                    + [next(yt) if nz else ad.Zero.like(o) for o, nz in zip(ys, out_inexact[k:])])
    return primal_outs, tangent_outs


def _split(values, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(list(values[start:start + s]))
        start += s
    return out


class _SplitBody:
    """A scan body split for reverse mode, as JAX's partial evaluation of it splits it:
    `fwd` is the body returning, after its results, the residuals that differ per step
    (stacked by the scan as extra ys); `bwd` takes (cotangents of the body's inexact
    results, residuals) to cotangents of the inputs marked in `diff`. The residuals are
    the forward values the tape's rules read, nothing else. The cotangents of the
    outputs numbered in `unread` are symbolic zeros: nothing they would feed is in `bwd`
    (which still takes them, unread). Of those residuals, a body input x or
    captured value is read from the scan's own operand instead of saved, and one
    computed from captured values alone is loop-invariant: `hoisted` computes it once,
    from the captured values, before the loop; one the body returns as a y is read from
    the scan's ys. `sources[i]` says where bwd's residual i comes from: ("stacked" | "x"
    | "y" | "const" | "hoisted", index)."""

    def __init__(self, body, k, nx, diff, unread=frozenset()):
        with core.staging(body.name) as fwd:
            diff_ins, outs, f_vjp = _staged_vjp(fwd, body, diff)
            with core.staging(f"vjp_{body.name}") as back:
                cts = iter([back.new_input(t.strong()) for t in body.out_types if _inexact(t)])
                given = [next(cts) if _inexact(t) else None for t in body.out_types]
                got = f_vjp([None if i in unread else c for i, c in enumerate(given)])
                bwd = back.build([ad.zeros(type_of(x).strong()) if g is None else g
                                  for g, x in zip(got, diff_ins)])
            full = fwd.build(outs + back.captured_values())
        n_cts, n = len(bwd.inputs) - len(back.captured), len(body.outputs)
        read = {a for e in bwd.eqns for a in e.inputs} | set(bwd.outputs)
        used = [i for i, v in enumerate(bwd.inputs[n_cts:]) if v in read]
        self.bwd = Graph(bwd.name, bwd.inputs[:n_cts] + [bwd.inputs[n_cts + i] for i in used],
                         bwd.constants, bwd.eqns, bwd.outputs, bwd.next_id)
        caps = full.inputs[k + nx:]
        invariant = set(caps) | {v for v, _ in full.constants}
        for e in full.eqns:
            if all(isinstance(a, Literal) or a in invariant for a in e.inputs):
                invariant.update(e.outputs)
        stacked, hoisted, self.sources = [], [], []
        for a in [full.outputs[n + i] for i in used]:
            pos = next((i for i, v in enumerate(full.inputs) if v is a), -1)
            if pos >= k:  # an x or a captured value: the scan's operand is the residual
                self.sources.append(("x", pos - k) if pos < k + nx else ("const", pos - k - nx))
            elif pos < 0 and (isinstance(a, Literal) or a in invariant):
                self.sources.append(("hoisted", len(hoisted)))
                hoisted.append(a)
            elif any(a is y for y in full.outputs[k:n]):  # already stacked as a y
                self.sources.append(("y", next(j for j, y in enumerate(full.outputs[k:n])
                                               if a is y)))
            else:
                self.sources.append(("stacked", len(stacked)))
                stacked.append(a)
        self.fwd = eliminate_dead_code(Graph(full.name, full.inputs, full.constants, full.eqns,
                                             full.outputs[:n] + stacked, full.next_id))
        self.hoisted = eliminate_dead_code(Graph(
            f"{body.name}_invariant", caps, full.constants,
            [e for e in full.eqns if invariant.issuperset(e.outputs)], hoisted,
            full.next_id)) if hoisted else None


# body Graph -> {(num_carry, number of xs, diff): _SplitBody}, so eager grads of one scan
# reuse the graphs (and with them the executables compiled for them)
_split_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _split_body(body, k, nx, diff, unread=frozenset()) -> _SplitBody:
    cache = _split_bodies.setdefault(body, {})
    if (k, nx, diff, unread) not in cache:
        cache[k, nx, diff, unread] = _SplitBody(body, k, nx, diff, unread)
    return cache[k, nx, diff, unread]


# body Graph -> {(num_carry, differentiated carries, outputs with cotangents): the dead
# carries}: eager grads of one scan ask again at every call
_dead_carry_sets: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _dead_carries(body, k, c_diff, live_outs: frozenset) -> frozenset:
    """The differentiated carries whose cotangent is zero in every step: no output with
    a cotangent (`live_outs`, by number) depends on the carry differentiably, in the
    body or through the carries it feeds (a fixed point, as JAX's dead code
    elimination of the scan it linearized; a round of the carry has no derivative)."""
    if all(i in live_outs for i in range(k) if c_diff[i]):
        return frozenset()  # each final carry read: no VJP of the body to stage
    cache = _dead_carry_sets.setdefault(body, {})
    key = (k, c_diff, live_outs)
    if key not in cache:
        live = set(live_outs)
        while new := {i for i, got in enumerate(_cotangent_inputs(body, k, c_diff, live))
                      if got} - live:
            live |= new
        cache[key] = frozenset(i for i in range(k) if c_diff[i] and i not in live)
    return cache[key]


def _cotangent_inputs(body, k, c_diff, live) -> list[bool]:
    """Which of the body's first `k` inputs (those `c_diff` marks) get a cotangent from
    those of the outputs in `live` (staged once to find out, then dropped)."""
    with core.staging(body.name) as fwd:
        diff = tuple(c_diff) + (False,) * (len(body.inputs) - k)
        _, _, f_vjp = _staged_vjp(fwd, body, diff)
        with core.staging(f"vjp_{body.name}") as back:
            got = iter(f_vjp([back.new_input(t.strong()) if j in live and _inexact(t)
                              else None for j, t in enumerate(body.out_types)]))
    return [bool(c_diff[i]) and next(got) is not None for i in range(k)]


def _staged_vjp(fwd, body, diff):
    """(the inputs `diff` marks, outputs, f_vjp): `body` evaluated in the staging `fwd`
    under a VJP with respect to those of its inputs."""
    ins = [fwd.new_input(t) for t in body.in_types]

    def run(*diff_ins):
        it = iter(diff_ins)
        return core.eval_graph(body, *[next(it) if d else x for x, d in zip(ins, diff)]), None
    diff_ins = [x for x, d in zip(ins, diff) if d]
    outs, f_vjp, _ = ad.vjp_of(run, diff_ins)
    return diff_ins, outs, f_vjp


@ad.takes_needed
def _scan_vjp_fwd(primals, *, body, length, reverse, num_carry, num_consts, needed):
    """Reverse mode of a scan in two loops, as in JAX: the forward scan of the split body
    (_SplitBody) gives the results and the stacked residuals; the backward function is
    one scan the other way whose step pulls (carry cotangent, y cotangent) back to
    (previous carry cotangent, x cotangent, captured cotangents, summed in the carry).
    Only `needed` xs and captured values get cotangents: grad with respect to the weights
    computes no cotangent of the inputs. Carry cotangents flow (every step reads them),
    but for carries that no output with a cotangent depends on: their cotangent is zero
    (_dead_carries), and the backward function then runs the forward scan again with a
    body split without them, as JAX's partial evaluation leaves them out."""
    k = num_carry
    carry, xs, caps = _scan_parts(primals, k, num_consts)
    diff = tuple(_inexact(t) and (i < k or n) for i, (t, n) in enumerate(zip(body.in_types,
                                                                            needed)))
    split = _split_body(body, k, len(xs), diff)
    outs = scan_p.bind(*carry, *xs, *caps, body=split.fwd, length=length, reverse=reverse,
                       num_carry=k, num_consts=num_consts)
    n = len(body.outputs)
    residuals = _residuals(split, outs, xs, caps, k, n)
    loop = dict(length=length, reverse=reverse, num_carry=k, num_consts=num_consts)

    @ad.takes_zero_cotangents
    def backward(cts):
        live = frozenset(j for j, (c, t) in enumerate(zip(cts, body.out_types))
                         if c is not None and _inexact(t))
        dead = _dead_carries(body, k, diff[:k], live)
        cts = [ad.zeros(type_of(o)) if c is None else c for c, o in zip(cts, outs)]
        if not dead:
            return _scan_backward(body, split, diff, residuals, caps, cts, loop)
        kept = tuple(d and i not in dead for i, d in enumerate(diff))
        unread = dead | {j for j, t in enumerate(body.out_types)
                         if j >= k and _inexact(t) and j not in live}
        again = _split_body(body, k, len(xs), kept, unread)
        again_outs = scan_p.bind(*carry, *xs, *caps, body=again.fwd, **loop)
        return _scan_backward(body, again, kept, _residuals(again, again_outs, xs, caps, k, n),
                              caps, cts, loop)
    return outs[:n], backward


def _residuals(split, outs, xs, caps, k, n) -> list:
    """The values `split.bwd` reads after the cotangents, from where `split.sources` says
    (`outs`: the forward scan's, of split.fwd)."""
    values = {"stacked": outs[n:], "x": xs, "y": outs[k:n], "const": caps,
              "hoisted": core.eval_graph(split.hoisted, *caps) if split.hoisted else []}
    return [values[kind][i] for kind, i in split.sources]


def _scan_backward(body, split, diff, residuals, caps, cts, loop) -> list:
    """_scan_vjp_fwd's backward scan: the cotangents of the scan's operands (None where
    `diff` says none), from those of its results and the residuals of `split`."""
    k, num_consts = loop["num_carry"], loop["num_consts"]
    per_step = [kind in ("stacked", "x", "y") for kind, _ in split.sources]
    c_diff, x_diff, cap_diff = _scan_parts(list(diff), k, num_consts)
    ct_carry = [c for c, d in zip(cts[:k], c_diff) if d]
    ct_ys = [c for c, t in zip(cts[k:], body.out_types[k:]) if _inexact(t)]
    ct_caps0 = [ad.zeros(type_of(c).strong()) for c, d in zip(caps, cap_diff) if d]
    steps = [r for r, p in zip(residuals, per_step) if p]
    consts = [r for r, p in zip(residuals, per_step) if not p]
    nc, ncap, nxd = len(ct_carry), len(ct_caps0), sum(x_diff)

    def back_step(*a):  # (ct carry, ct caps sum, per-step residuals, ct y, consts)
        ctc, acc, step_res, cty, const_res = _split(a, [nc, ncap, len(steps), len(ct_ys),
                                                        len(consts)])
        its = iter(step_res), iter(const_res)
        res = [next(its[0] if p else its[1]) for p in per_step]
        carried = iter(ctc)  # a carry left out has a cotangent bwd does not read
        ct_out = [next(carried) if d else ad.zeros(t.strong())
                  for t, d in zip(body.out_types[:k], c_diff) if _inexact(t)]
        g_c, g_x, g_cap = _split(core.eval_graph(split.bwd, *ct_out, *cty, *res),
                                 [nc, nxd, ncap])
        return g_c + [add(s, g) for s, g in zip(acc, g_cap)] + g_x
    back = _restage(f"vjp_{body.name}", _types(ct_carry) + _types(ct_caps0)
                    + _slice_types(steps) + _slice_types(ct_ys) + _types(consts), back_step)
    results = scan_p.bind(*ct_carry, *ct_caps0, *steps, *ct_ys, *consts, body=back,
                          length=loop["length"], reverse=not loop["reverse"],
                          num_carry=nc + ncap, num_consts=len(consts))
    g_carry, g_caps, g_xs = (iter(g) for g in _split(results, [nc, ncap, nxd]))
    return ([next(g_carry) if d else None for d in c_diff]
            + [next(g_xs) if d else None for d in x_diff]
            + [next(g_caps) if d else None for d in cap_diff])


def _slice_types(stacked) -> list:
    """The type of one step's slice of each stacked value."""
    return [ArrayType(type_of(x).shape[1:], type_of(x).dtype) for x in stacked]


def _scan_batch(values, dims, *, body, length, reverse, num_carry, num_consts):
    """xs batched along axis 1 (the scan runs along 0), so each step's slice is batched
    along 0; carries batched in some step are batched throughout; batched ys are batched
    along 1, the others stay unbatched (jacfwd's primal results must be)."""
    size = _axis_size(values, dims)
    k = num_carry
    carry, xs, caps = _scan_parts(values, k, num_consts)
    carry_d, xs_d, caps_d = _scan_parts(dims, k, num_consts)
    xs = [x if d is not_mapped else moveaxis(x, d, 1) for x, d in zip(xs, xs_d)]
    x_d = [not_mapped if d is not_mapped else 0 for d in xs_d]
    slices = [_Abstract(ArrayType(type_of(x).shape[1:], type_of(x).dtype)) for x in xs]
    batched = _carry_batched(body, carry, carry_d, slices + caps, x_d + caps_d, size, k)
    ins = [batch_at(c, d, size, 0) if b else c for c, d, b in zip(carry, carry_d, batched)]
    in_d = [0 if b else not_mapped for b in batched]
    new_body, out_d = _force(body, _abstract(ins) + slices + _abstract(caps),
                             in_d + x_d + caps_d, batched + [False] * (len(body.outputs) - k),
                             size)
    outs = scan_p.bind(*ins, *xs, *caps, body=new_body, length=length, reverse=reverse,
                       num_carry=k, num_consts=num_consts)
    return outs, out_d[:k] + [1 if d == 0 else not_mapped for d in out_d[k:]]


scan_p = define("scan", shape=_scan_shape, lower=_scan_lowering, multiple_results=True,
                jvp=_scan_jvp, vjp_fwd=_scan_vjp_fwd, batch=_scan_batch, linear="body")



# ---------------------------------------------------------------- associative_scan

def associative_scan(fn, elems, reverse=False, axis=0):
    """The prefix sums of elems along `axis` under the associative fn, by JAX's
    odd/even recursion over slices (log-depth, no loop primitive): the same operations
    as JAX's lax.associative_scan, so the same rounding."""
    leaves, tree = tree_util.tree_flatten(elems)
    leaves = _as_arrays(leaves)
    if not leaves:
        return elems
    axis = axis % type_of(leaves[0]).ndim
    lengths = {type_of(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(at_user_line(
            f"Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[type_of(x).shape for x in leaves]})"))
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError(at_user_line(
                f"associative_scan's fn must return the structure of its inputs: {tree}, "
                f"got {out_tree}"))
        return out_leaves

    def run(elems):
        n = type_of(elems[0]).shape[axis]
        if n < 2:
            return elems
        odd = run(combine([slice_in_dim(e, 0, -1, 2, axis) for e in elems],
                          [slice_in_dim(e, 1, None, 2, axis) for e in elems]))
        firsts = [slice_in_dim(e, 0, -1, 1, axis) for e in odd] if n % 2 == 0 else odd
        even = combine(firsts, [slice_in_dim(e, 2, None, 2, axis) for e in elems])
        even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis)
                for e, r in zip(elems, even)]
        return [_interleave(a, b, axis) for a, b in zip(even, odd)]

    out = run(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along axis (a one longer, or as long): both padded
    with interior zeros and added (or'ed), as JAX does."""
    ta, tb = type_of(a), type_of(b)
    same = ta.shape[axis] == tb.shape[axis]
    a_pad, b_pad = [(0, 0, 0)] * ta.ndim, [(0, 0, 0)] * tb.ndim
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    op = bitwise_or if ta.dtype == dtypes.bool_ else add
    return op(pad(a, 0, a_pad), pad(b, 0, b_pad))
