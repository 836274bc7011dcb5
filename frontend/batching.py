"""vmap: the batching interpreter (JAX's, as in Autodidax).

A `BatchTracer` is a per-example value that really is an array with one more axis,
`batch_dim`. `BatchTrace` interprets each primitive by its rule in `batch_rules`,
registered next to the primitive (`define(..., batch=...)` in primitives/*.py): a rule
takes the underlying values and their batch dims (an int, or `not_mapped` for a value
shared by the whole batch) and returns the results and theirs,

    batch_rules[prim](values: list, dims: list, **params) -> (outs: list, out_dims: list)

(lists even for a single-result primitive). Rules call primitives again, so vmap
composes with jit (they stage), with itself and with the other transformations.
BatchTrace is not dynamic: an operation on unbatched values only goes to the
enclosing trace, and values that are not batched are never wrapped, so Python control
flow on them works as in JAX.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np
from jax.dtypes import float0

from . import pytree as tree_util

from . import core, runtime
from .core import ConcretizationError, Tracer, TracerBoolConversionError, at_user_line, type_of
from .ir import ArrayType

not_mapped = None  # the batch dim of a value shared by every example

batch_rules: dict = {}  # prim -> (values, dims, **params) -> (outs, out_dims)


class BatchTracer(Tracer):
    __slots__ = ("value", "batch_dim")

    def __init__(self, trace: "BatchTrace", value, batch_dim: int):
        self._trace = trace
        self.value = value
        self.batch_dim = batch_dim

    @property
    def type(self) -> ArrayType:
        """One example's type: the value's without its batch axis."""
        t = type_of(self.value)
        return t._replace(shape=t.shape[:self.batch_dim] + t.shape[self.batch_dim + 1:])


class BatchTrace(core.Trace):
    def process_primitive(self, prim, operands, params):
        values, dims = [], []
        for x in operands:
            batched = isinstance(x, BatchTracer) and x._trace is self
            values.append(x.value if batched else x)
            dims.append(x.batch_dim if batched else not_mapped)
        # a misuse is reported in the user's per-example terms, as if unbatched
        out_types = core.result_types(prim, [type_of(x) for x in operands], params)
        if axis_size(values, dims) == 0:
            # no example to compute: empty results of the right types (a rule's gather
            # or slice would not fit the empty axis, as JAX's rules need not either)
            return [BatchTracer(self, _shape_ops().broadcast_in_dim(
                core.lift(0, t.dtype, t.weak), (0, *t.shape), ()), 0) for t in out_types]
        rule = batch_rules.get(prim)
        if rule is None:
            raise NotImplementedError(at_user_line(f"vmap has no batching rule for {prim}"))
        outs, out_dims = rule(values, dims, **params)
        return [x if d is not_mapped else BatchTracer(self, x, d)
                for x, d in zip(outs, out_dims)]

    def concrete(self, tracer, what):
        """A batched value has no single Python value; JAX raises the same errors."""
        error = TracerBoolConversionError if what == "bool()" else ConcretizationError
        raise error(at_user_line(
            f"{what} needs one concrete value, but under vmap this {tracer.type} has one "
            "value per example. Use tracehlo.numpy.where(cond, a, b) to choose values per "
            "example, or pass the argument unbatched (in_axes=None)."))


# ---------------------------------------------------------------- helpers for rules

def _shape_ops():
    # primitives/*.py import this module for its table, so the wrappers come late
    from .primitives import shape_ops
    return shape_ops


def moveaxis(x, src: int, dst: int):
    """x with its axis `src` moved to position `dst` (a transpose, or x itself)."""
    if src == dst:
        return x
    perm = [i for i in range(type_of(x).ndim) if i != src]
    perm.insert(dst, src)
    return _shape_ops().transpose(x, perm)


def broadcast_batch(x, size: int, dim: int):
    """An unbatched x as a batched value with a new axis `dim` of `size`."""
    t = type_of(x)
    shape = t.shape[:dim] + (size,) + t.shape[dim:]
    return _shape_ops().broadcast_in_dim(
        x, shape, [i for i in range(len(shape)) if i != dim])


def batch_at(x, d, size: int, dim: int = 0):
    """x (batched along d, or not_mapped) batched along axis `dim`."""
    return broadcast_batch(x, size, dim) if d is not_mapped else moveaxis(x, d, dim)


def axis_size(values, dims) -> int:
    """The batch size, read off a batched operand (a rule has at least one)."""
    return next(type_of(x).shape[d] for x, d in zip(values, dims) if d is not not_mapped)


def shifted(axes, dim: int) -> tuple:
    """Per-example axes as axes of the value batched along `dim`."""
    return tuple(a + (a >= dim) for a in axes)


def broadcasting_rule(prim):
    """The batching rule of an elementwise primitive (a factory: define() passes the
    primitive it defines). Its operands share one shape, or are rank 0: batched
    ones get their batch axis where the first full-rank batched operand has it (no
    transpose in the common case; axis 0 if none), unbatched full-rank ones are
    broadcast along it, unbatched rank-0 ones stay rank 0."""

    def rule(values, dims, **params):
        types = [type_of(x) for x in values]
        ranks = [t.ndim - (d is not not_mapped) for t, d in zip(types, dims)]
        rank = max(ranks)
        full = [(d, t) for d, t, r in zip(dims, types, ranks) if r == rank]
        batched_full = [(d, t.shape) for d, t in full if d is not not_mapped]
        out_dim, shape = batched_full[0] if batched_full else (
            0, (axis_size(values, dims),) + full[0][1].shape)
        aligned = []
        for x, d, r in zip(values, dims, ranks):
            if d is not_mapped:
                aligned.append(x if r == 0 else broadcast_batch(x, shape[out_dim], out_dim))
            elif r == rank:
                aligned.append(moveaxis(x, d, out_dim))
            else:  # one scalar per example, against full-rank operands
                aligned.append(_shape_ops().broadcast_in_dim(x, shape, (out_dim,)))
        return [prim.bind(*aligned, **params)], [out_dim]
    return rule


broadcasting_rule.takes_primitive = True


# Graph -> {(batch dims, types of the batched inputs): (batched Graph, its out dims)}
_batched_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def batch_graph(graph, values, dims):
    """`graph` applied to these batched values, as a new Graph (to call) and the batch
    dims of its outputs: the graph is evaluated under a BatchTrace and re-staged, once
    per batch dims and types, so what is derived from the batched graph (an eager
    executable) is reused too."""
    key = (tuple(dims), tuple(tuple(type_of(x)) for x in values))
    cache = _batched_graphs.setdefault(graph, {})
    if key not in cache:
        with core.staging(graph.name) as staged:
            ins = [staged.new_input(type_of(x)) for x in values]
            with core.new_trace(BatchTrace()) as trace:
                outs = core.eval_graph(graph, *[x if d is not_mapped else BatchTracer(trace, x, d)
                                                for x, d in zip(ins, dims)])
            out_dims = [x.batch_dim if isinstance(x, BatchTracer) and x._trace is trace
                        else not_mapped for x in outs]
            cache[key] = (staged.build([x if d is not_mapped else x.value
                                        for x, d in zip(outs, out_dims)]), out_dims)
    return cache[key]


# ---------------------------------------------------------------- vmap

def _check_axes_tree(name: str, axes) -> None:
    if not all(type(a) is int for a in tree_util.tree_leaves(axes)):
        raise TypeError(f"vmap {name} must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {axes}.")


def _broadcast_prefix(name: str, axes, tree, shown=None) -> list:
    """The axis of each leaf of `tree`, given the prefix tree `axes` (None is a leaf).
    An error shows `shown` (the user's axes and value), else axes and tree."""
    leaves, prefix = tree_util.tree_flatten(axes, is_leaf=lambda a: a is None)
    try:
        subtrees = prefix.flatten_up_to(tree)
    except ValueError:
        raise ValueError(at_user_line(
            f"vmap {name} specification must be a tree prefix of the corresponding value, "
            "got specification {} for value tree {}".format(
                *(shown or (axes, tree_util.tree_structure(tree)))))
        ) from None
    return [a for a, sub in zip(leaves, subtrees)
            for _ in range(tree_util.tree_structure(sub).num_leaves)]


def _leaf_names(fn, args, kwargs) -> list:
    """`argument x`, `argument params['w']`, `kwargs['k']`: as JAX's size errors say."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    out = []
    for path, _ in tree_util.tree_flatten_with_path(args)[0]:
        i = path[0].idx
        base = f"argument {names[i]}" if i < len(names) else f"args[{i}]"
        out.append(base + tree_util.keystr(path[1:]))
    out += [f"kwargs{tree_util.keystr(path)}"
            for path, _ in tree_util.tree_flatten_with_path(kwargs)[0]]
    return out


def _mapped_size(fn, args, kwargs, leaves, axes, axis_size, shapes) -> int:
    """`shapes`: each leaf's shape as its user sees it (a key array's, not its data's)."""
    sizes = {}  # leaf index -> size
    for i, (shape, a) in enumerate(zip(shapes, axes)):
        if a is not None:
            if not -len(shape) <= a < len(shape):
                raise ValueError(at_user_line(
                    f"vmap was requested to map its argument along axis {a}, which implies "
                    f"that its rank should be at least {a + 1 if a >= 0 else -a}, but is "
                    f"only {len(shape)} (its shape is {shape})"))
            sizes[i] = shape[a]
    distinct = set(sizes.values()) | ({axis_size} if axis_size is not None else set())
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError(at_user_line("vmap must have at least one non-None value in in_axes "
                                      "or axis_size must be specified"))
    names = _leaf_names(fn, args, kwargs)
    msg = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};")
    counts: dict = {}
    for i, size in sizes.items():
        counts.setdefault(size, []).append(i)
    for rank, (size, where) in enumerate(sorted(counts.items(), key=lambda kv: -len(kv[1]))):
        i = where[0]
        t = type_of(leaves[i])
        shape = ",".join(map(str, t.shape))
        example = f"axis {axes[i]} of {names[i]} of type {t.dtype.name}[{shape}]"
        if len(where) == 1:
            msg.append(f"  * one axis had size {size}: {example};")
        else:
            many = "most" if rank == 0 else "some"
            msg.append(f"  * {many} axes ({len(where)} of them) had size {size}, e.g. {example};")
    raise ValueError(at_user_line("\n".join(msg)[:-1]))


def _as_array(x):
    """An argument leaf as an array of the current trace (a host value lifted)."""
    return x if isinstance(x, Tracer) or runtime.is_device_array(x) else core.lift(x)


def vmap(fn, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """fn mapped over an axis of its arguments, as JAX's vmap: `in_axes` gives each
    positional argument's mapped axis (an int, None for an argument shared by every
    example, or a pytree prefix of the arguments; keyword arguments are mapped along
    axis 0), `out_axes` where each output gets its batch axis (None: an output that
    does not depend on the batch), `axis_size` the size when no argument is mapped.
    The axis of a key array counts its keys' axes, not its data's. `axis_name` is taken
    in JAX's place among the arguments; no collective reads it (tracehlo.lax has none),
    and `spmd_axis_name`, which shards the batch, is refused."""
    core.check_callable(fn)
    if spmd_axis_name is not None:
        raise NotImplementedError(at_user_line(
            "vmap's spmd_axis_name shards the batch over devices, which tracehlo does not do"))
    if axis_size is not None and not (isinstance(axis_size, int) and axis_size >= 0):
        raise TypeError(at_user_line(
            f"vmap's axis_size must be a non-negative int, got {axis_size!r}"))
    if isinstance(in_axes, list):  # lists and tuples alike, as JAX allows
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    _check_axes_tree("in_axes", in_axes)
    _check_axes_tree("out_axes", out_axes)

    @functools.wraps(fn)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(at_user_line(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"))
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        shapes = [_user_shape(u, x) for u, x in
                  zip(tree_util.user_flatten((args, kwargs))[0], leaves)]
        axes = _broadcast_prefix("in_axes", (in_axes, 0), (args, kwargs),
                                 shown=(in_axes, tree_util.tree_structure(args)))
        size = _mapped_size(fn, args, kwargs, leaves, axes, axis_size, shapes)
        with core.new_trace(BatchTrace()) as trace:
            ins = [x if a is None else
                   BatchTracer(trace, _as_array(x), a % len(shape))
                   for x, a, shape in zip(leaves, axes, shapes)]
            in_args, in_kwargs = tree_util.tree_unflatten(in_tree, ins)
            out = fn(*in_args, **in_kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_axes_flat = _broadcast_prefix("out_axes", out_axes, out)
        paths = [p for p, _ in tree_util.tree_flatten_with_path(out)[0]]
        word_dims = [len(type_of(x).shape) - len(u.shape) if tree_util.is_opaque(u) else 0
                     for u, x in zip(tree_util.user_flatten(out)[0], out_leaves)]
        results = [_output(trace, x, a, size, path, words)
                   for x, a, path, words in zip(out_leaves, out_axes_flat, paths, word_dims)]
        return tree_util.tree_unflatten(out_tree, results)
    return batched


def _user_shape(user_leaf, leaf) -> tuple:
    """A leaf's shape as its user sees it: a key array's keys, not its data's words."""
    return tuple(user_leaf.shape) if tree_util.is_opaque(user_leaf) else type_of(leaf).shape


def _output(trace, x, axis, size, path, words: int = 0):
    """An output leaf with its batch axis at `axis` (broadcast if it has none); `words`:
    the trailing axes of a key array's data, which `axis` does not count. An output
    with no batch axis, asked for none, is returned as the function returned it (a
    NumPy array or a Python number stays one), as in JAX. A float0 output (the tangent
    of an integer value) holds no data: it gets its batch axis as a NumPy array."""
    no_data = not isinstance(x, Tracer) and getattr(x, "dtype", None) == float0
    if isinstance(x, BatchTracer) and x._trace is trace:
        value, dim = x.value, x.batch_dim
    elif no_data:
        value, dim = x, not_mapped
    else:
        try:
            type_of(x)
        except TypeError:  # outputs must be arrays, as in JAX
            raise TypeError(at_user_line(
                f"Output from batched function {x!r} with type {type(x)} is not a valid "
                "array type")) from None
        value, dim = _as_array(x), not_mapped
    if axis is None:
        if dim is not not_mapped:
            raise ValueError(at_user_line(
                f"at vmap out_axes{tree_util.keystr(path)}, got axis spec None but output "
                f"was batched on axis {dim}"))
        return value if isinstance(x, BatchTracer) else x
    ndim = (np.ndim(x) if no_data else type_of(value).ndim) + (dim is not_mapped) - words
    if not -ndim <= axis < ndim:
        raise ValueError(at_user_line(
            f"vmap out_axes{tree_util.keystr(path)}: axis {axis} is out of bounds for an "
            f"output of rank {ndim - 1} (batched: {ndim})"))
    if no_data:
        shape = list(np.shape(x))
        shape.insert(axis % ndim, size)
        return np.zeros(shape, float0)
    return batch_at(value, dim, size, axis % ndim)
