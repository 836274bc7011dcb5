"""tracehlo.lax.linalg: JAX's lax.linalg names for the linear-algebra primitives
(their rules live beside the primitives, in primitives/linalg.py)."""
import sys as _sys

import numpy as _np

from . import dtypes as _dtypes
from .core import at_user_line as _at_user_line, type_of as _type_of
from .numpy.linalg import cholesky as _cholesky
from .primitives.linalg import (eig_p as _eig_p, eigh_p as _eigh_p, lu_p as _lu_p,
                                qr_p as _qr_p, svd_p as _svd_p, triangular_solve)

__all__ = ["cholesky", "eig", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd",
           "triangular_solve"]

# `import tracehlo.lax.linalg` works as in JAX, though tracehlo.lax is one module
_sys.modules[f"{__package__}.lax.linalg"] = _sys.modules[__name__]


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor, NaNs where x is not positive definite, as JAX's
    lax.linalg.cholesky: strict like the rest of lax, so integers are refused."""
    if not _dtypes.is_inexact(_type_of(x).dtype):
        raise TypeError(_at_user_line(
            f"cholesky does not accept dtype {_type_of(x).dtype}: it takes float or complex "
            "matrices (tracehlo.numpy.linalg.cholesky promotes integers)"))
    return _cholesky(x, symmetrize_input=symmetrize_input)


def lu(x):
    """(lu, pivots, permutation) with x[..., permutation, :] = L U, as JAX's."""
    return _lu_p.bind(x)


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation the row swaps `pivots` (..., k) make of range(permutation_size):
    a loop over the swaps, each a select over the row (no gather or scatter), so batch
    axes come for free."""
    from . import numpy as tnp
    from .control_flow import fori_loop
    t = _type_of(pivots)
    if t.dtype != _dtypes.int32:
        raise TypeError(_at_user_line(
            f"lu_pivots_to_permutation does not accept dtype {t.dtype} at position 0. "
            "Accepted dtypes at position 0 are subtypes of int32."))
    if t.ndim < 1:
        raise TypeError(_at_user_line(
            "Input 0 to lu_pivots_to_permutation must have rank at least 1, but got "
            f"shape={t.shape}"))
    if permutation_size < t.shape[-1]:
        raise ValueError(_at_user_line(
            f"Output permutation size {permutation_size} has to exceed the trailing "
            f"dimension of the pivots. Got pivots size {t.shape[-1]}"))
    rows = tnp.arange(permutation_size, dtype=_np.int32)
    steps = tnp.arange(t.shape[-1], dtype=_np.int32)

    def at(x, positions, i):
        return tnp.sum(tnp.where(positions == i, x, 0), axis=-1, keepdims=True, dtype=t.dtype)

    def swap(i, perm):
        j = at(pivots, steps, i)
        here, there = at(perm, rows, i), at(perm, rows, j)
        return tnp.where(rows == j, here, tnp.where(rows == i, there, perm))
    start = tnp.broadcast_to(rows, (*t.shape[:-1], permutation_size))
    return fori_loop(0, t.shape[-1], swap, start)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """(q, r) with x = q r, as JAX's (full_matrices=True by default, unlike numpy's)."""
    if pivoting:
        raise NotImplementedError(_at_user_line(
            "qr with pivoting=True (LAPACK's geqp3) is not supported: use pivoting=False"))
    return _qr_p.bind(x, full_matrices=bool(full_matrices))


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian x, as JAX's
    (symmetrized first by default, so either triangle's noise averages out)."""
    from . import lax, numpy as tnp
    n = _type_of(x).shape[-1] if _type_of(x).ndim else None
    if subset_by_index not in (None, (0, n)) or implementation is not None:
        raise NotImplementedError(_at_user_line(
            "eigh with subset_by_index or implementation is not supported (CPU's syevd "
            "computes every eigenpair)"))
    shape = _type_of(x).shape
    if symmetrize_input and len(shape) >= 2:
        if shape[-1] != shape[-2]:  # JAX's error, from its symmetrizing add
            raise TypeError(_at_user_line(
                f"add got incompatible shapes for broadcasting: {shape}, "
                f"{(*shape[:-2], shape[-1], shape[-2])}. (eigh symmetrizes its input, which "
                "must be square matrices [..., n, n])"))
        x = lax.div(lax.add(x, tnp.conj(tnp.swapaxes(x, -1, -2))), 2)  # dtype kept
    return _eigh_p.bind(x, lower=bool(lower))


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """(u, s, vh), or s alone, as JAX's (LAPACK's gesdd)."""
    if subset_by_index is not None or algorithm is not None:
        raise NotImplementedError(_at_user_line(
            "svd with subset_by_index or algorithm is not supported (CPU's gesdd computes "
            "every singular triple)"))
    outs = _svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return (outs[1], outs[0], outs[2]) if compute_uv else outs[0]


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """[w, vl, vr] (the eigenvectors asked for) of general square x, as JAX's (LAPACK's
    geev): eigenvector derivatives only with enable_eigvec_derivs=True."""
    if implementation is not None or use_magma:
        raise NotImplementedError(_at_user_line(
            "eig with an implementation other than LAPACK's is not supported"))
    return _eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                       compute_right_eigenvectors=bool(compute_right_eigenvectors),
                       enable_eigvec_derivs=bool(enable_eigvec_derivs))
