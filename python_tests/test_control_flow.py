"""cond/switch, while_loop/fori_loop, scan/map: results against Python references,
derivatives against finite differences and JAX, vmap against a loop, errors by type
and message, and the sub-graphs' IR round trip."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax

HERE = __file__


def seed(x):
    return lax.cond(x >= 0, lambda v: v + 3, lambda v: v - 3, x)


def test_seed_cond_picks_a_branch_per_value():
    f = tracehlo.jit(seed)
    assert float(f(np.float32(2))) == 5.0 and float(f(np.float32(-2))) == -5.0
    assert float(seed(np.float32(-2))) == -5.0  # eagerly too
    text = str(tracehlo.make_ir(seed)(np.float32(1)))
    assert "cond[branches=(func @branch0" in text and "convert_element_type" in text


def test_cond_traces_both_branches_even_for_a_concrete_predicate():
    calls = []

    def branch(name):
        return lambda v: (calls.append(name), v * 2)[1]
    out = lax.cond(True, branch("true"), branch("false"), np.float32(3))
    assert float(out) == 6.0 and sorted(calls) == ["false", "true"]


def test_switch_clamps_its_index_and_closes_over_outer_values():
    @tracehlo.jit
    def f(i, x, y):
        return lax.switch(i, [lambda v: v + y, lambda v: v * y, lambda v: -v], x)
    x, y = np.float32(3), np.float32(2)
    assert [float(f(i, x, y)) for i in (-4, 0, 1, 2, 9)] == [5, 5, 6, -3, -3]


def test_cond_pytree_operands_and_results():
    def f(p, t):
        return lax.cond(p, lambda d: {"s": d["a"] + d["b"], "k": d["a"]},
                        lambda d: {"s": d["a"] - d["b"], "k": d["b"]}, t)
    t = {"a": np.float32(5), "b": np.float32(1)}
    out = tracehlo.jit(f)(False, t)
    assert float(out["s"]) == 4 and float(out["k"]) == 1


def test_cond_branch_type_mismatch_names_leaf_types_and_line():
    def f(x):
        return lax.cond(x > 0, lambda v: (v, v), lambda v: (v, v.astype(np.int32)), x)
    with pytest.raises(TypeError) as e:
        tracehlo.make_ir(f)(np.float32(1))
    line = f.__code__.co_firstlineno + 1
    assert str(e.value).startswith(f"{HERE}:{line}: branches of a cond/switch must return "
                                   "the same types: output [1] is i32[] in false_fun but "
                                   "f32[] in true_fun")
    with pytest.raises(TypeError, match="same pytree structure"):
        tracehlo.make_ir(lambda x: lax.cond(x > 0, lambda v: v, lambda v: (v,), x))(1.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(np.float32(1), lambda v: v, lambda v: v, 1.0)


def newton_sqrt(a):
    return lax.while_loop(lambda c: abs(c * c - a) > 1e-5 * a, lambda c: 0.5 * (c + a / c), a)


def test_while_loop_newton_iteration_value_jvp_vmap():
    a = np.array([2.0, 9.0, 30.0], np.float32)
    np.testing.assert_allclose(tracehlo.jit(tracehlo.vmap(newton_sqrt))(a), np.sqrt(a),
                               rtol=1e-5)
    # a per-example predicate: the loop runs while any example is active
    assert "reduce_or" in str(tracehlo.make_ir(tracehlo.vmap(newton_sqrt))(a))
    out, t = tracehlo.jvp(newton_sqrt, (np.float32(9.0),), (np.float32(1.0),))
    np.testing.assert_allclose([out, t], [3.0, 1 / 6], rtol=1e-4)


def test_while_loop_reverse_mode_raises_jax_error():
    with pytest.raises(ValueError) as ours:
        tracehlo.grad(newton_sqrt)(np.float32(2.0))
    with pytest.raises(ValueError) as theirs:
        jax.grad(lambda a: jax.lax.while_loop(lambda c: c < 10, lambda c: c * a, a))(2.0)
    assert str(ours.value).endswith(str(theirs.value))


def test_while_loop_tangents_are_zero_where_no_iteration_makes_them():
    """JAX's fixed point of which carries have tangents: one that only goes through
    floor has none, so grad through the loop is 0.0 (not the reverse-mode error), and a
    carry that picks up a tangent from another one a step later has it."""
    def floored(lax):
        return lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (
            c[0] + 1, lax.floor(c[1] * x)), (0, 1.0))[1]

    def relayed(lax):
        return lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (
            c[0] + 1, c[2] * 2.0, c[1] + x), (0, 1.0, 0.0))[1]
    for ours in (tracehlo.grad(floored(tracehlo.lax)),
                 tracehlo.jit(tracehlo.grad(floored(tracehlo.lax)))):
        assert float(ours(np.float32(2.0))) == float(jax.grad(floored(jax.lax))(2.0)) == 0.0
    got = tracehlo.jvp(relayed(tracehlo.lax), (2.0,), (1.0,))
    assert [float(v) for v in got] == [float(v) for v in jax.jvp(relayed(jax.lax), (2.0,), (1.0,))]


def _raises_like_jax(ours, theirs) -> str:
    """ours() raises JAX's error (what theirs() raises) at a line of this file; returns
    our message."""
    with pytest.raises(TypeError) as got:
        ours()
    with pytest.raises(TypeError) as want:
        theirs()
    assert str(got.value).startswith(HERE + ":") and str(got.value).endswith(str(want.value))
    return str(got.value)


def test_while_loop_carry_mismatch_raises_jax_error_at_the_line():
    def f(L, x):
        return L.while_loop(lambda c: c[1] < 3, lambda c: (c[0][None], c[1] + 1), (x, 0))
    ours = _raises_like_jax(lambda: tracehlo.make_ir(lambda x: f(lax, x))(np.float32(1)),
                            lambda: jax.make_jaxpr(lambda x: f(jax.lax, x))(np.float32(1)))
    assert ours.startswith(f"{HERE}:{f.__code__.co_firstlineno + 1}: ")
    _raises_like_jax(lambda: lax.fori_loop(0, 2, lambda i, c: {"a": tnp.stack([c["a"]] * 2)},
                                           {"a": 1.0}),
                     lambda: jax.lax.fori_loop(0, 2, lambda i, c: {"a": jnp.stack([c["a"]] * 2)},
                                               {"a": 1.0}))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, 1.0)


def test_fori_loop_static_is_a_scan_and_differentiates_like_jax():
    def ours(x):
        return lax.fori_loop(0, 5, lambda i, c: tnp.sin(c) * x + i, x)

    def theirs(x):
        return jax.lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * x + i, x)
    assert "= scan[" in str(tracehlo.make_ir(ours)(np.float32(0.5)))
    np.testing.assert_allclose(tracehlo.grad(ours)(np.float32(0.5)),
                               jax.grad(theirs)(np.float32(0.5)), rtol=1e-5)
    dynamic = tracehlo.make_ir(lambda n, x: lax.fori_loop(0, n, lambda i, c: c + i, x))
    assert "= while[" in str(dynamic(3, 1.0))
    np.testing.assert_allclose(
        tracehlo.jit(lambda n, x: lax.fori_loop(1, n, lambda i, c: c * i, x))(5, 1.0), 24.0)


def test_scan_cumulative_sum_forward_and_reverse_and_map():
    xs = np.arange(1, 6, dtype=np.float32)

    @tracehlo.jit
    def f(xs):
        step = lambda c, x: (c + x, c + x)  # noqa: E731
        return lax.scan(step, 0.0, xs), lax.scan(step, 0.0, xs, reverse=True)[1], \
            lax.map(lambda x: x * x, xs)
    (total, sums), rsums, squares = f(xs)
    assert float(total) == 15.0
    np.testing.assert_array_equal(sums, np.cumsum(xs))
    np.testing.assert_array_equal(rsums, np.cumsum(xs[::-1])[::-1])
    np.testing.assert_array_equal(squares, xs * xs)


def test_map_batch_size_against_jax():
    """lax.map(f, xs, batch_size=b), as JAX's: a scan of f vmapped over chunks of b rows
    and f vmapped over the remaining rows (b=0: all rows; b > length: all rows), on a
    pytree xs, eager, under jit and under grad."""
    x = np.arange(30, dtype=np.float32).reshape(10, 3) / 7
    k = np.arange(10, dtype=np.int32)

    def f(lib, t):
        return {"a": lib.sin(t[0]) * t[1].astype(np.float32), "b": lib.sum(t[0])}
    seen = []
    ours = lambda x, b: lax.map(lambda t: seen.append(t[0].shape) or f(tnp, t), (x, k),
                                batch_size=b)
    theirs = lambda x, b: jax.lax.map(lambda t: f(jnp, t), (x, k), batch_size=b)
    for b in (3, 5, 0, 12, None):
        seen.clear()
        want = theirs(x, b)
        for got in (ours(x, b), tracehlo.jit(ours, static_argnums=1)(x, b)):
            for name in "ab":
                assert got[name].dtype == want[name].dtype
                np.testing.assert_array_equal(got[name], want[name])
        g = tracehlo.grad(lambda x: tnp.sum(ours(x, b)["a"] * x[:, :1]))(x)
        np.testing.assert_allclose(g, jax.grad(
            lambda x: jnp.sum(theirs(x, b)["a"] * x[:, :1]))(x), rtol=1e-6)
    seen.clear()
    ours(x, 3)
    assert seen == [(3,), (3,)]  # traced twice, as JAX: the scanned chunk, the remainder


def rnn(params, xs, lib, scan):
    w, u, b = params

    def step(h, x):
        h = lib.tanh(h @ w + x @ u + b)
        return h, lib.sum(h * h)
    h, ys = scan(step, lib.zeros(w.shape[0], np.float32), xs)
    return lib.sum(h) + lib.sum(ys)


def test_rnn_scan_value_and_gradient_against_jax():
    rng = np.random.default_rng(0)
    params = tuple(rng.normal(size=s).astype(np.float32) * 0.5 for s in [(4, 4), (3, 4), (4,)])
    xs = rng.normal(size=(6, 3)).astype(np.float32)
    ours = tracehlo.jit(tracehlo.value_and_grad(lambda p, x: rnn(p, x, tnp, lax.scan),
                                                argnums=(0, 1)))
    theirs = jax.value_and_grad(lambda p, x: rnn(p, x, jnp, jax.lax.scan), argnums=(0, 1))
    (v, g), (jv, jg) = ours(params, xs), theirs(params, xs)
    np.testing.assert_allclose(v, jv, rtol=1e-5)
    for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(jg)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_scan_reverse_mode_is_two_loops_and_matches_jax():
    """grad of a scan runs a forward loop that also saves the residuals and one backward
    loop, as JAX does (not a third loop recomputing the forward steps): two while loops
    in the StableHLO, with reverse=True, a pytree carry holding an integer counter and a
    value computed from the weights alone."""
    def loss(lib, scan, params, xs):
        w, u = params

        def step(c, x):
            h = lib.tanh(c["h"] @ (w * 2) + x @ u) * (c["i"].astype(np.float32) + 1)
            return {"h": h, "i": c["i"] + 1}, lib.sum(lib.sin(h))
        c, ys = scan(step, {"h": lib.zeros(4, np.float32), "i": np.int32(0)}, xs,
                     reverse=True)
        return lib.sum(c["h"] * c["h"]) + lib.sum(ys)
    rng = np.random.default_rng(3)
    params = tuple(rng.normal(size=s).astype(np.float32) * 0.3 for s in [(4, 4), (3, 4)])
    xs = rng.normal(size=(6, 3)).astype(np.float32)
    ours = tracehlo.jit(tracehlo.grad(lambda p, x: loss(tnp, lax.scan, p, x), argnums=(0, 1)))
    lowered = ours.lower(params, xs)
    assert str(lowered.ir).count("= scan[") == 2
    assert lowered.stablehlo.count("stablehlo.while") == 2
    want = jax.grad(lambda p, x: loss(jnp, jax.lax.scan, p, x), argnums=(0, 1))(params, xs)
    for a, b in zip(jax.tree_util.tree_leaves(ours(params, xs)), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_grad_of_max_and_min_in_a_scan_keeps_jax_nans():
    """A max's (min's) tie indicator is computed forward and saved, as JAX linearizes
    it: the backward loop multiplies a nan cotangent by a saved indicator, where a
    compare it recomputed let XLA's simplifier make that multiply a select giving 0
    (fuzz jit --loop --transform grad 108: the sqrt of a negative min)."""
    def loss(lib, scan, x):
        def step(c, _):
            return c, lib.sqrt(lib.min(c)) + lib.max(c[None], axis=1)[0] * 2
        return lib.sum(scan(step, x, None, length=3)[1])
    x = np.array([2.6, -0.27, np.nan, 1.5], np.float32)
    want = jax.grad(lambda x: loss(jnp, jax.lax.scan, x))(x)
    assert np.isnan(want).all()
    for grad in (tracehlo.grad, lambda f: tracehlo.jit(tracehlo.grad(f))):
        np.testing.assert_array_equal(grad(lambda x: loss(tnp, lax.scan, x))(x), want)


@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16])
def test_grad_through_a_scan_leaves_out_carries_no_result_reads(dtype):
    """A float carry whose final value is unread and that feeds no result read
    differentiably (an integer convert, a round) has a zero cotangent, as JAX's partial
    evaluation drops its tangent: its gradient is 0 (not 0 times the NaN derivative of
    an atan2 at 0 by 0), and the carries that are read keep theirs (fuzz jit --loop
    --transform grad 86)."""
    def loss(lib, scan, c, x):
        def step(carry, _):
            c, x = carry
            ys = (c, x.astype(lib.uint16), lib.round(x))
            return (c, lib.arctan2(lib.round(x), x)), ys
        ys = scan(step, (c, x), None, length=2)[1]
        return lib.sum(ys[0] * np.array([2.5, 2.0], np.float32)[:, None]) + lib.sum(ys[2])
    c = np.array([1.0], dtype)
    x = np.array([0.175, 0.64, -0.66], dtype)
    want = jax.grad(lambda c, x: loss(jnp, jax.lax.scan, c, x), argnums=(0, 1))(c, x)
    np.testing.assert_array_equal(want[1], np.zeros(3, dtype))
    ours = tracehlo.grad(lambda c, x: loss(tnp, lax.scan, c, x), argnums=(0, 1))
    for grad in (ours, tracehlo.jit(ours)):
        got = grad(c, x)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_hessian_and_vmap_of_grad_of_scan_against_jax():
    """jacfwd of grad vmaps the scans of reverse mode: ys that no basis vector reaches stay
    unbatched (jacfwd returns its primal results unbatched). vmap of grad batches the
    forward scan with its residuals and the backward scan."""
    def f(lib, scan, w, xs):
        return lib.sum(scan(lambda c, x: (lib.sin(c * w) + x, c * x), 0.3, xs)[1])
    ours, theirs = (lambda w, x: f(tnp, lax.scan, w, x)), (lambda w, x: f(jnp, jax.lax.scan, w, x))
    w, xs = np.float32(0.4), np.linspace(-1, 1, 6).astype(np.float32)
    ws = np.array([0.4, -0.7, 1.1], np.float32)
    for got, want in [(tracehlo.hessian(ours, argnums=(0, 1))(w, xs),
                       jax.hessian(theirs, argnums=(0, 1))(w, xs)),
                      (tracehlo.vmap(tracehlo.grad(ours, argnums=(0, 1)), (0, None))(ws, xs),
                       jax.vmap(jax.grad(theirs, argnums=(0, 1)), (0, None))(ws, xs))]:
        for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_jacfwd_and_hessian_of_cond_and_switch_against_jax():
    """jacfwd vmaps a cond whose index no basis vector reaches: an output no branch
    batches (the primal result jacfwd returns unbatched) stays unbatched, as in JAX's
    cond. It was batched, and jacfwd and hessian of any cond or switch failed."""
    x = np.linspace(-1, 2, 3).astype(np.float32)

    def f(lib, lax_):
        return lambda a: lax_.cond(a[0] > 0, lib.sin, lib.cos, a) + lax_.switch(
            1, [lib.sin, lib.cos], a)

    def g(lib, lax_):
        return lambda a: lax_.cond(a[0] > 0, lambda v: lib.sum(v ** 3),
                                   lambda v: lib.sum(v ** 2), a)
    for ours, theirs in [(tracehlo.jacfwd(f(tnp, lax)), jax.jacfwd(f(jnp, jax.lax))),
                         (tracehlo.hessian(g(tnp, lax)), jax.hessian(g(jnp, jax.lax)))]:
        for arg in (x, -x):
            np.testing.assert_allclose(ours(arg), theirs(arg), rtol=1e-6, atol=1e-6)


def test_scan_jvp_against_finite_differences_and_vjp_against_jvp():
    def f(w, xs):
        return lax.scan(lambda c, x: (tnp.sin(c * w) + x, c * x), 0.3, xs)[1]
    rng = np.random.default_rng(1)
    w, xs = np.float64(0.7), rng.normal(size=5)
    tw, txs = 0.3, rng.normal(size=5)
    with _x64():
        out, t = tracehlo.jvp(f, (w, xs), (tw, txs))
        eps = 1e-6
        numeric = (np.asarray(f(w + eps * tw, xs + eps * txs))
                   - np.asarray(f(w - eps * tw, xs - eps * txs))) / (2 * eps)
        np.testing.assert_allclose(t, numeric, rtol=1e-5, atol=1e-7)
        ct = rng.normal(size=5)
        gw, gxs = tracehlo.vjp(f, w, xs)[1](ct)
        np.testing.assert_allclose(np.dot(ct, t), gw * tw + np.dot(gxs, txs), rtol=1e-6)


class _x64:
    """64-bit floats while active: finite differences need them."""

    def __enter__(self):
        tracehlo.config.update("enable_x64", True)

    def __exit__(self, *exc):
        tracehlo.config.update("enable_x64", False)


def test_vmap_of_cond_scan_against_a_loop():
    def f(p, x, c):
        y = lax.cond(p > 0, lambda v: v * 2, lambda v: v - c, x)  # c: a closed-over value
        return lax.scan(lambda h, r: (h * r + c, h), c, y)
    rng = np.random.default_rng(2)
    ps, xs, cs = rng.normal(size=4), rng.normal(size=(4, 3)), rng.normal(size=4)
    ps, xs, cs = (a.astype(np.float32) for a in (ps, xs, cs))
    got = tracehlo.jit(tracehlo.vmap(f))(ps, xs, cs)
    want = [tracehlo.jit(f)(p, x, c) for p, x, c in zip(ps, xs, cs)]
    for k in range(2):
        np.testing.assert_allclose(got[k], np.stack([w[k] for w in want]), rtol=1e-6)


def test_scan_length_errors():
    with pytest.raises(ValueError, match="scan got `length` argument of 3 which disagrees "
                                         r"with leading axis sizes \[4\]"):
        lax.scan(lambda c, x: (c, x), 0.0, np.zeros(4), length=3)
    with pytest.raises(ValueError, match="no leading axis to scan over"):
        lax.scan(lambda c, x: (c, x), 0.0, 1.0)


def test_transformed_control_flow_ir_parses_back_and_verifies():
    def f(x):
        y = lax.cond(x[0] > 0, lambda v: tnp.sin(v), lambda v: v * v, x)
        return lax.scan(lambda c, r: (c * r, c), 1.0, y)[1].sum()
    x = np.array([0.5, 2.0], np.float32)
    for fn, arg in [(tracehlo.grad(f), x), (lambda x: tracehlo.jvp(f, (x,), (x,)), x),
                    (tracehlo.vmap(f), np.stack([x, -x]))]:
        g = tracehlo.make_ir(fn)(arg)
        tracehlo.verify(g)
        assert str(tracehlo.parse_ir(str(g))) == str(g)


def test_fusion_passes_keep_regions_compiling():
    """tracehlo's default fusion on StableHLO with case and while regions: XLA accepts
    what the passes emit (no fallback to XLA's own fusion)."""
    def f(i, x):
        y = lax.switch(i, [lambda v: tnp.exp(v) * 2, lambda v: v + 1], x)
        y = lax.while_loop(lambda c: c.sum() < 100, lambda c: c * 2 + 1, y)
        return lax.scan(lambda c, r: (c + r * 2, tnp.tanh(c)), y[0], y)
    x = np.ones(3, np.float32)
    compiled = tracehlo.compile(f, (1, x))
    assert compiled.fusion == "tracehlo"
    c, ys = compiled(1, x)
    y = x + 1
    while y.sum() < 100:
        y = y * 2 + 1
    carry, want = y[0], []
    for r in y:
        want.append(np.tanh(carry))
        carry = carry + r * 2
    np.testing.assert_allclose(c, carry, rtol=1e-6)
    np.testing.assert_allclose(ys, want, rtol=1e-6)


def test_associative_scan_matches_jax_bit_for_bit():
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=(3, n)).astype(np.float32) for n in (1, 2, 5, 8)]
    sums = tracehlo.jit(lambda xs: [lax.associative_scan(lax.add, x, axis=1) for x in xs])(xs)
    want = jax.jit(lambda xs: [jax.lax.associative_scan(jax.lax.add, x, axis=1) for x in xs])(xs)
    for got, w in zip(sums, want):
        np.testing.assert_array_equal(got, w)
    x = xs[-1]
    pairs = tracehlo.jit(lambda x: lax.associative_scan(
        lambda p, q: (p[0] * q[0], lax.max(p[1], q[1])), (x, x), reverse=True, axis=-1))(x)
    want = jax.jit(lambda x: jax.lax.associative_scan(
        lambda p, q: (p[0] * q[0], jax.lax.max(p[1], q[1])), (x, x), reverse=True, axis=1))(x)
    for got, w in zip(pairs, want):
        np.testing.assert_array_equal(got, w)


def _assert_trees_close(got, want, rtol=1e-6):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=rtol)


def test_branches_and_bodies_may_return_closed_over_values_unchanged():
    """A branch or loop body returning an outer traced value as is (not computed from it)
    takes it as an input all the same, as JAX's constvars: under jit, grad and vmap."""
    xs = np.arange(3, dtype=np.float32)

    def f(L, a, b, i):
        return [L.cond(a > 0, lambda: a, lambda: a * 2),
                L.switch(i, [lambda: a, lambda: b * 2]),
                L.cond(a > 0, lambda v: b, lambda v: v * 2, a),
                L.scan(lambda c, t: (c + t, a), np.float32(0), xs),
                L.scan(lambda c, t: (b, c * t), a, xs),
                L.fori_loop(0, 3, lambda j, c: a, np.float32(0)),
                L.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, a), (0, b)),
                L.map(lambda t: b, xs)]
    args = np.float32(1.5), np.float32(-2), np.int32(0)
    _assert_trees_close(tracehlo.jit(lambda *a: f(lax, *a))(*args),
                        jax.jit(lambda *a: f(jax.lax, *a))(*args))

    def g(L, a):
        return L.cond(a > 0, lambda: a * 3, lambda: a)
    for a in (np.float32(0.5), np.float32(-0.5)):
        np.testing.assert_allclose(tracehlo.grad(lambda a: g(lax, a))(a),
                                   jax.grad(lambda a: g(jax.lax, a))(a))

    def h(L, p, a):
        return L.cond(p, lambda: (a, 1.0), lambda: (a, 2.0))
    ps, a = np.array([True, False]), np.array([1, 2], np.float32)
    _assert_trees_close(tracehlo.vmap(lambda p, a: h(lax, p, a))(ps, a),
                        jax.vmap(lambda p, a: h(jax.lax, p, a))(ps, a))


def test_weakly_typed_initial_carry_is_promoted_as_in_jax():
    """A Python scalar starting a carry the body widens is converted to the promoted type
    and the body traced again (JAX's two passes); a strong carry, or one still changing
    after promotion, raises JAX's error."""
    xs = np.arange(3, dtype=np.float32)

    def f(L):
        return [L.while_loop(lambda c: c < 10, lambda c: c + 1.0, 0),
                L.fori_loop(0, 3, lambda i, c: c + 0.5, 0),
                L.scan(lambda c, x: (c + 1.5, x), 0, xs),
                L.fori_loop(0, 2, lambda i, c: (c[0] + np.int8(1), c[1] * 1j), (1, 2.0))]
    got, want = f(lax), f(jax.lax)
    _assert_trees_close(got, want)
    assert [np.asarray(a).dtype for a in jax.tree_util.tree_leaves(got)] == \
        [np.asarray(a).dtype for a in jax.tree_util.tree_leaves(want)]
    for refused in [lambda L: L.scan(lambda carry, x: (carry + 1.5, x), np.int32(0), xs),
                    lambda L: L.while_loop(lambda c: c[0] < 2,
                                           lambda c: (c[0] + 1.5, c[1] + xs), (0, 1))]:
        _raises_like_jax(lambda: refused(lax), lambda: refused(jax.lax))


def test_scan_keeps_weak_types_of_its_stacked_outputs_and_slices():
    """JAX stacks a weakly typed y (1.5 ** a bool) weakly, and slices a weak xs weakly
    (found by fuzz.py --loop, seed 5: ours were strong)."""
    def f(L, np_, c):
        return L.scan(lambda c, x: (c, (1.5 ** np_.all(c), c * 2, x * 2)), c,
                      np_.broadcast_to(1.5, (2,)))[1]
    c = np.ones(3, np.float32)
    want = [o.weak_type for o in jax.jit(lambda c: f(jax.lax, jax.numpy, c))(c)]
    assert want == [True, False, True]
    assert [o.weak_type for o in tracehlo.jit(lambda c: f(lax, tnp, c))(c)] == want
    assert [o.weak_type for o in f(lax, tnp, c)] == want


def test_zero_length_scan_returns_the_init_carry_and_empty_ys():
    """A scan of no steps lowers to no loop: its step's 1-row slice of an empty xs would
    not compile."""
    e = np.zeros((0, 3), np.float32)

    def f(L, w, e):
        return (L.scan(lambda c, t: (c + (t * w).sum(), t * w), w, e, reverse=True),
                L.map(lambda t: t * 2, e))
    _assert_trees_close(tracehlo.jit(lambda w, e: f(lax, w, e))(np.float32(1.5), e),
                        jax.jit(lambda w, e: f(jax.lax, w, e))(np.float32(1.5), e))

    def g(L, a):
        return L.fori_loop(3, 3, lambda i, c: c * a, a)
    np.testing.assert_allclose(tracehlo.grad(lambda a: g(lax, a))(np.float32(2)),
                               jax.grad(lambda a: g(jax.lax, a))(np.float32(2)))
