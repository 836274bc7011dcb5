"""User-defined derivatives: custom_jvp and custom_vjp, as JAX's custom_derivatives."""
from __future__ import annotations

import functools

import jax.tree_util as tree_util

from . import core, dtypes
from .ad import (JVPTrace, JVPTracer, VJPTrace, VJPTracer, Zero, backward_pass,
                 instantiate)
from .batching import BatchTrace, BatchTracer, axis_size, batch_at, not_mapped, vmap
from .core import at_user_line, new_trace, type_of


class _CustomRule:
    """What custom_jvp and custom_vjp share: fun, and its arguments split into those of
    nondiff_argnums (passed to the rules as they are) and the differentiable ones."""

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

    def under_vmap(self, trace, nondiff, leaves, tree):
        """self applied to leaves batched by trace, as JAX does it: the same kind of
        function of the batched values, made of vmapped fun and rules, called on the
        enclosing trace, so an AD trace below the vmap still sees the rule. Unbatched
        leaves are broadcast first; their cotangents then sum over the batch."""
        values = [x.value if isinstance(x, BatchTracer) and x._trace is trace else x
                  for x in leaves]
        dims = [x.batch_dim if isinstance(x, BatchTracer) and x._trace is trace
                else not_mapped for x in leaves]
        size = axis_size(values, dims)
        outs = self.batched(nondiff, tree)(*[batch_at(v, d, size) for v, d in zip(values, dims)])
        return tree_util.tree_map(lambda o: BatchTracer(trace, o, 0), outs)

    def of_leaves(self, method, nondiff, tree):
        """method (fun, fwd) as a function of the differentiable leaves."""
        return lambda *xs: method(*self.merge(nondiff, tree, list(xs)))


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

    def __call__(self, *args):
        if self.jvp is None:
            raise AttributeError(at_user_line(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."))
        nondiff, leaves, tree = self.split(args)
        trace = core.find_trace(leaves)
        if isinstance(trace, JVPTrace):
            primals, tangents = zip(*map(trace.unpack, leaves))
            outs, t_outs, out_tree = self._call_rule(nondiff, tree, primals,
                                                     map(instantiate, tangents))
            return tree_util.tree_unflatten(out_tree, [JVPTracer(trace, o, t)
                                                       for o, t in zip(outs, t_outs)])
        if isinstance(trace, VJPTrace):
            return self._vjp(trace, nondiff, leaves, tree)
        if isinstance(trace, BatchTrace):
            return self.under_vmap(trace, nondiff, leaves, tree)
        return self.fun(*args)

    def batched(self, nondiff, tree):
        """A custom_jvp of vmap(fun) over its differentiable leaves, with the vmapped rule."""
        batched = custom_jvp(vmap(self.of_leaves(self.fun, nondiff, tree)))
        batched.defjvp(vmap(lambda primals, tangents: self.jvp(
            *nondiff, tuple(tree_util.tree_unflatten(tree, list(primals))),
            tuple(tree_util.tree_unflatten(tree, list(tangents))))))
        return batched

    def _call_rule(self, nondiff, tree, primals, tangents):
        out, t_out = self.jvp(*nondiff, tuple(tree_util.tree_unflatten(tree, list(primals))),
                              tuple(tree_util.tree_unflatten(tree, list(tangents))))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        return out_leaves, tree_util.tree_leaves(t_out), out_tree

    def _vjp(self, trace, nondiff, leaves, tree):
        primals = [trace.primal(x) for x in leaves]
        with new_trace(VJPTrace()) as linear:
            tangents = [instantiate(Zero.like(p)) for p in primals]
            tangents = [VJPTracer(linear, t) if dtypes.is_inexact(type_of(p).dtype) else t
                        for t, p in zip(tangents, primals)]
            outs, t_outs, out_tree = self._call_rule(nondiff, tree, primals, tangents)

        def backward(cts):
            got = backward_pass(linear.tape, [(t, c) for t, c in zip(t_outs, cts)
                                              if isinstance(t, VJPTracer)])
            return [got.get(id(t)) for t in tangents]
        return tree_util.tree_unflatten(out_tree, trace.record(backward, leaves, outs))


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

    def __call__(self, *args):
        if self.fwd is None:
            raise AttributeError(at_user_line(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp."))
        nondiff, leaves, tree = self.split(args)
        trace = core.find_trace(leaves)
        if isinstance(trace, JVPTrace):
            raise TypeError(at_user_line(
                "can't apply forward-mode autodiff (jvp) to a custom_vjp function."))
        if isinstance(trace, BatchTrace):
            return self.under_vmap(trace, nondiff, leaves, tree)
        if not isinstance(trace, VJPTrace):
            return self.fun(*args)
        primals = [trace.primal(x) for x in leaves]
        out, res = self.fwd(*self.merge(nondiff, tree, primals))
        outs, out_tree = tree_util.tree_flatten(out)

        def backward(cts):
            return list(self.flat_bwd(nondiff, tree, res, tree_util.tree_unflatten(out_tree, cts)))
        return tree_util.tree_unflatten(out_tree, trace.record(backward, leaves, outs))

    def flat_bwd(self, nondiff, tree, res, ct) -> tuple:
        """bwd's cotangents as one per differentiable leaf (None: zero)."""
        ct_args = self.bwd(*nondiff, res, ct)
        arg_trees = tree.children()
        if not isinstance(ct_args, tuple) or len(ct_args) != len(arg_trees):
            raise TypeError(at_user_line(
                "Custom VJP bwd rule must produce a tuple of length equal to the number "
                f"of primal inputs ({len(arg_trees)}), got {ct_args!r}"))
        return tuple(c for a, ct in zip(arg_trees, ct_args) for c in (
            [None] * a.num_leaves if ct is None else tree_util.tree_leaves(ct)))

    def batched(self, nondiff, tree):
        """A custom_vjp of vmap(fun) over its differentiable leaves, with vmapped fwd and
        bwd."""
        batched = custom_vjp(vmap(self.of_leaves(self.fun, nondiff, tree)))
        batched.defvjp(vmap(self.of_leaves(self.fwd, nondiff, tree)),
                       vmap(lambda res, ct: self.flat_bwd(nondiff, tree, res, ct)))
        return batched
