"""tracehlo.random against jax.random: the same bits for the same key, shape and dtype,
eagerly, under tracehlo.jit and under vmap; sane statistics; JAX's errors.

Seeds never cost a compile (the key is a traced argument), shapes and dtypes do: the
cases vary seeds freely and shapes sparingly."""
import functools

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import random as tr

SEEDS = [0, 1, 42, 2**31 + 7]
FLOATS = [np.float32, np.float16, jnp.bfloat16]


def assert_same(ours, theirs):
    """Every bit, NaNs' too (bfloat16's, whose NumPy kind is "V", included)."""
    ours, theirs = np.atleast_1d(ours), np.atleast_1d(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    floats = jnp.issubdtype(ours.dtype, jnp.floating)
    np.testing.assert_array_equal(ours.view(np.uint8) if floats else ours,
                                  theirs.view(np.uint8) if floats else theirs)


def keys(seed):
    return tr.PRNGKey(seed), jr.PRNGKey(seed)


# ---------------------------------------------------------------- keys

@pytest.mark.parametrize("seed", [0, 42, -1, 2**31, 2**32 + 5, 2**40 + 7, -2**40,
                                  np.int8(-3), np.uint32(4_000_000_000)])
def test_prngkey_is_jax_key(seed):
    assert_same(tr.PRNGKey(seed), jr.PRNGKey(seed))


def test_prngkey_of_a_traced_seed():
    seeds = np.array([0, 7, -3, 2**31 - 1], np.int32)
    ours = tracehlo.jit(tracehlo.vmap(tr.PRNGKey))(seeds)
    assert_same(ours, jax.vmap(jr.PRNGKey)(seeds))


@pytest.mark.parametrize("seed", SEEDS)
def test_split_fold_in_bits(seed):
    k, jk = keys(seed)
    assert_same(tr.split(k), jr.split(jk))
    assert_same(tr.split(k, (2, 3)), jr.split(jk, (2, 3)))
    assert_same(tr.fold_in(k, 17), jr.fold_in(jk, 17))
    assert_same(tr.fold_in(k, np.int32(-3)), jr.fold_in(jk, np.int32(-3)))
    for dtype in (np.uint8, np.uint16, np.uint32):
        assert_same(tr.bits(k, (3, 5), dtype), jr.bits(jk, (3, 5), dtype))


def test_same_key_same_numbers_new_key_new_numbers():
    k = tr.PRNGKey(0)
    a, b = tr.normal(k, (8,)), tr.normal(k, (8,))
    np.testing.assert_array_equal(a, b)
    k1, k2 = tr.split(k)
    assert not np.array_equal(tr.normal(k1, (8,)), tr.normal(k2, (8,)))


def test_typed_keys():
    k, jk = tr.key(3), jr.key(3)
    assert isinstance(k, tr.PRNGKeyArray) and k.shape == () and k.dtype == "key<fry>"
    assert_same(tr.key_data(k), jr.key_data(jk))
    ks, jks = tr.split(k, 4), jr.split(jk, 4)
    assert isinstance(ks, tr.PRNGKeyArray) and ks.shape == (4,) and len(ks) == 4
    assert_same(tr.key_data(ks), jr.key_data(jks))
    assert_same(tr.key_data(ks[2]), jr.key_data(jks[2]))
    first, *_ = ks
    assert_same(tr.uniform(first, (3,)), jr.uniform(jks[0], (3,)))
    assert_same(tr.key_data(tr.fold_in(k, 5)), jr.key_data(jr.fold_in(jk, 5)))
    wrapped = tr.wrap_key_data(tr.key_data(ks))
    assert_same(tr.key_data(wrapped), jr.key_data(jks))


def test_key_impl_dtype_and_clone():
    for k in (tr.key(3), tr.PRNGKey(3), tr.split(tr.key(3), 2)):
        assert tr.key_impl(k) == "threefry2x32"
    assert tr.key_dtype() == tr.key_dtype("threefry2x32") == tr.key(0).dtype
    assert str(tr.key_dtype()) == str(jr.key_dtype())
    assert_same(tr.key_data(tr.clone(tr.key(3))), jr.key_data(jr.clone(jr.key(3))))
    assert_same(tracehlo.jit(tr.clone)(tr.PRNGKey(3)), jr.clone(jr.PRNGKey(3)))
    with pytest.raises(NotImplementedError, match="test_random.py.*rbg"):
        tr.key_dtype("rbg")


def test_keys_flow_through_jit_and_vmap():
    k, jk = tr.key(9), jr.key(9)
    # typed keys in and out of jit: a pytree with one uint32[..., 2] leaf
    split = tracehlo.jit(lambda k: tr.split(k, 3))(k)
    assert isinstance(split, tr.PRNGKeyArray)
    assert_same(tr.key_data(split), jr.key_data(jr.split(jk, 3)))
    # the example, on raw and typed keys, eagerly and under jit
    raw, jraw = tr.split(tr.PRNGKey(9), 4), jr.split(jr.PRNGKey(9), 4)
    expected = jax.vmap(lambda k: jr.normal(k, (3,)))(jraw)
    sample = tracehlo.vmap(lambda k: tr.normal(k, (3,)))
    assert_same(sample(raw), expected)
    assert_same(tracehlo.jit(tracehlo.vmap(lambda k: tr.uniform(k, (3,))))(raw),
                jax.vmap(lambda k: jr.uniform(k, (3,)))(jraw))
    assert_same(sample(tr.wrap_key_data(raw)), expected)
    nested = tracehlo.vmap(lambda k: tr.key_data(tr.split(k)))(tr.split(k, 2))
    assert_same(nested, jax.vmap(lambda k: jr.key_data(jr.split(k)))(jr.split(jk, 2)))


def test_typed_keys_are_pytree_leaves():
    """A typed key is one leaf to jax.tree_util, as JAX's; our transforms still trace its
    words: jit results, cond operands, fori carries, reshape, and grad/jvp/vjp, where a
    key's tangent and cotangent are float0 of the key's shape."""
    k, jk = tr.key(4), jr.key(4)
    assert jax.tree_util.tree_leaves(k) == [k]
    assert jax.tree_util.tree_structure([k, 1]) == jax.tree_util.tree_structure([jk, 1])
    ks, jks = tr.split(k, 6), jr.split(jk, 6)
    assert_same(tr.key_data(ks.reshape(2, 3)), jr.key_data(jks.reshape(2, 3)))
    assert_same(tr.key_data(ks.reshape((3, -1))[1]), jr.key_data(jks.reshape((3, -1))[1]))
    assert repr(ks[0]) == repr(jks[0])

    def flow(random, lax, k):
        k = lax.cond(True, lambda k: random.split(k)[0], lambda k: k, k)
        return lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), k), [k]
    ours = tracehlo.jit(lambda k: flow(tr, tracehlo.lax, k))(k)
    want = flow(jr, jax.lax, jk)
    assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(want)
    for got, expected in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(want)):
        assert_same(tr.key_data(got), jr.key_data(expected))

    f = lambda random: lambda k, x: (random.split(k), random.normal(k) * x)
    for (got_k, got_x), (want_k, want_x) in [
            (tracehlo.jvp(f(tr), (k, 1.0), (np.zeros((), jax.dtypes.float0), 2.0))[1],
             jax.jvp(f(jr), (jk, 1.0), (np.zeros((), jax.dtypes.float0), 2.0))[1]),
            (tracehlo.vjp(lambda k, x: f(tr)(k, x)[1], k, 1.0)[1](1.0),
             jax.vjp(lambda k, x: f(jr)(k, x)[1], jk, 1.0)[1](1.0))]:
        assert (got_k.dtype, got_k.shape) == (want_k.dtype, want_k.shape)
        assert_same(got_x, want_x)
    assert tracehlo.grad(lambda k: 1.0, allow_int=True)(k).dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="test_random.py.*got key<fry>"):
        tracehlo.grad(lambda k: tr.normal(k))(k)
    with pytest.raises(TypeError, match="test_random.py.*float0"):
        tracehlo.jvp(f(tr), (k, 1.0), (np.zeros((), np.float32), 2.0))


def random_walk(random, lax, key):
    """A scan over split keys, drawing a normal step from each."""
    def step(x, k):
        x = x + random.normal(k, (3,))
        return x, x
    return lax.scan(step, np.zeros(3, np.float32), random.split(key, 5))


def key_chain(random, lax, key):
    """A typed key carried through a scan, split at each step."""
    def step(k, _):
        k, sub = random.split(k)
        return k, random.uniform(sub, (2,))
    return lax.scan(step, key, None, length=4)


def test_keys_flow_through_scan():
    want = random_walk(jr, jax.lax, jr.PRNGKey(3))
    for got, expected in zip(random_walk(tr, tracehlo.lax, tr.PRNGKey(3)), want):
        assert_same(got, expected)
    # in one program too, with our passes: the normal is a call in the scan's body,
    # which they inline (passes/inline_calls.py) and fuse as XLA fuses jax.jit's
    walk = lambda k: random_walk(tr, tracehlo.lax, k)
    theirs = jax.jit(lambda k: random_walk(jr, jax.lax, k))
    for fusion in ("tracehlo", "xla"):
        ours = tracehlo.jit(walk, fusion=fusion)
        for seed in range(6):
            for got, expected in zip(ours(tr.PRNGKey(seed)), theirs(jr.PRNGKey(seed))):
                assert_same(got, expected)
    (k, x), (jk, jx) = key_chain(tr, tracehlo.lax, tr.key(5)), key_chain(jr, jax.lax, jr.key(5))
    assert isinstance(k, tr.PRNGKeyArray)
    assert_same(tr.key_data(k), jr.key_data(jk))
    assert_same(x, jx)


def scan_draws(random, lax, key, dtype):
    """A scan drawing from each float sampler in its body, a normal walk carried."""
    def step(x, k):
        ks = random.split(k, 4)
        x = x + random.normal(ks[0], (3,), dtype)
        low = np.array([-1.5, 0.0, -3.0], dtype)
        return x, (x, random.uniform(ks[1], (3,), dtype),
                   random.truncated_normal(ks[2], -1.5, 0.5, (3,), dtype),
                   random.truncated_normal(ks[2], low, 2.0, (3,), dtype),
                   random.exponential(ks[3], (3,), dtype))
    return lax.scan(step, np.zeros(3, dtype), random.split(key, 5))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_samplers_in_a_scan_under_jit(dtype, request):
    """Every bit of jax.jit's with our passes, where the samplers are calls in a loop
    body (inlined and fused there, as XLA does); f64 under x64."""
    if dtype == np.float64:
        request.getfixturevalue("x64")
    ours = tracehlo.jit(lambda k: scan_draws(tr, tracehlo.lax, k, dtype))
    theirs = jax.jit(lambda k: scan_draws(jr, jax.lax, k, dtype))
    for seed in range(6):
        got, want = ours(tr.PRNGKey(seed)), theirs(jr.PRNGKey(seed))
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert_same(g, w)


def test_vmap_over_typed_keys():
    got = tracehlo.vmap(lambda k: tr.gamma(k, 2.0, (3,)))(tr.split(tr.key(0), 4))
    assert_same(got, jax.vmap(lambda k: jr.gamma(k, 2.0, (3,)))(jr.split(jr.key(0), 4)))


# ---------------------------------------------------------------- samplers, eagerly

@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_samplers_eagerly(dtype):
    for seed in SEEDS:
        k, jk = keys(seed)
        for shape in [(), (3, 5)]:
            assert_same(tr.uniform(k, shape, dtype), jr.uniform(jk, shape, dtype))
            assert_same(tr.normal(k, shape, dtype), jr.normal(jk, shape, dtype))
        assert_same(tr.uniform(k, (2, 3), dtype, np.array([-1.0, 0.0, 2.0]), 5.0),
                    jr.uniform(jk, (2, 3), dtype, np.array([-1.0, 0.0, 2.0]), 5.0))
        assert_same(tr.exponential(k, (7,), dtype), jr.exponential(jk, (7,), dtype))
        assert_same(tr.truncated_normal(k, -1.5, 0.5, (7,), dtype),
                    jr.truncated_normal(jk, -1.5, 0.5, (7,), dtype))
        assert_same(tr.gumbel(k, (7,), dtype), jr.gumbel(jk, (7,), dtype))
        assert_same(tr.gumbel(k, (7,), dtype, mode="high"),
                    jr.gumbel(jk, (7,), dtype, mode="high"))
        p = np.array([0.1, 0.5, 0.9], dtype)
        assert_same(tr.bernoulli(k, p), jr.bernoulli(jk, p))
        assert_same(tr.bernoulli(k, p, (4, 3), mode="high"),
                    jr.bernoulli(jk, p, (4, 3), mode="high"))


def test_complex_normal():
    for seed in SEEDS:
        k, jk = keys(seed)
        assert_same(tr.normal(k, (5,), np.complex64), jr.normal(jk, (5,), np.complex64))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int16, np.int8, np.uint8])
def test_randint(dtype):
    for seed in SEEDS:
        k, jk = keys(seed)
        assert_same(tr.randint(k, (20,), 0, 10, dtype), jr.randint(jk, (20,), 0, 10, dtype))
        info = np.iinfo(dtype)
        # the whole range (the span wraps to 0), up to what a Python int argument holds
        lo, hi = int(info.min), min(int(info.max) + 1, 2**31 - 1)
        assert_same(tr.randint(k, (20,), lo, hi, dtype), jr.randint(jk, (20,), lo, hi, dtype))
    lo, hi = np.array([0, 5, -3, 9]), np.array([[7], [5]])  # broadcast, and max <= min
    assert_same(tr.randint(k, (2, 4), lo, hi, dtype), jr.randint(jk, (2, 4), lo, hi, dtype))


def test_categorical():
    logits = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    for seed in SEEDS:
        k, jk = keys(seed)
        assert_same(tr.categorical(k, logits), jr.categorical(jk, logits))
        assert_same(tr.categorical(k, logits, axis=0, shape=(6, 5)),
                    jr.categorical(jk, logits, axis=0, shape=(6, 5)))
        assert_same(tr.categorical(k, logits, shape=(4, 3), replace=False),
                    jr.categorical(jk, logits, shape=(4, 3), replace=False))


def test_permutation():
    x = np.arange(20).reshape(4, 5)
    for seed in SEEDS:
        k, jk = keys(seed)
        assert_same(tr.permutation(k, 10), jr.permutation(jk, 10))
        assert_same(tr.permutation(k, 2000), jr.permutation(jk, 2000))  # two sort rounds
        assert_same(tr.permutation(k, x, axis=1), jr.permutation(jk, x, axis=1))
        assert_same(tr.permutation(k, x, axis=1, independent=True),
                    jr.permutation(jk, x, axis=1, independent=True))


def test_choice():
    x = np.arange(20).reshape(4, 5)
    p = np.array([0.1, 0.0, 0.3, 0.6], np.float32)
    for seed in SEEDS:
        k, jk = keys(seed)
        assert_same(tr.choice(k, 6, (3,)), jr.choice(jk, 6, (3,)))
        assert_same(tr.choice(k, x, (2, 3), axis=1), jr.choice(jk, x, (2, 3), axis=1))
        assert_same(tr.choice(k, 9, (4,), replace=False), jr.choice(jk, 9, (4,), replace=False))
        assert_same(tr.choice(k, x, (3,), replace=False), jr.choice(jk, x, (3,), replace=False))
        assert_same(tr.choice(k, 4, (8,), p=p), jr.choice(jk, 4, (8,), p=p))
        assert_same(tr.choice(k, x, (3,), replace=False, p=p),
                    jr.choice(jk, x, (3,), replace=False, p=p))
    assert_same(tr.choice(k, x, (0,)), jr.choice(jk, x, (0,)))


ALPHAS = np.array([0.3, 1.0, 5.0, 0.01])  # boosted (< 1) and not; 0.01 underflows in gamma


def gamma_family(random, key, dtype):
    """gamma, loggamma, beta and dirichlet, with broadcasting and a `shape` argument."""
    a = ALPHAS.astype(dtype)
    return dict(gamma=random.gamma(key, a, dtype=dtype),
                loggamma=random.loggamma(key, a, (2, 4), dtype),
                beta=random.beta(key, a, np.array([[2.0], [0.5]], dtype), dtype=dtype),
                dirichlet=random.dirichlet(key, a[:3], (2,), dtype))


def test_gamma_family_eagerly():
    """JAX's rejection loops, key splits and log-space boosts, bit for bit (eager
    samplers compile with XLA's fusion), in bfloat16. float32 runs under jit (below) and
    float16 the same code with another 16-bit type: each dtype costs ~15 s of compiles."""
    dtype = jnp.bfloat16
    theirs = jax.jit(lambda k: gamma_family(jr, k, dtype))
    for seed in SEEDS[:3]:
        got, want = gamma_family(tr, tr.PRNGKey(seed), dtype), theirs(jr.PRNGKey(seed))
        for name in got:
            assert_same(got[name], want[name])


def test_gamma_family_under_jit():
    """Inside one program, with our fusion passes, the samples are JAX's bit for bit too.
    gamma and beta, and a dirichlet over 40 categories, whose normalising sum XLA adds
    up as a tree (passes/tree_reductions.py): loggamma is the same loop, and each loop
    costs XLA seconds. Over 120 draws (4,800 samples) XLA CPU's library computes the
    softmax's max with the log-gamma samples' last ops, which come from another
    function: the passes inline it first, as XLA does (passes/inline_calls.py)."""
    alphas = np.linspace(0.05, 8.0, 40, dtype=np.float32)

    def family(random, k):
        return {**{name: v for name, v in gamma_family(random, k, np.float32).items()
                   if name in ("gamma", "beta")},
                "dirichlet": random.dirichlet(k, alphas, (120,))}
    theirs = jax.jit(lambda k: family(jr, k))
    ours = tracehlo.jit(lambda k: family(tr, k))
    for seed in SEEDS[:2]:
        want, got = theirs(jr.PRNGKey(seed)), ours(tr.PRNGKey(seed))
        for name in want:
            assert_same(got[name], want[name])


def test_gamma_family_gradients_equal_jax():
    """JAX differentiates a gamma sample implicitly, through the CDF value it was drawn
    at (random_gamma_grad), not through the rejection loop; beta and dirichlet samples
    through their log-gamma samples: a < 1 (boosted samples), 1, 5 and 40 (the
    continued fraction), in both spaces, eagerly (test_ad stages custom_jvp rules under
    jit). One loss of all four samplers: each compile of a loop costs XLA seconds."""
    a = np.array([[0.3, 1.0, 5.0], [40.0, 0.05, 2.5]], np.float32)
    b = np.array([2.0, 0.5, 7.0], np.float32)
    w = np.linspace(-1.0, 2.0, 6, dtype=np.float32).reshape(2, 3)

    def loss(random, np_):
        return lambda k, a, b: np_.sum((random.gamma(k, a) + random.loggamma(k, a)
                                        + random.beta(k, a, b) + random.dirichlet(k, a)) * w)
    want = jax.grad(loss(jr, jnp), (1, 2))(jr.PRNGKey(3), a, b)
    got = tracehlo.grad(loss(tr, tnp), (1, 2))(tr.PRNGKey(3), a, b)
    for g, wanted in zip(got, want, strict=True):
        np.testing.assert_allclose(g, wanted, rtol=1e-5)


# ---------------------------------------------------------------- the other distributions

# Rejection loops: each compile costs XLA seconds, so one row runs bfloat16 too, the
# others float32, and two keys each; all of a dtype's rows share one program.
GAMMA_DTYPES = [np.float32]
# Samples drawn from gamma samples whose parameter is traced (the GAMMA rows) run on two
# keys only, in one program per dtype with our passes. They were 1-4 ulp off jax.jit's
# with our fusion passes while XLA's simplifier rewrote (1 / 3) / sqrt(d), (x / a) / (y /
# b), g / s ** (1 / p) and the like under jax.jit only; canonicalize rewrites them too
# (test_passes_numerics' simplifier test has the rows). f in f64 is jax.jit's bits too:
# its dfnum, a constant, makes gamma's c = (1 / 3) / sqrt(d) a constant, which XLA's
# simplifier folds exactly only if d's broadcast has sunk past the sqrt before its walk
# reaches the divide (else A / broadcast(B) becomes A * broadcast(1 / B) and 1 / sqrt(B)
# then 1 * rsqrt(B): one ulp off); that needs log(d) reached before the loop, which our
# fusions' parameter order now keeps (rewrite._walk_order). Measured with our passes:
# every row of every dtype, f64 too, on six keys. The x64 test runs chisquare and f.
GAMMA = "gamma"
GAMMA_SEEDS = [2, 3]  # keys whose f32 chisquare samples were off before (0 and 1 were not)
# One row per sampler: name, its parameters for a float dtype (traced arguments under jit),
# draw(random, key, dtype, *params), the dtypes to run, and None or GAMMA.
DISTRIBUTIONS = [
    ("laplace", (), lambda r, k, dt: r.laplace(k, (3, 5), dt), FLOATS, None),
    ("logistic", (), lambda r, k, dt: r.logistic(k, (3, 5), dt), FLOATS, None),
    ("cauchy", (), lambda r, k, dt: r.cauchy(k, (3, 5), dt), FLOATS, None),
    ("rademacher", (), lambda r, k, dt: r.rademacher(k, (16,), dt), FLOATS, None),
    ("rademacher_int", (), lambda r, k, dt: r.rademacher(k, (16,)), [np.float32], None),
    ("maxwell", (), lambda r, k, dt: r.maxwell(k, (16,), dt), FLOATS, None),
    ("double_sided_maxwell", ([0.0, 1.0], 2.0),
     lambda r, k, dt, loc, scale: r.double_sided_maxwell(k, loc, scale, (3,), dt), FLOATS, None),
    ("weibull_min", (2.0, [0.5, 1.5]),
     lambda r, k, dt, s, c: r.weibull_min(k, s, c, (3, 2), dt), FLOATS, None),
    ("pareto", ([1.0, 3.0],), lambda r, k, dt, b: r.pareto(k, b, (4, 2), dt), FLOATS, None),
    ("lognormal", (0.5,), lambda r, k, dt, sigma: r.lognormal(k, sigma, (8,), dt), FLOATS, None),
    ("rayleigh", (2.0,), lambda r, k, dt, scale: r.rayleigh(k, scale, (8,), dt), FLOATS, None),
    ("wald", ([0.5, 2.0],), lambda r, k, dt, mean: r.wald(k, mean, (4, 2), dt), FLOATS, None),
    ("geometric", ([0.1, 0.5, 0.9],), lambda r, k, dt, p: r.geometric(k, p, (2, 3)), FLOATS, None),
    ("triangular", (-1.0, [0.0, 0.5], 2.0),
     lambda r, k, dt, lo, mode, hi: r.triangular(k, lo, mode, hi, (3, 2), dt), FLOATS, None),
    ("chisquare", ([0.5, 3.0],), lambda r, k, dt, df: r.chisquare(k, df, (3, 2), dt),
     GAMMA_DTYPES + [jnp.bfloat16], GAMMA),
    ("t", ([0.5, 3.0],), lambda r, k, dt, df: r.t(k, df, (3, 2), dt), GAMMA_DTYPES, GAMMA),
    ("f", ([1.0, 5.0],), lambda r, k, dt, den: r.f(k, 2.0, den, dtype=dt), GAMMA_DTYPES,
     GAMMA),
    ("generalized_normal", (1.5,), lambda r, k, dt, p: r.generalized_normal(k, p, (8,), dt),
     GAMMA_DTYPES, GAMMA),
    ("ball", (1.5,), lambda r, k, dt, p: r.ball(k, 2, p, (4,), dt), GAMMA_DTYPES, GAMMA),
]


def draw_all(rows, random, dtype):
    """The rows' samplers in one function of (key, {name: params}): one compile per
    library, fusion and dtype, not one per row."""
    return lambda k, params: {row[0]: row[2](random, k, dtype, *params[row[0]])
                              for row in rows}


def check_distributions(rows, dtype, seeds, fusion="tracehlo", eagerly=False):
    """Under jit, bit for bit with jax.jit's, each row's parameters its traced arguments;
    `eagerly`, each sampler's own program too, for the first key (against jax.jit's bits:
    JAX's eager samplers are jitted programs of the same ops)."""
    params = {row[0]: [np.array(x, dtype) for x in row[1]] for row in rows}
    ours = tracehlo.jit(draw_all(rows, tr, dtype), fusion=fusion)
    theirs = jax.jit(draw_all(rows, jr, dtype))
    for seed in seeds:
        k, jk = keys(seed)
        got, want = ours(k, params), theirs(jk, params)
        if eagerly and seed == seeds[0]:
            got = {**got, **{f"{name} eagerly": v for name, v in draw_all(rows, tr, dtype)(
                k, params).items()}}
            want = {**want, **{f"{name} eagerly": v for name, v in want.items()}}
        for name in want:
            assert_same(got[name], want[name])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_distributions(dtype):
    """JAX's formulas, key splits and argument handling, bit for bit: the rows of this
    dtype in one program, the gamma rows (two keys) in one more. Each sampler but the
    gamma rows' runs eagerly once in float32 (a compile each); an eager rejection loop
    costs XLA seconds, and test_gamma_family_eagerly runs the gamma family's."""
    rows = [row for row in DISTRIBUTIONS if dtype in row[3]]
    check_distributions([row for row in rows if row[4] is None], dtype, SEEDS,
                        eagerly=dtype == np.float32)
    if gamma_rows := [row for row in rows if row[4] is GAMMA]:
        check_distributions(gamma_rows, dtype, GAMMA_SEEDS)


def test_distributions_x64(x64):
    """float64 by default: every row but the gamma family's (chisquare and f stand for
    it, with our passes), under jit, and one eagerly. Key 42's f sample was one ulp off
    while our fusions read the loop's result before log(d) (rewrite._walk_order)."""
    check_distributions([row for row in DISTRIBUTIONS if row[4] is None], np.float64,
                        [2**40 + 7, 3])
    check_distributions([row for row in DISTRIBUTIONS if row[0] in ("chisquare", "f")],
                        np.float64, [42])
    k, jk = keys(5)
    assert_same(tr.laplace(k, (3,)), jr.laplace(jk, (3,)))


# ---------------------------------------------------------------- poisson, binomial, multinomial

# Each sampler's loops (Knuth's and PTRS for poisson, inversion and BTRS for binomial, a scan
# of binomials for multinomial) cost XLA ~1 s to compile: the cases share few programs.
LAMS = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 1e3, np.nan], np.float32)  # Knuth, PTRS, NaN
BINOMIAL_N = np.array([0.0, 5.0, 20.0, 100.0, 1e4, np.inf, np.nan, -1.0])  # inversion, BTRS
BINOMIAL_P = np.array([[0.3, 0.7, 0.05, 0.5, 0.9, 0.2, 0.5, 0.5],  # q = p, 1 - p; NaN, < 0
                       [0.0, 1.0, np.nan, -0.5, 0.99, 0.35, 0.6, 0.4]])
MULTINOMIAL_P = np.array([[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]])


def counts(random, k, mp, *nps, names=None):
    """multinomial, and binomial in each of nps' (n, p) dtypes, with broadcasting and a
    `shape` (those in `names`: each sampler's program costs a compile)."""
    draws = dict(multinomial=lambda: random.multinomial(k, 40.0, mp, shape=(2, 3), unroll=2),
                 **{f"binomial_{np.dtype(n.dtype).name}": functools.partial(
                     random.binomial, k, n, p, (2, 8), n.dtype)
                    for n, p in zip(nps[::2], nps[1::2])})
    return {name: draw() for name, draw in draws.items() if names is None or name in names}


def count_args(*dtypes):
    """multinomial's p in the first dtype, and binomial's n and p in each."""
    nps = [x.astype(dt) for dt in dtypes for x in (BINOMIAL_N, BINOMIAL_P)]
    return (MULTINOMIAL_P.astype(dtypes[0]), *nps)


def poissons(vmap, random, int_dtype=np.int16):
    """poisson (which draws in float32, whatever its integer dtype) vmapped over keys."""
    return vmap(lambda k: random.poisson(k, LAMS, (2, 8), int_dtype))


def test_counts_under_jit():
    """JAX's loops, key splits and edge cases, bit for bit: multinomial and binomial in
    float32, float16 and bfloat16 with XLA's fusion, binomial and poisson vmapped over keys
    with our fusion passes (multinomial's program is a scan of binomial's, bit for bit
    with them too: 0 of 48 counts differ over 8 keys), eagerly and differentiated: JAX's
    derivative is 0, through floor, as poisson's and multinomial's. Poisson's PTRS
    (lam >= 10) takes lgamma, a CHLO op: left to XLA's import, its expansion ran as
    unfused kernels, and 4 of its 48 counts on key 0 were not jax.jit's (a rounding
    flipped the acceptance test); chlo-legalize expands it for our passes to fuse."""
    args = count_args(np.float32, np.float16, jnp.bfloat16)
    ours = tracehlo.jit(lambda k, *args: counts(tr, k, *args), fusion="xla")
    theirs = jax.jit(lambda k, ks, *args: (counts(jr, k, *args), poissons(jax.vmap, jr)(ks)))
    ours_passes = tracehlo.jit(lambda k, ks, n, p: (tr.binomial(k, n, p, (2, 8), np.float32),
                                                     poissons(tracehlo.vmap, tr)(ks)))
    n, p = args[1:3]
    for seed in SEEDS[:2]:
        k, jk = keys(seed)
        got, (want, want_poissons) = ours(k, *args), theirs(jk, jr.split(jk, 3), *args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                        strict=True):
            assert_same(g, w)
        got_binomial, got_poissons = ours_passes(k, tr.split(k, 3), n, p)
        assert_same(got_binomial, want["binomial_float32"])
        assert_same(got_poissons, want_poissons)
    # against jax.jit's bits: JAX's eager samplers are jitted programs of the same ops
    assert_same(tr.binomial(k, n, p, (2, 8), np.float32), want["binomial_float32"])
    loss = lambda random, np_, k: lambda n, p: np_.sum(random.binomial(k, n, p, (2, 8)))
    for got, wanted in zip(tracehlo.grad(loss(tr, tnp, k), (0, 1))(n, p),
                           jax.grad(loss(jr, jnp, jk), (0, 1))(n, p), strict=True):
        assert_same(got, wanted)


def test_counts_x64(x64):
    """float64 binomials, int64 poisson counts by default."""
    names = ("binomial_float64",)
    ours = tracehlo.jit(lambda k, ks, *args: (counts(tr, k, *args, names=names),
                                              poissons(tracehlo.vmap, tr, None)(ks)),
                        fusion="xla")
    theirs = jax.jit(lambda k, ks, *args: (counts(jr, k, *args, names=names),
                                           poissons(jax.vmap, jr, None)(ks)))
    k, jk = keys(2**40 + 7)
    (got, got_poissons), (want, want_poissons) = ours(k, tr.split(k, 2), *count_args(
        np.float64)), theirs(jk, jr.split(jk, 2), *count_args(np.float64))
    assert_same(got_poissons, want_poissons)
    assert_same(got[names[0]], want[names[0]])


# ---------------------------------------------------------------- multivariate normal

def covariances(*batch, n=3, dtype=np.float32):
    m = np.random.default_rng(0).normal(size=(*batch, n, n)).astype(dtype)
    return m @ np.swapaxes(m, -1, -2) + np.eye(n, dtype=dtype)


def test_cholesky_is_jaxs():
    """LAPACK's potrf, as JAX's CPU lowering: the same bits, eagerly and under jit; NaNs
    for a matrix that is not positive definite."""
    cov = covariances(2)
    noisy = np.tril(cov[0]) + np.triu(np.full((3, 3), 99.0, np.float32), 1)  # noise above
    m = covariances(4, n=4, dtype=np.complex64)
    cplx = m + 1j * np.swapaxes(np.triu(m, 1) - np.tril(m, -1), -1, -2)  # Hermitian
    not_pd = np.stack([np.eye(2, dtype=np.float32), -np.eye(2, dtype=np.float32)])
    cases = [(cov, {}), (cov, {"upper": True}), (noisy, {"symmetrize_input": False}),
             (cplx, {}), (not_pd, {})]
    for x, kwargs in cases:
        want = jnp.linalg.cholesky(x, **kwargs)
        assert_same(tnp.linalg.cholesky(x, **kwargs), want)
        assert_same(tracehlo.jit(lambda c: tnp.linalg.cholesky(c, **kwargs))(x), want)
    assert np.isnan(tnp.linalg.cholesky(not_pd)[1]).sum() == 3  # the lower triangle


def test_multivariate_normal_and_orthogonal():
    """JAX's normals times JAX's factor of the covariance (Cholesky, SVD or eigh), and
    orthogonal's QR of normals: the same bits, eagerly and under jit."""
    cov, mean = covariances(2), np.array([1.0, -2.0, 0.5], np.float32)
    cases = [(mean, cov[0]), (mean, cov), (mean, cov[0], (4,)), (mean, cov, (5, 2)),
             (mean, cov[0], (4,), None, "svd"), (mean, cov, None, None, "eigh")]

    def draws(random):
        return lambda k: [random.multivariate_normal(k, *args) for args in cases] + [
            random.orthogonal(k, 3), random.orthogonal(k, 4, (2,), np.complex64),
            random.orthogonal(k, 2, (), np.float32, 5), random.orthogonal(k, 5, (2,), m=3)]
    ours, theirs = tracehlo.jit(draws(tr)), jax.jit(draws(jr))
    k, jk = keys(SEEDS[0])
    for got, eager, want in zip(ours(k), draws(tr)(k), theirs(jk), strict=True):
        assert_same(got, want)
        assert_same(eager, want)
    k, jk = keys(SEEDS[1])
    for got, want in zip(ours(k), theirs(jk), strict=True):
        assert_same(got, want)


def test_multivariate_normal_gradients_equal_jax():
    """Through the factor's derivative (triangular solves): equal to rounding."""
    cov, mean = covariances(2), np.array([1.0, -2.0, 0.5], np.float32)
    w = np.linspace(-1.0, 2.0, 12, dtype=np.float32).reshape(2, 2, 3)

    def loss(random, np_):
        return lambda k, m, c: np_.sum(np_.sin(random.multivariate_normal(k, m, c, (2, 2))) * w)
    want = jax.grad(loss(jr, jnp), (1, 2))(jr.PRNGKey(3), mean, cov)
    ours = tracehlo.grad(loss(tr, tnp), (1, 2))
    for got in [ours(tr.PRNGKey(3), mean, cov), tracehlo.jit(ours)(tr.PRNGKey(3), mean, cov)]:
        for g, wanted in zip(got, want):
            np.testing.assert_allclose(g, wanted, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- under tracehlo.jit

def samplers(random, key, dtype):
    """Every float sampler once: one program per library and dtype (the integer ones,
    which take no float dtype, with float32)."""
    logits = np.linspace(-1, 1, 12).astype(dtype).reshape(3, 4)
    out = dict(
        uniform=random.uniform(key, (64,), dtype),
        range=random.uniform(key, (4, 16), dtype, -2., 3.),
        normal=random.normal(key, (64,), dtype), exponential=random.exponential(key, (64,), dtype),
        truncated_normal=random.truncated_normal(key, -1., 2., (64,), dtype),
        # -1.5 / sqrt(2): XLA folds the quotient (one ulp from -1.5 * (1 / sqrt(2)))
        truncated_folded=random.truncated_normal(key, -1.5, 0.5, (64,), dtype),
        truncated_between=random.truncated_normal(  # per-column bounds: x / c in dtype
            key, np.array([-1.0, -0.5, 0.2, -3.0], dtype), np.array([2.0, 0.5, 1.5, -1.0], dtype),
            (16, 4), dtype),
        bernoulli=random.bernoulli(key, np.array(0.3, dtype), (64,)),
        gumbel=random.gumbel(key, (64,), dtype), categorical=random.categorical(key, logits))
    if dtype == np.float32:  # complex: (re + i im) / sqrt(2), a multiply under jax.jit
        out.update(randint=random.randint(key, (64,), -5, 300), split=random.split(key, 3),
                   permutation=random.permutation(key, 33), choice=random.choice(key, 10, (5,)),
                   complex_normal=random.normal(key, (64,), np.complex64))
    if dtype == np.float16:  # softmax's divide a multiply by the f16 reciprocal
        out.update(dirichlet=random.dirichlet(key, np.array([0.3, 1.0, 2.5], dtype), (16,), dtype))
    return out


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_samplers_under_jit(dtype):
    """Every bit of jax.jit's, with our fusion passes: float16 gumbel included, whose
    uniform, (u - 1) * (1 - tiny) + tiny, XLA's simplifier rewrites to u + (tiny - 1)
    (= u - 1 in float16) before its fusion; canonicalize does the same before ours."""
    ours = tracehlo.jit(lambda k: samplers(tr, k, dtype))
    theirs = jax.jit(lambda k: samplers(jr, k, dtype))
    for seed in SEEDS:
        got, want = ours(tr.PRNGKey(seed)), theirs(jr.PRNGKey(seed))
        for name in got:
            assert_same(got[name], want[name])


@pytest.mark.parametrize("dtype", FLOATS + [np.float64], ids=lambda d: np.dtype(d).name)
def test_erf_inv_is_xlas_bit_for_bit(dtype, request):
    """erf_inv, the normal samplers' core, lowers to the polynomial XLA expands
    chlo.erf_inv into (f16 and bf16 in f32; f64 under x64, each of its three branches
    reached near the poles), fused with its neighbours: every bit of jax.jit's, at the
    poles and at -0 too; NaN outside [-1, 1] and at NaN (whose payload bits XLA does not
    promise)."""
    if dtype == np.float64:
        request.getfixturevalue("x64")
    near = 1 - np.logspace(-16, -1, 200)  # w = -log1p(-x*x) from 1.7 to 36
    x = np.concatenate([np.linspace(-1, 1, 999), near, -near,
                        [-0.0, -1.5, 2.0, np.nan]]).astype(dtype)
    ours = np.asarray(tracehlo.jit(lambda x: tracehlo.lax.erf_inv(x) * 2 + 1)(x))
    theirs = np.asarray(jax.jit(lambda x: jax.lax.erf_inv(x) * 2 + 1)(x))
    assert_same(ours[:-3], theirs[:-3])
    assert np.isnan(ours[-3:].astype(np.float32)).all()


# ---------------------------------------------------------------- 64 bits

def test_x64(x64):
    cov = covariances(2, n=4, dtype=np.float64)
    mvn_args = [(np.arange(4.0), cov[0]), (np.zeros(4), cov, (5, 2)),
                (np.arange(4.0), cov, (7, 1, 2))]

    def normals(random, k):  # erf_inv's f64 polynomial in each; LAPACK's dpotrf, as JAX's
        return [random.normal(k, (64,)), random.exponential(k, (64,)),
                random.truncated_normal(k, -1.0, 1.0, (64,))] + [
                    random.multivariate_normal(k, *args) for args in mvn_args]

    ours = tracehlo.jit(lambda k: normals(tr, k))
    theirs = jax.jit(lambda k: normals(jr, k))
    for seed in [0, 2**40 + 7, -2**40]:
        k, jk = keys(seed)
        assert_same(k, jk)
        assert_same(tr.uniform(k, (3, 4)), jr.uniform(jk, (3, 4)))  # f64 by default
        assert_same(tr.randint(k, (9,), -2**40, 2**40), jr.randint(jk, (9,), -2**40, 2**40))
        assert_same(tr.bits(k, (5,)), jr.bits(jk, (5,)))  # uint64
        assert_same(tr.uniform(k, (5,), np.float32), jr.uniform(jk, (5,), np.float32))
        assert_same(tr.gamma(k, ALPHAS), jr.gamma(jk, ALPHAS))  # chisquare: log space
        want = theirs(jk)
        for got in [normals(tr, k), ours(k)]:
            for g, w in zip(got, want, strict=True):
                assert_same(g, w)
    assert_same(tnp.linalg.cholesky(cov), jnp.linalg.cholesky(cov))
    assert_same(tracehlo.jit(tnp.linalg.cholesky)(cov), jnp.linalg.cholesky(cov))
    both = lambda random, k: (random.uniform(k, (6,)), random.randint(k, (6,), 0, 2**40))
    for got, want in zip(tracehlo.jit(lambda k: both(tr, k))(k), both(jr, jk)):
        assert_same(got, want)


# ---------------------------------------------------------------- statistics

def test_normal_moments():
    x = np.asarray(tr.normal(tr.PRNGKey(0), (10**6,)), np.float64)
    assert abs(x.mean()) < 5 / np.sqrt(10**6)  # 5 standard errors
    assert abs(x.var() - 1) < 5 * np.sqrt(2 / 10**6)


@pytest.mark.parametrize("a", [0.5, 3.0])
def test_gamma_moments(a):
    """Gamma(a): mean a, variance a; within 5 standard errors of the sample moments."""
    n = 10**5
    x = np.asarray(tr.gamma(tr.PRNGKey(1), a, (n,)), np.float64)
    assert abs(x.mean() - a) < 5 * np.sqrt(a / n)
    # the sample variance's standard error: sqrt((mu4 - var²) / n), mu4 = 3a² + 6a
    assert abs(x.var() - a) < 5 * np.sqrt((2 * a**2 + 6 * a) / n)


def test_beta_moments():
    a, b, n = 2.0, 5.0, 10**5
    x = np.asarray(tr.beta(tr.PRNGKey(2), a, b, (n,)), np.float64)
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    kurtosis = 3 + 6 * ((a - b) ** 2 * (a + b + 1) - a * b * (a + b + 2)) / (
        a * b * (a + b + 2) * (a + b + 3))
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / n)
    assert abs(x.var() - var) < 5 * np.sqrt((kurtosis - 1) * var**2 / n)
    assert 0 <= x.min() and x.max() <= 1


def test_randint_is_uniform_by_chi_square():
    n, bins = 10**5, 10
    counts = np.bincount(np.asarray(tr.randint(tr.PRNGKey(0), (n,), 0, bins)), minlength=bins)
    chi2 = ((counts - n / bins) ** 2 / (n / bins)).sum()
    assert counts.sum() == n and chi2 < 27.88  # the 0.999 quantile of chi2 with 9 dof


# ---------------------------------------------------------------- errors

ERROR_CASES = [
    ("uniform int dtype", lambda r, k: r.uniform(k, (2,), np.int32)),
    ("normal int dtype", lambda r, k: r.normal(k, (2,), np.int32)),
    ("randint float dtype", lambda r, k: r.randint(k, (2,), 0, 3, np.float32)),
    ("bits signed dtype", lambda r, k: r.bits(k, (2,), np.int32)),
    ("bernoulli int p", lambda r, k: r.bernoulli(k, np.array([1, 0]))),
    ("bernoulli mode", lambda r, k: r.bernoulli(k, 0.5, mode="middle")),
    ("uniform shape vs minval", lambda r, k: r.uniform(k, (3,), minval=np.zeros(4))),
    ("batched key", lambda r, k: r.normal(r.split(k, 3), (2,))),
    ("float key", lambda r, k: r.normal(np.zeros(2, np.float32), (2,))),
    ("float seed", lambda r, k: r.PRNGKey(1.5)),
    ("array seed", lambda r, k: r.PRNGKey(np.arange(3))),
    ("fold_in array", lambda r, k: r.fold_in(k, np.arange(3))),
    ("fold_in beyond 32 bits", lambda r, k: r.fold_in(k, 2**32 + 3)),
    ("choice too many", lambda r, k: r.choice(k, 3, (5,), replace=False)),
    ("choice shape int", lambda r, k: r.choice(k, 3, 5)),
    ("choice bad p", lambda r, k: r.choice(k, 3, (2,), p=np.ones(4) / 4)),
    ("categorical too many", lambda r, k: r.categorical(k, np.zeros(3), shape=(5,),
                                                        replace=False)),
    ("permutation float", lambda r, k: r.permutation(k, 2.5)),
    ("key of a key", lambda r, k: r.key(r.key(0))),
    ("wrap float data", lambda r, k: r.wrap_key_data(np.zeros(2, np.float32))),
    ("gamma int dtype", lambda r, k: r.gamma(k, 2.0, dtype=np.int32)),
    ("gamma shape vs a", lambda r, k: r.gamma(k, np.ones(3), (2,))),
    ("dirichlet scalar alpha", lambda r, k: r.dirichlet(k, 1.0)),
    ("beta shape vs b", lambda r, k: r.beta(k, 1.0, np.ones(3), (4,))),
    ("mvn cov shape", lambda r, k: r.multivariate_normal(k, np.zeros(3), np.eye(2))),
    ("mvn method", lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")),
    ("laplace int dtype", lambda r, k: r.laplace(k, (2,), np.int32)),
    ("lognormal f16 vs float32 sigma", lambda r, k: r.lognormal(k, dtype=np.float16)),
    ("pareto shape vs b", lambda r, k: r.pareto(k, np.ones(3), (2,))),
    ("t cast", lambda r, k: r.t(k, np.float32(3), dtype=np.float16)),
    ("f shape vs dfden", lambda r, k: r.f(k, 1.0, np.ones(3), (4,))),
    ("geometric float dtype", lambda r, k: r.geometric(k, 0.5, dtype=np.float32)),
    ("triangular int dtype", lambda r, k: r.triangular(k, 0.0, 0.5, 1.0, dtype=np.int32)),
    ("rayleigh batched key", lambda r, k: r.rayleigh(r.split(k, 2), 1.0)),
    ("ball traced d", lambda r, k: r.ball(k, np.float32(2.5))),
    ("poisson float dtype", lambda r, k: r.poisson(k, 3.0, dtype=np.float32)),
    ("poisson shape vs lam", lambda r, k: r.poisson(k, np.ones(3), (2,))),
    ("poisson list", lambda r, k: r.poisson(k, [1.0, 2.0])),
    ("poisson batched key", lambda r, k: r.poisson(r.split(k), 3.0)),
    ("binomial int dtype", lambda r, k: r.binomial(k, 3.0, 0.5, dtype=np.int32)),
    ("binomial shape vs n", lambda r, k: r.binomial(k, np.ones(3), 0.5, (2,))),
    ("binomial list", lambda r, k: r.binomial(k, [10], 0.3)),
    ("multinomial scalar p", lambda r, k: r.multinomial(k, 3.0, 0.5)),
    ("multinomial shape vs p", lambda r, k: r.multinomial(k, 3.0, np.ones(2) / 2, shape=(3,))),
    ("key_impl float key", lambda r, k: r.key_impl(np.zeros(2, np.float32))),
    ("key_dtype unknown", lambda r, k: r.key_dtype("mersenne")),
    ("key_dtype int", lambda r, k: r.key_dtype(3)),
]


def test_beta_parameters_more_precise_than_the_samples():
    with pytest.raises(ValueError, match="cannot safely cast") as theirs:
        jr.beta(jr.PRNGKey(0), np.float32(2), 1.0, dtype=np.float16)
    with pytest.raises(ValueError, match="test_random.py.*cannot safely cast") as ours:
        tr.beta(tr.PRNGKey(0), np.float32(2), 1.0, dtype=np.float16)
    assert str(theirs.value).split(", ")[-1] == str(ours.value).split(", ")[-1]


@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_are_jaxs(name, fn):
    with pytest.raises(Exception) as theirs:
        fn(jr, jr.PRNGKey(0))
    with pytest.raises(type(theirs.value)) as ours:
        fn(tr, tr.PRNGKey(0))
    assert "test_random.py" in str(ours.value)  # at the user's line


def test_traced_count_is_a_concretization_error():
    with pytest.raises(TypeError):
        jax.jit(lambda k, n: jr.permutation(k, n))(jr.PRNGKey(0), 3)
    with pytest.raises(tracehlo.ConcretizationError, match="permutation.*concrete"):
        tracehlo.jit(lambda k, n: tr.permutation(k, n))(tr.PRNGKey(0), 3)


def test_grad_through_a_sampler():
    """The samples move with minval (slope 1 - u per sample), as in JAX."""
    def loss(random, key):
        return lambda lo: random.uniform(key, (5,), minval=lo, maxval=4.0).sum()
    np.testing.assert_allclose(tracehlo.grad(loss(tr, tr.PRNGKey(2)))(1.0),
                               jax.grad(loss(jr, jr.PRNGKey(2)))(1.0), rtol=1e-6)
