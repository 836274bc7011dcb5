"""tracehlo: trace Python to our IR, lower to StableHLO, fuse, run on PJRT.

    import tracehlo, tracehlo.numpy as tnp
    f = tracehlo.jit(lambda x: tnp.sum(tnp.sin(x) * 2))
    print(tracehlo.make_ir(f.__wrapped__)(x))   # our IR
    print(f.lower(x).stablehlo)                 # StableHLO
"""
# importing the primitive families registers every primitive's rules
from .primitives import elementwise, indexing, linalg, reductions, shape_ops, sort
from .config import config
from .core import (ConcretizationError, Primitive, TracehloError, Tracer,
                   TracerBoolConversionError, UnexpectedTracerError)
from .ir import ArrayType, Graph
from .api import Compiled, JitFunction, compile, jit, make_ir
from .ad import (checkpoint, checkpoint_policies, grad, hessian, jacfwd, jacrev, jvp,
                 linearize, remat, value_and_grad, vjp)
from .custom_derivatives import custom_jvp, custom_vjp
from .batching import vmap
from . import lax, nn, numpy, random
from .ir_parser import parse_ir
from .verify import verify

__all__ = ["ArrayType", "Compiled", "ConcretizationError", "Graph", "JitFunction",
           "Primitive", "TracehloError", "Tracer", "TracerBoolConversionError",
           "UnexpectedTracerError", "compile", "config", "jit", "lax", "make_ir", "nn",
           "numpy", "parse_ir", "random", "verify",
           # transformations
           "checkpoint", "checkpoint_policies", "custom_jvp", "custom_vjp", "grad", "hessian",
           "jacfwd", "jacrev", "jvp", "linearize", "remat", "value_and_grad", "vjp", "vmap"]

del elementwise, indexing, linalg, reductions, shape_ops, sort


def __dir__():
    """The public API only: Python's import system also sets every implementation module
    imported so far (core, ir, runtime, ...) as an attribute of the package."""
    return __all__
