"""What runtime.py does where jaxlib releases differ (pyproject pins 0.10.2 to 0.11.x).
Each behaviour was seen on 0.11.2 with CUDA, on the device machine; here the
installed jaxlib is asked directly, or 0.11.2's own error is replayed."""
import logging

import numpy as np
import pytest
from jaxlib.mlir import ir

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import passes, runtime

# XLA's words on 0.11.2 CUDA for a module holding one of our fusions (portable
# StableHLO serialization for the PJRT plugin), cut to the lines that matter
REFUSED_0_11_2 = (
    "INVALID_ARGUMENT: CHLO => [StableHLO+Shape] => StableHLO failed;\n\nDetailed error "
    "from MLIR: f.py:61:0: error: failed to legalize operation 'mhlo.fusion' that was "
    "explicitly marked illegal: %7 = \"mhlo.fusion\"(%6, %arg1)")


def test_result_handler_signature_is_read_off_the_installed_jaxlib():
    """0.10 takes `_skip_checks`, 0.11.2 refuses it with a TypeError (every result
    failed there before): the flag must say what this jaxlib accepts."""
    dev = runtime.device("cpu")
    aval = runtime._aval((3,), np.dtype(np.float32))
    try:
        runtime._jaxlib.array_result_handler(aval, runtime._sharding(dev), committed=True,
                                             _skip_checks=True)
        accepts = True
    except TypeError:
        accepts = False
    assert runtime._HANDLER_SKIPS_CHECKS is accepts
    assert runtime._result_handler(aval, runtime._sharding(dev)) is not None


def test_0_11_plugin_error_is_a_fusions_refused_error_remembered_per_device(monkeypatch):
    monkeypatch.setattr(runtime, "_REFUSES_FUSIONS", {})
    dev = runtime.device("cpu")
    error = runtime._compile_error(RuntimeError(REFUSED_0_11_2), dev)
    assert isinstance(error, runtime.FusionsRefusedError)
    assert "failed to legalize operation 'mhlo.fusion'" in str(error)
    assert "has no fusion op" in runtime.refuses_fusions("cpu")
    other = runtime._compile_error(RuntimeError("INVALID_ARGUMENT: shape mismatch"), dev)
    assert type(other) is runtime.XlaCompileError


def test_a_device_refusing_fused_modules_runs_with_xlas_fusion_and_says_so_once(
        monkeypatch, caplog):
    """Replays 0.11.2 CUDA on this device: the first program falls back to XLA's
    fusion with one warning (not the 'tracehlo bug' one), later programs skip our
    passes, and every result is right."""
    monkeypatch.setattr(runtime, "_REFUSES_FUSIONS", {})
    compile_, fused_compiles, pass_runs = runtime.compile, [], []

    def compile_like_0_11_plugin(program, *args, **kwargs):
        if isinstance(program, ir.Module):  # our fused module: the plugin path refuses it
            fused_compiles.append(program)
            raise runtime._compile_error(RuntimeError(REFUSED_0_11_2), runtime.device(None))
        return compile_(program, *args, **kwargs)

    fuse = passes.fuse_with_report
    monkeypatch.setattr(runtime, "compile", compile_like_0_11_plugin)
    monkeypatch.setattr(passes, "fuse_with_report",
                        lambda *a, **k: pass_runs.append(1) or fuse(*a, **k))
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    with caplog.at_level(logging.WARNING, logger="tracehlo"):
        first = tracehlo.compile(lambda v: tnp.tanh(v) * 2 + 1, (x,))
        second = tracehlo.compile(lambda v: tnp.exp(v).sum(axis=1), (x,))
    np.testing.assert_allclose(np.asarray(first(x)), np.tanh(x) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(second(x)), np.exp(x).sum(axis=1), rtol=1e-6)
    assert (first.fusion, second.fusion) == ("xla", "xla")
    assert len(fused_compiles) == 1 and len(pass_runs) == 1  # the second skips our passes
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "portable StableHLO, which has no fusion op" in warnings[0]
    assert "<lambda>" in warnings[0] and "tracehlo bug" not in warnings[0]
    assert "failed to legalize operation 'mhlo.fusion'" in first.fusion_report().fallback
    assert second.fusion_report() is None


# what our passes made of `a + arange(3)` on jaxlib 0.11.2, which aborted XLA CPU there
IOTA_FUSED = """
func.func public @main(%arg0: tensor<3xi32>) -> tensor<3xi32> {
  %0 = "mhlo.fusion"(%arg0) <{fusion_kind = #mhlo<fusion_kind kLoop>}> ({
  ^bb0(%arg1: tensor<3xi32>):
    %1 = stablehlo.iota dim = 0 : tensor<3xi32>
    %2 = stablehlo.add %arg1, %1 : tensor<3xi32>
    stablehlo.return %2 : tensor<3xi32>
  }) : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}"""
IOTA_PLAIN = """
func.func public @main(%a: tensor<3xi32>) -> tensor<3xi32> {
  %i = stablehlo.iota dim = 0 : tensor<3xi32>
  %s = stablehlo.add %a, %i : tensor<3xi32>
  %m = stablehlo.multiply %s, %s : tensor<3xi32>
  return %m : tensor<3xi32>
}"""


def test_an_op_whose_emitter_reads_its_layout_stays_out_of_fusions():
    """Backend.ops_reading_layouts (XLA CPU's iota from jaxlib 0.11): the op runs as
    its own kernel, the fusion reads it, the report says why, and check_backend
    refuses a module that fuses it instead of letting XLA abort."""
    import dataclasses
    from tracehlo.passes import backends
    reads_iota = dataclasses.replace(backends.BACKENDS["cpu"],
                                     ops_reading_layouts=frozenset({"stablehlo.iota"}))
    result = passes.fuse_with_report(IOTA_PLAIN, reads_iota)
    assert [f.ops for f in result.report.fusions] == [("stablehlo.add", "stablehlo.multiply")]
    assert any("stablehlo.iota" in " ".join(d.ops) and "has_layout()" in d.reason
               for d in result.report.decisions if not d.fused)
    with pytest.raises(passes.UnsupportedFusionError, match="reads a fused stablehlo.iota's layout"):
        passes.check_backend(IOTA_FUSED, reads_iota)


def test_a_program_adding_an_arange_compiles_and_runs_in_a_fresh_process():
    """The program that aborted jaxlib 0.11.2's XLA CPU (with the iota fused), run
    where an abort cannot take the test process with it."""
    import subprocess
    import sys
    program = ("import numpy as np, tracehlo, tracehlo.numpy as tnp\n"
               "f = tracehlo.jit(lambda a: a + tnp.arange(3), backend='cpu')\n"
               "print(np.asarray(f(np.arange(3, dtype=np.int32))).tolist())\n")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[0, 2, 4]"
