"""Automatic differentiation: forward mode (jvp) and reverse mode (vjp, grad), and the
APIs built on them (linearize, value_and_grad, jacfwd, jacrev, hessian, checkpoint,
stop_gradient; custom_jvp and custom_vjp are in custom_derivatives.py).

Forward mode is an interpreter: a JVPTracer carries a primal and a tangent, and
`jvp_rules[prim](primals, tangents, **params) -> (primal_outs, tangent_outs)` (lists,
one entry per operand or result) says how each primitive maps them. A tangent is an
array or a symbolic `Zero`, so non-differentiable primitives (comparisons, integer ops,
argmax, iota, ...) cost nothing, and integer inputs have float0 tangents, as in JAX.

Reverse mode runs the function once under a VJPTrace, which binds every primitive on
the primal values (to the enclosing trace: eager, staging, or another transformation)
and records a tape node. The backward pass walks the tape in reverse, calling
`vjp_rules[prim](cotangents_out, primals_in, primals_out, **params) -> cotangents_in`
(None for an operand without a cotangent, such as an index) and adding up cotangents.
We chose per-primitive VJP rules over JAX's jvp + partial evaluation + transposition
because each rule reads on its own next to its primitive (`mul(g, cos(x))`), rules
compose through bind (a backward rule is itself bound, so enclosing traces
differentiate, stage or evaluate it: grad(grad(f)), jacfwd(jacrev(f)), jit(grad(f)))
and there is no partial evaluator to maintain; the cost is two tables of rules. Under
jit, the dead-code elimination at the end of staging drops what the backward pass
does not use, so `make_ir(grad(sin))` holds `cos` and no `sin`.

A VJP rule sees only a primitive's inputs and outputs. That suffices for an operation,
not for a loop: the backward step of a scan needs values from inside each forward step,
which a rule called after the loop has run could only get by running it again. So a
primitive may instead have a forward rule, `vjp_fwd_rules[prim](primals_in, **params)
-> (primals_out, backward)`, which the tape calls in place of binding the primitive: it
emits a forward pass that also returns the residuals its backward function reads (the
scan: one loop with the residuals as extra stacked outputs, as JAX gets from partial
evaluation of the body), so the primal results come from the loop that saves them.

Calls (`pjit`, a nested jit) stay calls: jvp of a call is a call of the jvp'd graph,
and the VJP of a call is a call of a backward graph that runs the callee again from
its inputs (calls.py).
"""
from __future__ import annotations

import functools
import inspect
import operator
import types

from . import pytree as tree_util
import numpy as np
from jax.dtypes import float0

from . import core, dtypes
from .batching import vmap
from .core import Trace, Tracer, at_user_line, bind, check_callable, new_trace, type_of
from .ir import ArrayType

jvp_rules: dict = {}  # prim -> (primals, tangents, **params) -> (primal_outs, tangent_outs)
vjp_rules: dict = {}  # prim -> (cts_out, primals_in, primals_out, **params) -> cts_in
vjp_fwd_rules: dict = {}  # prim -> (primals_in, **params) -> (primals_out, cts_out -> cts_in)
# prim -> the operands it is linear in (see linear_use_problem): "all" jointly, "each"
# one at a time (a product), positions (a tuple or range) jointly, "body" for a call or
# loop (its body's linearity is not checked), or a function of the params giving one
linear_in: dict = {}


def takes_zero_cotangents(backward):
    """Marks a backward function (a forward rule's second result) that takes None for
    the cotangent of an output nothing reads, rather than an array of zeros: it can
    then leave out what only that output's cotangent would feed, as JAX's partial
    evaluation drops a loop's tangent carries no result reads (0 times a NaN
    partial derivative, such a carry's share, would otherwise make the gradient NaN)."""
    backward.takes_zero_cotangents = True
    return backward


def takes_needed(rule):
    """Marks a VJP (or forward) rule that also takes `needed` (one bool per operand: is
    it on the tape) and computes cotangents for those operands only (None for the
    others), as JAX's transpose rules skip operands that are not linear inputs: an eager
    grad then runs no backward op for a constant or a weight it does not differentiate."""
    rule.takes_needed = True
    return rule


# ---------------------------------------------------------------- tangents

def tangent_dtype(dtype):
    """Inexact values have tangents of their own dtype; integers and bools float0."""
    return dtype if dtypes.is_inexact(dtype) else float0


def _dtype_name(dtype) -> str:
    """A dtype as JAX's messages name it (float0 is a void dtype to NumPy)."""
    return "float0" if dtype == float0 else np.dtype(dtype).name


class Zero:
    """A symbolic zero tangent (or cotangent) of this type: no array is built for it."""
    __slots__ = ("type",)

    def __init__(self, type: ArrayType):
        self.type = type

    @staticmethod
    def like(x) -> "Zero":
        t = type_of(x)
        return Zero(ArrayType(t.shape, tangent_dtype(t.dtype)))


def zeros(type: ArrayType):
    """An array of zeros of this type, in the current trace (float0: a NumPy array)."""
    if type.dtype == float0:
        return np.zeros(type.shape, float0)
    from .primitives.shape_ops import broadcast_in_dim
    return broadcast_in_dim(core.lift(0, type.dtype), type.shape, ())


def instantiate(t):
    return zeros(t.type) if type(t) is Zero else t


def is_zero(t) -> bool:
    return t is None or type(t) is Zero


def _primal_array(x):
    """A host input as an array of the current trace (a Python scalar stays weak)."""
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    return core.lift(x, None, type_of(x).weak)


def _concrete_primal(primal, what):
    """A transformation's tracer is as concrete as its primal: Python control flow on
    values works outside jit, and fails at the user's line under it. Not an array
    conversion: NumPy or JAX code given the value (np.asarray, JAX's numpy) would
    compute without its derivative, a silent wrong answer (JAX raises
    TracerArrayConversionError there too); nor float() or complex(), which JAX refuses
    for the same reason (its int() and item() give the value, and so do ours). A
    jax.Array's own methods given it are ours (_array_methods.py)."""
    if what in ("float()", "complex()"):
        raise core.ConcretizationError(core.at_user_line(
            f"{what} of a value being differentiated would drop its derivative, so it "
            "needs a concrete value, as under JAX. To change its dtype, use "
            "x.astype(...); `x.item()` takes the value without its derivative."))
    if what == "converting to a NumPy array":
        raise core.ConcretizationError(core.at_user_line(
            "a value being differentiated was converted to a NumPy array (np.asarray or "
            "a JAX numpy function given it), which would lose its derivative. Use "
            "tracehlo.numpy and tracehlo.lax instead."))
    return primal._trace.concrete(primal, what) if isinstance(primal, Tracer) else primal


# ---------------------------------------------------------------- forward mode

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def type(self) -> ArrayType:
        return type_of(self.primal)


class JVPTrace(Trace):
    """Not dynamic: an operation with no JVPTracer operand goes to the enclosing trace."""

    def unpack(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.like(x)

    def process_primitive(self, prim, operands, params):
        primals, tangents = zip(*map(self.unpack, operands))
        if all(type(t) is Zero for t in tangents):
            return _bind_list(prim, primals, params)
        rule = jvp_rules.get(prim)
        if rule is None:
            raise NotImplementedError(at_user_line(
                f"differentiation of {prim} is not implemented (it has no JVP rule)"))
        outs, tangent_outs = rule(list(primals), list(tangents), **params)
        return [o if type(t) is Zero else JVPTracer(self, o, t)
                for o, t in zip(outs, tangent_outs)]

    def concrete(self, tracer, what):
        return _concrete_primal(tracer.primal, what)


def _takes_primitive(factory):
    """Marks a JVP rule factory: define() calls it with the primitive it defines."""
    factory.takes_primitive = True
    return factory


@_takes_primitive
def zero_jvp(prim):
    """The JVP rule of a primitive whose result does not change with its operands
    (floor, sign, comparisons, integer ops): zero tangents."""
    def rule(primals, tangents, **params):
        outs = _bind_list(prim, primals, params)
        return outs, [Zero.like(o) for o in outs]
    rule.zero = True
    return rule


def linear_use_problem(prim, operands, params, is_tangent) -> str | None:
    """Why applying prim to these operands is not linear in the tangents among them
    (`is_tangent(x)`), or None. Reverse mode runs a JVP rule of the user's (custom_jvp)
    with tangents on a tape and pulls cotangents back through it, which is the
    derivative only where the rule is linear in them: a tangent squared, say, would
    come back as 0 (the tangents are zeros), a silent wrong gradient. JAX refuses such
    a rule when it transposes it; this is the same line drawn at the op."""
    positions = tuple(k for k, x in enumerate(operands) if is_tangent(x))
    if not positions:
        return None
    linear = linear_in.get(prim)
    if callable(linear):
        linear = linear(**params)
    if linear in ("all", "body") or (linear == "each" and len(positions) == 1) or (
            isinstance(linear, (tuple, range)) and all(k in linear for k in positions)):
        return None
    if linear == "each":
        return f"{prim} of {len(positions)} tangents (a product of tangents)"
    return f"{prim} of a tangent ({prim} is not linear in operand {positions[0]})"


@_takes_primitive
def linear_jvp(prim):
    """The JVP rule of a primitive linear in all its operands: itself on the tangents."""
    def rule(primals, tangents, **params):
        return (_bind_list(prim, primals, params),
                _bind_list(prim, [instantiate(t) for t in tangents], params))
    return rule


def vjp_fwd_from_jvp(jvp_rule):
    """A forward rule (see vjp_fwd_rules) from a JVP rule linear in its tangents, for
    primitives whose derivative is simplest stated forward (qr, eigh, as JAX states
    them): the rule runs once with tangents recorded on a tape, whose backward pass is
    the VJP (custom_jvp's reverse mode, the same way); its primal outputs are the
    results, so the primitive is bound once."""
    def fwd(primals, **params):
        with new_trace(VJPTrace(f"the JVP rule {jvp_rule.__name__}")) as linear:
            tangents = [VJPTracer(linear, zeros(Zero.like(p).type))
                        if dtypes.is_inexact(type_of(p).dtype) else Zero.like(p)
                        for p in primals]
            outs, t_outs = jvp_rule(primals, tangents, **params)

        def backward(cts):
            got = backward_pass(linear.tape, [(t, c) for t, c in zip(t_outs, cts)
                                              if isinstance(t, VJPTracer)])
            return [got.get(id(t)) for t in tangents]
        return outs, backward
    return fwd


def _bind_list(prim, operands, params) -> list:
    outs = bind(prim, operands, params)
    return outs if prim.multiple_results else [outs]


def rules_from(fun) -> dict:
    """jvp and vjp rules for a primitive equal to fun(*operands, **params) (one result),
    from the derivative of fun, a composition of other primitives: for primitives whose
    rules are simplest stated by such a decomposition (cumprod as a scan of products)."""
    def jvp(primals, tangents, **params):
        (pair,), _ = _jvp_flat(lambda *xs: ([fun(*xs, **params)], None), primals, tangents)
        return [pair[0]], [pair[1]]

    def vjp(cts, primals, outs, **params):
        return vjp_of(lambda *xs: ([fun(*xs, **params)], None), primals)[1](cts)
    return {"jvp": jvp, "vjp": vjp}


def _jvp_flat(fun, primals: list, tangents: list):
    """fun(*ins) -> (out leaves, aux) on flat lists: ([(primal out, tangent out as an
    array or Zero)], aux as primal values)."""
    with new_trace(JVPTrace()) as trace:
        ins = [JVPTracer(trace, p, t) if not is_zero(t) else p for p, t in zip(primals, tangents)]
        outs, aux = fun(*ins)
        return [trace.unpack(o) for o in outs], _strip(aux, trace)


class _Flat:
    """fun as a function of flat input leaves returning (output leaves, aux); the output
    tree is known once it has run."""

    def __init__(self, fun, in_tree, has_aux):
        self.fun, self.in_tree, self.has_aux = fun, in_tree, has_aux
        self.out_tree = None

    def __call__(self, *leaves):
        out = self.fun(*tree_util.tree_unflatten(self.in_tree, leaves))
        aux = None
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(at_user_line(
                    "expected function with aux output to return a two-element tuple, but "
                    f"got type {type(out)}"))
            out, aux = out
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        return out_leaves, aux

    def unflatten(self, leaves):
        return tree_util.tree_unflatten(self.out_tree, leaves)


def _strip(tree, trace):
    """aux outputs leave a transformation as their primal values."""
    return tree_util.tree_map(
        lambda x: x.primal if isinstance(x, Tracer) and x._trace is trace else x, tree)


def _check_tuples(primals, tangents):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(at_user_line(
            "primal and tangent arguments to jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."))


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), the derivative of fun at primals applied to tangents), as JAX's jvp."""
    check_callable(fun)
    _check_tuples(primals, tangents)
    p_leaves, in_tree = tree_util.user_flatten(tuple(primals))  # a key is one leaf here
    t_leaves, t_tree = tree_util.user_flatten(tuple(tangents))
    if t_tree != in_tree:
        raise TypeError(at_user_line(
            f"primal and tangent arguments to jvp must have the same tree structure; "
            f"primals have tree structure {in_tree} whereas tangents have {t_tree}."))
    t_leaves = [_key_tangent(p, t) if tree_util.is_opaque(p) else t
                for p, t in zip(p_leaves, t_leaves)]
    p_leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    p_leaves = [_primal_array(p) for p in p_leaves]
    t_leaves = [_tangent_in(p, t) for p, t in zip(p_leaves, t_leaves)]
    flat = _Flat(fun, in_tree, has_aux)
    pairs, aux = _jvp_flat(flat, p_leaves, t_leaves)
    primals_out = flat.unflatten([p for p, _ in pairs])
    tangents_out = flat.unflatten([instantiate(t) for _, t in pairs])
    return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


def _key_tangent(key, tangent):
    """A key's tangent, as in JAX: float0 of the key's shape; its data's, float0 too."""
    if getattr(tangent, "dtype", None) != float0 or np.shape(tangent) != key.shape:
        raise TypeError(at_user_line(
            f"primal and tangent arguments to jvp do not match: keys of shape {key.shape} "
            f"have float0 tangents of that shape, got {np.shape(tangent)} of dtype "
            f"{getattr(tangent, 'dtype', type(tangent).__name__)}"))
    return np.zeros(np.shape(tree_util.data(key)), float0)


def _tangent_in(primal, tangent):
    """A user's tangent for primal: float0 (or anything) for an integer primal is a Zero;
    a Python scalar takes the primal's dtype."""
    ptype = type_of(primal)
    want = tangent_dtype(ptype.dtype)
    ttype = type_of(tangent) if not (hasattr(tangent, "dtype") and tangent.dtype == float0) \
        else ArrayType(tuple(np.shape(tangent)), float0)
    if ttype.shape != ptype.shape:  # JAX's types of error, and its words
        raise ValueError(at_user_line(
            f"jvp called with different primal and tangent shapes; got primal shape "
            f"{ptype.shape} and tangent shape as {ttype.shape}"))
    if ttype.dtype != want and not isinstance(tangent, float):
        raise TypeError(at_user_line(
            "primal and tangent arguments to tracehlo.jvp do not match; dtypes must be "
            "equal, or in case of int/bool primal dtype the tangent dtype must be float0. "
            f"Got primal dtype {_dtype_name(ptype.dtype)} and so expected tangent dtype "
            f"{_dtype_name(want)}, but got tangent dtype {_dtype_name(ttype.dtype)} "
            "instead."))
    if want == float0:
        return Zero(ArrayType(ptype.shape, want))
    if isinstance(tangent, (int, float, complex)):
        return core.lift(tangent, want, ptype.weak)
    return _primal_array(tangent)


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp[, aux]): f_jvp(*tangents) is the jvp at primals, as JAX's
    linearize. The jvp is staged once, a jit taking the primals as arguments, so
    repeated calls of f_jvp run one executable instead of tracing the forward pass
    again; integer primals take float0 tangents, which stay out of it."""
    from .api import jit
    check_callable(fun)
    leaves, in_tree = tree_util.tree_flatten(primals)
    leaves = [_primal_array(p) for p in leaves]
    in_types = [type_of(p) for p in leaves]
    differentiated = [dtypes.is_inexact(t.dtype) for t in in_types]
    flat = _Flat(fun, in_tree, has_aux)
    out_leaves, aux = flat(*leaves)

    def tangents_out(primal_leaves, diff_tangents):
        it = iter(diff_tangents)
        tangents = [next(it) if d else np.zeros(t.shape, float0)
                    for d, t in zip(differentiated, in_types)]
        return jvp(fun, tree_util.tree_unflatten(in_tree, primal_leaves),
                   tree_util.tree_unflatten(in_tree, tangents), has_aux=has_aux)[1]
    staged = jit(tangents_out)

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != in_tree:
            raise ValueError(at_user_line(
                f"linearized function called with tangents of tree structure {t_tree}, "
                f"but the primals have {in_tree}"))
        diff_tangents = []
        for t, pt, d in zip(t_leaves, in_types, differentiated):
            want = ArrayType(pt.shape, tangent_dtype(pt.dtype))
            got = want if isinstance(t, (int, float, complex)) and d and not pt.shape else (
                ArrayType(tuple(np.shape(t)), float0) if getattr(t, "dtype", None) == float0
                else type_of(t))
            if (got.shape, got.dtype) != (want.shape, want.dtype):
                raise ValueError(at_user_line(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values: got {_jax_type(got)} for primal aval "
                    f"{_jax_type(pt)}"))
            if d:
                diff_tangents.append(np.asarray(t, want.dtype) if isinstance(
                    t, (int, float, complex)) else t)
        return staged(leaves, diff_tangents)
    out = flat.unflatten(out_leaves)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def _jax_type(t: ArrayType) -> str:
    """A type as JAX's messages print it: float32[3]."""
    return f"{_dtype_name(t.dtype)}[{','.join(map(str, t.shape))}]"


# ---------------------------------------------------------------- reverse mode

class VJPTracer(Tracer):
    __slots__ = ("primal",)

    def __init__(self, trace, primal):
        self._trace = trace
        self.primal = primal

    @property
    def type(self) -> ArrayType:
        return type_of(self.primal)


class VJPTrace(Trace):
    """Records a tape: each node is (backward, input tracers, output tracers, outputs,
    source line), `backward(cts_out) -> cts_in`. Not dynamic, like JVPTrace.
    `linear_rule` names a JVP rule run with its tangents on this tape, which must be
    linear in them (linear_use_problem)."""

    def __init__(self, linear_rule: str | None = None):
        self.tape: list = []
        self.linear_rule = linear_rule

    def primal(self, x):
        return x.primal if isinstance(x, VJPTracer) and x._trace is self else x

    def process_primitive(self, prim, operands, params):
        if self.linear_rule is not None:
            problem = linear_use_problem(prim, operands, params, self.is_own)
            if problem:
                raise TypeError(at_user_line(
                    f"{self.linear_rule} is not linear in its tangents: it applies "
                    f"{problem}, so reverse mode (grad, vjp) cannot transpose it, as "
                    "in JAX. Make the tangent outputs linear in the tangents (sums, "
                    "and products with primal values only), or use custom_vjp."))
        primals = [self.primal(x) for x in operands]
        fwd = vjp_fwd_rules.get(prim)
        if fwd is not None:  # it emits the primal itself, with what its backward reads
            outs, backward = fwd(primals, **self.with_needed(fwd, params, operands))
            return self.record(backward, operands, outs)
        return self.apply_rule(prim, operands, params, _bind_list(prim, primals, params))

    def apply_rule(self, prim, operands, params, outs) -> list:
        """Tracers for outs, prim's results on these operands (bound, or saved by
        checkpoint), with a tape node for prim's VJP rule."""
        primals = [self.primal(x) for x in operands]
        rule = vjp_rules.get(prim)
        if rule is None:
            if getattr(jvp_rules.get(prim), "zero", False) or not any(
                    dtypes.is_inexact(type_of(o).dtype) for o in outs):
                return outs
            raise NotImplementedError(at_user_line(
                f"differentiation of {prim} is not implemented (it has no VJP rule)"))
        params = self.with_needed(rule, params, operands)
        return self.record(lambda cts: rule(cts, primals, outs, **params), operands, outs)

    def is_own(self, x) -> bool:
        return isinstance(x, VJPTracer) and x._trace is self

    def with_needed(self, rule, params, operands) -> dict:
        """params, with `needed` for a rule that takes it (see takes_needed)."""
        if not getattr(rule, "takes_needed", False):
            return params
        return dict(params, needed=[self.is_own(x) for x in operands])

    def record(self, backward, operands, outs) -> list:
        """Tracers for outs (inexact ones), and a tape node for them."""
        ins = [x if self.is_own(x) else None for x in operands]
        tracers = [VJPTracer(self, o) if dtypes.is_inexact(type_of(o).dtype) else o
                   for o in outs]
        self.tape.append((backward, ins, tracers, outs, core.current_location()))
        return tracers

    def concrete(self, tracer, what):
        return _concrete_primal(tracer.primal, what)


def backward_pass(tape: list, seeds) -> dict:
    """Cotangents by id(tracer): the seeds (tracer, cotangent) pulled back through tape."""
    cts: dict = {}
    for tracer, ct in seeds:
        _accumulate(cts, tracer, ct)
    for backward, ins, tracers, outs, loc in reversed(tape):
        cts_out = [cts.pop(id(t), None) if isinstance(t, VJPTracer) else None for t in tracers]
        if all(c is None for c in cts_out):
            continue
        with core.source_location(loc):
            if not getattr(backward, "takes_zero_cotangents", False):
                cts_out = [zeros(type_of(o)) if c is None else c for c, o in zip(cts_out, outs)]
            for tracer, ct in zip(ins, backward(cts_out)):
                if tracer is not None and not is_zero(ct):
                    _accumulate(cts, tracer, ct)
    return cts


def _accumulate(cts, tracer, ct):
    from .primitives.elementwise import add
    key = id(tracer)
    cts[key] = ct if key not in cts else add(cts[key], ct)


def vjp_of(fun, primals: list):
    """(primal outs, f_vjp(cts) -> cts of primals as arrays or None); a cotangent given as
    None is a zero."""
    with new_trace(VJPTrace()) as trace:
        ins = [VJPTracer(trace, p) for p in primals]
        outs, aux = fun(*ins)
        out_primals = [trace.primal(o) for o in outs]
        aux = _strip(aux, trace)

    def f_vjp(cts):
        got = backward_pass(trace.tape, [(o, c) for o, c in zip(outs, cts)  # None: a zero
                                         if isinstance(o, VJPTracer) and o._trace is trace
                                         and c is not None])
        return [got.get(id(t)) for t in ins]
    return out_primals, f_vjp, aux


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), f_vjp[, aux]): f_vjp(cotangent) pulls a cotangent of the output
    back to cotangents of the primals, as JAX's vjp. An integer output takes a float0
    cotangent, as in JAX (it pulls back nothing)."""
    check_callable(fun)
    _no_reduce_axes(reduce_axes, "vjp")
    leaves, in_tree = tree_util.tree_flatten(primals)
    leaves = [_primal_array(p) for p in leaves]
    flat = _Flat(fun, in_tree, has_aux)
    out_primals, f_vjp_flat, aux = vjp_of(flat, leaves)
    out_tree = flat.out_tree
    out_types = [type_of(o) for o in out_primals]

    def f_vjp(cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise ValueError(at_user_line(
                f"unexpected tree structure of argument to vjp function: got {ct_tree}, "
                f"but expected to match {out_tree}, the function's output"))
        cts = [_cotangent_in(c, t) for c, t in zip(ct_leaves, out_types)]
        cts = f_vjp_flat(cts)
        return tree_util.tree_unflatten(in_tree, [
            zeros(Zero.like(p).type) if c is None else c for p, c in zip(leaves, cts)])

    out = flat.unflatten(out_primals)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _cotangent_in(ct, out_type: ArrayType):
    """A user's cotangent for an output of this type, checked as JAX checks it: of the
    output's shape and dtype (a Python scalar takes the output's), float0 (or the
    output's own dtype) for an integer output (then None: it pulls back nothing)."""
    want = ArrayType(out_type.shape, tangent_dtype(out_type.dtype))
    python_scalar = isinstance(ct, (int, float, complex)) and want.dtype != float0
    got = want if python_scalar and not want.shape else (
        ArrayType(tuple(np.shape(ct)), float0) if getattr(ct, "dtype", None) == float0
        else type_of(ct))
    integer_zeros = want.dtype == float0 and got.dtype == out_type.dtype  # as JAX takes
    if (got.shape, got.dtype) != (want.shape, want.dtype) and not (
            integer_zeros and got.shape == want.shape):
        raise ValueError(at_user_line(
            f"unexpected type (shape/dtype) for argument to vjp function: got "
            f"{_jax_type(got)}, but expected {_jax_type(want)} because the corresponding "
            f"output of the differentiated function had type {_jax_type(out_type)}"))
    if want.dtype == float0:
        return None
    return core.lift(ct, want.dtype, out_type.weak) if python_scalar else ct


def _no_reduce_axes(reduce_axes, api: str) -> None:
    """JAX still takes reduce_axes=() and refuses any other value."""
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {api} is deprecated")


def _single(argnums) -> bool:
    """Whether argnums names one argument (an int, a NumPy one too): the gradient is
    then that argument's, not a tuple."""
    try:
        operator.index(argnums)
        return True
    except TypeError:
        return False


def _argnums(argnums, args) -> tuple:
    """argnums as non-negative positions into args, checked as JAX checks them; a
    position named twice is refused (JAX fails there by accident, and a silent
    answer would give one of the two a zero gradient)."""
    nums = (argnums,) if _single(argnums) else tuple(argnums)
    if not nums:
        raise ValueError(at_user_line(
            "argnums=() differentiates with respect to no argument; name at least one "
            "position"))
    n = len(args)
    for i in map(operator.index, nums):
        if i >= n:
            raise TypeError(at_user_line(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(nums) + 1} positional arguments to be passed by the caller, but got "
                f"only {n} positional arguments."))
        if i < -n:
            raise ValueError(at_user_line(
                "Positional argument indices, e.g. for `argnums`, must have value greater "
                "than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {n}."))
    positions = tuple(operator.index(i) % n for i in nums)
    repeated = [i for i in dict.fromkeys(positions) if positions.count(i) > 1]
    if repeated:
        raise ValueError(at_user_line(
            f"argnums={argnums} names argument {repeated[0]} more than once; name each "
            "position once"))
    return positions


def _partial(fun, args, kwargs, nums):
    """fun as a function of the arguments at positions nums only."""
    def partial_fun(*diff_args):
        full = list(args)
        for i, a in zip(nums, diff_args):
            full[i] = a
        return fun(*full, **kwargs)
    return partial_fun


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """fun's value and its gradient with respect to the arguments argnums, as in JAX."""
    check_callable(fun)
    _no_reduce_axes(reduce_axes, "grad")

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _argnums(argnums, args)
        diff_args = tuple(args[i] for i in nums)
        for leaf in tree_util.user_flatten(diff_args)[0]:  # a key by its own dtype
            _check_input("grad", _leaf_dtype(leaf), holomorphic, allow_int)
        results = vjp(_partial(fun, args, kwargs, nums), *diff_args, has_aux=has_aux)
        out, f_vjp = results[:2]
        if not isinstance(out, (Tracer, float, int)) and not hasattr(out, "shape"):
            raise TypeError(at_user_line(
                f"Gradient only defined for scalar-output functions. Output was {out}."))
        if type_of(out).shape != ():
            raise TypeError(at_user_line(
                "Gradient only defined for scalar-output functions. Output had shape: "
                f"{type_of(out).shape}."))
        _check_output("grad", type_of(out).dtype, holomorphic)
        grads = f_vjp(core.lift(1, type_of(out).dtype))
        grads = grads[0] if _single(argnums) else grads
        return ((out, results[2]) if has_aux else out), grads
    return value_and_grad_fun


def _leaf_dtype(leaf):
    """A leaf's dtype for the checks below: a key's is its dtype name."""
    return leaf.dtype if tree_util.is_opaque(leaf) else type_of(leaf).dtype


def _check_input(api: str, dtype, holomorphic, allow_int):
    """The input checks of JAX's reverse-mode APIs (grad, jacrev). dtype: a NumPy
    dtype, or a key's dtype name (never inexact)."""
    name, is_key = getattr(dtype, "name", dtype), isinstance(dtype, str)
    if holomorphic and (is_key or not dtypes.is_complex(dtype)):
        raise TypeError(at_user_line(
            f"{api} with holomorphic=True requires inputs with complex dtype, but got "
            f"{name}."))
    if not allow_int and (is_key or not dtypes.is_inexact(dtype)):
        raise TypeError(at_user_line(
            f"{api} requires real- or complex-valued inputs (input dtype that is a "
            f"sub-dtype of np.inexact), but got {name}. If you want to use Boolean- or "
            "integer-valued inputs, use vjp or set allow_int to True."))


def _check_output(api: str, dtype, holomorphic):
    """The output checks of JAX's reverse-mode APIs (grad, jacrev)."""
    name = np.dtype(dtype).name
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(at_user_line(
                f"{api} with holomorphic=True requires outputs with complex dtype, but got "
                f"{name}."))
    elif dtypes.is_complex(dtype):
        raise TypeError(at_user_line(
            f"{api} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use tracehlo.vjp directly."))
    elif not dtypes.is_float(dtype):
        raise TypeError(at_user_line(
            f"{api} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {name}. For differentiation of functions with integer "
            "outputs, use tracehlo.vjp directly."))


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar-valued fun with respect to arguments argnums, as JAX's grad."""
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int,
                                        reduce_axes)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        value, g = value_and_grad_fun(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_fun


# ---------------------------------------------------------------- Jacobians

def _jacobian_pieces(fun, argnums, args, kwargs):
    nums = _argnums(argnums, args)
    diff_args = tuple(args[i] for i in nums)
    leaves, in_tree = tree_util.tree_flatten(diff_args)
    return _partial(fun, args, kwargs, nums), [_primal_array(x) for x in leaves], in_tree


def _jacobian_tree(blocks, out_tree, in_tree, argnums):
    """blocks[i][j]: d out leaf i / d in leaf j -> JAX's nesting: output tree of input trees."""
    def per_output(row):
        tree = tree_util.tree_unflatten(in_tree, row)
        return tree[0] if _single(argnums) else tree
    return tree_util.tree_unflatten(out_tree, [per_output(row) for row in blocks])


def _std_basis(types) -> list:
    """The standard basis of the flattened leaves of these types, one batched array per
    leaf: leaf j's piece has shape (total size,) + its shape."""
    total = sum(t.size for t in types)
    pieces, start = [], 0
    for t in types:
        eye = np.eye(total, dtype=t.dtype)[:, start:start + t.size]
        pieces.append(core.lift(eye.reshape((total,) + t.shape)))
        start += t.size
    return pieces


def _split_last(x, types, lead: tuple) -> list:
    """x of shape lead + (total size,) split into one block per leaf type, each of shape
    lead + that leaf's shape."""
    from . import numpy as tnp
    blocks, start = [], 0
    for t in types:
        block = x if len(types) == 1 else x[..., start:start + t.size]
        blocks.append(tnp.reshape(block, lead + t.shape))
        start += t.size
    return blocks


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode: jvp vmapped over the standard basis of the inputs
    (one batched forward pass), as in JAX. An integer output's block is integer zeros."""
    check_callable(fun)

    @functools.wraps(fun)
    def jacfwd_fun(*args, **kwargs):
        f, leaves, in_tree = _jacobian_pieces(fun, argnums, args, kwargs)
        types = [type_of(x) for x in leaves]
        for t in types:
            _check_jacfwd_input(t.dtype, holomorphic)
        flat = _Flat(f, in_tree, has_aux)

        def pushfwd(*tangents):
            pairs, aux = _jvp_flat(flat, leaves, list(tangents))
            if holomorphic:
                for p, _ in pairs:
                    if not dtypes.is_complex(type_of(p).dtype):
                        raise TypeError(at_user_line(
                            "jacfwd with holomorphic=True requires outputs with complex "
                            f"dtype, but got {np.dtype(type_of(p).dtype).name}."))
            return [p for p, _ in pairs], [_tangent_or_zeros(p, t) for p, t in pairs], aux
        outs, columns, aux = vmap(pushfwd, out_axes=(None, -1, None))(*_std_basis(types))
        blocks = [_split_last(c, types, type_of(o).shape) for o, c in zip(outs, columns)]
        jac = _jacobian_tree(blocks, flat.out_tree, in_tree, argnums)
        return (jac, aux) if has_aux else jac
    return jacfwd_fun


def _check_jacfwd_input(dtype, holomorphic):
    name = np.dtype(dtype).name
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(at_user_line(
            f"jacfwd with holomorphic=True requires inputs with complex dtype, but got "
            f"{name}."))
    if not holomorphic and not dtypes.is_float(dtype):
        raise TypeError(at_user_line(
            f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex inputs or integer inputs, use tracehlo.jvp directly."))


def _tangent_or_zeros(primal, tangent):
    """A tangent as an array; an integer value's float0 one as zeros of its own dtype,
    the Jacobian block JAX gives it."""
    if type(tangent) is Zero and tangent.type.dtype == float0:
        return zeros(type_of(primal))
    return instantiate(tangent)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian by reverse mode: one forward pass, and its backward pass vmapped over
    the standard basis of the outputs, as in JAX. An integer input's block (allow_int)
    is zeros of its dtype."""
    from . import numpy as tnp
    check_callable(fun)

    @functools.wraps(fun)
    def jacrev_fun(*args, **kwargs):
        f, leaves, in_tree = _jacobian_pieces(fun, argnums, args, kwargs)
        for x in leaves:
            _check_input("jacrev", type_of(x).dtype, holomorphic, allow_int)
        flat = _Flat(f, in_tree, has_aux)
        outs, f_vjp, aux = vjp_of(flat, leaves)
        out_types = [type_of(o) for o in outs]
        for t in out_types:
            _check_output("jacrev", t.dtype, holomorphic)

        def pullback(*cts):
            return [zeros(type_of(x)) if c is None else c
                    for x, c in zip(leaves, f_vjp(list(cts)))]
        rows = vmap(pullback)(*_std_basis(out_types))  # per input: (out size,) + its shape
        blocks, start = [], 0
        for ot in out_types:
            blocks.append([tnp.reshape(r if len(outs) == 1 else r[start:start + ot.size],
                                       ot.shape + type_of(x).shape)
                           for x, r in zip(leaves, rows)])
            start += ot.size
        jac = _jacobian_tree(blocks, flat.out_tree, in_tree, argnums)
        return (jac, aux) if has_aux else jac
    return jacrev_fun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian: jacfwd of jacrev, as in JAX."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ---------------------------------------------------------------- user-defined rules

def stop_gradient(x):
    """x, with zero derivative: every leaf through the stop_gradient primitive."""
    from .primitives.elementwise import stop_gradient_p

    def stop(leaf):
        leaf = _primal_array(leaf)
        return leaf if not dtypes.is_inexact(type_of(leaf).dtype) else stop_gradient_p.bind(leaf)
    return tree_util.tree_map(stop, x)


def everything_saveable(*_, **__) -> bool:
    """Save every value: the backward pass recomputes nothing, as without checkpoint."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save only checkpoint's inputs: the backward pass recomputes everything (the
    default policy)."""
    return False


def dots_saveable(prim, *_, **__) -> bool:
    """Save the results of matrix products: the backward pass recomputes the rest."""
    return prim.name in ("dot_general", "conv_general_dilated")


def dots_with_no_batch_dims_saveable(prim, *_, **params) -> bool:
    """Save the results of matrix products that have no batch dimensions."""
    return prim.name == "dot_general" and not any(params["dimension_numbers"][1])


def _named(prim, params, names) -> bool:
    """Whether the equation is a checkpoint_name of one of `names`."""
    return prim.name == "name" and params["name"] in names


def save_only_these_names(*names):
    """A policy saving the values checkpoint_name named with one of `names`."""
    return lambda prim, *_, **params: _named(prim, params, names)


def save_anything_except_these_names(*names):
    """A policy saving every value but those named with one of `names`."""
    return lambda prim, *_, **params: not _named(prim, params, names)


def save_any_names_but_these(*names):
    """A policy saving the named values, but those named with one of `names`."""
    return lambda prim, *_, **params: prim.name == "name" and not _named(prim, params, names)


def save_from_both_policies(policy_1, policy_2):
    """A policy saving what either policy saves."""
    return lambda *args, **params: policy_1(*args, **params) or policy_2(*args, **params)


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """JAX's policy that saves some names and moves others to host memory. Values live
    in host memory on the CPU already and tracehlo moves none between memories, so the
    values it would offload are saved: the same results, kept where they are."""
    return save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """As save_and_offload_only_these_names: the products it would offload are saved."""
    return dots_with_no_batch_dims_saveable


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims)


def _static_argnums(static_argnums, nargs) -> frozenset:
    """static_argnums checked as JAX's checkpoint checks them, as non-negative indices."""
    nums = (static_argnums,) if type(static_argnums) is int else static_argnums
    if not (type(nums) is tuple and all(type(d) is int for d in nums)):
        raise TypeError(at_user_line(
            "the `static_argnums` argument to `tracehlo.checkpoint` / `tracehlo.remat` must "
            f"be an int, tuple of ints or, bool, but got value {static_argnums}"))
    if not all(-nargs <= d < nargs for d in nums):
        raise ValueError(at_user_line(
            "the `static_argnums` argument to `tracehlo.checkpoint` / `tracehlo.remat` can "
            "only take integer values greater than or equal to `-len(args)` and less than "
            f"`len(args)`, but got {nums}, while `len(args)` = {nargs}"))
    return frozenset(d % nargs for d in nums)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=()):
    """fun, whose intermediate values the tape keeps only where `policy(prim, *input
    types, **params)` says so (default: none, checkpoint_policies.nothing_saveable): the
    backward pass runs fun's other equations again from its inputs and the saved values
    (JAX's checkpoint / remat). As in JAX, fun is staged to a Graph on abstract values of
    its arguments, except static_argnums and static_argnames (by keyword, or by position
    where fun's signature names them), passed as the Python values they are (staged
    anew per call). With prevent_cse, the recomputation starts from an
    optimization_barrier, so that under jit neither our CSE nor XLA's merges it with the
    forward pass (which would save everything); a tuple (JAX's per argument) places it
    if any entry asks for it."""
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError(at_user_line(
            f"prevent_cse must be a bool or tuple of bools, got type(prevent_cse)="
            f"{type(prevent_cse)}"))
    check_callable(fun)
    save = policy or nothing_saveable
    static_names = (static_argnames,) if isinstance(static_argnames, str) else \
        tuple(static_argnames)
    named_positions = _positions_of(fun, static_names)

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        static = _static_argnums(static_argnums, len(args)) if static_argnums != () else ()
        static = frozenset(static) | {i for i in named_positions if i < len(args)}
        dyn = [a for i, a in enumerate(args) if i not in static]
        static_kwargs = {k: v for k, v in kwargs.items() if k in static_names}
        leaves, in_tree = tree_util.tree_flatten((dyn, {k: v for k, v in kwargs.items()
                                                         if k not in static_names}))

        def call(*leaves):
            dyn_args, kw = tree_util.tree_unflatten(in_tree, leaves)
            it = iter(dyn_args)
            return fun(*[a if i in static else next(it) for i, a in enumerate(args)], **kw,
                       **static_kwargs)
        with core.staging(getattr(fun, "__name__", "checkpoint")) as staged:
            ins = [staged.new_input(type_of(x)) for x in leaves]
            out_leaves, out_tree = tree_util.tree_flatten(call(*ins))
            graph = staged.build(out_leaves)
        leaves = [_primal_array(x) for x in leaves] + staged.captured_values()
        trace = core.find_trace(leaves)
        if not isinstance(trace, VJPTrace):
            return tree_util.tree_unflatten(out_tree, core.eval_graph(graph, *leaves))
        primals, saved = [trace.primal(x) for x in leaves], {}

        def forward(eqn, ins):
            outs = _bind_list(eqn.prim, ins, eqn.params)
            if eqn.prim not in vjp_fwd_rules and save(eqn.prim, *map(type_of, ins),
                                                      **eqn.params):
                saved.update(zip(eqn.outputs, outs))
            return outs
        outs = core.eval_graph(graph, *primals, apply=forward)
        is_saved = lambda eqn: bool(eqn.outputs) and eqn.outputs[0] in saved  # noqa: E731

        def backward(cts):
            from .primitives.elementwise import optimization_barrier
            # the barrier takes the inputs and the saved values that recomputed equations
            # read (which CSE would merge with the forward pass's); one that only VJP
            # rules read stays out of it, so that it keeps nothing else alive
            known, start = dict(saved), primals
            if prevent_cse if isinstance(prevent_cse, bool) else any(prevent_cse):
                reread = list(dict.fromkeys(v for e in graph.eqns if not is_saved(e)
                                            for v in e.inputs if v in saved))
                start = optimization_barrier(primals + [saved[v] for v in reread])
                known.update(zip(reread, start[len(primals):]))
                start = start[:len(primals)]

            def again(*xs):
                def apply(eqn, ins):  # a saved equation: its VJP rule, not it again
                    if not is_saved(eqn):
                        return _bind_list(eqn.prim, ins, eqn.params)
                    outs = [known[v] for v in eqn.outputs]
                    inner = core.find_trace(ins)
                    return inner.apply_rule(eqn.prim, ins, eqn.params, outs) \
                        if inner is xs[0]._trace else outs
                return core.eval_graph(graph, *xs, apply=apply), None
            return vjp_of(again, start)[1](cts)
        return tree_util.tree_unflatten(out_tree, trace.record(backward, leaves, outs))
    return remat_fun


def _positions_of(fun, names) -> frozenset:
    """The positions of fun's parameters called `names` (none known without a signature)."""
    if not names:
        return frozenset()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(i for i, p in enumerate(params) if p.name in names and p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


remat = checkpoint
