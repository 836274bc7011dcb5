"""A jit function called inside a trace is one `pjit` equation holding its Graph:
printed inline, parsed back, verified recursively, lowered to func.func + func.call,
and numerically what jax.jit computes in every fusion mode."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo.lowering import lower_graph


@tracehlo.jit
def inner(a, b):
    return tnp.tanh(a) * b, a - b


def outer(x, y):
    p, q = inner(x, y)
    r, _ = inner(p, 2.0)
    return tnp.sum(r + q, axis=0)


def jax_outer(x, y):
    inner_ = jax.jit(lambda a, b: (jnp.tanh(a) * b, a - b))
    p, q = inner_(x, y)
    return jnp.sum(inner_(p, 2.0)[0] + q, axis=0)


X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)

OUTER_IR = """\
func @outer(%0: f32[4,8], %1: f32[4,8]) -> (f32[8]) {
  %2: f32[4,8], %3: f32[4,8] = pjit[name='inner', graph=func @inner(%0: f32[4,8], %1: f32[4,8]) -> (f32[4,8], f32[4,8]) {
      %2: f32[4,8] = tanh %0
      %3: f32[4,8] = mul %2, %1
      %4: f32[4,8] = sub %0, %1
      return %3, %4
    }] %0, %1
  %4: f32[4,8], %5: f32[4,8] = pjit[name='inner', graph=func @inner(%0: f32[4,8], %1: f32[]) -> (f32[4,8], f32[4,8]) {
      %2: f32[4,8] = tanh %0
      %3: f32[] = convert_element_type[new_dtype=f32, weak_type=false] %1
      %4: f32[4,8] = mul %2, %3
      %6: f32[4,8] = sub %0, %3
      return %4, %6
    }] %2, 2.0:f32[]
  %6: f32[4,8] = add %4, %3
  %7: f32[8] = reduce_sum[axes=(0,)] %6
  return %7
}
"""


def test_nested_jit_is_one_call_equation():
    """Its parse round trip runs with the other IR cases (test_api's IR_CASES)."""
    g = tracehlo.make_ir(outer)(X, Y)
    assert str(g) == OUTER_IR
    tracehlo.verify(g)


def test_call_lowers_to_a_private_function_per_callee():
    text = lower_graph(tracehlo.make_ir(outer)(X, Y), locations=False)
    assert "func.call @inner(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> " \
           "(tensor<4x8xf32>, tensor<4x8xf32>)" in text
    assert text.count("func.func private @inner(") == 1
    assert text.count("func.func private @inner_2(%arg0: tensor<4x8xf32>, "
                      "%arg1: tensor<f32>)") == 1


@pytest.mark.parametrize("fusion", ["tracehlo", "xla", "none"])
def test_call_numerics_match_jax_in_every_fusion_mode(fusion):
    c = tracehlo.compile(outer, (X, Y), fusion=fusion)
    assert c.fusion == fusion
    np.testing.assert_allclose(c(X, Y), jax.jit(jax_outer)(X, Y), rtol=1e-5, atol=1e-6)


def test_verify_checks_the_callee_and_its_signature():
    bad_callee = OUTER_IR.replace("%4: f32[4,8] = sub %0, %1\n      return %3, %4\n    }] %0",
                                  "%4: f32[4,4] = sub %0, %1\n      return %3, %4\n    }] %0")
    with pytest.raises(tracehlo.verify.__globals__["VerificationError"],
                       match=r"@inner: equation 2: sub produces f32\[4,8\] but its outputs "
                             r"are typed f32\[4,4\]"):
        tracehlo.verify(tracehlo.parse_ir(bad_callee))
    wrong_operand = OUTER_IR.replace("}] %2, 2.0:f32[]", "}] %2, 2:i32[]")
    with pytest.raises(ValueError, match=r"equation 1: pjit: pjit inner takes f32\[4,8\], "
                                         r"f32\[\], got f32\[4,8\], i32\[\]"):
        tracehlo.verify(tracehlo.parse_ir(wrong_operand))


def test_eager_call_uses_the_callees_own_executable():
    x, y = jnp.asarray(X), jnp.asarray(Y)
    first = inner(x, y)
    compiled = inner.lower(x, y)
    tracehlo.make_ir(outer)(X, Y)  # tracing a caller compiles nothing
    again = inner(x, y)
    assert inner.lower(x, y) is compiled
    assert all(isinstance(a, jax.Array) for a in first + again)
    np.testing.assert_allclose(again[0], np.tanh(X) * Y, rtol=1e-6)


def test_static_arguments_and_pytrees_cross_the_call():
    @tracehlo.jit(static_argnums=1)
    def scale(params, k):
        return {"w": params["w"] * k, "n": params["n"] + 1}

    def f(w, n):
        out = scale({"w": w, "n": n}, 3)
        return out["w"] + out["n"]
    g = tracehlo.make_ir(f)(np.ones(2, np.float32), np.float32(1))
    (call,) = [e for e in g.eqns if e.prim.name == "pjit"]
    assert call.params["name"] == "scale" and len(call.inputs) == 2
    np.testing.assert_allclose(tracehlo.jit(f)(np.ones(2, np.float32), np.float32(1)),
                               [5.0, 5.0])
