"""Transformations composed with each other and with jit (issue 10: "every combination
composes"), against JAX as the oracle, and against a Python loop for vmap(grad)."""
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp

RNG = np.random.default_rng(0)
W = RNG.normal(size=(3, 4)).astype(np.float32)
X = RNG.normal(size=(5, 3)).astype(np.float32)
Y = RNG.normal(size=(5, 4)).astype(np.float32)


def loss(np_):
    def f(w, x, y):
        return np_.sum(np_.tanh(x @ w) - y) ** 2 / 2
    return f


def per_example(t, np_):
    f = loss(np_)
    return t.vmap(t.grad(lambda w, x, y: f(w, x[None], y[None])), in_axes=(None, 0, 0))


def test_per_example_gradients_equal_a_loop_of_grad():
    got = per_example(tracehlo, tnp)(W, X, Y)
    g = tracehlo.grad(loss(tnp))
    want = np.stack([g(W, X[i:i + 1], Y[i:i + 1]) for i in range(len(X))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["jit(vmap(grad))", "vmap(jit(grad))", "grad(vmap)",
                                  "vmap(vmap)", "jit(grad(jit))"])
def test_compositions_equal_jax(name):
    def build(t, np_):
        f = loss(np_)
        return {
            "jit(vmap(grad))": lambda: t.jit(per_example(t, np_))(W, X, Y),
            "vmap(jit(grad))": lambda: t.vmap(t.jit(t.grad(f)), in_axes=(0, None, None))(
                np.stack([W, 2 * W]), X, Y),
            "grad(vmap)": lambda: t.grad(lambda w: np_.sum(t.vmap(
                lambda x, y: f(w, x[None], y[None]))(X, Y)))(W),
            "vmap(vmap)": lambda: t.vmap(t.vmap(lambda a, b: np_.sin(a) * b, (0, None)),
                                         (None, 0))(X[0], Y[0]),
            "jit(grad(jit))": lambda: t.jit(t.grad(t.jit(f)))(W, X, Y),
        }[name]()
    np.testing.assert_allclose(build(tracehlo, tnp), build(jax, jnp), rtol=2e-5, atol=2e-5)


def test_make_ir_of_per_example_gradients_verifies_and_round_trips():
    graph = tracehlo.make_ir(per_example(tracehlo, tnp))(W, X, Y)
    tracehlo.verify(graph)
    assert str(tracehlo.parse_ir(str(graph))) == str(graph)
    assert "tanh" in str(graph)


def test_hlo_dump_shows_a_module_level_gradient(tmp_path):
    script = tmp_path / "df.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import tracehlo, tracehlo.numpy as tnp

        def f(x):
            return tnp.sum(tnp.sin(x))

        df = tracehlo.grad(f)
        HLO_DUMP = {"df": ["f32[3]"]}
    """))
    out = subprocess.run([sys.executable, "-m", "tracehlo.tools.hlo_dump", str(script),
                          "--stage", "ir"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ""})
    assert out.returncode == 0, out.stderr
    assert "cos" in out.stdout and " sin " not in out.stdout, out.stdout
