"""Whatever the passes emit, XLA compiles: one regression test per class of failure
that random programs found (issue 8). Where XLA could abort, the program runs in a
subprocess, so a regression is a failed test, not a dead test run."""
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import passes, runtime

# Each body reads %x only through an op XLA's import (MHLO's folders) folds away.
FOLDED_BY_XLA_IMPORT = {
    "or_true": """
  %t = stablehlo.constant dense<true> : tensor<i1>
  %b = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<i1>) -> tensor<8xi1>
  %n = stablehlo.not %x : tensor<8xi1>
  %r = stablehlo.or %n, %b : tensor<8xi1>""",
    "and_false": """
  %f = stablehlo.constant dense<false> : tensor<i1>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<i1>) -> tensor<8xi1>
  %n = stablehlo.not %x : tensor<8xi1>
  %r = stablehlo.and %n, %b : tensor<8xi1>""",
    # x - 0 folds to x, then x == x to true (found on jax-lowered random programs)
    "compare_after_subtract_zero": """
  %i = stablehlo.convert %x : (tensor<8xi1>) -> tensor<8xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %b = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<i32>) -> tensor<8xi32>
  %s = stablehlo.subtract %i, %b : tensor<8xi32>
  %r = stablehlo.compare EQ, %i, %s, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>""",
}


def unfused(body):
    return f"""
func.func public @main(%x: tensor<8xi1>) -> tensor<8xi1> {{{body}
  return %r : tensor<8xi1>
}}"""


def fused_by_hand(body):
    return f"""
func.func public @main(%a: tensor<8xi1>) -> tensor<8xi1> {{
  %0 = "mhlo.fusion"(%a) ({{
  ^bb0(%x: tensor<8xi1>):{body}
    stablehlo.return %r : tensor<8xi1>
  }}) {{fusion_kind = #mhlo<fusion_kind kLoop>}} : (tensor<8xi1>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}}"""


@pytest.mark.parametrize("name", sorted(FOLDED_BY_XLA_IMPORT))
def test_check_backend_refuses_a_fusion_xla_import_folds(name):
    text = fused_by_hand(FOLDED_BY_XLA_IMPORT[name])
    with pytest.raises(runtime.XlaCompileError, match="must have users"):
        runtime.compile(text, [((8,), np.bool_)], xla_fusion=False)
    with pytest.raises(passes.UnsupportedFusionError, match="leaving a fused parameter unread"):
        passes.check_backend(text)


# canonicalize folds the logic of constant bools as XLA's simplifier does (x or true is
# true), which would leave the import nothing to fold: the pipeline without it
WITHOUT_CANONICALIZE = ",".join(p for p in passes.DEFAULT_PIPELINE.split(",")
                                if p != "canonicalize")


@pytest.mark.parametrize("name", sorted(FOLDED_BY_XLA_IMPORT))
def test_fusions_xla_import_would_fold_are_undone(name):
    text = unfused(FOLDED_BY_XLA_IMPORT[name])
    result = passes.fuse_with_report(text, pipeline=WITHOUT_CANONICALIZE)
    assert '"mhlo.fusion"' not in result.text
    assert any(d.pass_name == "xla-import" for d in result.report.rejected)
    x = np.array([True, False] * 4)
    out = []
    for program, xla_fusion in ((result.text, False), (text, True)):
        exe = runtime.compile(program, [((8,), np.bool_)], xla_fusion=xla_fusion)
        out.append(np.asarray(exe([runtime.to_device(x, exe.device)])[0]))
    np.testing.assert_array_equal(out[0], out[1])


# jit leaves XLA's import out of the passes (import_probe=False) and asks it only
# once XLA has refused the module: its verifier's error, then a second run of the
# passes that undoes the fusion, never XLA's own fusion as a fallback.
FOLDED_UNDER_JIT = {
    "compare_after_multiply_one": lambda x: (lambda i: i == i * 1)(x.astype(np.int32)),
    "compare_after_subtract_zero": lambda x: (lambda i: i == i - 0)(x.astype(np.int32)),
}


@pytest.mark.parametrize("name", sorted(FOLDED_UNDER_JIT))
def test_jit_fuses_again_when_xla_refuses_what_its_import_folds(name, caplog):
    fn, x = FOLDED_UNDER_JIT[name], np.array([True, False] * 4)
    compiled = tracehlo.compile(fn, (x,))
    unprobed = passes.fuse_with_report(compiled.stablehlo, import_probe=False).text
    assert '"mhlo.fusion"' in unprobed
    with pytest.raises(runtime.XlaCompileError, match="must have users"):
        runtime.compile(unprobed, [((8,), np.bool_)], xla_fusion=False)
    assert compiled.fusion == "tracehlo" and compiled.fusion_report().fallback is None
    assert '"mhlo.fusion"' not in compiled.fused
    assert any(d.pass_name == "xla-import" for d in compiled.fusion_report().rejected)
    assert "XLA rejected" not in caplog.text
    np.testing.assert_array_equal(np.asarray(compiled(x)), np.ones(8, bool))

# A sibling reduce read only through a zero-element slice: XLA makes the slice a
# constant, the fusion output dies under it, and XLA CPU aborted ("has_layout()").
ZERO_ELEMENT_READER = """
func.func public @main(%x: tensor<5xf32>) -> (tensor<f32>, tensor<0xf32>, tensor<1xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<5xf32>
  %s0 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %s1 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %p = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %b0 = stablehlo.broadcast_in_dim %s0, dims = [] : (tensor<f32>) -> tensor<1xf32>
  %empty = stablehlo.slice %b0 [1:1] : (tensor<1xf32>) -> tensor<0xf32>
  %bp = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<f32>) -> tensor<1xf32>
  return %s1, %empty, %bp : tensor<f32>, tensor<0xf32>, tensor<1xf32>
}"""

RUN_FUSED = textwrap.dedent("""
    import sys, numpy as np
    from tracehlo import passes, runtime
    result = passes.fuse_with_report(sys.stdin.read())
    exe = runtime.compile(result.text, [((), np.float32), ((0,), np.float32), ((1,), np.float32)],
                          xla_fusion=False, passes_off=result.xla_passes_off)
    x = np.arange(1, 6, dtype=np.float32)
    outs = [np.asarray(o) for o in exe([runtime.to_device(x, exe.device)])]
    print(result.text.count('"mhlo.fusion"'), float(outs[0]), outs[1].shape, float(outs[2][0]))
""")


def test_a_sibling_reduce_read_only_by_zero_element_ops_is_dead_code():
    proc = subprocess.run([sys.executable, "-c", RUN_FUSED], input=ZERO_ELEMENT_READER,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "55.0", "(0,)", "120.0"]


def test_sibling_min_max_of_bf16_stay_two_reduces():
    """check_backend forbids a bf16 multi-result reduce: sibling fusion must not plan one."""
    a = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5).astype(ml_dtypes.bfloat16)
    compiled = tracehlo.compile(lambda a: (tnp.min(a, 0), tnp.max(a, 0)), (a,))
    lo, hi = compiled(a)
    np.testing.assert_array_equal(np.asarray(lo), a.min(0))
    np.testing.assert_array_equal(np.asarray(hi), a.max(0))
    assert compiled.fusion == "tracehlo"
    assert any(d.pass_name == "sibling-fusion" and "multi-result reduce of bf16" in d.reason
               for d in compiled.fusion_report().rejected)


@pytest.mark.fusion_fallback
def test_a_fallback_to_xla_fusion_is_in_the_report(monkeypatch, caplog):
    """Should XLA still reject a fused module, the program runs with XLA's fusion,
    and fusion_report() says so (not only a log line)."""
    real_compile = runtime.compile

    def reject_fused(text, *args, xla_fusion=True, **kwargs):
        if not xla_fusion:
            raise runtime.XlaCompileError("XLA could not compile the program: simulated")
        return real_compile(text, *args, xla_fusion=xla_fusion, **kwargs)

    monkeypatch.setattr(runtime, "compile", reject_fused)
    x = np.arange(4, dtype=np.float32)
    compiled = tracehlo.compile(lambda x: tnp.exp(x) + 1, (x,))
    np.testing.assert_allclose(np.asarray(compiled(x)), np.exp(x) + 1, rtol=1e-6)
    assert compiled.fusion == "xla"
    report = compiled.fusion_report()
    assert report.fallback == "XLA rejected the fused module: XLA could not compile the program: simulated"
    assert "NOT USED, XLA's fusion ran instead" in str(report)
    assert "XLA rejected the fused module" in caplog.text


def test_no_fallback_without_a_rejection():
    x = np.arange(4, dtype=np.float32)
    compiled = tracehlo.compile(lambda x: tnp.exp(x) + 1, (x,))
    assert compiled.fusion == "tracehlo" and compiled.fusion_report().fallback is None


def test_a_long_chain_is_split_into_fusions_xla_cpu_can_emit():
    """A 2,500-op chain fused whole made XLA CPU abort; it is split at the bound."""
    from test_passes_scaling import chain
    result = passes.fuse_with_report(chain(2500))
    fusions = result.report.fusions
    assert len(fusions) == 3 and max(len(f.ops) for f in fusions) <= 1000
    assert any("exceed XLA cpu's bound of 1000" in d.reason for d in result.report.rejected)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys, numpy as np
        from tracehlo import runtime
        exe = runtime.compile(sys.stdin.read(), [((16,), np.float32)], xla_fusion=False)
        print(np.asarray(exe([runtime.to_device(np.ones(16, np.float32), exe.device)])[0])[0])
    """)], input=result.text, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


NEGATIVE_PAD = textwrap.dedent("""
    import numpy as np, jax, jax.numpy as jnp
    from jax import lax
    from tracehlo import passes, runtime
    f = lambda v: lax.pad(lax.convert_element_type(v, jnp.bfloat16) * 0.5, jnp.zeros((), jnp.bfloat16),
                          ((-1, 0, 0), (0, 1, 1), (1, -1, 0))) * 0.5
    v = np.arange(15, dtype=np.uint32).reshape(3, 1, 5)
    r = passes.fuse_with_report(jax.jit(f).lower(v).as_text())
    exe = runtime.compile(r.text, [((2, 1, 5), jnp.bfloat16)], xla_fusion=False,
                          passes_off=r.xla_passes_off)
    out = np.asarray(exe([runtime.to_device(v, exe.device)])[0])
    np.testing.assert_array_equal(out.astype(np.float32), np.asarray(jax.jit(f)(v), np.float32))
    print("ok")
""")


def test_a_pad_with_negative_padding_stays_out_of_fusions():
    """XLA makes it a slice of a pad; fused, XLA CPU aborted (found by the fuzzer)."""
    proc = subprocess.run([sys.executable, "-c", NEGATIVE_PAD], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == ["ok"], proc.stderr[-2000:]


def test_argmax_keeps_its_unread_index_result_out_of_a_multi_output_fusion():
    """The variadic reduce's unread value result stays an output once fused with its
    reader: a 2-output loop fusion CPU cannot compile is not planned (fuzzer seed 7)."""
    x = np.array([3, -2, 7, 1], np.int32)
    compiled = tracehlo.compile(lambda x: 2 - tnp.argmax(x), (x,))
    assert int(compiled(x)) == 2 - 2 and compiled.fusion == "tracehlo"


# One program per class of XLA CPU abort the fuzzer found in our fusions (issue 8),
# run through tracehlo.jit's default fusion in a subprocess and compared with jax.jit.
ABORT_CLASSES = textwrap.dedent("""
    import ml_dtypes, numpy as np, jax, jax.numpy as jnp
    import tracehlo, tracehlo.numpy as tnp
    bf = lambda a: np.asarray(a, ml_dtypes.bfloat16)

    def rnn_scaled_by_its_counter(np_):
        lax, grad = (tracehlo.lax, tracehlo.grad) if np_ is tnp else (jax.lax, jax.grad)
        def loss(w, xs, h0):
            def step(c, x):
                h, i = c
                h = np_.tanh(h @ w.T + x) * (i.astype(h.dtype) + 1)
                return (h, i + 1), (h * h).sum()
            (h, _), ys = lax.scan(step, (h0, 0), xs)
            return ys.sum() + (h * h).sum()
        return grad(loss, (0, 1, 2))

    rng = np.random.default_rng(0)
    cases = {
        # a bf16 select: its on_true is converted to f32 inside the fusion
        "bf16_where": (lambda np_: lambda c, a, s: np_.where(c, a, s),
                       [np.array([True, False, True]), bf([1, 2, 3]), bf(5)]),
        # a value read by a slice and an or: it ends an emitter function
        "read_by_slice_and_or": (lambda np_: lambda x: x.astype(np_.uint32)
                                 | x.astype(np_.uint32)[3:4], [np.arange(20, dtype=np.float16).reshape(4, 5)]),
        # a bf16 parameter read by a slice and a remainder
        "bf16_remainder_by_slice": (lambda np_: lambda x: np_.remainder(x, x[:1]), [bf([7, 3])]),
        # argmin with a third reduced value nothing reads
        "argmin_and_min": (lambda np_: lambda x: (np_.argmin(x), np_.min(-x)),
                           [np.array([2.0, -1.0, 5.0], np.float32)]),
        # in a scan body, a broadcast of a value computed in its fusion (the counter
        # converted and incremented): only parameters have layouts there
        "broadcast_in_a_loop_body": (rnn_scaled_by_its_counter, [
            rng.normal(size=s).astype(np.float32) * 0.3 for s in [(4, 4), (6, 4), (2, 4)]]),
    }
    for name, (make, args) in cases.items():
        compiled = tracehlo.compile(make(tnp), args)
        got = jax.tree_util.tree_leaves(compiled(*args))
        want = jax.tree_util.tree_leaves(jax.jit(make(jnp))(*args))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=1e-5)
        assert compiled.fusion == "tracehlo", name
        print(name, "ok")
""")


def test_each_class_of_xla_abort_runs_fused():
    proc = subprocess.run([sys.executable, "-c", ABORT_CLASSES], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.split("ok")) == 6, proc.stdout


# x != x of integers, read by a fused subtract that is then reversed, as jax.jit
# lowers jnp.flip((x != x) - x, -1) (the flip a call): XLA folds the compare to a
# broadcast false, then its simplifier sank the reverse into the fusion and aborted
# ("Invalid binary instruction opcode fusion"; fuzzer, hlo-opt seed 453).
# canonicalize folds the compare first, as XLA would.
SELF_COMPARE_REVERSED = textwrap.dedent("""
    import numpy as np, jax, jax.numpy as jnp
    from tracehlo import passes, runtime
    x = np.array([[5, 1]], np.int32)
    text = jax.jit(lambda x: jnp.flip((x != x) - x, -1)).lower(x).as_text()
    result = passes.fuse_with_report(text)
    passes.check_backend(result.text)
    exe = runtime.compile(result.text, [((1, 2), "int32")], xla_fusion=False,
                          passes_off=result.xla_passes_off)
    print(np.asarray(exe([jax.device_put(x)])[0]).tolist())
""")


def test_a_reversed_fusion_of_a_self_compare_compiles():
    proc = subprocess.run([sys.executable, "-c", SELF_COMPARE_REVERSED],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[[-1,", "-5]]"]


# The corpus's random_gamma_float64_3 in small: a loop body calls a function that
# adds a 1x1 key word to a 1x3 counter (Threefry). Inlined into the body
# (inline-calls), the broadcast widening the unit dim joined a fusion there;
# XLA imports it as a reshape and a broadcast, and XLA CPU aborted on the reshape's
# missing layout ("has_layout() u32[1]"). It stays out of the fusion now.
KEY_ADD_IN_LOOP_CALL = """
func.func public @main(%key: tensor<1x1xui32>, %x: tensor<1x3xui32>) -> tensor<1x3xui32> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i64>, tensor<1x3xui32>
   cond {
    %n = stablehlo.constant dense<5> : tensor<i64>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %i2 = stablehlo.add %i, %one : tensor<i64>
    %y = func.call @round(%v, %key) : (tensor<1x3xui32>, tensor<1x1xui32>) -> tensor<1x3xui32>
    stablehlo.return %i2, %y : tensor<i64>, tensor<1x3xui32>
  }
  return %r#1 : tensor<1x3xui32>
}
func.func private @round(%v: tensor<1x3xui32>, %k: tensor<1x1xui32>) -> tensor<1x3xui32> {
  %b = stablehlo.broadcast_in_dim %k, dims = [0, 1] : (tensor<1x1xui32>) -> tensor<1x3xui32>
  %s = stablehlo.add %v, %b : tensor<1x3xui32>
  %m = stablehlo.multiply %s, %s : tensor<1x3xui32>
  return %m : tensor<1x3xui32>
}"""

RUN_KEY_ADD = textwrap.dedent("""
    import sys, numpy as np
    from tracehlo import passes, runtime
    result = passes.fuse_with_report(sys.stdin.read())
    assert "func.call" not in result.text and '"mhlo.fusion"' in result.text
    exe = runtime.compile(result.text, [((1, 3), np.uint32)], xla_fusion=False,
                          passes_off=result.xla_passes_off)
    key, x = np.array([[7]], np.uint32), np.array([[1, 2, 3]], np.uint32)
    print(np.asarray(exe([runtime.to_device(key, exe.device),
                          runtime.to_device(x, exe.device)])[0]).tolist())
""")


def test_a_key_added_in_a_loop_body_call_compiles_fused():
    proc = subprocess.run([sys.executable, "-c", RUN_KEY_ADD], input=KEY_ADD_IN_LOOP_CALL,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    want = np.array([[1, 2, 3]], np.uint32)
    with np.errstate(over="ignore"):
        for _ in range(5):
            want = (want + np.uint32(7)) * (want + np.uint32(7))
    assert proc.stdout.strip() == str(want.tolist())


# Integer division that folds make constant: canonicalize folds x <= x to true and
# x > x to false (fuzzer, hlo-opt loop seed 71: fmod(x <= x, x > x) of uint16), and
# MHLO's canonicalizer, which XLA runs on a module holding fusions, folds x ^ x and
# x - x to 0 (hlo-opt seed 7260: x ^ x // x ^ x of int8); the folders then divided
# by zero and killed the process (SIGFPE). Each program is compared with jax.jit's
# run of the unfolded text. (A raw lax.rem(x ^ x, x ^ x) kills jax.jit itself.)
CONSTANT_DIVISIONS = textwrap.dedent("""
    import numpy as np, jax, jax.numpy as jnp
    from jax import lax
    from tracehlo import passes, runtime
    int_min = np.iinfo(np.int32).min
    programs = [
        lambda x: jnp.fmod(x <= x, x > x),
        lambda x: lax.div(jnp.where(x == x, 7, 0).astype(np.uint8), (x != x).astype(np.uint8)),
        lambda x: lax.div(jnp.where(x == x, int_min, 0), jnp.where(x == x, -1, 1)),
        lambda x: lax.rem(jnp.where(x == x, int_min, 0), jnp.where(x == x, -1, 1)),
        lambda x: lax.div(jnp.where(x == x, 7, 0), (x != x).astype(np.int32)),
        lambda x: (lambda v: (v ^ v) // (v ^ v))(x.astype(np.int8)),
    ]
    x = np.array([3, 9], np.uint16)
    for program in programs:
        text = jax.jit(program).lower(x).as_text()
        want = np.asarray(jax.jit(program)(x))
        result = passes.fuse_with_report(text)
        passes.check_backend(result.text)
        exe = runtime.compile(result.text, [(want.shape, want.dtype)], xla_fusion=False,
                              passes_off=result.xla_passes_off)
        got = np.asarray(exe([jax.device_put(x)])[0])
        print(got.dtype == want.dtype and got.tolist() == want.tolist(), want.tolist())
""")


def test_integer_division_by_a_folded_zero_compiles():
    proc = subprocess.run([sys.executable, "-c", CONSTANT_DIVISIONS],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "True [1, 1]", "True [255, 255]", "True [-2147483648, -2147483648]", "True [0, 0]",
        "True [-1, -1]", "True [-1, -1]"]


# A bf16 argument read in one fusion directly (a slice) and through a reverse of its
# unit dim (a maximum), as jax.jit lowers jnp.clip(x[..., ::-1], ..., x[1:]): XLA's
# simplifier makes the reverse the argument itself, so the fusion reads one bf16
# parameter twice and XLA CPU aborted ("has_layout()"; fuzzer, hlo-opt seed 7133).
BF16_ARGUMENT_THROUGH_A_UNIT_REVERSE = textwrap.dedent("""
    import ml_dtypes, numpy as np, jax, jax.numpy as jnp
    from tracehlo import passes, runtime
    def f(x):
        return jnp.clip(x[..., ::-1], jnp.all(x[..., ::-1], axis=-2), x[1:])
    x = np.array([[-0.373], [0.14]], ml_dtypes.bfloat16)
    result = passes.fuse_with_report(jax.jit(f).lower(x).as_text())
    passes.check_backend(result.text)
    exe = runtime.compile(result.text, [((2, 1), ml_dtypes.bfloat16)], xla_fusion=False,
                          passes_off=result.xla_passes_off)
    got = np.asarray(exe([jax.device_put(x)])[0], np.float32)
    np.testing.assert_array_equal(got, np.asarray(jax.jit(f)(x), np.float32))
    print(got.ravel().tolist())
""")


def test_a_bf16_argument_read_through_a_unit_reverse_compiles_fused():
    proc = subprocess.run([sys.executable, "-c", BF16_ARGUMENT_THROUGH_A_UNIT_REVERSE],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[0.1396484375,", "0.1396484375]"], proc.stdout


# An and or an or of a convert to a narrower signed integer type, in one fusion,
# crashes XLA CPU's compiler (SIGSEGV; jax.jit of x.astype(int8) & y too; fuzzer,
# jit --loop seed 9026): our passes keep them apart, check_backend refuses such a
# fusion, and a compile with XLA's own fusion has it off.
FUSED_OR_OF_A_NARROWING_CONVERT = """
func.func public @main(%a: tensor<3xi64>, %x: tensor<3xi32>) -> tensor<3xi32> {
  %1 = "mhlo.fusion"(%a, %x) <{fusion_kind = #mhlo<fusion_kind kLoop>}> ({
  ^bb0(%p: tensor<3xi64>, %q: tensor<3xi32>):
    %2 = stablehlo.convert %p : (tensor<3xi64>) -> tensor<3xi32>
    %3 = stablehlo.or %q, %2 : tensor<3xi32>
    stablehlo.return %3 : tensor<3xi32>
  }) : (tensor<3xi64>, tensor<3xi32>) -> tensor<3xi32>
  return %1 : tensor<3xi32>
}"""


NARROWING_BITWISE = textwrap.dedent("""
    import numpy as np, tracehlo, tracehlo.numpy as tnp
    FUSED = {fused!r}
    a = np.array([300, -129, 7, 255], np.int32)
    x = np.array([7, -1, 12, 85], np.int8)
    y = np.array([-300, 70000, 3, -1], np.int64)
    f = lambda a, x, y: (a.astype(tnp.int8) & x, (y.astype(tnp.int16) + 1) | a.astype(tnp.int16))
    want = (a.astype(np.int8) & x, (y.astype(np.int16) + np.int16(1)) | a.astype(np.int16))
    for mode in ("tracehlo", "xla", "none"):
        got = tracehlo.jit(f, fusion=mode)(a, x, y)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == w.dtype and np.array_equal(np.asarray(g), w), (mode, g, w)
        print(mode, "ok")
    # one element compiles fused, so the rule lets it be
    from tracehlo import passes, runtime
    one = FUSED.replace("3x", "")
    passes.check_backend(one)
    exe = runtime.compile(one, [((), np.int32)], xla_fusion=False)
    got = exe([runtime.to_device(np.array(v, t), runtime.device()) for v, t in
               ((2 ** 33 + 5, np.int64), (3, np.int32))])[0]
    assert int(np.asarray(got)) == 7, got
    print("rank-0", "ok")
""")


def test_a_bitwise_op_of_a_narrowing_signed_convert_compiles():
    code = NARROWING_BITWISE.replace("{fused!r}", repr(FUSED_OR_OF_A_NARROWING_CONVERT))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["tracehlo", "ok", "xla", "ok", "none", "ok", "rank-0", "ok"], \
        proc.stdout


def test_check_backend_refuses_a_fused_bitwise_op_of_a_narrowing_signed_convert():
    with pytest.raises(passes.UnsupportedFusionError,
                       match="or of a narrowing signed integer convert crashes XLA CPU"):
        passes.check_backend(FUSED_OR_OF_A_NARROWING_CONVERT)


# A fusion the passes should never make is undone by the last guard, with the reason in
# the report, and the program runs. The passes' own gap that made one here (XLA's CSE
# makes two compares read one broadcast; fuzzer, hlo-opt seed 9338) is closed (a group
# grown step by step is checked whole as check_backend checks it), so the gap is made
# on purpose: legality's emitter check that finds it always passes.
BACKEND_REFUSAL_UNDONE = textwrap.dedent("""
    import sys, ml_dtypes, numpy as np, jax, jax.numpy as jnp
    from tracehlo import passes, runtime
    from tracehlo.passes import legality
    def f(v0):
        v1 = v0.astype(jnp.uint8)
        return (jnp.squeeze(v1) ** v1) ** v1
    x = np.array([[-6.0], [0.8]], ml_dtypes.bfloat16)
    text = jax.jit(f).lower(x).as_text()
    if sys.argv[1] == "gap":
        legality.shared_value_problem = lambda *args, **kwargs: None
    result = passes.fuse_with_report(text)
    undone = [d for d in result.report.decisions if d.pass_name == "check-backend"]
    if sys.argv[1] == "gap":
        assert undone and "read by 2 fused ops" in undone[0].reason, result.report
    else:
        assert not undone, undone
    passes.check_backend(result.text)
    want = jax.jit(f)(x)
    exe = runtime.compile(result.text, [(want.shape, want.dtype)], xla_fusion=False,
                          passes_off=result.xla_passes_off)
    got = np.asarray(exe([jax.device_put(x)])[0])
    np.testing.assert_array_equal(got, np.asarray(want))
    print(got.ravel().tolist())
""")


@pytest.mark.parametrize("passes_checks", ["whole", "gap"])
def test_a_fusion_check_backend_refuses_is_undone_not_raised(passes_checks):
    proc = subprocess.run([sys.executable, "-c", BACKEND_REFUSAL_UNDONE, passes_checks],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_refused_fusion_the_module_came_with_is_still_refused():
    with pytest.raises(passes.UnsupportedFusionError, match="narrowing signed integer convert"):
        passes.fuse_with_report(FUSED_OR_OF_A_NARROWING_CONVERT)


# XLA's import puts a broadcast under a select of a scalar predicate; its CSE makes
# that one op with a broadcast of the same bool in the fusion, read there by ops in
# two emitter functions (the select's, and a reduce's operand), and XLA CPU aborted
# ("has_layout() pred[4]"; fuzzer, hlo-opt seed 10325).
SCALAR_PREDICATE_AND_ITS_BROADCAST = textwrap.dedent('''
    import numpy as np, jax
    from tracehlo import passes, runtime
    text = """
    func.func public @main(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi8>) -> tensor<4xi1> {
      %s = stablehlo.select %p, %x, %y : tensor<i1>, tensor<4xf32>
      %z = stablehlo.constant dense<0.0> : tensor<4xf32>
      %sz = stablehlo.compare NE, %s, %z, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %b = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<i1>) -> tensor<4xi1>
      %zi = stablehlo.constant dense<0> : tensor<4xi8>
      %n = stablehlo.compare LT, %i, %zi, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
      %c = stablehlo.compare NE, %n, %b, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
      %m = stablehlo.select %c, %i, %zi : tensor<4xi1>, tensor<4xi8>
      %init = stablehlo.constant dense<127> : tensor<i8>
      %r = stablehlo.reduce(%m init: %init) applies stablehlo.minimum across dimensions = [0] : (tensor<4xi8>, tensor<i8>) -> tensor<i8>
      %zr = stablehlo.constant dense<0> : tensor<i8>
      %rc = stablehlo.compare NE, %r, %zr, SIGNED : (tensor<i8>, tensor<i8>) -> tensor<i1>
      %rb = stablehlo.broadcast_in_dim %rc, dims = [] : (tensor<i1>) -> tensor<4xi1>
      %o = stablehlo.xor %sz, %rb : tensor<4xi1>
      return %o : tensor<4xi1>
    }"""
    result = passes.fuse_with_report(text)
    passes.check_backend(result.text)
    assert "mhlo.fusion" in result.text
    exe = runtime.compile(result.text, [((4,), np.bool_)], xla_fusion=False,
                          passes_off=result.xla_passes_off)
    p, x, y = np.bool_(True), np.array([1, 0, 2, -1], np.float32), np.zeros(4, np.float32)
    i = np.array([3, -2, 5, 1], np.int8)
    m = np.where((i < 0) != p, i, 0).min()
    want = (np.where(p, x, y) != 0) ^ (m != 0)
    got = np.asarray(exe([jax.device_put(a) for a in (p, x, y, i)])[0])
    np.testing.assert_array_equal(got, want)
    print(got.tolist())
''')


def test_a_scalar_predicate_and_a_broadcast_of_it_compile_fused():
    proc = subprocess.run([sys.executable, "-c", SCALAR_PREDICATE_AND_ITS_BROADCAST],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[True, False, True, True]", proc.stdout
