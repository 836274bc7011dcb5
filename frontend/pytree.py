"""jax.tree_util as our transformations see it: leaves of an opaque type are opened.

A typed key is one pytree leaf to its user, as in JAX (`jax.tree_util.tree_leaves(key)`
is `[key]`), but jit, vmap, grad and the loops trace and batch arrays: flattened here,
an opaque leaf becomes a node whose one child is its array data, and unflattening
makes the leaf again. The modules that transform functions import this module in
place of jax.tree_util; everyone else sees JAX's registry unchanged.
"""
import jax.tree_util as _jtu
from jax.tree_util import keystr, tree_unflatten  # noqa: F401  (re-exported as they are)
from jax.tree_util import tree_flatten as user_flatten  # noqa: F401  (opaque leaves whole)

_OPAQUE: dict = {}  # leaf type -> function giving its array data


class _Opened:
    """An opaque leaf, opened: a node with its data as the one child."""
    __slots__ = ("data", "remake")

    def __init__(self, data, remake):
        self.data, self.remake = data, remake


class _DataKey:
    """The path entry of an opened leaf's data: dropped from the paths we report."""


_jtu.register_pytree_with_keys(
    _Opened, lambda o: (((_DataKey(), o.data),), o.remake),
    lambda remake, children: remake(children[0]),
    flatten_func=lambda o: ((o.data,), o.remake))


def register_opaque(cls, data_of, remake):
    """cls is a leaf to JAX's registry and a node over data_of(x) to our transforms;
    remake(data) builds the leaf back (from a transformed, maybe a float0, data)."""
    _OPAQUE[cls] = data_of, remake


def is_opaque(x) -> bool:
    return type(x) in _OPAQUE


def data(x):
    """An opaque leaf's array data."""
    return _OPAQUE[type(x)][0](x)


def _open(tree, is_leaf=None):
    def open_leaf(x):
        if type(x) not in _OPAQUE:
            return x
        data_of, remake = _OPAQUE[type(x)]
        return _Opened(data_of(x), remake)
    return _jtu.tree_map(open_leaf, tree, is_leaf=is_leaf)


def tree_flatten(tree, is_leaf=None):
    leaves, treedef = _jtu.tree_flatten(tree, is_leaf)
    if _OPAQUE and any(map(_OPAQUE.__contains__, map(type, leaves))):
        return _jtu.tree_flatten(_open(tree, is_leaf), is_leaf)
    return leaves, treedef


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    return _jtu.tree_map(f, _open(tree, is_leaf), *(_open(r, is_leaf) for r in rest),
                         is_leaf=is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """Paths name the opaque leaf, not its data inside."""
    pairs, treedef = _jtu.tree_flatten_with_path(_open(tree, is_leaf), is_leaf)
    return [(tuple(k for k in path if not isinstance(k, _DataKey)), leaf)
            for path, leaf in pairs], treedef
