"""Differential fuzzer: seeded random programs through tracehlo, compared with jax.jit.

A program is a list of ops, each a line of Python with placeholders: `{np}` is
tracehlo.numpy or jax.numpy, `{lax}` tracehlo.lax or jax.lax, `{0}`, `{1}` its
operands. The same lines therefore give the program under test, the JAX oracle
and, printed, a standalone repro. Every op is checked with jax.eval_shape as it
is drawn, so JAX accepts every program; tracehlo refusing one is a failure.

Kinds (what runs the program):
    jit      tracehlo.jit with fusion "none", "xla" and "tracehlo"
    hlo-opt  jax.jit(f).lower(...).as_text() through passes.fuse (what
             `hlo-opt --fuse` runs) and check_backend, compiled by our runtime

Each program runs in a worker subprocess (Worker), so an XLA abort, a hang or a
segfault is a failure of that seed, not of the run. Failure classes: crash,
timeout, fallback (our fusion replaced by XLA's, or a `tracehlo` logger warning),
xla-error (XLA rejects what we built), refusal (a user-facing error on a program
JAX accepts), internal-error (any other exception), mismatch (value, nan
position, shape or dtype differs from jax.jit beyond the dtype's tolerance), and,
not counted as ours, jit-differs: values that differ from jax.jit's but equal JAX's
op-by-op (eager) ones, where XLA folded or fused jax.jit's module its own way (where
JAX refuses a program op by op, those of jax.jit's module with XLA's fusion off).
With --bitwise (kind jit), fusion-bits: our fusion's outputs are not bit for bit those
of fusion "xla" (NaNs in the same places, any payload). Both run XLA's code generator
on the same module, so a difference is a place where our passes change what XLA
computes: a rewrite of XLA's simplifier they do not mirror, or a multiply feeding an
add in one kernel of one and not the other (XLA CPU contracts the pair into an FMA
inside a kernel, so a kernel boundary between them rounds twice).

    python python_tests/fuzz.py --kind jit --count 2000 [--start 0] [--log FILE.jsonl]
    python python_tests/fuzz.py --kind jit --bitwise --start 5000 --count 60
    python python_tests/fuzz.py --kind hlo-opt --seed 123 --shrink
    python python_tests/fuzz.py --kind jit --loop --count 500
    python python_tests/fuzz.py --kind jit --transform grad --count 500
    python python_tests/fuzz.py --kind jit --extra-ops --transform vmap --count 200
(--loop: each program is the body of a lax.scan, its inputs carried; --transform
grad: the gradient, with respect to its float inputs, of the sum of its float
outputs each weighted by a fixed cotangent, tracehlo.grad against jax.grad;
--transform vmap: the program mapped over a batch of 3 along an axis of each input
drawn from its seed, or over none, tracehlo.vmap against jax.vmap. Either runs
under each kind: jit compiles the transformed program in the three modes, hlo-opt
fuses JAX's module of it, and with --loop it transforms the scan. --extra-ops: convolutions,
gathers and scatters (.at[] and lax.scatter_*), pools (reduce_window), top_k too; added after the default seeds were recorded, they
draw other programs for the same seeds.)
prints one line per failing seed and a summary by class; --shrink reduces a
failing seed to a minimal program (fewer outputs, ops, inputs, smaller shapes,
no special values, the class unchanged) and prints it as a standalone script.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
          "float16", "bfloat16", "float32"]
KINDS = ("jit", "hlo-opt")
MODES = ("none", "xla", "tracehlo")  # tracehlo last: the likeliest to abort
MAX_ELEMENTS = 4096  # larger intermediate values are not drawn
TRANSFORMS = ("grad", "vmap")
BATCH = 3  # vmap's batch size
FLOATS = ("float16", "bfloat16", "float32")  # the inputs grad differentiates
# (rtol, atol) for float outputs; integer and bool outputs must be equal
TOLERANCE = {"float16": (1e-2, 1e-3), "bfloat16": (5e-2, 1e-2), "float32": (1e-4, 1e-5)}

UNARY_NP = ["negative", "abs", "sign", "exp", "log", "sin", "cos", "tanh", "sqrt", "square",
            "floor", "ceil", "round", "logical_not", "invert", "isnan", "isfinite", "isinf",
            "reciprocal", "expm1", "log1p", "arctan", "sinh", "cbrt", "trunc", "signbit",
            "exp2", "log2", "arcsinh", "log10"]
BINARY_NP = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
             "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
             "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
             "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "hypot",
             "copysign", "nextafter", "fmod", "logaddexp"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "<=", "==", "!=", ">"]
SCALAR_FORMS = ["{0} + 2", "{0} * 0.5", "2 - {0}", "{0} > 0", "{0} ** 2", "{0} / 3",
                "{0} % 3", "-{0}", "~{0}", "abs({0})", "{0} // 2", "1.5 ** {0}"]
REDUCE_NP = ["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin", "var"]
CUMULATIVE_NP = ["cumsum", "cumprod", "cummax", "cummin"]
UNARY_LAX = ["neg", "abs", "sign", "exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt",
             "floor", "ceil", "round", "is_finite", "logistic", "expm1", "log1p",
             "population_count", "bitwise_not", "cbrt", "erf", "atan", "sinh"]
BINARY_LAX = ["add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "bitwise_and",
              "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
              "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "nextafter"]
REDUCE_LAX = ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
              "reduce_or", "argmax", "argmin"]
FAMILIES = ["unary", "binary", "operator", "scalar", "reduce", "cumulative", "shape",
            "lax_unary", "lax_binary", "lax_reduce", "lax_shape", "select", "dot", "sort",
            "convert"]
WEIGHTS = [.1, .1, .1, .06, .1, .03, .12, .06, .06, .05, .06, .05, .03, .03, .05]
# --extra-ops: families added after seeds were first recorded. Drawn only in that mode, so
# every seed of the default mode keeps its program (test_fuzz.py's regression seeds).
EXTRA_FAMILIES = FAMILIES + ["conv", "index", "top_k", "window", "scatter"]
EXTRA_WEIGHTS = [w * .75 for w in WEIGHTS] + [.07, .06, .03, .05, .04]


# ---------------------------------------------------------------- programs

def special_values(dtype: str) -> list:
    if dtype == "bool":
        return [True, False]
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return [info.min, info.max, 0, 1] + ([-1] if info.min else [])
    import ml_dtypes
    info = ml_dtypes.finfo(dtype)
    return [np.nan, np.inf, -np.inf, -0.0, 0.0, float(info.smallest_subnormal),
            float(info.max), -float(info.max), float(info.tiny)]


def input_value(spec: dict) -> np.ndarray:
    """The data of one input, from its own seed so that shrinking one input's shape
    leaves the others' values alone; an input vmap maps over (its `batch_axis`)
    stacks BATCH such values, each from a seed of its own, along that axis."""
    import ml_dtypes
    if spec.get("batch_axis") is not None:
        return np.stack([input_value({**spec, "seed": spec["seed"] + k, "batch_axis": None})
                         for k in range(BATCH)], axis=spec["batch_axis"])
    rng = np.random.default_rng(spec["seed"])
    shape, dtype = tuple(spec["shape"]), spec["dtype"]
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    if dtype == "bool":
        x = rng.integers(0, 2, shape).astype(bool)
    elif dtype.startswith("uint"):
        x = rng.integers(0, 20, shape).astype(np_dtype)
    elif dtype.startswith("int"):
        x = rng.integers(-10, 11, shape).astype(np_dtype)
    else:
        x = (rng.standard_normal(shape) * rng.choice([1.0, 4.0])).astype(np_dtype)
    x = np.asarray(x)  # rank 0: an array, not a NumPy scalar, so specials can be set
    if spec["special"] and x.size:
        values = np.array(special_values(dtype)).astype(np_dtype)
        mask = rng.random(shape) < 0.3
        x[mask] = values[rng.integers(len(values), size=int(mask.sum()))]
    return x


class Generator:
    """Draws one program from a seed: inputs, ops whose operands come from earlier
    values (broadcast-compatible for binary ops), and up to 20 outputs."""

    def __init__(self, seed: int, extra: bool = False):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp
        self.rng = np.random.default_rng(seed)
        self.extra = extra

    def program(self) -> dict:
        rng = self.rng
        rank = int(rng.integers(0, 5))
        base = [int(rng.choice([0, 1, 2, 3, 4, 5], p=[.04, .2, .24, .24, .16, .12]))
                for _ in range(rank)]
        inputs = []
        for _ in range(int(rng.integers(1, 5))):
            shape = base[int(rng.integers(0, rank + 1)):] if rng.random() < .8 else \
                [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 4)))]
            shape = [1 if rng.random() < .1 else d for d in shape]
            inputs.append({"shape": shape, "dtype": str(rng.choice(DTYPES)),
                           "seed": int(rng.integers(1 << 31)), "special": bool(rng.random() < .5)})
        self.avals = [self.jax.ShapeDtypeStruct(tuple(s["shape"]), self._dtype(s["dtype"]))
                      for s in inputs]
        ops = []
        target = int(rng.integers(10, 61))
        for _ in range(target * 4):
            if len(ops) == target:
                break
            op = self._draw()
            if op is not None:
                ops.append(op)
        read = {j for op in ops for j in op["args"]}
        unread = [j for j in range(len(inputs), len(self.avals)) if j not in read]
        extra = [j for j in range(len(self.avals)) if j not in unread and rng.random() < .1]
        outputs = sorted(set(unread[-20:] + extra))[:20] or [len(self.avals) - 1]
        return {"inputs": inputs, "ops": ops, "outputs": outputs}

    def loop(self, prog: dict, seed: int) -> dict:
        """The program as the body of a scan of 2 or 3 steps: each input is carried,
        most of them updated to a value of the same type the body computes, and the
        outputs are stacked over the steps. Drawn from a stream of its own, so the
        program is the seed's straight-line one."""
        rng, n = np.random.default_rng([seed, 1]), len(prog["inputs"])
        carry = []
        for i in range(n):
            same = [j for j in range(n, len(self.avals)) if self.avals[j].shape ==
                    self.avals[i].shape and self.avals[j].dtype == self.avals[i].dtype]
            if same and rng.random() < .8:
                carry.append([i, same[int(rng.integers(len(same)))]])
        return {**prog, "loop": {"length": int(rng.integers(2, 4)), "carry": carry}}

    def _dtype(self, name):
        return self.jnp.bfloat16 if name == "bfloat16" else np.dtype(name)

    def _draw(self) -> dict | None:
        """One op whose output JAX accepts and which stays small, or None."""
        rng = self.rng
        x = int(rng.integers(len(self.avals)))
        if rng.random() < .5:  # the newest values, so chains get deep
            x = max(0, len(self.avals) - 1 - int(rng.integers(0, 4)))
        code, args = self._form(x)
        if code is None:
            return None
        fn = eval("lambda *v: " + code.format(*[f"v[{i}]" for i in range(len(args))],
                                              np="jnp", lax="lax"),
                  {"jnp": self.jnp, "lax": self.jax.lax})
        try:
            out = self.jax.eval_shape(fn, *[self.avals[j] for j in args])
        except Exception:
            return None
        if not hasattr(out, "shape") or np.prod(out.shape, dtype=int) > MAX_ELEMENTS:
            return None
        self.avals.append(self.jax.ShapeDtypeStruct(out.shape, out.dtype))
        return {"code": code, "args": args}

    def _partner(self, x: int, same_type: bool) -> int:
        a = self.avals[x]
        fits = [j for j, b in enumerate(self.avals)
                if (b.shape == a.shape and (b.dtype == a.dtype or not same_type))
                or (not same_type and _broadcastable(a.shape, b.shape))]
        return fits[int(self.rng.integers(len(fits)))]

    def _form(self, x: int):
        rng, a = self.rng, self.avals[x]
        ndim = len(a.shape)
        axis = int(rng.integers(-ndim, ndim)) if ndim else None
        families, weights = (EXTRA_FAMILIES, EXTRA_WEIGHTS) if self.extra else (FAMILIES, WEIGHTS)
        family = rng.choice(families, p=weights)
        pick = lambda names: names[int(rng.integers(len(names)))]
        if family == "unary":
            return "{np}.%s({0})" % pick(UNARY_NP), [x]
        if family == "binary":
            return "{np}.%s({0}, {1})" % pick(BINARY_NP), [x, self._partner(x, False)]
        if family == "operator":
            return "{0} %s {1}" % pick(OPERATORS), [x, self._partner(x, False)]
        if family == "scalar":
            return pick(SCALAR_FORMS), [x]
        if family == "reduce":
            where = "" if axis is None or rng.random() < .2 else "axis=%d" % axis
            keep = ", keepdims=True" if where and rng.random() < .3 else ""
            return "{np}.%s({0}%s%s)" % (pick(REDUCE_NP), where and ", " + where, keep), [x]
        if family == "cumulative":
            return "{np}.%s({0}, axis=%s)" % (pick(CUMULATIVE_NP), axis), [x]
        if family == "lax_unary":
            return "{lax}.%s({0})" % pick(UNARY_LAX), [x]
        if family == "lax_binary":
            return "{lax}.%s({0}, {1})" % pick(BINARY_LAX), [x, self._partner(x, True)]
        if family == "lax_reduce":
            name = pick(REDUCE_LAX)
            if name.startswith("arg"):
                if not ndim:
                    return None, None
                return "{lax}.%s({0}, %d, {np}.int32)" % (name, axis % ndim), [x]
            axes = tuple(sorted({int(i) for i in rng.integers(0, ndim, int(rng.integers(0, 3)))})) \
                if ndim else ()
            return "{lax}.%s({0}, %r)" % (name, axes), [x]
        if family == "select":
            c = self._partner(x, False)
            return rng.choice(["{np}.where({1} > 0, {0}, {2})", "{np}.where({1}, {0}, {2})",
                               "{lax}.select({1}, {0}, {2})",
                               "{np}.clip({0}, {1}, {2})"]), [x, c, self._partner(x, True)]
        if family == "dot":
            return "{np}.matmul({0}, {1})", [x, int(rng.integers(len(self.avals)))]
        if family == "sort":
            name = pick(["sort", "argsort"])
            return ("{np}.%s({0}, axis=%d)" % (name, axis), [x]) if ndim else (None, None)
        if family == "convert":
            dtype = pick(DTYPES)
            return rng.choice(["{0}.astype({np}.%s)" % _np_name(dtype),
                               "{lax}.convert_element_type({0}, {np}.%s)" % _np_name(dtype)]), [x]
        if family == "lax_shape":
            return self._lax_shape(x, axis), [x]
        if family == "conv":
            return self._conv(x), [x]
        if family == "index":
            return self._index(x, axis), [x]
        if family == "top_k":
            k = int(rng.integers(0, a.shape[-1] + 1)) if ndim else 0
            return "{lax}.top_k({0}, %d)[%d]" % (k, rng.integers(2)), [x]
        if family == "window":
            return self._window(x), [x]
        if family == "scatter":
            return self._scatter(x), [x]
        return self._np_shape(x, axis), [x]

    def _window(self, x: int) -> str:
        """A pool as flax writes one (reduce_window of add, max or min from its identity),
        or an op of the lax extras that lowers to a window: cumlogsumexp,
        reduce_precision."""
        rng, shape = self.rng, self.avals[x].shape
        ndim = len(shape)
        kind = int(rng.integers(5))
        # JAX's dtype rule passes an integer cumlogsumexp to a lowering that then fails,
        # so in dead code it accepts one we refuse
        if kind == 3 and ndim and self.jnp.issubdtype(self.avals[x].dtype, self.jnp.inexact):
            return "{lax}.cumlogsumexp({0}, %d, reverse=%r)" % (
                int(rng.integers(ndim)), bool(rng.random() < .5))
        if kind == 4:
            return "{lax}.reduce_precision({0}, %d, %d)" % (
                (5, 10) if rng.random() < .5 else (8, 7))
        init, fn = (("0", "add"), ("-{np}.inf", "max"), ("{np}.inf", "min"))[kind % 3]
        window = tuple(int(rng.integers(1, 4)) for _ in range(ndim))
        strides = tuple(int(rng.integers(1, 3)) for _ in range(ndim))
        padding = rng.choice(["'SAME'", "'VALID'", repr(tuple(
            (int(rng.integers(0, 2)), int(rng.integers(0, 2))) for _ in range(ndim)))])
        dilation = ", window_dilation=%r" % (tuple(int(rng.integers(1, 3)) for _ in range(ndim)),) \
            if rng.random() < .2 else ""
        return "{lax}.reduce_window({0}, %s, {lax}.%s, %r, %r, %s%s)" % (
            init, fn, window, strides, padding, dilation)

    def _scatter(self, x: int) -> str | None:
        """lax.scatter_* of rows of `x` into `x` at rows 0, 0 (twice) and 1 (dropped, or
        clipped, where `x` has one row)."""
        rng, ndim = self.rng, len(self.avals[x].shape)
        if not ndim:
            return None
        kind = ("add", "sub", "mul", "min", "max")[int(rng.integers(5))]
        # not min or max clipped: JAX's derivative counts a clipped row's ties where the
        # row was, not where it lands (3.33 for 2.5), ours the clamped scatter's
        modes = ["", ", mode='drop'"] + [", mode='clip'"] * (kind not in ("min", "max"))
        mode = modes[int(rng.integers(len(modes)))]
        dims = "{lax}.ScatterDimensionNumbers(%r, (0,), (0,))" % (tuple(range(1, ndim)),)
        return ("{lax}.scatter_%s({0}, {np}.array([[0], [0], [1]]), "
                "{np}.stack([{0}[0], {0}[-1], {0}[0]]), %s%s)" % (kind, dims, mode))

    def _conv(self, x: int) -> str | None:
        """A convolution of `x` with a kernel sliced from `x` itself, so that grad and
        vmap reach both operands: channels first or last, strides, padding and both
        dilations drawn."""
        rng, shape = self.rng, self.avals[x].shape
        spatial = len(shape) - 2
        if spatial not in (1, 2):
            return None
        window = [int(rng.integers(1, 3)) for _ in range(spatial)]
        last = rng.random() < .4  # NHWC / HWIO, as flax writes convolutions
        if last:  # kernel (spatial..., in = x's channels, out = 1)
            kernel = "{0}[0, %s, :, None]" % ", ".join(f":{w}" for w in window)
            layout = ", dimension_numbers=%r" % (
                ("NWC", "WIO", "NWC") if spatial == 1 else ("NHWC", "HWIO", "NHWC"),)
        else:  # kernel (out <= 2, in = x's channels, spatial...)
            kernel = "{0}[:2, :, %s]" % ", ".join(f":{w}" for w in window)
            layout = ""
        strides = tuple(int(rng.integers(1, 3)) for _ in range(spatial))
        padding = rng.choice(["'SAME'", "'VALID'", repr(tuple(
            (int(rng.integers(-1, 2)), int(rng.integers(0, 2))) for _ in range(spatial)))])
        dilations = "".join(
            ", %s=%r" % (name, tuple(int(rng.integers(1, 3)) for _ in range(spatial)))
            for name in ("lhs_dilation", "rhs_dilation") if rng.random() < .3)
        return "{lax}.conv_general_dilated({0}, %s, %r, %s%s%s)" % (
            kernel, strides, padding, dilations, layout)

    def _index(self, x: int, axis) -> str | None:
        """Gathers and scatters with static or data-dependent indices: repeated indices
        (scatter-add's duplicates), negative ones, .at[] updates of every kind."""
        rng, ndim = self.rng, len(self.avals[x].shape)
        if not ndim:
            return None
        forms = ["{0}[[0, -1, 0]]", "{0}[..., [1, 0]]", "{0}.at[0].set(1)",
                 "{0}.at[[0, 0]].add({0}[0])", "{0}.at[..., 0].multiply(2)",
                 "{0}.at[1:].min({0}[:1])", "{0}.at[[-1, 0]].max(0)", "{0}.at[0].get()",
                 "{np}.take({0}, {np}.array([1, 0, 1]), axis=%d)" % axis,
                 "{np}.take_along_axis({0}, {np}.argsort({0}, axis=%d), axis=%d)" % (axis, axis),
                 "{lax}.dynamic_slice_in_dim({0}, 1, 1, %d)" % (axis % ndim),
                 "{lax}.dynamic_update_slice_in_dim({0}, {0}[:1], {np}.argmax({0}), 0)",
                 "{np}.ravel({0})[{np}.argmin({0})]",
                 "{0}.at[{np}.argmax({0}, axis=0)].add(1)"]
        return forms[int(rng.integers(len(forms)))]

    def _np_shape(self, x: int, axis):
        rng, shape = self.rng, self.avals[x].shape
        ndim, size = len(shape), int(np.prod(shape, dtype=int))
        forms = ["{np}.expand_dims({0}, 0)", "{np}.ravel({0})", "{0}.reshape(-1, 1)",
                 "{np}.broadcast_to({0}, (2,) + {0}.shape)", "{np}.stack([{0}, {0}])",
                 "{np}.tile({0}, 2)", "{np}.pad({0}, 1)"]
        if ndim:
            perm = tuple(int(i) for i in rng.permutation(ndim))
            forms += ["{np}.transpose({0}, %r)" % (perm,), "{np}.flip({0}, %d)" % axis,
                      "{0}[1:]", "{0}[::2]", "{0}[..., ::-1]", "{0}[0]", "{0}[-1:, ...]",
                      "{np}.concatenate([{0}, {0}], axis=%d)" % axis, "{np}.squeeze({0})",
                      "{np}.roll({0}, 1, axis=%d)" % axis, "{np}.repeat({0}, 2, axis=%d)" % axis,
                      "{np}.moveaxis({0}, %d, 0)" % axis, "{0}.T"]
        if size and size % 2 == 0:
            forms += ["{0}.reshape(2, -1)", "{0}.reshape(%d, 2)" % (size // 2)]
        return forms[int(rng.integers(len(forms)))]

    def _lax_shape(self, x: int, axis):
        rng, shape = self.rng, self.avals[x].shape
        ndim = len(shape)
        forms = ["{lax}.broadcast_in_dim({0}, (3,) + {0}.shape, %r)" % (tuple(range(1, ndim + 1)),),
                 "{lax}.expand_dims({0}, (0,))"]
        if ndim:
            lo = tuple(int(i) for i in rng.integers(-1, 2, ndim))
            forms += ["{lax}.rev({0}, (%d,))" % (axis % ndim),
                      "{lax}.pad({0}, {np}.zeros((), {0}.dtype), %r)"
                      % (tuple((l, int(rng.integers(-1, 2)), int(rng.integers(0, 2))) for l in lo),),
                      "{lax}.slice_in_dim({0}, 0, %d, 1, %d)" % (max(1, shape[axis] // 2), axis % ndim),
                      "{lax}.transpose({0}, %r)" % (tuple(int(i) for i in rng.permutation(ndim)),),
                      "{lax}.concatenate([{0}, {0}], %d)" % (axis % ndim),
                      "{lax}.cumsum({0}, %d)" % (axis % ndim),
                      "{lax}.cummax({0}, %d)" % (axis % ndim),
                      "{lax}.sort({0}, dimension=%d)" % (axis % ndim)]
        return forms[int(rng.integers(len(forms)))]


def _broadcastable(a: tuple, b: tuple) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1]))


def _np_name(dtype: str) -> str:
    return "bool_" if dtype == "bool" else dtype


def program(seed: int, loop: bool = False, transform: str | None = None,
            extra: bool = False) -> dict:
    """Seed `seed`'s program; with `loop`, the same program as a scan's body; with
    `transform` (one of TRANSFORMS), that program transformed; with `extra`, drawn from
    EXTRA_FAMILIES (another program for the same seed)."""
    generator = Generator(seed, extra)
    prog = generator.program()
    redraws = 0
    while transform == "grad" and not grad_argnums(prog):
        # grad of no float input is invalid (JAX's grad with argnums=() fails): such a
        # seed draws again from streams of its own, so that 4 in 10 grad seeds are not
        # wasted; a seed with a float input keeps its program
        redraws += 1
        generator = Generator([seed, 3, redraws], extra)
        prog = generator.program()
    if loop:
        prog = generator.loop(prog, seed)
    return with_transform(prog, transform, seed) if transform else prog


def with_transform(prog: dict, transform: str, seed: int) -> dict:
    """`prog` under `transform`. vmap's batch axis of each input (None: not mapped)
    comes from a stream of the seed's own and stays with the input as the program
    shrinks; at least one input is mapped, as jax.vmap requires."""
    if transform not in TRANSFORMS:
        raise ValueError(f"transform {transform!r}: one of {', '.join(TRANSFORMS)}")
    inputs = prog["inputs"]
    if transform == "vmap":
        rng = np.random.default_rng([seed, 2])
        axes = [None if rng.random() < .3 else int(rng.integers(-ndim - 1, ndim + 1))
                for ndim in (len(spec["shape"]) for spec in inputs)]
        if all(axis is None for axis in axes):
            axes[0] = 0
        inputs = [{**spec, "batch_axis": axis} for spec, axis in zip(inputs, axes)]
    return {**prog, "inputs": inputs, "transform": transform}


def input_shape(spec: dict) -> tuple:
    """The shape of input_value(spec)."""
    shape = list(spec["shape"])
    if spec.get("batch_axis") is not None:
        axis = spec["batch_axis"] % (len(shape) + 1)
        shape.insert(axis, BATCH)
    return tuple(shape)


def grad_argnums(prog: dict) -> list[int]:
    """The inputs grad differentiates: the float ones."""
    return [i for i, spec in enumerate(prog["inputs"]) if spec["dtype"] in FLOATS]


def source(prog: dict, np_name: str = "tnp", lax_name: str = "tl", name: str = "f",
           api: str = "tracehlo") -> str:
    """The program as a Python function over `np_name` and `lax_name`; transformed
    (prog["transform"]), the program is `{name}_body` and `{name}` its transform
    by `api`'s grad or vmap."""
    transform = prog.get("transform")
    body = source({k: v for k, v in prog.items() if k != "transform"}, np_name, lax_name,
                  f"{name}_body") if transform else ""
    n = len(prog["inputs"])
    names = ", ".join(f"v{i}" for i in range(n))
    if transform == "vmap":
        axes = "".join(f"{spec['batch_axis']}, " for spec in prog["inputs"])
        return body + f"{name} = {api}.vmap({name}_body, in_axes=({axes}))\n"
    if transform == "grad":
        argnums = "".join(f"{i}, " for i in grad_argnums(prog))
        return body + "\n".join([
            "", f"def {name}_loss({names}):",
            "    total = 0.0",
            f"    for out in {name}_body({names}):",
            f"        if {np_name}.issubdtype(out.dtype, {np_name}.floating):",
            "            cotangent = np.cos(np.arange(np.prod(out.shape, dtype=int))) + 1.5",
            f"            total = total + {np_name}.sum(out.astype({np_name}.float32) * "
            "cotangent.astype(np.float32).reshape(out.shape))",
            "    return total",
            f"{name} = {api}.grad({name}_loss, argnums=({argnums}))", ""])
    outputs = f"({''.join(f'v{j}, ' for j in prog['outputs'])})"
    loop = prog.get("loop")
    indent = "        " if loop else "    "
    lines = [f"def {name}({names}):"]
    if loop:
        lines += ["    def body(carry, _):", f"        ({names},) = carry"]
    for k, op in enumerate(prog["ops"]):
        lines.append(f"{indent}v{n + k} = " + op["code"].format(
            *[f"v{j}" for j in op["args"]], np=np_name, lax=lax_name))
    if loop:
        carried = dict(loop["carry"])
        lines += [f"        return ({''.join(f'v{carried.get(i, i)}, ' for i in range(n))}), "
                  f"{outputs}",
                  f"    return {lax_name}.scan(body, ({names},), None, "
                  f"length={loop['length']})[1]"]
    else:
        lines.append(f"    return {outputs}")
    return "\n".join(lines) + "\n"


def functions(prog: dict):
    """(tracehlo function, jax function) of a program."""
    import jax
    import jax.numpy as jnp
    import tracehlo
    import tracehlo.lax as tl
    import tracehlo.numpy as tnp
    scope = {"tnp": tnp, "tl": tl, "jnp": jnp, "lax": jax.lax, "np": np,
             "tracehlo": tracehlo, "jax": jax}
    code = source(prog, "tnp", "tl", "f") + source(prog, "jnp", "lax", "f_jax", "jax")
    exec(compile(code, "fuzz_program.py", "exec"), scope)  # user lines name this file
    return scope["f"], scope["f_jax"]


# ---------------------------------------------------------------- running one program

def compare(got, want, weak_types: bool = True) -> tuple[str, str] | None:
    """(class, why) where `got` is not JAX's `want`, else None: shape, dtype and
    (if `weak_types`) weak type equal, integers and bools exactly, floats within the
    dtype's tolerance with nan and infinities in the same places."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return "mismatch", f"got {got.dtype}{list(got.shape)}, JAX {want.dtype}{list(want.shape)}"
    if weak_types and got.weak_type != want.weak_type:
        return "weak-type", f"weak_type {got.weak_type}, JAX's {want.weak_type}"
    g, w = np.asarray(got), np.asarray(want)
    if str(w.dtype) not in TOLERANCE:
        bad = g != w
    else:
        rtol, atol = TOLERANCE[str(w.dtype)]
        g, w = g.astype(np.float64), w.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        close = np.abs(g - w) <= atol + rtol * np.abs(w)
        bad = ~(both_nan | (g == w) | (close & np.isfinite(w)))
    if not bad.any():
        return None
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return "mismatch", f"{int(bad.sum())} of {bad.size} elements differ, e.g. at {list(i)}: " \
                       f"{g[i]!r} vs JAX {w[i]!r}"


USER_ERRORS = (TypeError, ValueError, NotImplementedError, IndexError)


def bits_differ(got, want) -> str | None:
    """Why `got` is not `want` bit for bit (NaNs only in the same places), else None."""
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype != w.dtype:
        return f"{g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}"
    bad = g != w
    if np.issubdtype(g.dtype, np.inexact) or str(g.dtype) == "bfloat16":
        nan_g, nan_w = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
        ints = g.view(f"u{g.dtype.itemsize}") != w.view(f"u{w.dtype.itemsize}")
        bad = (nan_g != nan_w) | (ints & ~nan_g)
    if not bad.any():
        return None
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} elements differ, e.g. at {list(i)}: " \
           f"{g[i]!r} vs fusion xla's {w[i]!r}"


def _failure(cls: str, stage: str, detail: str) -> dict:
    return {"class": cls, "stage": stage, "detail": detail}


def _exception(stage: str, e: BaseException) -> dict:
    from tracehlo import TracehloError, runtime
    from tracehlo.passes import UnsupportedFusionError
    message = f"{type(e).__name__}: {str(e).strip()}"
    if isinstance(e, runtime.XlaCompileError):
        return _failure("xla-error", stage, message)
    if isinstance(e, (TracehloError, UnsupportedFusionError) + USER_ERRORS):
        return _failure("refusal", stage, message)
    return _failure("internal-error", stage, message)


def _backend_refusals(stage: str, fusion_report) -> list[dict]:
    """The fusions our passes made that check_backend refused and undid
    (pipeline.unfuse_what_the_backend_refuses): a bug in the passes' own checks."""
    return [_failure("refusal", stage, f"check-backend undid a fusion: {d.reason}")
            for d in getattr(fusion_report, "decisions", ()) if d.pass_name == "check-backend"]


def run_program(prog: dict, kind: str, report=lambda stage: None,
                bitwise: bool = False) -> list[dict]:
    """The failures of one program under `kind`; `report(stage)` is called before
    each stage so that a parent can name the stage a crash happened in. `bitwise`:
    fusion-bits failures too (kind jit)."""
    import logging

    import jax
    import tracehlo
    from tracehlo import passes, runtime
    f, f_jax = functions(prog)
    args = [jax.device_put(input_value(s)) for s in prog["inputs"]]
    report("jax")
    try:
        want = jax.jit(f_jax)(*args)
    except Exception as e:  # JAX refuses at run time: not a program to judge us on
        return [_failure("invalid", "jax", f"{type(e).__name__}: {e}")]
    eager = {}

    def op_by_op():
        """op_by_op_values, asked only when a value differs from jax.jit's."""
        if "values" not in eager:
            eager["values"] = op_by_op_values(f_jax, args, want)
        return eager["values"]
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logger = logging.getLogger("tracehlo")
    logger.addHandler(handler)
    failures, outputs = [], {}
    try:
        if kind == "jit":
            for mode in MODES:
                report(mode)
                del warnings[:]
                try:
                    jitted = tracehlo.jit(f, fusion=mode)
                    got = jitted(*args)
                    compiled = jitted.lower(*args)
                except Exception as e:
                    failures.append(_exception(mode, e))
                    continue
                why = getattr(compiled.fusion_report(), "fallback", None)  # XLA's refusal
                if compiled.fusion != mode or warnings or why:
                    failures.append(_failure("fallback", mode, " / ".join(warnings)[:2000]
                                             or why or f"compiled with fusion={compiled.fusion}"))
                failures += _backend_refusals(mode, compiled.fusion_report())
                failures += _compare_all(prog, mode, got, want, op_by_op)
                outputs[mode] = got
            failures = _merge_modes(failures)
            if bitwise and {"xla", "tracehlo"} <= outputs.keys():
                failures += _compare_bits(prog, outputs["tracehlo"], outputs["xla"])
        else:
            report("passes")
            try:
                text = jax.jit(f_jax, keep_unused=True).lower(*args).as_text()
                result = passes.fuse_with_report(text)
                passes.check_backend(result.text)
            except Exception as e:
                return [_exception("passes", e)]
            failures += _backend_refusals("passes", result.report)
            report("xla")
            try:
                out_types = [(w.shape, w.dtype) for w in want]
                exe = runtime.compile(result.text, out_types, xla_fusion=False,
                                      passes_off=result.xla_passes_off)
                got = exe(args)
            except Exception as e:
                return [_exception("xla", e)]
            failures += _compare_all(prog, "hlo-opt", got, want, op_by_op)
    finally:
        logger.removeHandler(handler)
    return failures


def op_by_op_values(f_jax, args: list, want: list) -> list:
    """JAX's values of `f_jax` op by op (`want`: jax.jit's). Where JAX refuses the
    program op by op (a negative integer power, once it sees the exponent: hlo-opt
    --loop seed 321), jax.jit's own module compiled with XLA's fusion off stands in:
    what XLA's fusion alone changes, it does not."""
    import jax
    from tracehlo import runtime
    try:
        with jax.disable_jit():
            return list(f_jax(*args))
    except Exception:  # noqa: BLE001 - any refusal
        text = jax.jit(f_jax, keep_unused=True).lower(*args).as_text()
        return runtime.compile(text, [(w.shape, w.dtype) for w in want], xla_fusion=False)(args)


def _compare_all(prog: dict, stage: str, got, want, op_by_op) -> list[dict]:
    """A mismatch names the op that computed the output, so that classes tell ops apart.
    A value that differs from jax.jit's but equals JAX's op by op (`op_by_op()`) is
    jit-differs: jax.jit's XLA folded or fused differently (x / 0 folded to 0 after an
    argmax over a unit axis became 0; bf16 rounding dropped inside its kernels)."""
    failures = []
    for k, (g, w) in enumerate(zip(got, want)):
        problem = compare(g, w, weak_types=stage != "hlo-opt")  # XLA has no weak types
        if problem and problem[0] == "mismatch" and g.shape == w.shape and g.dtype == w.dtype \
                and compare(g, op_by_op()[k], weak_types=False) is None:
            problem = ("jit-differs", problem[1])
        if problem:
            failures.append(_failure(problem[0], stage,
                                     f"{_output_op(prog, k)}: output {k}: {problem[1]}"))
    return failures


def _output_op(prog: dict, k: int) -> str:
    """What computed output `k`, for the failure's class: the op's code, or under
    grad the input it is the gradient for, with that input's dtype."""
    n = len(prog["inputs"])
    if prog.get("transform") == "grad":
        return f"grad for a {prog['inputs'][grad_argnums(prog)[k]]['dtype']} input"
    j = prog["outputs"][k]
    return prog["ops"][j - n]["code"] if j >= n else "input"


def _compare_bits(prog: dict, ours, xla) -> list[dict]:
    """fusion-bits failures: our fusion's outputs against fusion "xla"'s."""
    failures = []
    for k, (g, x) in enumerate(zip(ours, xla)):
        if (why := bits_differ(g, x)) is not None:
            failures.append(_failure("fusion-bits", "tracehlo",
                                     f"{_output_op(prog, k)}: output {k}: {why}"))
    return failures


def _merge_modes(failures: list[dict]) -> list[dict]:
    """A failure every fusion mode shows is one failure of stage `all`: tracing,
    lowering or JAX's semantics, not fusion."""
    stages = collections.defaultdict(set)
    for f in failures:
        stages[class_key({**f, "stage": ""})].add(f["stage"])
    merged, seen = [], set()
    for f in failures:
        key = class_key({**f, "stage": ""})
        if stages[key] >= set(MODES):
            if key not in seen:
                seen.add(key)
                merged.append({**f, "stage": "all"})
        else:
            merged.append(f)
    return merged


def class_key(failure: dict) -> str:
    """What makes two failures the same bug: class, stage and the message's first
    line with numbers, names and types generalised."""
    detail = failure["detail"].split("\n")[0]
    detail = re.sub(r"^.*XLA could not compile the program: (INTERNAL: during context "
                    r"\[[^\]]*\]: )?", "XLA: ", detail)
    if failure["class"] in ("mismatch", "weak-type", "jit-differs", "fusion-bits"):
        detail = re.sub(r": output \d+: ", ": ", detail)
        detail = re.sub(r"\d+ of \d+ elements differ.*", "values differ", detail)
    # an HLO instruction's text varies with the program: keep its opcode only
    detail = re.sub(r"(Non-root instruction) \S+ = .*? ([a-z][\w-]*)\(.*? in \S+ = .*? "
                    r"([a-z][\w-]*)\(.*", r"\1 \2 in a \3", detail)
    detail = re.sub(r"/[^ :]*\.py:\d+", "FILE", detail)
    detail = re.sub(r"\b(bf|[fiu]i?)\d+\[[^\]]*\]|tensor<[^>]*>", "TYPE", detail)
    detail = re.sub(r"%[\w.]+|\b\w+\.\d+\b", "NAME", detail)
    detail = re.sub(r"(?<![{])\d+", "N", detail)
    return f"{failure['class']} [{failure['stage']}] {detail[:160]}"


# ---------------------------------------------------------------- worker processes

class Worker:
    """A child process that runs programs one at a time (jobs in as JSON lines on
    stdin, `stage NAME` lines and one JSON result out). A program that kills or
    hangs the child becomes a crash or timeout failure, with XLA's last check
    message from the child's stderr, and the next program gets a fresh child."""

    def __init__(self, timeout: float = 120.0, bitwise: bool = False):
        self.timeout = timeout
        self.bitwise = bitwise
        self._process = None
        self._stderr = tempfile.TemporaryFile("w+")

    def run(self, prog: dict, kind: str) -> list[dict]:
        if self._process is None:
            self._start()
        self._stderr.seek(0, os.SEEK_END)
        start = self._stderr.tell()
        stage, deadline = "start", time.monotonic() + self.timeout
        try:
            self._process.stdin.write(json.dumps({"program": prog, "kind": kind,
                                                  "bitwise": self.bitwise}) + "\n")
            self._process.stdin.flush()
            while (line := self._readline(deadline)) is not None:
                if not line:
                    break
                if line.startswith("stage "):
                    stage = line.split()[1]
                else:
                    return json.loads(line)
            else:
                self._process.kill()
                self._process.wait()
                self._process = None
                return [_failure("timeout", stage, f"killed after {self.timeout:g} s")]
        except BrokenPipeError:
            pass
        code = self._process.wait()
        self._process = None
        cause = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        self._stderr.seek(start)
        log = self._stderr.read()
        checks = [l for l in log.splitlines() if "Check failed" in l or " F0" in l[:8]
                  or "Fatal" in l or "error" in l.lower()]
        message = re.sub(r"^.*?\] ", "", checks[-1]) if checks else ""
        detail = f"{cause}: {message}".strip(": ")
        if stage == "jax":  # jax.jit itself died (XLA's constant folder on x // 0, ...):
            return [_failure("invalid", stage, f"jax.jit died: {detail}")]  # no oracle
        return [_failure("crash", stage, detail)]

    def _readline(self, deadline: float) -> str | None:
        """The child's next line, "" at its end, None past the deadline. Unbuffered
        reads: a buffered reader would hold lines that select() cannot see."""
        fd = self._process.stdout.fileno()
        while b"\n" not in self._pending:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return ""
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode() + "\n"

    def _start(self) -> None:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1"}
        self._process = subprocess.Popen([sys.executable, __file__, "--worker"], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, text=True)
        self._pending = b""
        if self._readline(time.monotonic() + 300) != "ready\n":
            self._process.wait()
            self._process = None
            raise RuntimeError("fuzz worker did not start")

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait()
            self._process = None
        self._stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _serve() -> None:
    """The child side of Worker; fd 1 goes to stderr so no stray print (Python or
    C++) corrupts the result stream."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import tracehlo  # noqa: F401  (start-up cost paid before `ready`)
    out.write("ready\n")
    out.flush()

    def report(stage):
        out.write(f"stage {stage}\n")
        out.flush()

    for line in sys.stdin:
        job = json.loads(line)
        try:
            failures = run_program(job["program"], job["kind"], report, job["bitwise"])
        except Exception as e:  # the harness's own bug: still one program's result
            failures = [_failure("internal-error", "harness", f"{type(e).__name__}: {e}")]
        out.write(json.dumps(failures) + "\n")
        out.flush()


def fuzz(seeds, kind: str, worker: Worker, report=lambda seed, failures: None,
         loop: bool = False, transform: str | None = None, extra: bool = False) -> dict:
    """{seed: failures} for every seed; `report` sees invalid programs too, the
    result leaves them out."""
    results = {}
    for seed in seeds:
        failures = worker.run(program(seed, loop, transform, extra), kind)
        report(seed, failures)
        if not (failures and failures[0]["class"] == "invalid"):
            results[seed] = failures
    return results


# ---------------------------------------------------------------- shrinking

def prune(prog: dict) -> dict:
    """Drop ops no output needs and inputs nothing reads; renumber values."""
    n = len(prog["inputs"])
    carried = dict(prog["loop"]["carry"]) if prog.get("loop") else {}
    live, grown = set(), set(prog["outputs"])
    while grown - live:  # a live carried input needs the value carried into it
        live |= grown
        for k in range(len(prog["ops"]) - 1, -1, -1):
            if n + k in live:
                live.update(prog["ops"][k]["args"])
        grown = live | {carried[i] for i in live if i in carried}
    kept_inputs = [i for i in range(n) if i in live]
    kept_ops = [k for k in range(len(prog["ops"])) if n + k in live]
    renumber = {old: new for new, old in enumerate(kept_inputs + [n + k for k in kept_ops])}
    pruned = {"inputs": [prog["inputs"][i] for i in kept_inputs],
              "ops": [{"code": prog["ops"][k]["code"],
                       "args": [renumber[j] for j in prog["ops"][k]["args"]]}
                      for k in kept_ops],
              "outputs": [renumber[j] for j in prog["outputs"]]}
    if prog.get("loop"):
        pruned["loop"] = {**prog["loop"], "carry": [[renumber[i], renumber[j]]
                                                    for i, j in prog["loop"]["carry"] if i in live]}
    if prog.get("transform"):
        pruned["transform"] = prog["transform"]
    return pruned


def valid(prog: dict) -> bool:
    """JAX accepts the program (shapes may no longer fit after shrinking)."""
    import jax
    import jax.numpy as jnp
    _, f_jax = functions(prog)
    avals = [jax.ShapeDtypeStruct(input_shape(s),
                                  jnp.bfloat16 if s["dtype"] == "bfloat16" else s["dtype"])
             for s in prog["inputs"]]
    try:
        jax.eval_shape(f_jax, *avals)
        return True
    except Exception:
        return False


def candidates(prog: dict):
    """Smaller variants of a program, the most reducing first."""
    outs, loop = prog["outputs"], prog.get("loop")
    if loop:  # straight-line, then carrying one value fewer
        yield {key: value for key, value in prog.items() if key != "loop"}
        for pair in loop["carry"]:
            yield {**prog, "loop": {**loop, "carry": [p for p in loop["carry"] if p != pair]}}
    if len(outs) > 1:
        for half in (outs[: len(outs) // 2], outs[len(outs) // 2:]):
            yield {**prog, "outputs": half}
        for j in outs:
            yield {**prog, "outputs": [o for o in outs if o != j]}
    n = len(prog["inputs"])
    for k in range(len(prog["ops"]) - 1, -1, -1):
        for arg in dict.fromkeys(prog["ops"][k]["args"]):  # use an operand instead
            swap = lambda j: arg if j == n + k else j
            swapped = {**prog, "ops": [{**op, "args": [swap(j) for j in op["args"]]}
                                       for op in prog["ops"]],
                       "outputs": [swap(j) for j in outs]}
            if loop:
                swapped["loop"] = {**loop, "carry": [[i, swap(j)] for i, j in loop["carry"]]}
            yield swapped
    for i, spec in enumerate(prog["inputs"]):
        smaller = [{**spec, "special": False}] if spec["special"] else []
        for d, size in enumerate(spec["shape"]):
            for new in sorted({1, size // 2} - {size}) if size > 1 else []:
                smaller.append({**spec, "shape": spec["shape"][:d] + [new] + spec["shape"][d + 1:]})
        for new in smaller:
            yield {**prog, "inputs": prog["inputs"][:i] + [new] + prog["inputs"][i + 1:]}


def shrink(prog: dict, kind: str, key: str, worker: Worker, budget: int = 200, log=print) -> dict:
    """The smallest program found that still fails with class `key`, trying at most
    `budget` candidates: greedy, restarting from the first candidate after a success."""
    prog, tries = prune(prog), 0
    progress = True
    while progress and tries < budget:
        progress = False
        for candidate in candidates(prog):
            candidate = prune(candidate)
            if candidate == prog or not valid(candidate):
                continue
            tries += 1
            if key in {class_key(f) for f in worker.run(candidate, kind)}:
                prog, progress = candidate, True
                log(f"  shrunk to {len(prog['ops'])} ops, {len(prog['outputs'])} outputs, "
                    f"inputs {[s['shape'] for s in prog['inputs']]}")
                break
            if tries >= budget:
                break
    return prog


def repro(prog: dict, kind: str, key: str) -> str:
    """A standalone script that shows the failure."""
    import ml_dtypes
    arrays = []
    for spec in prog["inputs"]:
        x = input_value(spec)
        dtype = "ml_dtypes.bfloat16" if spec["dtype"] == "bfloat16" else f"np.{spec['dtype']}"
        arrays.append(f"np.frombuffer(bytes.fromhex('{x.tobytes().hex()}'), {dtype})"
                      f".reshape({x.shape})")
    del ml_dtypes
    head = (f"# fuzz repro ({kind}): {key}\n"
            "import jax, jax.numpy as jnp, ml_dtypes, numpy as np\n"
            "import tracehlo, tracehlo.numpy as tnp, tracehlo.lax as tl\n"
            "from jax import lax\n\n")
    body = (source(prog, "tnp", "tl", "f") + "\n"
            + source(prog, "jnp", "lax", "f_jax", "jax") + "\n")
    body += "args = [jax.device_put(a) for a in [\n" + "".join(
        f"    {a},\n" for a in arrays) + "]]\nwant = jax.jit(f_jax)(*args)\n"
    if key.startswith("fusion-bits"):
        body += "want = tracehlo.jit(f, fusion='xla')(*args)  # the bits to match\n"
    if kind == "jit":
        mode = key.split("[")[1].split("]")[0]
        body += (f"got = tracehlo.jit(f, fusion={mode!r})(*args)\n"
                 if mode in MODES else "got = tracehlo.jit(f)(*args)\n")
    else:
        body += ("from tracehlo import passes, runtime\n"
                 "text = jax.jit(f_jax, keep_unused=True).lower(*args).as_text()\n"
                 "result = passes.fuse_with_report(text)\n"
                 "passes.check_backend(result.text)\n"
                 "exe = runtime.compile(result.text, [(w.shape, w.dtype) for w in want],\n"
                 "                      xla_fusion=False, passes_off=result.xla_passes_off)\n"
                 "got = exe(args)\n")
    body += "for g, w in zip(got, want):\n    print(g.dtype, g.shape, np.asarray(g).ravel()[:8], " \
            "'JAX:', np.asarray(w).ravel()[:8])\n"
    return head + body


# ---------------------------------------------------------------- command line

def summary(results: dict) -> collections.Counter:
    """Failing programs per class key (a program counts once per class)."""
    return collections.Counter(key for failures in results.values()
                               for key in {class_key(f) for f in failures})


def rates(results: dict) -> str:
    """Programs and the share failing per class: the figures issue 8 tracks."""
    count = len(results) or 1
    line = [f"{len(results)} programs"]
    for cls in ("crash", "timeout", "fallback", "xla-error", "internal-error", "refusal",
                "mismatch", "weak-type", "jit-differs", "fusion-bits"):
        n = sum(any(f["class"] == cls for f in fs) for fs in results.values())
        line.append(f"{cls} {n} ({100 * n / count:.1f}%)")
    return ", ".join(line)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=KINDS, default="jit")
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--count", type=int, default=100, help="number of seeds")
    ap.add_argument("--seed", type=int, help="run one seed and print its program")
    ap.add_argument("--loop", action="store_true",
                    help="each program as the body of a scan (lax.scan over 2 or 3 steps)")
    ap.add_argument("--transform", choices=TRANSFORMS,
                    help="each program transformed: its gradient or its vmap (see above)")
    ap.add_argument("--extra-ops", action="store_true",
                    help="draw convolutions, gathers, scatters, pools and top_k too (other "
                         "programs for the same seeds)")
    ap.add_argument("--shrink", action="store_true", help="shrink each failing class's first seed")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per program")
    ap.add_argument("--bitwise", action="store_true",
                    help="kind jit: our fusion's outputs bit for bit fusion xla's (fusion-bits)")
    ap.add_argument("--log", help="append one JSON line per program here, as it finishes")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.worker:
        _serve()
        return 0
    seeds = [opts.seed] if opts.seed is not None else range(opts.start, opts.start + opts.count)
    if opts.seed is not None:
        print(source(program(opts.seed, opts.loop, opts.transform, opts.extra_ops)))

    log = open(opts.log, "a") if opts.log else None

    def report(seed, failures):
        for key in sorted({class_key(f) for f in failures}):
            print(f"seed {seed} {opts.kind}{' loop' * opts.loop}"
                  f"{' ' + opts.transform if opts.transform else ''}: {key}", flush=True)
        if log:
            log.write(json.dumps({"seed": seed, "kind": opts.kind, "loop": opts.loop,
                                  "transform": opts.transform, "failures": failures}) + "\n")
            log.flush()

    t0 = time.monotonic()
    with Worker(opts.timeout, opts.bitwise) as worker:
        results = fuzz(seeds, opts.kind, worker, report, opts.loop, opts.transform,
                       opts.extra_ops)
        classes = summary(results)
        print(f"\n{opts.kind}: {len(results)} programs in {time.monotonic() - t0:.0f} s, "
              f"{sum(bool(f) for f in results.values())} failing\n{rates(results)}")
        for key, count in classes.most_common():
            first = min(s for s, fs in results.items() if key in {class_key(f) for f in fs})
            print(f"{count:5d}  {key}  (first seed {first})")
            if opts.shrink:
                small = shrink(program(first, opts.loop, opts.transform, opts.extra_ops),
                               opts.kind, key, worker)
                print(repro(small, opts.kind, f"{key} (seed {first})"))
    if log:
        log.close()
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
