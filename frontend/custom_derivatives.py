"""User-defined derivatives: custom_jvp and custom_vjp, as JAX's custom_derivatives.

As in JAX, evaluation runs fun, and jvp and the tape apply the user's rule. A staging
trace cannot apply it, because what it stages (a cond branch, a scan body, a nested
jit's callee) may be differentiated only later, when its Graph is evaluated under a
JVPTrace or VJPTrace. So it records one `custom_jvp_call` or `custom_vjp_call`
equation, a call of fun's Graph that carries the rule, whose jvp and vjp rules apply
the user's rule: the rule survives staging, as JAX's custom_jvp_call does. vmap
stages the call too, so that the values fun closes over are operands its batching
rule batches with the others.

    custom_jvp_call[call=g, rule='f'] *differentiable leaves, *values g closed over

The rule (Python code) prints as its name, which is what parse_ir gives back: a parsed
graph verifies and lowers, not differentiates. The call lowers to g's equations inline.
"""
from __future__ import annotations

import functools

from . import pytree as tree_util

from . import core, dtypes
from .ad import (JVPTrace, JVPTracer, VJPTrace, VJPTracer, Zero, backward_pass,
                 instantiate)
from .batching import BatchTrace, axis_size, batch_at, vmap
from .calls import _pjit_shape
from .core import at_user_line, new_trace, type_of
from .lowering import lower_body
from .primitives import define


class _Applied:
    """A custom function applied to arguments split as nondiff ones and the leaves of
    the others (their tree): the `rule` param of a staged equation. Its output tree is
    known once fun or a rule has run."""

    def __init__(self, custom, nondiff, tree):
        self.custom, self.nondiff, self.tree = custom, nondiff, tree
        self.out_tree = None
        self.__name__ = getattr(custom, "__name__", "custom")

    def args(self, leaves) -> list:
        """All arguments again, with these leaves for the differentiable ones."""
        return self.custom.merge(self.nondiff, self.tree, list(leaves))

    def rule_args(self, leaves) -> tuple:
        """The differentiable leaves as the tuple of arguments a rule takes."""
        return tuple(tree_util.tree_unflatten(self.tree, list(leaves)))

    def flat(self, out) -> list:
        leaves, self.out_tree = tree_util.tree_flatten(out)
        return leaves


class _CustomRule:
    """What custom_jvp and custom_vjp share: fun, its arguments split into those of
    nondiff_argnums (passed to the rules as they are) and the differentiable ones, and
    the dispatch on the trace that sees the call."""

    def __init__(self, fun, nondiff_argnums):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(nondiff_argnums))

    def split(self, args):
        """(nondiff arguments, leaves of the others, their tree)."""
        leaves, tree = tree_util.tree_flatten(
            [a for i, a in enumerate(args) if i not in self.nondiff_argnums])
        return [args[i] for i in self.nondiff_argnums], leaves, tree

    def merge(self, nondiff, tree, leaves) -> list:
        """All arguments again, with these leaves for the differentiable ones."""
        rest = tree_util.tree_unflatten(tree, leaves)
        rest_it, nondiff_it = iter(rest), iter(nondiff)
        return [next(nondiff_it) if i in self.nondiff_argnums else next(rest_it)
                for i in range(len(rest) + len(nondiff))]

    def __call__(self, *args):
        self.check_defined()
        nondiff, leaves, tree = self.split(args)
        app = _Applied(self, nondiff, tree)
        trace = core.find_trace(leaves)
        if isinstance(trace, JVPTrace):
            primals, tangents = zip(*map(trace.unpack, leaves))
            outs, t_outs = self.jvp_of(app, primals, tangents)
            outs = [JVPTracer(trace, o, t) for o, t in zip(outs, t_outs)]
        elif isinstance(trace, VJPTrace):
            outs, backward = self.vjp_fwd(app, [trace.primal(x) for x in leaves])
            outs = trace.record(backward, leaves, outs)
        elif isinstance(trace, (BatchTrace, core.StagingTrace)):
            outs = self.staged(app, leaves)  # vmap: see _call_batch
        else:
            return self.fun(*args)
        return tree_util.tree_unflatten(app.out_tree, outs)

    def staged(self, app, leaves) -> list:
        """One custom call equation: fun staged to a Graph, and the rule."""
        with core.staging(app.__name__) as staged:
            ins = [staged.new_input(type_of(x)) for x in leaves]
            graph = staged.build(app.flat(self.fun(*app.args(ins))))
        prim = custom_jvp_call_p if isinstance(self, custom_jvp) else custom_vjp_call_p
        return prim.bind(*leaves, *staged.captured_values(), call=graph, rule=app)

    def batched(self, app, fun):
        """The same kind of function as self, made of `fun` (self's fun batched) and the
        vmapped rules."""
        batched = type(self)(fun)
        self.vmap_rules(app, batched)
        return batched


class custom_jvp(_CustomRule):
    """A function with a user-defined JVP rule, as JAX's custom_jvp: `f.defjvp(rule)` with
    `rule(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`. Under the
    tape, the rule's tangent function (linear in the tangents) is recorded on a nested
    tape, and its backward pass is the VJP."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def check_defined(self):
        if self.jvp is None:
            raise AttributeError(at_user_line(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."))

    def jvp_of(self, app, primals, tangents):
        """(primal outs, tangent outs) from the rule, zero tangents as arrays."""
        out, t_out = self.jvp(*app.nondiff, app.rule_args(primals),
                              app.rule_args(map(instantiate, tangents)))
        return app.flat(out), tree_util.tree_leaves(t_out)

    def vjp_fwd(self, app, primals):
        """(primal outs, backward): the rule run with its tangents on a nested tape,
        whose backward pass is the VJP."""
        with new_trace(VJPTrace()) as linear:
            tangents = [instantiate(Zero.like(p)) for p in primals]
            tangents = [VJPTracer(linear, t) if dtypes.is_inexact(type_of(p).dtype) else t
                        for t, p in zip(tangents, primals)]
            outs, t_outs = self.jvp_of(app, primals, tangents)

        def backward(cts):
            got = backward_pass(linear.tape, [(t, c) for t, c in zip(t_outs, cts)
                                              if isinstance(t, VJPTracer)])
            return [got.get(id(t)) for t in tangents]
        return outs, backward

    def vmap_rules(self, app, batched):
        batched.defjvp(vmap(lambda primals, tangents: self.jvp(
            *app.nondiff, app.rule_args(primals), app.rule_args(tangents))))


class custom_vjp(_CustomRule):
    """A function with a user-defined VJP, as JAX's custom_vjp: `f.defvjp(fwd, bwd)`,
    `fwd(*args) -> (out, residuals)`, `bwd(*nondiff_args, residuals, cotangent) ->
    cotangents of the other arguments` (None: zero). Forward mode raises JAX's TypeError:
    the rule says nothing about tangents."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def check_defined(self):
        if self.fwd is None:
            raise AttributeError(at_user_line(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp."))

    def jvp_of(self, app, primals, tangents):
        raise TypeError(at_user_line(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function."))

    def vjp_fwd(self, app, primals):
        """(fwd's primal outs, backward: bwd)."""
        out, res = self.fwd(*app.args(primals))
        outs = app.flat(out)
        out_tree = app.out_tree

        def backward(cts):
            return list(self.flat_bwd(app, res, tree_util.tree_unflatten(out_tree, cts)))
        return outs, backward

    def flat_bwd(self, app, res, ct) -> tuple:
        """bwd's cotangents as one per differentiable leaf (None: zero)."""
        ct_args = self.bwd(*app.nondiff, res, ct)
        arg_trees = app.tree.children()
        if not isinstance(ct_args, tuple) or len(ct_args) != len(arg_trees):
            raise TypeError(at_user_line(
                "Custom VJP bwd rule must produce a tuple of length equal to the number "
                f"of primal inputs ({len(arg_trees)}), got {ct_args!r}"))
        return tuple(c for a, ct in zip(arg_trees, ct_args) for c in (
            [None] * a.num_leaves if ct is None else tree_util.tree_leaves(ct)))

    def vmap_rules(self, app, batched):
        batched.defvjp(vmap(lambda *xs: self.fwd(*app.args(xs))),
                       vmap(lambda res, ct: self.flat_bwd(app, res, ct)))


# ---------------------------------------------------------------- the staged calls

def _call_shape(*in_types, call, rule):
    return _pjit_shape(*in_types, name=call.name, graph=call)


def _call_lowering(ctx, eqn, *args):
    """fun's equations inline, as JAX lowers its custom calls."""
    return lower_body(ctx, eqn.params["call"], list(args))


def _call_jvp(primals, tangents, *, call, rule):
    """The rule's (values fun closed over are the rule's to use: they get no tangent)."""
    n = rule.tree.num_leaves
    return rule.custom.jvp_of(rule, primals[:n], tangents[:n])


def _call_vjp_fwd(primals, *, call, rule):
    n = rule.tree.num_leaves
    outs, backward = rule.custom.vjp_fwd(rule, primals[:n])
    return outs, lambda cts: backward(cts) + [None] * (len(primals) - n)


def _call_batch(values, dims, *, call, rule):
    """As JAX batches a custom function: the same kind of function of the batched
    leaves, made of the call batched (the values fun closed over included, batched or
    not) and the vmapped rules, called on the enclosing trace, so an AD trace below the
    vmap still sees the rule. Unbatched leaves are broadcast first; their cotangents
    then sum over the batch."""
    n, size = rule.tree.num_leaves, axis_size(values, dims)
    fun = vmap(lambda *xs: core.eval_graph(call, *xs), in_axes=(0,) * n + tuple(dims[n:]))
    batched = rule.custom.batched(rule, lambda *xs: fun(*xs, *values[n:]))
    outs = tree_util.tree_leaves(batched(*[batch_at(v, d, size)
                                           for v, d in zip(values[:n], dims[:n])]))
    return outs, [0] * len(outs)


custom_jvp_call_p = define("custom_jvp_call", shape=_call_shape, lower=_call_lowering,
                           multiple_results=True, jvp=_call_jvp, vjp_fwd=_call_vjp_fwd,
                           batch=_call_batch)
custom_vjp_call_p = define("custom_vjp_call", shape=_call_shape, lower=_call_lowering,
                           multiple_results=True, jvp=_call_jvp, vjp_fwd=_call_vjp_fwd,
                           batch=_call_batch)
