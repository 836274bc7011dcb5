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

from numpy_helpers import JAX_RELEASE, check, check_raises, f32, i32

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


# batch shapes where one side's 1 (or a missing axis) meets the other's size
BATCH_SHAPES = [((2, 1, 3, 4), (1, 5, 4, 2)), ((1, 3, 4), (1, 4, 5)),
                ((1, 1, 3, 4), (2, 1, 4, 5)), ((6, 2, 1, 3, 4), (2, 7, 4, 5)),
                ((1, 3, 4), (7, 2, 4, 5)), ((3, 4), (1, 1, 4, 5)), ((2, 0, 3, 4), (1, 4, 5))]


def test_matmul_of_broadcast_batches_is_jaxs_dot_and_transpose():
    """A batch axis of size 1 against a larger one is a free axis of the dot, not a
    broadcast of the operand, and the result's axes move into place after it, as in
    JAX's matmul: the same ops, so XLA's simplifier sees what it sees under jax.jit.
    There a bf16 product converted to f32 is rounded to bf16 first (the transpose keeps
    XLA from folding the convert into the dot); a broadcast batch made it the f32 dot's
    exact sum (fuzz jit seed 25017)."""
    import re
    ops = lambda text: [op for op in re.findall(r'stablehlo\.([a-z_]+)[ "]', text)
                        if op != "constant"]
    for sa, sb in BATCH_SHAPES:
        a, b = f32(*sa), f32(*sb)
        np.testing.assert_allclose(tracehlo.jit(tnp.matmul)(a, b), np.matmul(a, b),
                                   rtol=1e-5, atol=1e-5)
        assert ops(tracehlo.compile(tnp.matmul, (a, b)).stablehlo) == \
            ops(jax.jit(jnp.matmul).lower(a, b).as_text()), (sa, sb)
    a, b = (f32(*shape).astype(jnp.bfloat16) for shape in BATCH_SHAPES[0])
    got = tracehlo.jit(lambda a, b: tnp.matmul(a, b).astype(tnp.float32))(a, b)
    want = jax.jit(lambda a, b: jnp.matmul(a, b).astype(jnp.float32))(a, b)
    np.testing.assert_array_equal(got, want)
    check_raises(lambda m, a, b: m.matmul(a, b), f32(2, 3, 4), f32(3, 4, 5), exc=ValueError,
                 match=r"matmul: batch shapes \(2,\) and \(3,\) of \(2, 3, 4\) and "
                       r"\(3, 4, 5\) do not broadcast")


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
    check_raises(lambda m, a, b: m.matmul(a, b), f32(3), f32(4), exc=ValueError,
                 match=r"matmul: shapes \(3,\) and \(4,\) are not aligned: 3 \(last axis "
                       r"of the first\) != 4 \(only axis of the second\)")
    check_raises(lambda m, a, b: m.matmul(a, b), f32(3), f32(4, 2), exc=ValueError,
                 match=r"4 \(second-to-last axis of the second\)")
    check_raises(lambda m, a, b: m.dot(a, b), f32(2, 3), f32(2, 3), exc=ValueError,
                 match=r"dot: shapes \(2, 3\) and \(2, 3\) not aligned")
    check_raises(lambda m, a, b: m.tensordot(a, b, 1), f32(2, 3), f32(2, 3), exc=ValueError,
                 match=r"tensordot: shapes \(2, 3\) and \(2, 3\) not aligned")
    check_raises(lambda m, a, b: m.einsum("ij,jk->ik", a, b), f32(2, 3), f32(2, 3),
                 exc=ValueError, match="einsum: size mismatch for label 'j'")
    check_raises(lambda m, a: m.einsum("ijk->i", a), f32(2, 3), exc=ValueError,
                 match="einsum: spec 'ijk' has 3 labels for an operand of rank 2")
    for ord_, axis, match in [("x", None, "Invalid order 'x' for matrix norm."),
                              ("x", 0, "Invalid order 'x' for vector norm."),
                              (None, (0, 1, -1), r"Improper number of axes for norm: "
                               r"axis=\(0, 1, 2\). Pass one axis to compute a vector-norm")]:
        fn = lambda m, a: m.linalg.norm(a, ord=ord_, axis=axis)  # noqa: E731
        arg = f32(2, 3, 2) if axis else f32(2, 3)
        with pytest.raises(ValueError, match=match):
            fn(jnp, arg)
        check_raises(fn, arg, exc=ValueError, match=match)


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
        for got in (tracehlo.grad(loss(tnp))(cov), tracehlo.jit(tracehlo.grad(loss(tnp)))(cov)):
            if kwargs == {"symmetrize_input": False} and JAX_RELEASE >= (0, 11):
                # JAX 0.11 gives the upper triangle, which cholesky does not read, no
                # gradient: it adds that part of 0.10.2's (and ours) to the lower one
                got = np.tril(got) + np.swapaxes(np.triu(got, 1), -1, -2)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=str(kwargs))


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


# ---------------------------------------------------------------- LU and its functions

def _matrix(rng, dtype, *shape):
    x = rng.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def _scipy_lu(x):
    """LAPACK's getrf through SciPy, the library jaxlib's kernels run: JAX's results bit
    for bit, with JAX's permutation built from the pivots."""
    import scipy.linalg
    batch = x.shape[:-2]
    flat = x.reshape((-1,) + x.shape[-2:])
    out = []
    for m in flat:
        lu, pivots = scipy.linalg.lu_factor(m, check_finite=False)
        perm = np.arange(m.shape[0])
        for i, j in enumerate(pivots):
            perm[[i, j]] = perm[[j, i]]
        out.append((lu, pivots.astype(np.int32), perm.astype(np.int32)))
    return [np.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*out)]


@pytest.mark.filterwarnings("ignore:Diagonal number 4 is exactly zero")
def test_lu_is_jaxs(x64):
    """LAPACK's getrf, as JAX's CPU lowering: factors, pivots and permutation bit for bit
    for square (batched), tall, wide and singular matrices of each LAPACK dtype, in one
    jitted function, and eagerly."""
    import tracehlo.lax.linalg as tll
    rng = np.random.default_rng(0)
    singular = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 0, 1]], np.float64)
    xs = [_matrix(rng, np.float32, 2, 3, 5, 5), _matrix(rng, np.float32, 5, 3),
          _matrix(rng, np.complex64, 2, 3, 4), singular, _matrix(rng, np.complex128, 3, 3)]
    got = tracehlo.jit(lambda xs: [tll.lu(x) for x in xs])(xs) + [tll.lu(xs[1])]
    for x, g in zip(xs + xs[1:2], got):
        for part, want in zip(g, _scipy_lu(x)):
            assert part.dtype == want.dtype
            np.testing.assert_array_equal(part, want)


def test_lu_pivots_to_permutation_and_errors():
    import jax.lax.linalg as jll
    import tracehlo.lax.linalg as tll
    pivots = np.array([[2, 2, 3], [0, 3, 2]], np.int32)
    np.testing.assert_array_equal(tll.lu_pivots_to_permutation(pivots, 5),
                                  jll.lu_pivots_to_permutation(pivots, 5))
    for fn, exc, match in [
            (lambda: tll.lu(np.ones(3, np.float32)), TypeError,
             r"Input 0 to lu must have rank at least 2, but got shape=\(3,\)"),
            (lambda: tll.lu(np.eye(3, dtype=np.int32)), TypeError,
             "lu does not accept dtype int32 at position 0. Accepted dtypes at position 0 "
             "are subtypes of floating, complexfloating."),
            (lambda: tll.lu_pivots_to_permutation(pivots, 2), ValueError,
             "Output permutation size 2 has to exceed the trailing dimension of the pivots. "
             "Got pivots size 3"),
            (lambda: tll.lu_pivots_to_permutation(pivots.astype(np.float32), 4), TypeError,
             "lu_pivots_to_permutation does not accept dtype float32 at position 0"),
            (lambda: tll.lu_pivots_to_permutation(pivots[0, 0], 4), TypeError,
             r"Input 0 to lu_pivots_to_permutation must have rank at least 1, but got "
             r"shape=\(\)")]:
        with pytest.raises(exc, match="test_numpy_linalg.py:[0-9]+: " + match):
            fn()


def _lu_functions(m, a, b, v, c, ints):
    """Every numpy function built on the LU: det and slogdet of each size JAX treats
    apart (1, 2 and 3 by formula, 4 by the LU), inv, solve of vectors and matrices with
    batch axes broadcast; complex and integer operands."""
    return ([m.linalg.det(a[..., :n, :n]) for n in (1, 2, 3, 4)]
            + [m.linalg.slogdet(a[..., :n, :n]) for n in (1, 2, 4)]
            + [m.linalg.inv(a), m.linalg.solve(a, b), m.linalg.solve(a, v),
               m.linalg.solve(a[0], b)]
            + [m.linalg.det(c), m.linalg.slogdet(c), m.linalg.solve(c, c[0, 0])]
            + [m.linalg.det(ints), m.linalg.slogdet(ints), m.linalg.inv(ints)])


def test_lu_functions_equal_numpy():
    """det, slogdet, inv and solve against NumPy's LAPACK results to rtol 1e-5 (the
    determinant is exp(sum(log|u_ii|)) as JAX's, not NumPy's product), with
    jax.numpy's result types and structure (integers promote as JAX's)."""
    rng = np.random.default_rng(1)
    a = _matrix(rng, np.float32, 3, 5, 5) + 2 * np.eye(5, dtype=np.float32)
    b, v = _matrix(rng, np.float32, 3, 5, 2), _matrix(rng, np.float32, 5)
    c = _matrix(rng, np.complex64, 2, 4, 4) + 2 * np.eye(4, dtype=np.complex64)
    ints = np.array([[2, 1], [1, 3]], np.int32)
    args = (a, b, v, c, ints)
    got = tracehlo.jit(lambda *x: _lu_functions(tnp, *x))(*args)
    want_types = jax.eval_shape(lambda *x: _lu_functions(jnp, *x), *args)
    assert str(jax.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(
        want_types))
    expected = _lu_functions(np, *[x.astype(np.complex128 if np.iscomplexobj(x) else
                                            np.float64) for x in args])
    for g, w, e in zip(*map(jax.tree_util.tree_leaves, (got, want_types, expected))):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_singular_matrices_follow_jax():
    """det 0 and its gradient (the adjugate, through JAX's cofactor solve: a rank n-1
    and a rank 1 matrix), slogdet (0, -inf), as JAX's."""
    a = np.stack([np.array([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 0, 1]]),
                  np.outer(np.arange(1, 5), np.arange(2, 6))]).astype(np.float32)

    def fn(m, grad):
        return lambda a: (m.linalg.det(a), m.linalg.slogdet(a),
                          grad(lambda a: m.sum(m.linalg.det(a)))(a))
    got = tracehlo.jit(fn(tnp, tracehlo.grad))(a)
    want = jax.jit(fn(jnp, jax.grad))(a)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _loss(m, a, b, w):
    """One scalar through each function."""
    return (m.linalg.det(a) + m.linalg.det(a[:2, :2]) + m.linalg.slogdet(a)[1]
            + m.sum(m.linalg.inv(a) * w) + m.sum(m.sin(m.linalg.solve(a, b))))


def test_lu_function_gradients_equal_jax(x64):
    """The gradient in a and b, and a Hessian-vector product, against JAX's in float64
    to rtol 1e-10 (one jitted function each); the JVP against central differences."""
    rng = np.random.default_rng(2)
    a = rng.normal(size=(4, 4)) + 3 * np.eye(4)
    b, w, t = rng.normal(size=(4, 2)), rng.normal(size=(4, 4)), rng.normal(size=(4, 4))

    def derivatives(m, grad, jvp):
        def fn(a, b):  # second order: det's rule differentiated (the LU's JVP, solves')
            hvp = jvp(grad(lambda a: m.linalg.det(a) + m.sum(m.linalg.solve(a, b))), (a,),
                      (t,))[1]
            return grad(lambda a, b: _loss(m, a, b, w), (0, 1))(a, b), hvp
        return fn
    eps = 1e-6

    def ours(a, b):  # with the loss's JVP and central differences along t
        loss = lambda a: _loss(tnp, a, b, w)  # noqa: E731
        return (derivatives(tnp, tracehlo.grad, tracehlo.jvp)(a, b),
                tracehlo.jvp(loss, (a,), (t,))[1], (loss(a + eps * t) - loss(a - eps * t)) / (2 * eps))
    got, tangent, numeric = tracehlo.jit(ours)(a, b)
    want = jax.jit(derivatives(jnp, jax.grad, jax.jvp))(a, b)
    for g, w_ in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-7)


def test_lu_functions_vmap_matches_a_loop():
    """vmap (over a and b, or b alone) against a Python loop, in one jitted function."""
    rng = np.random.default_rng(3)
    a = _matrix(rng, np.float32, 2, 4, 4) + 3 * np.eye(4, dtype=np.float32)
    b = _matrix(rng, np.float32, 2, 4, 2)

    def one(a, b):
        return (tracehlo.lax.linalg.lu(a), tnp.linalg.solve(a, b),
                tracehlo.grad(tnp.linalg.det)(a))

    def program(a, b):
        return ([tracehlo.vmap(one)(a, b), tracehlo.vmap(one, (None, 0))(a[0], b)],
                [[one(a[i], b[i]) for i in range(2)], [one(a[0], b[i]) for i in range(2)]])
    batched, loops = tracehlo.jit(program)(a, b)
    for got, looped in zip(batched, loops):
        for g, *rows in zip(jax.tree_util.tree_leaves(got),
                            *[jax.tree_util.tree_leaves(r) for r in looped]):
            np.testing.assert_allclose(g, np.stack(rows), rtol=1e-6, atol=1e-6)


def test_lu_function_errors_are_jaxs():
    for fn, args, match in [
            (lambda m, a: m.linalg.det(a), (f32(2, 3),),
             r"Argument to _det\(\) must have shape \[..., n, n\], got \(2, 3\)"),
            (lambda m, a: m.linalg.slogdet(a), (f32(3),),
             r"Argument to slogdet\(\) must have shape \[..., n, n\], got \(3,\)"),
            (lambda m, a: m.linalg.inv(a), (f32(2, 3),),
             r"Argument to inv must have shape \[..., n, n\], got \(2, 3\)."),
            (lambda m, a, b: m.linalg.solve(a, b), (f32(3), f32(3)),
             r"left hand array must be at least two dimensional; got a.shape=\(3,\)"),
            (lambda m, a, b: m.linalg.solve(a, b), (f32(2, 3), f32(2)),
             "inconsistent size for core dimension 'm': 3 vs 2 on vectorized function with "
             r"excluded=frozenset\(\) and signature='\(m,m\),\(m\)->\(m\)'"),
            (lambda m, a, b: m.linalg.solve(a, b), (f32(3, 3), f32(2, 3)),
             "inconsistent size for core dimension 'm': 2 vs 3 .* signature="
             r"'\(m,m\),\(m,n\)->\(m,n\)'"),
            (lambda m, a, b: m.linalg.solve(a, b), (f32(5, 3, 3), f32(5, 3)),
             r"Invalid shapes for solve: \(5, 3, 3\), \(5, 3\). Prior to JAX v0.5.0"),
            (lambda m, a, b: m.linalg.solve(a, b), (f32(5, 3, 3), f32(5, 3, 3, 2)),
             r"Incompatible shapes for broadcasting: shapes=\[\(5,\), \(5, 3\)\]"),
            (lambda m, a: m.linalg.slogdet(a, method="x"), (f32(3, 3),),
             "Unknown slogdet method 'x'. Supported methods are 'lu' \\(`None`\\), and 'qr'.")]:
        with pytest.raises(ValueError, match=match.split(" .*")[0]):
            fn(jnp, *args)
        check_raises(fn, *args, exc=ValueError, match=match, jit=False)


def test_lu_off_cpu_raises_at_the_users_line():
    """Only CPU's LAPACK lowering exists: elsewhere (and for float16, which JAX's CPU
    lowering refuses too) the user's line and the platform are named."""
    from tracehlo.lowering import lower_graph
    graph = tracehlo.make_ir(lambda a: tnp.linalg.det(a))(f32(4, 4))
    with pytest.raises(NotImplementedError, match=r"test_numpy_linalg.py:\d+: lu of "
                                                  r"f32\[4,4\] is not supported on platform "
                                                  "'cuda'"):
        lower_graph(graph, platform="cuda")
    with pytest.raises(NotImplementedError, match=r"test_numpy_linalg.py:\d+: lu of "
                                                  r"f16\[2,2\] is not supported on platform "
                                                  "'cpu'"):
        tnp.linalg.inv(np.eye(2, dtype=np.float16))


def test_lu_fuses_around_lapack():
    """Our passes keep getrf unfused and XLA compiles what they emit, the permutation's
    loop included."""
    a = f32(3, 4, 4) + 3 * np.eye(4, dtype=np.float32)
    compiled = tracehlo.compile(lambda a: tnp.linalg.solve(a * 2.0, a[0, 0]) + 1.0, (a,))
    assert "lapack_sgetrf_ffi" in compiled.fused
    np.testing.assert_allclose(compiled(a), jnp.linalg.solve(a * 2.0, a[0, 0]) + 1.0,
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- QR

def test_qr_is_jaxs(x64):
    """geqrf then orgqr/ungqr, as JAX's CPU lowering: Q and R bit for bit in every mode,
    for tall (batched), wide and square matrices of each LAPACK dtype, in one jitted
    function; numpy's result type and mode='r'."""
    rng = np.random.default_rng(4)
    cases = [(_matrix(rng, np.float32, 2, 5, 3), "reduced"),
             (_matrix(rng, np.float32, 2, 5, 3), "complete"),
             (_matrix(rng, np.float32, 3, 5), "complete"), (_matrix(rng, np.float32, 4, 4), "r"),
             (_matrix(rng, np.complex64, 5, 3), "complete"), (_matrix(rng, np.float64, 3, 5), "reduced"),
             (_matrix(rng, np.complex128, 2, 4, 4), "reduced"),
             (np.arange(6, dtype=np.int32).reshape(3, 2), "reduced")]

    def all_modes(m):
        return lambda xs: [m.linalg.qr(x, mode) for x, (_, mode) in zip(xs, cases)]
    xs = [x for x, _ in cases]
    got = tracehlo.jit(all_modes(tnp))(xs)
    want = jax.jit(all_modes(jnp))(xs)
    assert str(jax.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


def test_qr_derivatives_equal_jax(x64):
    """qr's JVP (JAX's rule: wide, and the full Q of a tall matrix) and the VJP taken
    from it, against JAX's in float64 to rtol 1e-10, in one jitted function (test_ad's
    rows check them against finite differences, complex ones too; test_vmap's their
    batching)."""
    rng = np.random.default_rng(5)
    cases = [(_matrix(rng, np.float64, 5, 3), "complete"),
             (_matrix(rng, np.float64, 2, 3, 5), "reduced")]
    ts = [_matrix(rng, x.dtype, *x.shape) for x, _ in cases]

    def derivatives(m, jvp, grad):
        def fn(xs, ts):
            out = []
            for x, t, (_, mode) in zip(xs, ts, cases):
                f = lambda x, mode=mode: m.linalg.qr(x, mode)  # noqa: E731
                loss = lambda x, f=f: sum(m.sum(m.abs(m.sin(part))) for part in f(x))  # noqa
                out += [jvp(f, (x,), (t,))[1], grad(loss)(x)]
            return out
        return fn
    xs = [x for x, _ in cases]
    got = tracehlo.jit(derivatives(tnp, tracehlo.jvp, tracehlo.grad))(xs, ts)
    want = jax.jit(derivatives(jnp, jax.jvp, jax.grad))(xs, ts)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def test_qr_errors_are_jaxs():
    import tracehlo.lax.linalg as tll
    from tracehlo.lowering import lower_graph
    for fn, exc, match in [
            (lambda: tnp.linalg.qr(np.ones(3, np.float32)), TypeError,
             r"Input 0 to qr must have rank at least 2, but got shape=\(3,\)"),
            (lambda: tnp.linalg.qr(np.eye(3, dtype=np.float32), "x"), ValueError,
             "Unsupported QR decomposition mode 'x'"),
            (lambda: tll.qr(np.eye(3, dtype=np.int32)), TypeError,
             "qr does not accept dtype int32 at position 0"),
            (lambda: tll.qr(np.eye(3, dtype=np.float32), pivoting=True), NotImplementedError,
             "qr with pivoting=True"),
            (lambda: lower_graph(tracehlo.make_ir(lambda a: tnp.linalg.qr(a))(
                np.eye(2, dtype=np.float32)), platform="cuda"), NotImplementedError,
             r"qr of f32\[2,2\] is not supported on platform 'cuda'")]:
        with pytest.raises(exc, match="test_numpy_linalg.py:[0-9]+: " + match):
            fn()


# ---------------------------------------------------------------- eigh

def test_eigh_is_jaxs(x64):
    """syevd/heevd, as JAX's CPU lowering: eigenvalues and eigenvectors bit for bit
    (either triangle, symmetrized or not, each LAPACK dtype, batched), in one jitted
    function; its derivatives against JAX's in float64 and complex128 to rtol 1e-10
    (test_ad's rows check them against finite differences, test_vmap's their batching)."""
    rng = np.random.default_rng(6)
    xs = [_matrix(rng, np.float32, 2, 3, 3), _matrix(rng, np.complex64, 4, 4),
          _matrix(rng, np.float64, 3, 3), _matrix(rng, np.complex128, 2, 3, 3),
          np.array([[2, 1], [1, 2]], np.int32)]
    kwargs = [{}, {"UPLO": "U"}, {"symmetrize_input": False}, {}, {}]
    t = _matrix(rng, np.complex128, 2, 3, 3)

    def fn(m, jvp, grad):
        def program(xs, t):
            loss = lambda x: (m.sum(m.abs(m.sin(m.linalg.eigh(x)[1])) ** 2)  # noqa: E731
                              + m.sum(m.linalg.eigvalsh(x) ** 3))
            return ([m.linalg.eigh(x, **kw) for x, kw in zip(xs, kwargs)]
                    + [m.linalg.eigvalsh(xs[1], "U"), jvp(m.linalg.eigh, (xs[3],), (t,))[1],
                       grad(loss)(xs[2]), grad(loss)(xs[3])])
        return program
    got = tracehlo.jit(fn(tnp, tracehlo.jvp, tracehlo.grad))(xs, t)
    want = jax.jit(fn(jnp, jax.jvp, jax.grad))(xs, t)
    assert str(jax.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if k < 11:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def test_eigh_errors_are_jaxs():
    import tracehlo.lax.linalg as tll
    from tracehlo.lowering import lower_graph
    for fn, exc, match in [
            (lambda: tnp.linalg.eigh(np.ones((2, 3), np.float32)), TypeError,
             r"add got incompatible shapes for broadcasting: \(2, 3\), \(3, 2\)"),
            (lambda: tnp.linalg.eigh(np.ones((2, 3), np.float32), symmetrize_input=False),
             ValueError,
             r"Argument to symmetric eigendecomposition must have shape \[..., n, n\], got "
             r"shape \(2, 3\)"),
            (lambda: tnp.linalg.eigh(np.eye(2, dtype=np.float32), "X"), ValueError,
             "UPLO must be one of None, 'L', or 'U', got X"),
            (lambda: tll.eigh(np.eye(2, dtype=np.int32)), TypeError,
             "eigh does not accept dtype int32 at position 0"),
            (lambda: tll.eigh(np.eye(3, dtype=np.float32), subset_by_index=(0, 1)),
             NotImplementedError, "eigh with subset_by_index"),
            (lambda: lower_graph(tracehlo.make_ir(lambda a: tnp.linalg.eigvalsh(a))(
                np.eye(2, dtype=np.float32)), platform="cuda"), NotImplementedError,
             r"eigh of f32\[2,2\] is not supported on platform 'cuda'")]:
        with pytest.raises(exc, match="test_numpy_linalg.py:[0-9]+: " + match):
            fn()


# ---------------------------------------------------------------- built on the above

def _linalg_compositions(m, a, b, v, w, i, t):
    return [m.linalg.matrix_power(a, 5), m.linalg.matrix_power(b, -2),
            m.linalg.matrix_power(i, 3), m.linalg.matrix_power(a, 0),
            m.linalg.multi_dot([v, a, b[0], a, v]), m.linalg.multi_dot([w, a, w.T]),
            m.linalg.tensorinv(t, 2), m.linalg.tensorsolve(t, w),
            m.linalg.tensorsolve(t.reshape(3, 2, 3, 2), w, axes=(0,)),
            m.linalg.matmul(b, v), m.linalg.tensordot(b, b.transpose(1, 2, 0), axes=2),
            m.linalg.outer(v, w[0]), m.linalg.trace(b, offset=1),
            m.linalg.trace(i.astype(np.int8)), m.linalg.diagonal(b, offset=-1),
            m.linalg.matrix_transpose(b), m.linalg.vecdot(w, v), m.linalg.vecdot(i, i[0]),
            m.linalg.vecdot(b + 1j * b, b, axis=0), m.linalg.cross(w, v),
            m.linalg.cross(b, b[::-1], axis=1)]


def test_linalg_compositions_equal_numpy():
    """matrix_power, multi_dot, tensorinv, tensorsolve and the array API's linalg names
    (matmul, tensordot, outer, trace, diagonal, matrix_transpose, vecdot, cross): NumPy's
    values to rtol 1e-5 and jax.numpy's result types, in one jitted function."""
    rng = np.random.default_rng(7)
    a = _matrix(rng, np.float32, 3, 3) + 3 * np.eye(3, dtype=np.float32)
    args = (a, _matrix(rng, np.float32, 2, 3, 3) + 3 * np.eye(3, dtype=np.float32),
            _matrix(rng, np.float32, 3), _matrix(rng, np.float32, 2, 3),
            np.arange(9, dtype=np.int32).reshape(3, 3),
            _matrix(rng, np.float32, 2, 3, 6) + np.eye(6, dtype=np.float32).reshape(2, 3, 6))
    got = tracehlo.jit(lambda *x: _linalg_compositions(tnp, *x))(*args)
    want = jax.eval_shape(lambda *x: _linalg_compositions(jnp, *x), *args)
    expected = _linalg_compositions(np, *[x.astype(np.float64) if x.dtype == np.float32
                                          else x for x in args])
    for k, (g, w, e) in enumerate(zip(got, want, expected)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), k
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=str(k))


def test_linalg_composition_errors_are_jaxs():
    for fn, args, exc, match in [
            (lambda m, a: m.linalg.matrix_power(a, 2), (f32(2, 3),), TypeError,
             "Last 2 dimensions of the array must be square"),
            (lambda m, a: m.linalg.matrix_power(a, 2.5), (f32(2, 2),), TypeError,
             "exponent must be an integer, got 2.5"),
            (lambda m, a: m.linalg.tensorinv(a, 1), (f32(2, 3, 6),), ValueError,
             r"tensorinv is only possible when the product of the first `ind` dimensions "
             r"equals that of the remaining dimensions. got arr.shape=\(2, 3, 6\) with ind=1."),
            (lambda m, a, b: m.linalg.tensorsolve(a, b), (f32(2, 3, 2, 2), f32(2, 3)),
             ValueError, r"Input arrays must have prod\(a.shape\[:b.ndim\]\) == "),
            (lambda m, a, b: m.linalg.outer(a, b), (f32(2, 2), f32(3)), ValueError,
             "Input arrays must be one-dimensional, but they are x1.ndim=2 x2.ndim=1"),
            (lambda m, a: m.linalg.matrix_transpose(a), (f32(3),), ValueError,
             "matrix_transpose requires at least 2 dimensions; got ndim=1"),
            (lambda m, a, b: m.linalg.cross(a, b), (f32(2), f32(3)), ValueError,
             r"Both input arrays must be \(arrays of\) 3-dimensional vectors, but they have "
             r"x1.shape\[axis\]=2 and x2.shape\[axis\]=3"),
            (lambda m, a, b: m.linalg.vecdot(a, b), (f32(2, 3), f32(2)), ValueError,
             r"axes must match; got shapes \(2, 3\) and \(2,\) with axis=-1"),
            (lambda m, a, b: m.linalg.multi_dot([a, b]), (f32(2, 3), f32(2, 3)), ValueError,
             "multi_dot: last dimension of each array must match first dimension")]:
        with pytest.raises(exc, match=match):
            fn(jnp, *args)
        check_raises(fn, *args, exc=exc, match=match, jit=False)


# ---------------------------------------------------------------- SVD

def test_svd_is_jaxs(x64):
    """gesdd, as JAX's CPU lowering: U, S and Vh bit for bit (full, reduced, values only;
    tall, wide, batched; each LAPACK dtype), svdvals and matrix_rank, in one jitted
    function; the derivatives against JAX's in float64 and complex128 to rtol 1e-10
    (test_ad's rows check them against finite differences, test_vmap's their batching)."""
    rng = np.random.default_rng(8)
    xs = [_matrix(rng, np.float32, 2, 5, 3), _matrix(rng, np.complex64, 3, 5),
          _matrix(rng, np.float64, 4, 4), _matrix(rng, np.complex128, 2, 3, 4)]
    kwargs = [{}, {"full_matrices": False}, {"compute_uv": False}, {"full_matrices": False}]
    t = _matrix(rng, np.complex128, 2, 3, 4)
    low_rank = np.outer(np.arange(4.0), np.ones(3)).astype(np.float32)

    def fn(m, jvp, grad):
        def program(xs, t, low_rank):
            reduced = lambda x: m.linalg.svd(x, full_matrices=False)  # noqa: E731
            loss = lambda x: (m.sum(m.abs(reduced(x)[0] @ reduced(x)[2]) ** 2)  # noqa: E731
                              + m.sum(m.linalg.svdvals(x) ** 3))
            return ([m.linalg.svd(x, **kw) for x, kw in zip(xs, kwargs)]
                    + [m.linalg.svdvals(xs[0]), m.linalg.matrix_rank(xs[1]),
                       m.linalg.matrix_rank(low_rank), jvp(reduced, (xs[3],), (t,))[1],
                       grad(loss)(xs[2]), grad(loss)(xs[3])])
        return program
    got = tracehlo.jit(fn(tnp, tracehlo.jvp, tracehlo.grad))(xs, t, low_rank)
    want = jax.jit(fn(jnp, jax.jvp, jax.grad))(xs, t, low_rank)
    assert str(jax.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    exact = len(got) - 5
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if k < exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    empty = np.zeros((3, 0), np.float32)  # no gesdd call (it fails): identity factors
    for g, w in zip(tnp.linalg.svd(empty), jnp.linalg.svd(empty)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(TypeError, match=r"test_numpy_linalg.py:\d+: Input 0 to svd must have "
                                        r"rank at least 2, but got shape=\(3,\)"):
        tnp.linalg.svd(np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match="Singular value decomposition JVP not "
                                                  "implemented for full matrices"):
        tracehlo.jvp(tnp.linalg.svd, (xs[1],), (xs[1],))


# ---------------------------------------------------------------- pinv, lstsq, cond, norms

def _svd_functions(m, a, b, h):
    linalg = m.linalg
    return [linalg.pinv(a.T, rtol=0.5), linalg.svd(h, hermitian=True),
            linalg.svd(h, compute_uv=False, hermitian=True), linalg.lstsq(a, b[:, 0], rcond=0.3),
            linalg.cond(h, -2), linalg.cond(h, "fro"), linalg.matrix_norm(a, ord="nuc"),
            linalg.norm(a, -2, keepdims=True), linalg.vector_norm(a, ord=2.5, axis=0),
            linalg.vector_norm(a, ord=0, keepdims=True), linalg.vector_norm(a, ord=-np.inf)]


def test_svd_functions_are_jaxs():
    """pinv (rtol, hermitian), svd(hermitian=True), lstsq, cond (each kind of p; a
    singular matrix is infinitely ill-conditioned), matrix_norm and vector_norm: JAX's
    values bit for bit and its dtypes; pinv's gradients (its own rule: tall, wide and
    hermitian) against JAX's to rtol 1e-5; in one jitted function."""
    rng = np.random.default_rng(9)
    a, b = _matrix(rng, np.float32, 4, 3), _matrix(rng, np.float32, 4, 2)
    h = a @ a.T  # rank 3 of 4: singular

    def fn(m, grad):
        linalg = m.linalg
        loss = lambda a, h: (m.sum(m.sin(linalg.pinv(a))) + m.sum(linalg.pinv(a.T) ** 2)  # noqa
                             + m.sum(m.sin(linalg.pinv(h, hermitian=True))))
        return lambda a, b, h: (_svd_functions(m, a, b, h), grad(loss, (0, 1))(a, h))
    got, got_grads = tracehlo.jit(fn(tnp, tracehlo.grad))(a, b, h)
    want, want_grads = jax.jit(fn(jnp, jax.grad))(a, b, h)
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type), k
        np.testing.assert_array_equal(g, w, err_msg=str(k))
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # XLA rewrites JAX's jitted pow(|a|, 3.0) as |a| a a, not ours inside a fusion
    np.testing.assert_array_equal(tnp.linalg.vector_norm(a, ord=3, axis=0),
                                  jnp.linalg.vector_norm(a, ord=3, axis=0))
    # NumPy's empty residuals of a wide matrix (the rank must be concrete: eager only)
    for g, w in zip(tnp.linalg.lstsq(a.T, b[:3], numpy_resid=True),
                    np.linalg.lstsq(a.T, b[:3], rcond=None)):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_svd_function_errors_are_jaxs():
    for fn, args, exc, match in [
            (lambda m, a: m.linalg.pinv(a, rtol=0.1, rcond=0.1), (f32(2, 2),), ValueError,
             "pinv: only one of rtol and rcond may be specified."),
            (lambda m, a, b: m.linalg.lstsq(a, b), (f32(3, 2), f32(2)), ValueError,
             "Leading dimensions of input arrays must match"),
            (lambda m, a, b: m.linalg.lstsq(a, b), (f32(2, 3, 2), f32(2)), TypeError,
             "3-dimensional array given. Array must be two-dimensional"),
            (lambda m, a, b: m.linalg.lstsq(a, b), (f32(2, 2), f32(2, 2, 1)), TypeError,
             "3-dimensional array given. Array must be one or two-dimensional"),
            (lambda m, a: m.linalg.cond(a), (f32(3),), ValueError,
             r"linalg.cond: input array must be at least 2D; got arr.shape=\(3,\)"),
            (lambda m, a: m.linalg.cond(a), (f32(0, 3),), ValueError,
             r"linalg.cond: input array must not be empty; got arr.shape=\(0, 3\)"),
            (lambda m, a: m.linalg.cond(a, 1), (f32(2, 3),), ValueError,
             r"linalg.cond: for p=1, array must be square; got arr.shape=\(2, 3\)"),
            (lambda m, a: m.linalg.vector_norm(a, ord="inf"), (f32(3),), ValueError,
             r"Invalid order 'inf' for vector norm.Use '-?\w+.numpy.inf' instead.")]:
        with pytest.raises(exc, match=match):
            fn(jnp, *args)
        check_raises(fn, *args, exc=exc, match=match, jit=False)


# ---------------------------------------------------------------- eig, roots, polyfit

def test_eig_is_jaxs(x64):
    """geev, as JAX's CPU lowering: eigenvalues and eigenvectors bit for bit (real input
    with complex pairs, complex, batched, ints promoted; left vectors too), jitted and
    eagerly; derivatives (eigenvalues, and eigenvectors opted in) against JAX's to rtol
    1e-10 (test_ad's rows check them against finite differences, test_vmap's batching)."""
    rng = np.random.default_rng(12)
    xs = [_matrix(rng, np.float32, 2, 3, 3), _matrix(rng, np.complex64, 4, 4),
          _matrix(rng, np.float64, 3, 3), np.arange(9, dtype=np.int32).reshape(3, 3)]
    c = _matrix(rng, np.complex128, 2, 3, 3)

    def fn(m, lax_, grad, jvp):
        def vectors(x):
            w, vl, vr = lax_.linalg.eig(x, enable_eigvec_derivs=True)
            return m.sum(m.abs(vr[..., 0, :]) ** 2 * m.real(w)) + m.sum(m.abs(vl[..., 1, :]) ** 3)
        values = lambda x: m.sum(m.abs(m.linalg.eigvals(x)) ** 2)  # noqa: E731
        return lambda xs, c: (
            [m.linalg.eig(xs[0]), m.linalg.eigvals(xs[1]), lax_.linalg.eig(xs[2]),
             m.linalg.eigvals(xs[3])],
            [grad(values)(xs[2]), grad(vectors)(xs[2]),
             jvp(m.linalg.eigvals, (c,), (c * 1j,))[1]])
    got, got_d = tracehlo.jit(fn(tnp, tracehlo.lax, tracehlo.grad, tracehlo.jvp))(xs, c)
    want, want_d = jax.jit(fn(jnp, jax.lax, jax.grad, jax.jvp))(xs, c)
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), k
        np.testing.assert_array_equal(g, w, err_msg=str(k))
    for g, w in zip(jax.tree_util.tree_leaves(got_d), jax.tree_util.tree_leaves(want_d)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    for g, w in zip(tnp.linalg.eig(xs[0]), want[:2]):
        np.testing.assert_array_equal(g, w)


def test_eig_errors_are_jaxs():
    import tracehlo.lax.linalg as tll
    x = np.eye(3, dtype=np.float32)
    for fn, exc, match in [
            (lambda m, ll: m.linalg.eig(np.ones((2, 3), np.float32)), ValueError,
             r"The input to eig must be a square matrix. Got shape \(2, 3\)."),
            (lambda m, ll: ll.eig(np.eye(2, dtype=np.int32)), TypeError,
             "eig does not accept dtype int32 at position 0"),
            (lambda m, ll: ll.eig(np.ones(3, np.float32)), TypeError,
             r"Input 0 to eig must have rank at least 2, but got shape=\(3,\)"),
            (lambda m, ll: (tracehlo.grad if m is tnp else jax.grad)(
                lambda x: m.sum(m.abs(m.linalg.eig(x)[0])))(x), NotImplementedError,
             "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
             "the input that")]:
        with pytest.raises(exc, match=match):
            fn(jnp, jax.lax.linalg)
        with pytest.raises(exc, match="test_numpy_linalg.py:[0-9]+: " + match):
            fn(tnp, tll)


def _polynomials(m, p, x, y, w):
    return [m.roots(p, strip_zeros=False), m.polyfit(x, y[:, 0], 3, w=w, full=True),
            m.polyfit(x, y, 2, cov=True)]


def test_roots_and_polyfit_are_jaxs():
    """roots (the companion matrix's eigvals; leading zeros stripped eagerly, or NaN roots
    under jit) and polyfit (weights, full, cov): JAX's dtypes; values bit for bit eagerly,
    to rtol 1e-6 jitted (XLA rewrites JAX's jitted matrix-vector lstsq differently)."""
    p = np.array([0., 0, 1, -3, 2, 5], np.float32)
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    y, w = np.stack([np.sin(3 * x), x ** 3], 1), np.linspace(1, 2, 9, dtype=np.float32)
    got = jax.tree_util.tree_leaves(tracehlo.jit(lambda *a: _polynomials(tnp, *a))(p, x, y, w))
    want = jax.tree_util.tree_leaves(jax.jit(lambda *a: _polynomials(jnp, *a))(p, x, y, w))
    assert len(got) == len(want)
    for k, (g, w_) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape, g.weak_type) == (w_.dtype, w_.shape, w_.weak_type), k
        np.testing.assert_allclose(g, w_, rtol=1e-6, atol=1e-6, err_msg=str(k))
    g, w_ = tnp.roots(p), jnp.roots(p)
    assert (g.dtype, g.shape) == (w_.dtype, w_.shape)
    np.testing.assert_array_equal(g, w_)


def test_roots_and_polyfit_errors_are_jaxs():
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    for fn, args, exc, match in [
            (lambda m, p: m.roots(p), (f32(2, 2),), ValueError, "Input must be a rank-1 array."),
            (lambda m, x: m.polyfit(x, x, -1), (x,), ValueError, "expected deg >= 0"),
            (lambda m, x: m.polyfit(x[None], x, 1), (x,), TypeError, "expected 1D vector for x"),
            (lambda m, x: m.polyfit(x, x[:2], 1), (x,), TypeError,
             "expected x and y to have same length"),
            (lambda m, x: m.polyfit(x, x, 1, w=x[:2]), (x,), TypeError,
             "expected w and y to have the same length"),
            (lambda m, x: m.polyfit(x, x, 2, cov=True), (x,), ValueError,
             "the number of data points must exceed order to scale the covariance matrix")]:
        with pytest.raises(exc, match=match):
            fn(jnp, *args)
        check_raises(fn, *args, exc=exc, match=match, jit=False)
    with pytest.raises(TypeError, match=r"test_numpy_linalg.py:\d+: The error occurred in the "
                                        r"\w+.numpy.roots\(\) function. To use this within a "
                                        "JIT-compiled context, pass strip_zeros=False"):
        tracehlo.jit(tnp.roots)(x)
