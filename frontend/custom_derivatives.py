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
import inspect

from jax.dtypes import float0

from . import core, dtypes
from . import pytree as tree_util
from .arguments import fn_location, fn_name
from .ad import (JVPTrace, JVPTracer, VJPTrace, VJPTracer, Zero, backward_pass,
                 instantiate, stop_gradient, tangent_dtype)
from .batching import BatchTrace, axis_size, batch_at, vmap
from .calls import _pjit_shape
from .control_flow import _long_name, _mismatch
from .core import Tracer, UnexpectedTracerError, at_user_line, new_trace, type_of
from .ir import ArrayType
from .lowering import lower_body
from .primitives import define
from .primitives.elementwise import add


class _Applied:
    """A custom function applied to arguments split as nondiff ones and the leaves of
    the others (their tree): the `rule` param of a staged equation. Its output tree is
    known once fun or a rule has run."""

    def __init__(self, custom, nondiff, tree, in_types):
        self.custom, self.nondiff, self.tree, self.in_types = custom, nondiff, tree, in_types
        self.out_tree = self.out_types = None  # out_types: fun's, where it was staged
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
    """What custom_jvp and custom_vjp share: fun, its arguments (keyword and default ones
    placed positionally, as JAX does) split into those of nondiff_argnums (passed to the
    rules first; each class says what a traced value there does) and the differentiable
    ones, and the dispatch on the trace that sees the call."""

    def __init__(self, fun, nondiff_argnums, nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nondiff_argnums) | _positions(
            fun, nondiff_argnames)))
        self.signature = None  # fun's, once called

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

    def resolve(self, args, kwargs) -> tuple:
        """All arguments positionally, keyword and default ones placed by fun's signature,
        as JAX's custom functions pass them to fun and the rules (a functools.partial's
        signature is opaque there: it takes positional arguments only)."""
        if self.signature is None:
            fun = self.fun if not isinstance(self.fun, functools.partial) else \
                (lambda *args, **kwargs: None)
            self.signature = inspect.signature(fun)
        try:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            stuck = [k for k in bound.kwargs if k in kwargs]
            if stuck:
                raise TypeError("The following keyword arguments could not be resolved to "
                                f"positions: {', '.join(stuck)}")
        except TypeError as e:
            raise TypeError(at_user_line(
                f"The input arguments to the {type(self).__name__}-decorated function "
                f"{self.__name__} could not be resolved to positional-only arguments. "
                f"Binding failed with the error:\n{e}")) from None
        return bound.args

    def __call__(self, *args, **kwargs):
        self.check_defined()
        args = [self.nondiff_arg(a) if i in self.nondiff_argnums else a
                for i, a in enumerate(self.resolve(args, kwargs))]
        nondiff, leaves, tree = self.split(args)
        app = _Applied(self, nondiff, tree, [type_of(x) for x in leaves])
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
        app.out_types = graph.out_types
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
    `rule(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`, or one rule
    per argument by `f.defjvps`. Under the
    tape, the rule's tangent function (linear in the tangents) is recorded on a nested
    tape, and its backward pass is the VJP."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        _no_symbolic_zeros(symbolic_zeros)
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, `jvp(tangent, primal_out, *primals)` (None: the output
        does not vary with that argument), their tangents summed, as JAX's defjvps."""
        if self.nondiff_argnums:
            raise TypeError(at_user_line("Can't use ``defjvps`` with ``nondiff_argnums``."))

        def jvp(primals, tangents):
            out = self(*primals)
            parts = [rule(t, out, *primals) for t, rule in zip(tangents, jvps) if rule]
            if not parts:
                return out, tree_util.tree_map(lambda o: instantiate(Zero.like(o)), out)
            return out, tree_util.tree_map(lambda *ts: functools.reduce(add, ts), *parts)
        self.defjvp(jvp)

    def nondiff_arg(self, arg):
        """A nondiff argument, its traced values through stop_gradient, as in JAX: fun
        run on them gets no derivative either."""
        return tree_util.tree_map(lambda x: stop_gradient(x) if isinstance(x, Tracer) else x,
                                  arg)

    def check_defined(self):
        if self.jvp is None:
            raise AttributeError(at_user_line(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."))

    def jvp_of(self, app, primals, tangents):
        """(primal outs, tangent outs) from the rule, zero tangents as arrays; JAX's
        errors for another result, at the rule's line. Its primal out is checked against
        fun's where fun was staged."""
        pair = self.jvp(*app.nondiff, app.rule_args(primals),
                        app.rule_args(map(instantiate, tangents)))
        rule, name = fn_name(self.jvp), self.__name__
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(_at(self.jvp, (
                f"Custom JVP rule {rule} for function {name} must produce a pair (list or "
                f"tuple of length two) representing primal and tangent outputs, but got "
                f"{pair}.")))
        (outs, tree), (t_outs, t_tree) = map(tree_util.tree_flatten, pair)
        if tree != t_tree:
            raise TypeError(_at(self.jvp, (
                f"Custom JVP rule {rule} for function {name} must produce primal and tangent "
                f"outputs with equal container (pytree) structures, but got {tree} and "
                f"{t_tree} respectively.")))
        differ = _differ_from_fun(app, outs, tree)
        if differ:
            what, ours, funs = differ
            raise TypeError(_at(self.jvp, (
                f"Custom JVP rule {rule} for function {name} must produce a pair (list or "
                "tuple of length two) where the first element represents the primal output "
                "(equal in value to the output of the custom_jvp-decorated function "
                f"{name}, and in particular " + (
                    "of the same container/pytree structure" if what[0] == "c" else
                    "with leaves of the same shape/dtype") + "), but instead the JVP rule "
                f"output's first element had {what}:\n    {ours}\nwhile the "
                f"custom_jvp-decorated function {name} had output {what}:\n    {funs}" + (
                    "." if what[0] == "c" else ""))))
        types = [type_of(o) for o in outs]
        want = [ArrayType(t.shape, tangent_dtype(t.dtype)) for t in types]
        got = [_tangent_type(t) for t in t_outs]
        if want != got:
            if len(want) == 1:
                message = ("Custom JVP rule must produce primal and tangent outputs with "
                           f"corresponding shapes and dtypes. Expected {_long_name(want[0])} "
                           f"(tangent type of {_long_name(types[0])}) but got "
                           f"{_long_name(got[0])}.")
            else:
                message = ("Custom JVP rule must produce primal and tangent outputs with "
                           "corresponding shapes and dtypes, but got:\n" + "\n".join(
                               f"  primal {_long_name(p)} with tangent {_long_name(t)}, "
                               f"expecting tangent ShapedArray({_long_name(w)})"
                               for p, w, t in zip(types, want, got) if w != t))
            raise TypeError(_at(self.jvp, message))
        return app.flat(pair[0]), t_outs

    def vjp_fwd(self, app, primals):
        """(primal outs, backward): the rule run with its tangents on a nested tape,
        whose backward pass is the VJP."""
        rule = f"the JVP rule {fn_name(self.jvp)} of custom_jvp function {self.__name__}"
        with new_trace(VJPTrace(rule)) as linear:
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

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """`optimize_remat` asks JAX not to run fwd again under remat: a saving only, which
        tracehlo's checkpoint does not make (fwd runs again), so it changes no result."""
        _no_symbolic_zeros(symbolic_zeros)
        self.fwd, self.bwd = fwd, bwd

    def nondiff_arg(self, arg):
        """A nondiff argument, checked: JAX's error for a traced value there."""
        if any(isinstance(x, Tracer) for x in tree_util.tree_leaves(arg)):
            raise UnexpectedTracerError(at_user_line(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in "
                "a position indicated by nondiff_argnums as non-differentiable. Tracers "
                "cannot be passed as non-differentiable arguments to custom_vjp functions; "
                "instead, nondiff_argnums should only be used for arguments that can't be or "
                "contain JAX tracers, e.g. function-valued arguments. In particular, "
                "array-valued arguments should typically not be indicated as "
                "nondiff_argnums."))
        return arg

    def check_defined(self):
        if self.fwd is None or self.bwd is None:
            raise AttributeError(at_user_line(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp."))

    def jvp_of(self, app, primals, tangents):
        raise TypeError(at_user_line(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function."))

    def vjp_fwd(self, app, primals):
        """(fwd's primal outs, backward: bwd)."""
        out, res = self.checked_fwd(app, primals)
        outs = app.flat(out)
        out_tree = app.out_tree

        def backward(cts):
            return list(self.flat_bwd(app, res, tree_util.tree_unflatten(out_tree, cts)))
        return outs, backward

    def checked_fwd(self, app, primals) -> tuple:
        """fwd's (out, residuals), with JAX's errors for another result: at fwd's line, as
        they are errors in it. Its out is checked against fun's where fun was staged."""
        pair = self.fwd(*app.args(primals))
        fwd_name, name = fn_name(self.fwd), self.__name__
        must = (f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                "(list or tuple of length two) where the first element represents the "
                "primal output (equal to {} the custom_vjp-decorated function "
                f"{name}) and the second element represents residuals (i.e. values stored "
                "from the forward pass for use on the backward pass), but ")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(_at(self.fwd, must.format("those of") + f"instead of a pair "
                                f"the fwd rule {fwd_name} produced {pair}."))
        out, res = pair
        for leaf in tree_util.tree_leaves(res):
            try:
                type_of(leaf)
            except TypeError:
                raise TypeError(_at(self.fwd, f"Argument '{leaf}' of type {type(leaf)} is "
                                    "not a valid JAX type")) from None
        differ = _differ_from_fun(app, *tree_util.tree_flatten(out))
        if differ:
            what, ours, funs = differ
            raise TypeError(_at(self.fwd, must.format("the output of") + (
                f"instead the fwd rule output's first element had {what}:\n    {ours}\n"
                f"while the custom_vjp-decorated function {name} had output {what}:\n"
                f"    {funs}" + ("." if what[0] == "c" else ""))))
        return out, res

    def flat_bwd(self, app, res, ct) -> list:
        """bwd's cotangents as one per differentiable leaf (None: zero), with JAX's
        errors for a result of another structure or shape, at bwd's line."""
        cts = self.bwd(*app.nondiff, res, ct)
        args = app.rule_args(range(app.tree.num_leaves))  # each leaf: its index
        if isinstance(cts, list) and len(cts) == len(args):
            cts = tuple(cts)
        flat = [None] * app.tree.num_leaves

        def put(c, arg):  # None, or one cotangent, for an argument's leaves
            for i in tree_util.tree_leaves(arg):
                flat[i] = c
        try:
            if not isinstance(cts, tuple):
                raise ValueError
            tree_util.tree_map(put, cts, args, is_leaf=lambda x: x is None)
        except ValueError:
            raise TypeError(_at(self.bwd, (
                "Custom VJP bwd rule must produce an output with the same container (pytree) "
                "structure as the args tuple of the primal function, and in particular must "
                "produce a tuple of length equal to the number of arguments to the primal "
                "function, but got bwd output structure "
                f"{tree_util.tree_structure(cts)} for primal input structure "
                f"{tree_util.tree_structure(args)}."))) from None
        paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(args)[0]]
        for i, (c, t, path) in enumerate(zip(flat, app.in_types, paths)):
            if c is None or not dtypes.is_inexact(t.dtype):
                flat[i] = None  # JAX's Zero: no cotangent for an integer input
            elif type_of(c).shape != t.shape:  # another dtype passes, as in JAX
                raise ValueError(_at(self.bwd, (
                    "Custom VJP bwd rule must produce an output with the same type as the "
                    "args tuple of the primal function, but at "
                    f"output{path} the bwd rule produced an output of type "
                    f"{_long_name(type_of(c))} corresponding to an input of type "
                    f"{_long_name(t)}{_mismatch(t, type_of(c))}")))
        return flat

    def vmap_rules(self, app, batched):
        batched.defvjp(vmap(lambda *xs: self.checked_fwd(app, xs)),
                       vmap(lambda res, ct: self.flat_bwd(app, res, ct)))


def _positions(fun, names) -> set:
    """The positions of fun's parameters called `names`, as JAX's nondiff_argnames."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return set()
    params = list(inspect.signature(fun).parameters)
    missing = [n for n in names if n not in params]
    if missing:
        raise ValueError(at_user_line(
            f"nondiff_argnames {missing} are not parameters of {getattr(fun, '__name__', fun)}"))
    return {params.index(n) for n in names}


def _no_symbolic_zeros(symbolic_zeros) -> None:
    """JAX's symbolic_zeros hands the rules SymbolicZero and CustomVJPPrimal objects
    instead of arrays; rules written for them would misread arrays, so it is refused."""
    if symbolic_zeros:
        raise NotImplementedError(at_user_line(
            "symbolic_zeros=True is not supported by tracehlo: the rules get arrays (zeros "
            "where a tangent or cotangent is zero)"))


def _at(fn, message) -> str:
    """message at the line that defines the user's rule fn: the error is in it (at the
    user's current line for a rule of ours, defjvps')."""
    loc = fn_location(fn)
    return f"{loc}: {message}" if loc and not loc.file.startswith(core._SKIP_DIRS) \
        else at_user_line(message)


def _differ_from_fun(app, leaves, tree):
    """(what differs, the rule's output types, fun's) as JAX's errors print them, if a
    rule's primal output differs from fun's output where fun was staged, else None."""
    if app.out_types is None:
        return None
    types = [type_of(x) for x in leaves]
    if tree == app.out_tree and types == app.out_types:
        return None
    what = "container/pytree structure" if tree != app.out_tree else "shapes/dtypes of"
    return (what,) + tuple(str(tree_util.tree_unflatten(t, map(_long_name, ts))).replace(
        "'", "") for t, ts in [(tree, types), (app.out_tree, app.out_types)])


def _tangent_type(t) -> ArrayType:
    """A tangent's type; float0 (JAX's tangent of an integer) is no device dtype."""
    if getattr(t, "dtype", None) == float0:
        return ArrayType(tuple(t.shape), float0)
    return type_of(t)


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
    batched = rule.custom.batched(  # fun's output tree, as the rules give theirs
        rule, lambda *xs: tree_util.tree_unflatten(rule.out_tree, fun(*xs, *values[n:])))
    outs = tree_util.tree_leaves(batched(*[batch_at(v, d, size)
                                           for v, d in zip(values[:n], dims[:n])]))
    return outs, [0] * len(outs)


custom_jvp_call_p = define("custom_jvp_call", shape=_call_shape, lower=_call_lowering,
                           multiple_results=True, jvp=_call_jvp, vjp_fwd=_call_vjp_fwd,
                           batch=_call_batch, linear="body")
custom_vjp_call_p = define("custom_vjp_call", shape=_call_shape, lower=_call_lowering,
                           multiple_results=True, jvp=_call_jvp, vjp_fwd=_call_vjp_fwd,
                           batch=_call_batch, linear="body")
