"""Shared checks for the tracehlo.numpy / lax / nn tests.

A case is a function `fn(m, *args)` written once against a NumPy-like module `m`.
`check` runs it with m=tracehlo.numpy eagerly and under tracehlo.jit, and compares
values with m=numpy (or m=jax.numpy where JAX's semantics differ from NumPy's) and
shapes/dtypes with m=jax.numpy, traced abstractly (jax.eval_shape, no compile).
"""
from __future__ import annotations

import os
import re
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
# JAX's release as (major, minor). tracehlo keeps the results and messages of 0.10.2,
# CI's release; where JAX 0.11 (inside pyproject's pin, run on the GPU machine) changed
# its own, a test says so and checks ours against what 0.11 still shares with it
JAX_RELEASE = tuple(int(part) for part in jax.__version__.split(".")[:2])
TEST_FILE_LINE = r"test_\w+\.py:\d+: "  # at_user_line's prefix: the user's file:line


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def i32(*shape, lo=-5, hi=6):
    return RNG.integers(lo, hi, shape).astype(np.int32)


def bools(*shape):
    return RNG.integers(0, 2, shape).astype(bool)


def sample(dtype, *shape):
    """A small random array of dtype 'f32', 'i32' or 'bool'."""
    return {"f32": f32, "i32": i32, "bool": bools}[dtype](*shape)


def run_both(fn, *args):
    """(eager result, jit result) of fn(tnp, *args)."""
    return fn(tnp, *args), tracehlo.jit(lambda *a: fn(tnp, *a))(*args)


def _compare(actual, want, expected, rtol, atol, path):
    assert isinstance(actual, jax.Array), f"{path}: got {type(actual).__name__}, not an array"
    assert actual.shape == want.shape, f"{path}: shape {actual.shape} != {want.shape}"
    assert actual.dtype == want.dtype, f"{path}: dtype {actual.dtype} != {want.dtype}"
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, np.broadcast_to(expected, actual.shape),
                                      err_msg=path)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=path)


def check(fn, *args, values="np", rtol=2e-6, atol=2e-6, eager=True, jit=True):
    """fn(tnp, *args), eager and jitted, against NumPy's values and JAX's dtype/shape.

    values="jnp" takes the expected values from jax.numpy instead (where JAX and
    NumPy differ on purpose: out-of-bounds indices clamp, int sums are int32)."""
    want = jax.eval_shape(lambda *a: fn(jnp, *a), *args)
    expected = fn(np if values == "np" else jnp, *args)
    modes = [m for m, on in (("eager", eager), ("jit", jit)) if on]
    for mode in modes:
        actual = fn(tnp, *args) if mode == "eager" else \
            tracehlo.jit(lambda *a: fn(tnp, *a))(*args)
        a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
        w_leaves, w_tree = jax.tree_util.tree_flatten(want)
        e_leaves = jax.tree_util.tree_leaves(expected)
        assert a_tree.num_leaves == w_tree.num_leaves, f"{mode}: {a_tree} != {w_tree}"
        for k, (a, w, e) in enumerate(zip(a_leaves, w_leaves, e_leaves)):
            _compare(a, w, e, rtol, atol, f"{mode} output {k}")


def check_raises(fn, *args, exc, match, jit=True):
    """fn(tnp, *args) raises exc whose message matches, names the caller's line, eager
    and under jit."""
    runners = [("eager", lambda: fn(tnp, *args))]
    if jit:
        runners.append(("jit", lambda: tracehlo.jit(lambda *a: fn(tnp, *a))(*args)))
    for mode, run in runners:
        with pytest.raises(exc, match=match) as info:
            run()
        message = str(info.value)
        assert re.search(TEST_FILE_LINE, message), f"{mode}: no user line in {message!r}"
        assert os.path.basename(__file__) not in message, message


def check_in_child(body: str, abort_reason: str):
    """Run test code (with this module's names imported) in a child process, for cases
    that have made XLA abort the process (a C++ check failure): the abort then fails
    one test as an xfail instead of killing the suite."""
    code = "from numpy_helpers import *\n" + textwrap.dedent(body)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=os.path.dirname(os.path.abspath(__file__)))
    if child.returncode < 0:
        pytest.xfail(abort_reason)
    assert child.returncode == 0, child.stderr[-3000:]
