"""Fusion inside while, case and if regions (issue 11): control-flow programs through
tracehlo.jit agree with jax.jit, run our fusion (no fallback to XLA's), and hold
fusions inside their region bodies."""
import jax
import numpy as np
import pytest

import tracehlo
from tracehlo import lax, passes
from tracehlo import numpy as tnp
from tracehlo.passes import small_loops
from tracehlo.passes.capability import all_fusions, in_region


def newton_sqrt(lx, a, done=lambda err: err):
    return lx.while_loop(lambda c: done(abs(c * c - a) - 1e-5 * a) > 0,
                         lambda c: 0.5 * (c + a / c), a)


def fori(lx, np_, x):
    return lx.fori_loop(0, 5, lambda i, v: np_.tanh(np_.exp(v) * 0.1) * v + 1, x)


def rnn(lx, np_, w, xs):
    def step(h, x):
        h = np_.tanh(h @ w + x * 2 - 1)
        return h, np_.exp(-h * h)
    return lx.scan(step, np_.zeros(w.shape[0], np.float32), xs)


def branches(lx, np_, k, x):
    return lx.switch(k, [lambda v: np_.exp(-v) * 3 + 1, lambda v: np_.sin(v) * np_.cos(v),
                         lambda v: np_.sqrt(abs(v)) - v], x)


def cond(lx, np_, x):
    return lx.cond(x.sum() > 0, lambda v: np_.log1p(v * v) * 2, lambda v: -v * np_.tanh(v), x)


rng = np.random.default_rng(0)
X = rng.normal(size=(4, 8)).astype(np.float32)
CASES = {
    "while_loop": (lambda lx, np_, a: newton_sqrt(lx, a, np_.max), (np.abs(X) + 1,)),
    "vmap_while_loop": (None, (np.abs(X[0]) + 1,)),
    "fori_loop": (fori, (X,)),
    "scan": (rnn, ((rng.normal(size=(8, 8)) * 0.3).astype(np.float32), X)),
    "switch": (branches, (np.int32(2), X)),
    "cond": (cond, (X,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_fused_inside_regions_matches_jax(name):
    fn, args = CASES[name]
    if name == "vmap_while_loop":  # a per-example predicate: the cond reduces it
        ours = tracehlo.vmap(lambda a: newton_sqrt(lax, a))
        theirs = jax.vmap(lambda a: newton_sqrt(jax.lax, a))
    else:
        ours, theirs = (lambda *a: fn(lax, tnp, *a)), (lambda *a: fn(jax.lax, jax.numpy, *a))
    compiled = tracehlo.compile(ours, args)
    assert compiled.fusion == "tracehlo", compiled.fusion_report().fallback
    module = passes.parse(compiled.fused)
    with module.context:
        assert any(in_region(f) for f in all_fusions(module)), compiled.fused
    got = jax.tree_util.tree_leaves(compiled(*args))
    want = jax.tree_util.tree_leaves(jax.jit(theirs)(*args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


# One loop carrying a counter, %v (16x16 f32: 1 KiB) and %w, with `update` making %v.
SMALL_LOOP_PROBE = """
func.func @main(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> ({results}) {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %zero, %v = %x, %u = %w) : tensor<i32>, tensor<16x16xf32>, tensor<16x16xf32>
   cond {{
    %n = stablehlo.constant dense<4> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    {update}
    stablehlo.return %next, %new, %u : tensor<i32>, tensor<16x16xf32>, tensor<16x16xf32>
  }}
  return {returned} : {results}
}}"""
LIVE = dict(results="tensor<16x16xf32>", returned="%r#1")


@pytest.mark.parametrize("update, returned, written", [
    # the carry changes each iteration from itself and is read after the loop
    ("%new = stablehlo.exponential %v : tensor<16x16xf32>", LIVE, 1024),
    # read by nothing: XLA's while-loop simplifier drops it
    ("%new = stablehlo.exponential %v : tensor<16x16xf32>",
     dict(results="tensor<16x16xf32>", returned="%r#2"), 0),
    # made from the invariant %u alone: XLA hoists it out of the loop
    ("%new = stablehlo.exponential %u : tensor<16x16xf32>", LIVE, 0),
    # times a constant one: XLA's simplifier may make it %v itself
    ("%c = stablehlo.constant dense<1.0> : tensor<16x16xf32>\n"
     "    %new = stablehlo.multiply %v, %c : tensor<16x16xf32>", LIVE, 0),
    # a reshape is a bitcast to XLA, writing nothing
    ("%t = stablehlo.exponential %v : tensor<16x16xf32>\n"
     "    %new = stablehlo.reshape %t : (tensor<16x16xf32>) -> tensor<16x16xf32>", LIVE, 0),
    # updated in place: the one-element update is all it writes
    ("%e = stablehlo.slice %v [0:1, 0:1] : (tensor<16x16xf32>) -> tensor<1x1xf32>\n"
     "    %new = stablehlo.dynamic_update_slice %v, %e, %i, %i : "
     "(tensor<16x16xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<16x16xf32>",
     LIVE, 4),
])
def test_small_loop_bytes_count_only_what_xla_keeps_writing(update, returned, written):
    module = passes.parse(SMALL_LOOP_PROBE.format(update=update, **returned))
    with module.context:
        func = next(iter(module.body.operations))
        loop = [op for op in func.regions[0].blocks[0].operations
                if op.operation.name == "stablehlo.while"][0]
        assert small_loops.written_bytes_lower_bound(loop) == written
        assert small_loops.may_be_hoisted(loop) == (written < 1024)


def test_small_loop_threshold_follows_xla_flags(monkeypatch):
    module = passes.parse(SMALL_LOOP_PROBE.format(
        update="%new = stablehlo.exponential %v : tensor<16x16xf32>", **LIVE))
    with module.context:
        loop = [op for op in next(iter(module.body.operations)).regions[0].blocks[0].operations
                if op.operation.name == "stablehlo.while"][0]
        assert not small_loops.may_be_hoisted(loop)
        monkeypatch.setenv("XLA_FLAGS", "--xla_backend_extra_options="
                           "xla_cpu_small_while_loop_byte_threshold=1000000")
        assert small_loops.may_be_hoisted(loop)
