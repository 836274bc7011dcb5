"""tracehlo.numpy.fft and lax.fft against jax.numpy.fft: both lower to stablehlo.fft with
the same paddings and norm factors, so values are JAX's bit for bit (jitted, and eager
where each operation runs as its own executable); dtypes and errors are JAX's."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax

rng = np.random.default_rng(11)
X = rng.normal(size=(3, 4, 6)).astype(np.float32)
C = (rng.normal(size=(3, 4, 6)) + 1j * rng.normal(size=(3, 4, 6))).astype(np.complex64)
X5 = rng.normal(size=(2, 2, 3, 2, 4)).astype(np.float32)  # five axes: 3 + 2 at a time
I = np.arange(8, dtype=np.int32).reshape(2, 4)


def _cases(m, x, c, x5, i):
    f = m.fft
    return [
        f.fft(c, n=4, axis=1), f.fft(x, n=9, norm="ortho"), f.ifft(c, norm="forward"),
        f.ifft(x, axis=0, norm="backward"), f.rfft(x, axis=1, norm="ortho"), f.irfft(c),
        f.irfft(c, n=7, axis=0, norm="forward"), f.fft2(c), f.rfft2(x, axes=(0, 2), norm="ortho"),
        f.irfft2(c, s=(5, 4)), f.fftn(c, s=(2, 5), axes=(2, 0)), f.rfftn(x, norm="forward"),
        f.irfftn(c, s=(2, 3, 4)), f.fftn(x5), f.ifftn(x5), f.fftn(x, axes=()), f.hfft(c),
        f.ihfft(x, n=4, axis=1, norm="forward"), f.fft(i), f.fftshift(x),
        f.ifftshift(c, axes=(0, 2)), f.fftfreq(8, 0.5), f.rfftfreq(7, d=2.0),
        f.fftfreq(5, dtype=np.int32)]


def _check(got, want, exact=True):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape, getattr(g, "weak_type", False)) == \
            (w.dtype, w.shape, w.weak_type), k
        if exact:
            np.testing.assert_array_equal(g, w, err_msg=str(k))
        else:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=str(k))


def test_fft_functions_are_jaxs():
    """Every function, each norm, n/s cropping and padding, axes moved, five axes (split
    into transforms of 3 and 2), ints promoted: bit for bit under jit; eagerly too.
    hfft with a norm scales twice (the norm, then n): XLA folds JAX's two constants into
    one under jit, so that case is checked eagerly against JAX's op by op (which is
    ours under jit as well)."""
    args = (X, C, X5, I)
    _check(tracehlo.jit(lambda *a: _cases(tnp, *a))(*args),
           jax.jit(lambda *a: _cases(jnp, *a))(*args))
    eager = lambda m: [m.fft.rfft(X, n=5, norm="ortho"), m.fft.irfft2(C),  # noqa: E731
                       m.fft.hfft(C, n=5, axis=0, norm="ortho")]
    _check(eager(tnp), eager(jnp))


def test_fft_float64_and_lax_fft_are_jaxs(x64):
    x, c = X.astype(np.float64), C.astype(np.complex128)

    def fn(m, lax_):
        return lambda x, c: [m.fft.fft(x), m.fft.irfft2(c), m.fft.fftfreq(4),
                             lax_.fft(x, "rfft", (4, 6)), lax_.fft(c, lax_.FftType.IFFT, (6,)),
                             lax_.fft(x, "FFT", ())]
    _check(tracehlo.jit(fn(tnp, lax))(x, c), jax.jit(fn(jnp, jax.lax))(x, c))


def test_fft_derivatives_are_jaxs():
    """grad through each transform (RFFT and IRFFT have transposes of their own, with
    weights for the bins that stand for a conjugate pair, odd and even lengths) and a jvp,
    against JAX's to rounding; test_ad's rows check them against finite differences."""
    def fn(m, grad, jvp):
        def loss(x, c):
            f = m.fft
            return (m.sum(m.abs(f.rfft(x)) ** 2) + m.sum(m.sin(f.irfft(c, n=7))) +
                    m.sum(m.abs(f.fft2(c * x)) ** 3) + m.sum(f.irfftn(f.ifft(c), s=(4, 6)) ** 2)
                    + m.sum(m.real(f.fftn(c, axes=(0, 2)) * m.conj(f.hfft(c, n=6)[..., :6])))
                    + m.sum(m.imag(f.ihfft(x, norm="ortho"))))
        return lambda x, c: [*grad(loss, (0, 1))(x, c),
                             jvp(lambda c: m.fft.rfft2(m.real(c)), (c,), (c * 2,))[1]]
    _check(tracehlo.jit(fn(tnp, tracehlo.grad, tracehlo.jvp))(X, C),
           jax.jit(fn(jnp, jax.grad, jax.jvp))(X, C), exact=False)


def test_fft_errors_are_jaxs():
    for fn, exc, match in [
            (lambda m: m.fft.fft(X, n=0), ValueError, "Shape should be positive."),
            (lambda m: m.fft.fftn(X, s=(2, 3), axes=(0,)), ValueError,
             "Shape and axes have different lengths."),
            (lambda m: m.fft.fftn(X, axes=(1, 1)), ValueError,
             r"numpy.fft.fftn does not support repeated axes. Got axes \(1, 1\)."),
            (lambda m: m.fft.fft(X, axis=(0, 1)), ValueError,
             r"numpy.fft.fft does not support multiple axes. Please use \w+.numpy.fft.fftn. "
             r"Got axis = \(0, 1\)."),
            (lambda m: m.fft.fft2(X, axes=(0,)), ValueError,
             r"numpy.fft.fft2 only supports 2 axes. Got axes = \(0,\)."),
            (lambda m: m.fft.fft(X, norm="x"), ValueError,
             'Invalid norm value x; should be "backward","ortho" or "forward".'),
            (lambda m: m.fft.fftfreq([4]), ValueError,
             r"The n argument of \w+.numpy.fft.fftfreq only takes an int. Got n = \[4\]."),
            (lambda m: m.fft.rfftfreq(4, d=[1.0]), ValueError,
             r"The d argument of \w+.numpy.fft.rfftfreq only takes a single value. "),
            (lambda m: m.lax.fft(C, "rfft", (6,)), ValueError,
             "only real valued inputs supported for rfft"),
            (lambda m: m.lax.fft(X, "Fft", (6,)), ValueError, "Unknown FFT type 'Fft'"),
            (lambda m: m.lax.fft(X, 3, (6,)), TypeError, "Unknown FFT type value '3'"),
            (lambda m: m.lax.fft(C, "fft", (4,)), ValueError,
             r"FFT input shape \(3, 4, 6\) minor dimensions must be equal to fft_lengths "
             r"\(4,\)"),
            (lambda m: m.lax.fft(C[0, 0], "fft", (1, 6)), ValueError,
             r"FFT input shape \(6,\) must have at least as many input dimensions as "
             r"fft_lengths \(1, 6\)."),
            (lambda m: m.lax.fft(C, "irfft", (3, 10)), ValueError,
             r"IRFFT input shape \(3, 4, 6\) minor dimensions must be equal to all except "
             r"the last fft_length, got fft_lengths=\(3, 10\)")]:
        jax_ns = type("ns", (), {"fft": jnp.fft, "lax": jax.lax})
        with pytest.raises(exc, match=match):
            fn(jax_ns)
        ours = type("ns", (), {"fft": tnp.fft, "lax": lax})
        with pytest.raises(exc, match="test_numpy_fft.py:[0-9]+: .*" + match):
            fn(ours)
