"""A function's arguments as tracing sees them, shared by jit, make_ir (and grad and
vmap to come): static values split from traced leaves, pytrees flattened, leaves
named as the user wrote them, donated leaves found, and the function traced once
on abstract leaves."""
from __future__ import annotations

import inspect
from typing import NamedTuple

import numpy as np
from jax.dtypes import float0

from . import pytree as tree_util

from . import core
from .core import Tracer, type_of
from .ir import ArrayType, Graph, Location


class Signature:
    """How a function's arguments split into static values and traced leaves."""

    def __init__(self, fn, static_argnums, static_argnames):
        self.fn = fn
        try:
            self.params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self.params = {}
        names = list(self.params)
        self.static_argnums = as_tuple(static_argnums)
        self.static_argnames = as_tuple(static_argnames)
        # static_argnums and static_argnames name the same parameters, as in JAX
        self.static_argnames += tuple(names[i] for i in self.static_argnums
                                      if i < len(names) and names[i] not in self.static_argnames)
        self.static_argnums += tuple(names.index(n) for n in self.static_argnames
                                     if n in names and names.index(n) not in self.static_argnums)
        self.has_static = bool(self.static_argnums or self.static_argnames)

    def split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key). The static key must be hashable."""
        if not self.has_static:
            return args, kwargs, ()
        static = tuple((i, args[i]) for i in self.static_argnums if i < len(args))
        static += tuple((k, kwargs[k]) for k in self.static_argnames if k in kwargs)
        for where, value in static:
            try:
                hash(value)
            except TypeError:
                label = f"argument {where}" if isinstance(where, int) else f"argument {where!r}"
                raise TypeError(
                    f"static {label} of {fn_name(self.fn)} is unhashable "
                    f"({type(value).__name__}): static arguments key the compilation cache. "
                    "Pass a tuple instead of a list, or make it a traced argument.") from None
        dyn_args = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, static

    def merge(self, dyn_args, dyn_kwargs, static):
        """The full call arguments again, with traced values in the dynamic positions."""
        static = dict(static)
        args, dyn = [], iter(dyn_args)
        for i in range(len(dyn_args) + sum(isinstance(k, int) for k in static)):
            args.append(static[i] if i in static else next(dyn))
        kwargs = dict(dyn_kwargs)
        kwargs.update({k: v for k, v in static.items() if isinstance(k, str)})
        return args, kwargs

    def leaf_names(self, dyn_args, dyn_kwargs, static) -> list[str]:
        """Readable names of the traced leaves, like `x` or `params['w'][0]`."""
        names = [n for i, n in enumerate(self.params) if i not in self.static_argnums]
        paths, _ = tree_util.tree_flatten_with_path((dyn_args, dyn_kwargs))
        out = []
        for path, _ in paths:
            (kind, *rest) = path
            if kind.idx == 0:
                pos = rest[0].idx
                base = names[pos] if pos < len(names) and self.params[names[pos]].kind in (
                    inspect.Parameter.POSITIONAL_ONLY,
                    inspect.Parameter.POSITIONAL_OR_KEYWORD) else f"args[{pos}]"
                rest = rest[1:]
            else:
                base, rest = rest[0].key, rest[1:]
            out.append(base + "".join(str(k) for k in rest))
        return out


def as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def fn_name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def fn_location(fn) -> Location | None:
    """Where `fn` is defined (its first line), if it is Python code."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return Location(code.co_filename, code.co_firstlineno) if code else None


def leaf_type(x) -> ArrayType:
    try:
        return type_of(x)
    except TypeError:
        raise TypeError(f"{type(x).__name__} is not a valid argument: traced arguments must "
                        "be arrays or Python scalars (mark other values static with "
                        "static_argnums/static_argnames)") from None


class Traced(NamedTuple):
    graph: Graph
    in_tree: object       # treedef of (dynamic args, dynamic kwargs)
    out_tree: object
    leaf_names: list
    captured: list        # outer tracers the graph closed over: its extra inputs
    float0_outputs: dict  # output leaf position -> shape, of the float0 ones (not in graph)

    def results(self, outs: list):
        """The function's output tree, from the graph's outputs."""
        return tree_util.tree_unflatten(self.out_tree, with_float0(outs, self.float0_outputs))


def with_float0(outs: list, float0_outputs: dict) -> list:
    """The graph's outputs with the function's float0 outputs put back in their places:
    the tangents of integer values (jvp of argmax), arrays of no data that the graph does
    not hold, as JAX's jit returns them (NumPy arrays)."""
    if not float0_outputs:
        return outs
    outs = list(outs)
    for k in sorted(float0_outputs):
        outs.insert(k, np.zeros(float0_outputs[k], float0))
    return outs


def trace(sig: Signature, args, kwargs) -> Traced:
    """Trace sig.fn on abstract leaves of these arguments' types."""
    dyn_args, dyn_kwargs, static = sig.split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    with core.staging(fn_name(sig.fn)) as staged:
        tracers = [staged.new_input(leaf_type(x)) for x in leaves]
        t_args, t_kwargs = tree_util.tree_unflatten(in_tree, tracers)
        call_args, call_kwargs = sig.merge(t_args, t_kwargs, static)
        out = sig.fn(*call_args, **call_kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        float0s = {k: np.shape(leaf) for k, leaf in enumerate(out_leaves)
                   if not isinstance(leaf, Tracer) and getattr(leaf, "dtype", None) == float0}
        out_leaves = [leaf for k, leaf in enumerate(out_leaves) if k not in float0s]
        for leaf in out_leaves:
            if not isinstance(leaf, Tracer):
                leaf_type(leaf)  # outputs must be arrays too; raises a clear error
        graph = staged.build(out_leaves)
    return Traced(graph, in_tree, out_tree, sig.leaf_names(dyn_args, dyn_kwargs, static),
                  staged.captured_values(), float0s)


def donated_leaves(sig: Signature, args, donate_argnums) -> set:
    """Leaf indices of the positional arguments whose buffers the caller gives up."""
    donated, leaf = set(), 0
    for i, arg in enumerate(args):
        if i in sig.static_argnums:
            continue
        count = len(tree_util.tree_leaves(arg))
        if i in donate_argnums:
            donated.update(range(leaf, leaf + count))
        leaf += count
    return donated
