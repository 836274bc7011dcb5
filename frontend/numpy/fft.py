"""tracehlo.numpy.fft: NumPy's FFT functions on the fft primitive, as JAX builds them
(the same transforms, paddings and norm factors in the same order, so results are
JAX's bit for bit)."""
import operator as _operator

import numpy as _np

from .. import dtypes as _dtypes
from .. import numpy as _tnp
from ..core import at_user_line as _at_user_line
from ..primitives.fft import FftType as _FftType, fft as _lax_fft
from ._numeric import _arraylike
from ._util import _inexact, _promote_inexact

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def _fft_norm(s, func_name, norm):
    """The factor `norm` asks for: 1 (backward), 1/sqrt(N) or 1/N forward, their
    inverses for the inverse transforms."""
    if norm == "backward":
        return _tnp.array(1)
    (s,) = _promote_inexact(s)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = _tnp.sqrt(_tnp.prod(s))
        return root if inverse else 1 / root
    if norm == "forward":
        return _tnp.prod(s) if inverse else 1 / _tnp.prod(s)
    raise ValueError(_at_user_line(f'Invalid norm value {norm}; should be "backward",'
                                   '"ortho" or "forward".'))


def _fft_core(func_name, fft_type, a, s, axes, norm):
    """JAX's _fft_core: the transformed axes moved last, cropped or zero-padded to s,
    transformed, scaled by norm and moved back."""
    full_name = f"tracehlo.numpy.fft.{func_name}"
    (arr,) = _arraylike(full_name, a)
    if s is not None:
        s = tuple(map(_operator.index, s))
        if _np.any(_np.less_equal(s, 0)):
            raise ValueError(_at_user_line("Shape should be positive."))
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(_at_user_line("Shape and axes have different lengths."))
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(_at_user_line(
            f"{full_name} does not support repeated axes. Got axes {axes}."))
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = _tnp.moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, x in zip(axes, s):
            in_s[axis] = x
        if fft_type == _FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = _tnp.pad(arr, [(0, x - y) for x, y in zip(in_s, arr.shape)])
    elif fft_type == _FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[axis] for axis in axes]
    transformed = _fft_core_nd(arr, fft_type, s)
    if norm is not None:
        transformed = transformed * _fft_norm(
            _tnp.array(s, dtype=transformed.dtype), func_name, norm)
    if orig_axes is not None:
        transformed = _tnp.moveaxis(transformed, axes, orig_axes)
    return transformed


def _fft_core_nd(arr, fft_type, s):
    """XLA transforms at most 3 axes at once: more go 2 or 3 at a time (JAX's order)."""
    if len(s) <= 3:
        return _lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (_FftType.RFFT, _FftType.FFT):
        arr = _lax_fft(arr, fft_type, tuple(s)[-n:])
        arr = _tnp.moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, _FftType.FFT, s[:-n])
        return _tnp.moveaxis(arr, dst, src)
    arr = _tnp.moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, _FftType.IFFT, s[:-n])
    arr = _tnp.moveaxis(arr, dst, src)
    return _lax_fft(arr, fft_type, tuple(s)[-n:])


def fftn(a, s=None, axes=None, norm=None):
    return _fft_core("fftn", _FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fft_core("ifftn", _FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fft_core("rfftn", _FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _fft_core("irfftn", _FftType.IRFFT, a, s, axes, norm)


def _axis_check_1d(func_name, axis):
    if isinstance(axis, (list, tuple)):
        full_name = f"tracehlo.numpy.fft.{func_name}"
        raise ValueError(_at_user_line(
            f"{full_name} does not support multiple axes. Please use {full_name}n. "
            f"Got axis = {axis!r}."))


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def fft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("fft", _FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("ifft", _FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("rfft", _FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("irfft", _FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry: an IRFFT of conj(a), times its length."""
    conj_a = _tnp.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", _FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    _axis_check_1d("ihfft", axis)
    arr = _tnp.asarray(a)
    nn = arr.shape[axis] if n is None else n
    return _tnp.conj(_fft_core_1d("ihfft", _FftType.RFFT, arr, n, axis, norm)) * (1 / nn)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(_at_user_line(
            f"tracehlo.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}."))
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("fft2", _FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("ifft2", _FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("rfft2", _FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("irfft2", _FftType.IRFFT, a, s, axes, norm)


def _freq_args(func_name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(_at_user_line(
            f"The n argument of tracehlo.numpy.fft.{func_name} only takes an int. "
            f"Got n = {list(n)}."))
    if isinstance(d, (list, tuple)):
        raise ValueError(_at_user_line(
            f"The d argument of tracehlo.numpy.fft.{func_name} only takes a single value. "
            f"Got d = {list(d)}."))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point FFT: (0, 1, ..., -(n // 2), ..., -1) / (d n)."""
    dtype = dtype or _dtypes.default_float()
    _freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = _tnp.finfo(dtype if _tnp.issubdtype(dtype, _np.inexact) else _inexact(dtype)).dtype
    i = _tnp.arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    return (k.astype(dtype) / _tnp.array(d * n, dtype=dtype)).astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The non-negative frequencies of an n-point RFFT: (0, 1, ..., n // 2) / (d n)."""
    dtype = dtype or _dtypes.default_float()
    _freq_args("rfftfreq", n, d)
    k = _tnp.arange(0, (n if n % 2 == 0 else n - 1) // 2 + 1, dtype=dtype)
    return k / _tnp.array(d * n, dtype=dtype)


def _shifted(func_name, x, axes, sign):
    (x,) = _arraylike(func_name, x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return _tnp.roll(x, shift, axes)


def fftshift(x, axes=None):
    """The zero frequency moved to the middle (a roll by half of each axis)."""
    return _shifted("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    return _shifted("ifftshift", x, axes, -1)
