"""tracehlo.numpy contractions (dot, matmul, vdot, inner, outer, tensordot, einsum)
linalg.norm and the gradients of linalg.cholesky against NumPy / jax.numpy, eager and
jitted."""
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp

from numpy_helpers import check, check_raises, f32, i32

PRODUCTS = [
    ("dot mm", lambda m, a, b: m.dot(a, b), (2, 3), (3, 4)),
    ("dot mv", lambda m, a, b: m.dot(a, b), (2, 3), (3,)),
    ("dot vv", lambda m, a, b: m.dot(a, b), (3,), (3,)),
    ("dot 0d", lambda m, a, b: m.dot(a, b), (), (2, 3)),
    ("dot nd", lambda m, a, b: m.dot(a, b), (2, 2, 3), (4, 3, 2)),
    ("matmul mm", lambda m, a, b: m.matmul(a, b), (2, 3), (3, 4)),
    ("matmul vm", lambda m, a, b: m.matmul(a, b), (3,), (3, 4)),
    ("matmul mv", lambda m, a, b: m.matmul(a, b), (2, 3), (3,)),
    ("matmul vv", lambda m, a, b: m.matmul(a, b), (3,), (3,)),
    ("matmul batch", lambda m, a, b: m.matmul(a, b), (2, 2, 3), (2, 3, 4)),
    ("matmul broadcast batch", lambda m, a, b: m.matmul(a, b), (2, 1, 2, 3), (3, 3, 2)),
    ("matmul batch vec", lambda m, a, b: m.matmul(a, b), (2, 2, 3), (3,)),
    ("vdot", lambda m, a, b: m.vdot(a, b), (2, 3), (3, 2)),
    ("inner", lambda m, a, b: m.inner(a, b), (2, 3), (4, 3)),
    ("inner vv", lambda m, a, b: m.inner(a, b), (3,), (3,)),
    ("inner 0d", lambda m, a, b: m.inner(a, b), (), (3,)),
    ("outer", lambda m, a, b: m.outer(a, b), (3,), (2, 2)),
    ("tensordot", lambda m, a, b: m.tensordot(a, b), (2, 3, 4), (3, 4, 2)),
    ("tensordot 1", lambda m, a, b: m.tensordot(a, b, 1), (2, 3), (3, 4)),
    ("tensordot 0", lambda m, a, b: m.tensordot(a, b, 0), (2,), (3,)),
    ("tensordot axes", lambda m, a, b: m.tensordot(a, b, ([0, -1], [2, 0])), (2, 3, 4),
     (4, 5, 2)),
    ("tensordot int axes", lambda m, a, b: m.tensordot(a, b, (1, 0)), (2, 3), (3, 4)),
]


@pytest.mark.parametrize("name,fn,sa,sb", PRODUCTS)
def test_product_f32(name, fn, sa, sb):
    check(fn, f32(*sa), f32(*sb), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["dot mm", "matmul batch", "inner", "outer", "tensordot"])
def test_product_int_and_mixed(name):
    fn, sa, sb = next((f, a, b) for n, f, a, b in PRODUCTS if n == name)
    check(fn, i32(*sa), i32(*sb))
    check(fn, i32(*sa), f32(*sb), rtol=1e-5, atol=1e-5)


def test_bool_products():
    a, b = np.array([[True, False], [True, True]]), np.array([[False, True], [True, True]])
    check(lambda m, a, b: m.dot(a, b), a, b)
    check(lambda m, a, b: m.matmul(a, b), a, b)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]),
    ("...j,j", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("abc,cd->abd", [(2, 3, 2), (2, 3)]),
    ("ij,kj->", [(2, 3), (4, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),  # size-1 axes broadcast
    ("ii->", [(3, 3)]),
    ("i,i->i", [(3,), (3,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUMS)
def test_einsum(spec, shapes):
    ops = [f32(*s) for s in shapes]
    check(lambda m, *ops: m.einsum(spec, *ops), *ops, rtol=1e-5, atol=1e-5)


def test_einsum_int():
    check(lambda m, a, b: m.einsum("ij,jk->ik", a, b), i32(2, 3), i32(3, 2))


# two operands: jax.numpy.einsum's one dot_general (its operand order and axis orders,
# size-1 axes squeezed rather than broadcast), so its sums run in the same order
EINSUM_PAIRS = [
    ("...ij,...j->...i", [(2, 7, 7), (5, 2, 7)]),  # multivariate_normal's
    ("...ij,...jk->...ik", [(2, 1, 5, 30), (3, 30, 4)]),
    ("bij,bjk->bik", [(1, 9, 17), (3, 17, 5)]),
    ("ij,j->i", [(6, 1), (9,)]),
    ("ij,jk->ik", [(3, 1), (20, 4)]),
    ("ijk,ikl->jl", [(7, 5, 6), (7, 6, 3)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_two_operand_einsum_is_jaxs_bit_for_bit(dtype, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    rng = np.random.default_rng(0)
    for spec, shapes in EINSUM_PAIRS:
        ops = [rng.normal(size=s).astype(dtype) for s in shapes]
        fn = lambda m: lambda *ops: m.einsum(spec, *ops)
        for got, want in [(fn(tnp)(*ops), fn(jnp)(*ops)),
                          (tracehlo.jit(fn(tnp))(*ops), jax.jit(fn(jnp))(*ops))]:
            np.testing.assert_array_equal(np.asarray(got).view(np.uint8),
                                          np.asarray(want).view(np.uint8), err_msg=spec)


NORMS = [
    ("default", {}, (2, 3)),
    ("vector", {}, (4,)),
    ("ord 1", {"ord": 1}, (4,)),
    ("ord inf", {"ord": np.inf}, (4,)),
    ("ord -inf", {"ord": -np.inf}, (4,)),
    ("ord 0", {"ord": 0}, (4,)),
    ("ord 3", {"ord": 3}, (4,)),
    ("axis", {"axis": -1}, (2, 3)),
    ("axis keepdims", {"axis": 0, "keepdims": True}, (2, 3)),
    ("keepdims", {"keepdims": True}, (2, 3)),
    ("fro", {"ord": "fro"}, (2, 3)),
    ("matrix 1", {"ord": 1}, (2, 3)),
    ("matrix -1", {"ord": -1}, (2, 3)),
    ("matrix inf", {"ord": np.inf}, (3, 2)),
    ("matrix axes", {"ord": "fro", "axis": (0, 2)}, (2, 3, 2)),
    ("matrix inf axes", {"ord": np.inf, "axis": (-1, 0)}, (2, 3, 2)),
]


@pytest.mark.parametrize("name,kwargs,shape", NORMS)
def test_norm(name, kwargs, shape):
    check(lambda m, x: m.linalg.norm(x, **kwargs), f32(*shape), rtol=1e-5)


def test_norm_int():
    check(lambda m, x: m.linalg.norm(x), i32(2, 3), rtol=1e-5)
    check(lambda m, x: m.linalg.norm(x, axis=1, ord=1), i32(2, 3), rtol=1e-5)


def test_product_errors():
    check_raises(lambda m, a, b: m.matmul(a, b), f32(2, 3), f32(2, 3), exc=ValueError,
                 match="matmul: shapes")
    check_raises(lambda m, a, b: m.matmul(a, b), f32(2, 3), np.float32(2), exc=ValueError,
                 match="not have enough dimensions")
    check_raises(lambda m, a, b: m.dot(a, b), f32(2, 3), f32(2, 3), exc=ValueError,
                 match=r"dot: shapes \(2, 3\) and \(2, 3\) not aligned")
    check_raises(lambda m, a, b: m.tensordot(a, b, 1), f32(2, 3), f32(2, 3), exc=ValueError,
                 match=r"tensordot: shapes \(2, 3\) and \(2, 3\) not aligned")
    check_raises(lambda m, a, b: m.einsum("ij,jk->ik", a, b), f32(2, 3), f32(2, 3),
                 exc=ValueError, match="einsum: size mismatch for label 'j'")
    check_raises(lambda m, a: m.einsum("ijk->i", a), f32(2, 3), exc=ValueError,
                 match="einsum: spec 'ijk' has 3 labels for an operand of rank 2")
    check_raises(lambda m, a: m.linalg.norm(a, ord="nuc"), f32(2, 3),
                 exc=NotImplementedError, match="ord='nuc'")


def test_cholesky_gradients_equal_jax():
    """cholesky's derivative (through triangular_solve) against jax.grad: batched, upper,
    without symmetrizing, and under jit."""
    m = f32(2, 3, 3)
    cov = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3, dtype=np.float32)
    weights = f32(3, 3)
    for kwargs in [{}, {"upper": True}, {"symmetrize_input": False}]:
        def loss(np_):
            return lambda c: np_.sum(np_.sin(np_.linalg.cholesky(c, **kwargs)) * weights)
        want = jax.grad(loss(jnp))(cov)
        np.testing.assert_allclose(tracehlo.grad(loss(tnp))(cov), want, rtol=1e-4, atol=1e-5,
                                   err_msg=str(kwargs))
    np.testing.assert_allclose(tracehlo.jit(tracehlo.grad(loss(tnp)))(cov), want, rtol=1e-4,
                               atol=1e-5)


def test_cholesky_runs_before_jax_loads_lapack():
    """A fresh process whose first LAPACK call is ours: the runtime loads SciPy's LAPACK
    for jaxlib's kernels (unloaded, the custom call crashed the process)."""
    code = textwrap.dedent("""
        import numpy as np, tracehlo.numpy as tnp
        print(np.asarray(tnp.linalg.cholesky(4 * np.eye(2))).tolist())
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.split() == ["[[2.0,", "0.0],", "[0.0,", "2.0]]"]


def test_cholesky_fuses_around_lapack():
    """Our passes keep the CPU custom call unfused and XLA compiles what they emit."""
    m = f32(2, 3, 3)
    cov = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3, dtype=np.float32)
    compiled = tracehlo.compile(lambda c: tnp.linalg.cholesky(c) * 2.0, (cov,))
    assert "lapack_spotrf_ffi" in compiled.fused
    np.testing.assert_array_equal(compiled(cov), jnp.linalg.cholesky(cov) * 2.0)


def test_lax_linalg_is_jaxs():
    """tracehlo.lax.linalg.triangular_solve (every flag) and cholesky against JAX's, in
    one jitted function, and the solve's gradient against jax.grad."""
    import jax.lax.linalg as jll
    import tracehlo.lax.linalg as tll
    rng = np.random.default_rng(0)
    a = np.tril(rng.normal(size=(4, 4))).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
    a += np.triu(rng.normal(size=(4, 4)), 1).astype(np.float32)  # noise the solve ignores
    b = rng.normal(size=(4, 3)).astype(np.float32)
    flags = [dict(left_side=True, lower=True), dict(left_side=True, lower=False),
             dict(left_side=True, lower=True, transpose_a=True),
             dict(left_side=True, lower=True, unit_diagonal=True),
             dict(left_side=False, lower=True)]
    spd = a @ a.T

    def both(linalg, a, b, spd):
        rhs = [b if f["left_side"] else b.T for f in flags]
        return [linalg.triangular_solve(a, r, **f) for f, r in zip(flags, rhs)] + [
            linalg.cholesky(spd)]
    got = tracehlo.jit(lambda a, b, s: both(tll, a, b, s))(a, b, spd)
    want = jax.jit(lambda a, b, s: both(jll, a, b, s))(a, b, spd)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)

    def loss(linalg, a, b):
        return (linalg.triangular_solve(a, b, left_side=True, lower=True) ** 2).sum()
    np.testing.assert_allclose(tracehlo.grad(lambda a: loss(tll, a, b))(a),
                               jax.grad(lambda a: loss(jll, a, b))(a), rtol=2e-5, atol=2e-6)
    with pytest.raises(TypeError, match="cholesky does not accept dtype int32"):
        tll.cholesky(np.eye(2, dtype=np.int32))
