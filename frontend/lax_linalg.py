"""tracehlo.lax.linalg: JAX's lax.linalg names for the linear-algebra primitives
(their rules live beside the primitives, in primitives/linalg.py)."""
import sys as _sys

from . import dtypes as _dtypes
from .core import at_user_line as _at_user_line, type_of as _type_of
from .numpy.linalg import cholesky as _cholesky
from .primitives.linalg import triangular_solve

__all__ = ["cholesky", "triangular_solve"]

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
