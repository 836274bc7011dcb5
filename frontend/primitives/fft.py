"""fft[fft_type, fft_lengths]: the discrete Fourier transform over the trailing
len(fft_lengths) axes, as JAX's lax.fft_p, lowered to stablehlo.fft. fft_type is
'FFT' or 'IFFT' (complex to complex), 'RFFT' (real to the non-redundant half of the
last axis) or 'IRFFT' (that half back to real); kept as a name so the IR prints it."""
from __future__ import annotations

import enum
import math

import numpy as np

from .. import ad, dtypes
from ..batching import batch_at
from ..core import at_user_line, type_of
from ..ir import ArrayType
from ..lowering import tensor_type
from . import define
from .elementwise import _complex_dtype, _real_dtype, conj, convert_element_type, div, mul
from .shape_ops import broadcast_in_dim


class FftType(enum.IntEnum):
    """JAX's names (and values) for the four transforms."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_shape(x, *, fft_type, fft_lengths):
    """JAX's fft_abstract_eval, its messages included."""
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if fft_type == "RFFT":
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if x.shape[-k:] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        return ArrayType(x.shape[:-k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,),
                         _complex_dtype(x.dtype), x.weak)
    if not dtypes.is_complex(x.dtype):
        raise ValueError(f"{fft_type} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == "IRFFT":
        if x.shape[-k:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got {fft_lengths=}")
        return ArrayType(x.shape[:-k] + fft_lengths, _real_dtype(x.dtype), x.weak)
    if x.shape[-k:] != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return ArrayType(x.shape, x.dtype, x.weak)


def _fft_lowering(ctx, eqn, x):
    p = eqn.params
    return ctx.op(f"stablehlo.fft {x}, type = {p['fft_type']}, length = "
                  f"[{', '.join(map(str, p['fft_lengths']))}] : "
                  f"({tensor_type(eqn.inputs[0].type)}) -> {tensor_type(eqn.outputs[0].type)}")


def _hermitian_weights(n, m, dtype):
    """Per bin of a length-n real transform's m = n // 2 + 1 stored bins: 1 for DC (and
    Nyquist for even n), 2 for the bins that stand for a conjugate pair too."""
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return np.asarray(w, dtype)


def _fft_vjp(cts, primals, outs, *, fft_type, fft_lengths):
    """JAX's transpose rules. A complex DFT matrix is symmetric: its transpose is
    itself. RFFT's transpose is N IRFFT(conj(ct) / w) and IRFFT's conj(w RFFT(ct) / N),
    with w the Hermitian weights (JAX's masks), as JAX states them."""
    (ct,) = cts
    t = type_of(ct)
    if fft_type in ("FFT", "IFFT"):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    if fft_type == "RFFT":
        w = broadcast_in_dim(_hermitian_weights(fft_lengths[-1], t.shape[-1], t.dtype),
                             t.shape, (t.ndim - 1,))
        out = fft_p.bind(div(conj(ct), w), fft_type="IRFFT", fft_lengths=fft_lengths)
        return [mul(np.asarray(math.prod(fft_lengths), type_of(out).dtype), out)]
    x = fft_p.bind(ct, fft_type="RFFT", fft_lengths=fft_lengths)
    xt = type_of(x)
    w = _hermitian_weights(fft_lengths[-1], xt.shape[-1], xt.dtype)
    scaled = mul(mul(np.asarray(1 / math.prod(fft_lengths), xt.dtype),
                     broadcast_in_dim(w, xt.shape, (xt.ndim - 1,))), x)
    return [conj(scaled)]


def _fft_batch(values, dims, **params):
    """Transforms act on trailing axes: the batch axis goes in front."""
    (x,), (d,) = values, dims
    return [fft_p.bind(batch_at(x, d, type_of(x).shape[d], 0), **params)], [0]


fft_p = define("fft", shape=_fft_shape, lower=_fft_lowering, jvp=ad.linear_jvp,
               vjp=_fft_vjp, batch=_fft_batch)


def fft(x, fft_type, fft_lengths):
    """JAX's lax.fft: x converted to the transform's input dtype (complex, or real for
    RFFT, from ints as JAX's), then transformed; no lengths, no transform."""
    if isinstance(fft_type, str):
        if fft_type.upper() not in FftType.__members__ or fft_type not in (
                fft_type.upper(), fft_type.lower()):
            raise ValueError(at_user_line(f"Unknown FFT type '{fft_type}'"))
        fft_type = FftType[fft_type.upper()]
    elif not isinstance(fft_type, FftType):
        raise TypeError(at_user_line(f"Unknown FFT type value '{fft_type}'"))
    from ..numpy._util import _inexact
    dtype = type_of(x).dtype
    if fft_type == FftType.RFFT and dtypes.is_complex(dtype):
        raise ValueError(at_user_line("only real valued inputs supported for rfft"))
    inexact = dtype if dtypes.is_inexact(dtype) else _inexact(dtype)
    x = convert_element_type(x, inexact if fft_type == FftType.RFFT else
                             dtypes.canonicalize(_complex_dtype(inexact)))
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=fft_type.name, fft_lengths=tuple(map(int, fft_lengths)))

