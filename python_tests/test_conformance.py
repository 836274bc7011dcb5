"""The StableHLO conformance corpus through our runtime, as is and through our fusion.

By default a fixed sample across op families runs (a few seconds); `--conformance-all`
runs every file. Without the corpus folder the corpus tests skip.
"""
import sys

import numpy as np
import ml_dtypes
import pytest

from tracehlo.tools import conformance

SAMPLE_SIZE = 60
SAMPLE_SEED = 0
BACKEND = "cpu"


def pytest_generate_tests(metafunc):
    if "corpus_file" not in metafunc.fixturenames:
        return
    files = conformance.corpus_files()
    if files and not metafunc.config.getoption("conformance_all"):
        files = conformance.sample(files, SAMPLE_SIZE, SAMPLE_SEED)
    metafunc.parametrize("corpus_file", files or [None],
                         ids=[f.stem for f in files] or ["no-corpus"])


def _check(result):
    if result.name in conformance.KNOWN_FAILURES[BACKEND] and result.failed:
        pytest.xfail(f"fails on XLA {BACKEND} without any transformation: {result.line()}")
    if not result.passed:
        pytest.fail(result.line(), pytrace=False)


def _need_corpus(path):
    if path is None:
        pytest.skip(f"conformance corpus not found (set {conformance.ENV_VAR})")


def _need_fusion():
    try:
        conformance.fusion_transform(BACKEND)
    except LookupError as e:
        pytest.skip(f"fusion pipeline not available: {e}")


@pytest.mark.slow
def test_corpus_file(corpus_file):
    _need_corpus(corpus_file)
    _check(conformance.run_file(corpus_file, backend=BACKEND))


@pytest.fixture(scope="module")
def fused_worker():
    """Fused files run in a worker process: XLA aborts the process on some fusions it
    cannot compile, and that must fail one test, not end the session."""
    _need_fusion()
    with conformance.Worker(BACKEND, fuse=True, xla_fusion=False, timeout=300) as worker:
        yield worker


@pytest.mark.slow
def test_corpus_file_fused(corpus_file, request):
    """Fusion must keep every passing file passing, with XLA's own fusion off."""
    _need_corpus(corpus_file)
    result = request.getfixturevalue("fused_worker").run(corpus_file)
    _check(result)


# ------------------------------------------------ the runner itself, no corpus needed

MODULE = """
module @m {
  func.func public @main() -> (tensor<2xf32> {jax.result_info = ""}) {
    %0 = call @inputs() : () -> tensor<2xf32>
    %1 = call @expected() : () -> tensor<2xf32>
    %2 = stablehlo.negate %0 : tensor<2xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    %3 = stablehlo.convert %2 : (tensor<2xf32>) -> tensor<2xbf16>
    stablehlo.custom_call @check.expect_eq(%3, %3) {has_side_effect = true} : (tensor<2xbf16>, tensor<2xbf16>) -> ()
    return %2 : tensor<2xf32>
  }
  func.func private @inputs() -> tensor<2xf32> {
    %c = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
    return %c : tensor<2xf32>
  }
  func.func private @expected() -> tensor<2xf32> {
    %c = stablehlo.constant dense<[-1.0, EXPECTED]> : tensor<2xf32>
    return %c : tensor<2xf32>
  }
}
"""


def test_rewrite_returns_pairs_in_check_order():
    text, checks = conformance.rewrite(MODULE.replace("EXPECTED", "2.0"))
    assert [(c.kind, c.shape, c.dtype) for c in checks] == [
        ("expect_close", (2,), np.dtype(np.float32)),
        ("expect_eq", (2,), np.dtype(ml_dtypes.bfloat16))]
    assert "check." not in text
    assert "return %2, %1, %3, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xbf16>, tensor<2xbf16>" in text


@pytest.mark.parametrize("runtime_inputs", [False, True])
@pytest.mark.parametrize("expected, status", [("2.0", "pass"), ("2.5", "mismatch")])
def test_run_file(tmp_path, expected, status, runtime_inputs):
    path = tmp_path / "negate_float32_2.mlir"
    path.write_text("// RUN-DISABLED(why not) x\n" + MODULE.replace("EXPECTED", expected))
    result = conformance.run_file(path, runtime_inputs=runtime_inputs)
    assert (result.status, result.disabled) == (status, "why not")
    assert conformance.run_file(path, skip_disabled=True).status == "skipped"


def test_run_file_turns_failures_into_results(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(MODULE.replace("EXPECTED", "2.0"))
    unparsable = conformance.run_file(path, transform=lambda t: t.replace("stablehlo.negate", "junk"))
    assert unparsable.status == "compile_error"

    def crash(text):
        raise RuntimeError("pass bug")
    assert conformance.run_file(path, transform=crash).line() == "ERROR         f RuntimeError: pass bug"


def test_inputs_as_arguments_makes_inputs_arguments_of_main():
    program, _ = conformance.rewrite(MODULE.replace("EXPECTED", "2.0"))
    program, inputs, types = conformance.inputs_as_arguments(program)
    assert "func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, " \
        "tensor<2xbf16>, tensor<2xbf16>)" in program
    assert "stablehlo.negate %arg0" in program and "@inputs" not in program
    assert "func.func private @expected" in program  # expected values stay constants
    assert "func.func @main() -> tensor<2xf32>" in inputs
    assert "call @inputs() : () -> tensor<2xf32>" in inputs and "@expected" not in inputs
    assert "dense<[1.000000e+00, -2.000000e+00]>" in inputs
    assert types == [((2,), np.dtype(np.float32))]


def test_inputs_as_arguments_without_inputs_call():
    no_inputs = MODULE.replace("EXPECTED", "2.0").replace(
        "%0 = call @inputs() : () -> tensor<2xf32>",
        "%0 = stablehlo.constant dense<1.0> : tensor<2xf32>")
    assert conformance.inputs_as_arguments(conformance.rewrite(no_inputs)[0]) is None


HANG = "import sys, time; print('ready', flush=True); sys.stdin.readline(); time.sleep(60)"


def test_worker_runs_files_and_survives_crashes_and_hangs(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(MODULE.replace("EXPECTED", "2.5"))
    with conformance.Worker(BACKEND) as worker:
        result = worker.run(path)
        assert (result.name, result.status, result.max_error) == ("f", "mismatch", 2**21)  # ULPs
        aborting = [sys.executable, "-c",
                    "import os, sys; print('ready', flush=True); sys.stdin.readline(); os.abort()"]
        worker.command, real = aborting, worker.command
        worker.close()
        assert worker.run(path).line() == "CRASH         f the process running it died (signal SIGABRT)"
        worker.command, worker.timeout = [sys.executable, "-c", HANG], 0.5
        assert worker.run(path).line() == "TIMEOUT       f killed after 0.5 s"
        worker.command, worker.timeout = real, None
        assert worker.run(path).status == "mismatch"  # a fresh child for the next file


# 64-bit inputs, three inputs with i1 and complex, a variadic reduce, one that
# mismatches only when XLA folds it (KNOWN_FAILURES), and one without @inputs
RUNTIME_INPUT_FILES = ["add_float64_20_20_float64_20_20",
                       "select_n_bool_2_3_complex128_2_3_complex128_2_3",
                       "reduce_float32_4_6_int32_4_6", "sin_complex64_20_20", "iota_"]


@pytest.mark.slow
@pytest.mark.parametrize("fuse", [False, True], ids=["plain", "fused"])
def test_corpus_runtime_inputs(fuse):
    """A few corpus files with @inputs as arguments, so their ops run rather than
    fold; one Worker for all, as a fused file can abort its process."""
    directory = conformance.corpus_dir()
    _need_corpus(directory)
    if fuse:
        _need_fusion()
    with conformance.Worker(BACKEND, fuse=fuse, xla_fusion=not fuse, runtime_inputs=True,
                            timeout=300) as worker:
        results = [worker.run(directory / f"{name}.mlir") for name in RUNTIME_INPUT_FILES]
    assert [r.line() for r in results if not r.passed] == []


def _close(a, e, dtype=np.float32):
    return conformance.compare("expect_close", np.array(a, dtype), np.array(e, dtype))


def test_expect_close_counts_ulps_like_the_interpreter():
    one = np.float32(1)
    assert _close([one], [np.nextafter(np.nextafter(np.nextafter(one, 2), 2), 2)]) == (True, 3)
    assert _close([1.0], [1.0 + 4 * 2.0**-23])[0] is False
    tiny = np.float32(1e-45)  # smallest subnormal: +tiny and -tiny are 2 ULP apart
    assert _close([tiny], [-tiny]) == (True, 2)
    assert _close([np.nan], [-np.nan])[0] and _close([np.inf], [np.inf])[0]
    assert not _close([np.inf], [np.finfo(np.float32).max])[0]
    assert not _close([np.nan], [1.0])[0]
    assert _close([1.0], [1.0078125], ml_dtypes.bfloat16) == (True, 1)
    # complex: the larger of the real and imaginary ULP distances
    assert _close([1 + 1j], [1 + (1 + 5 * 2.0**-23) * 1j], np.complex64) == (False, 5)


def test_expect_eq_is_exact_with_nan_equal_to_nan():
    eq = lambda a, e, dtype=np.float64: conformance.compare(
        "expect_eq", np.array(a, dtype), np.array(e, dtype))[0]
    assert eq([np.nan, 0.0], [np.nan, -0.0])
    assert not eq([1.0], [np.nextafter(1.0, 2)])
    assert conformance.compare("expect_eq", np.array([2**63 - 1]), np.array([-2**63])) \
        == (False, float(2**64 - 1))
    assert eq([True, False], [True, False], np.bool_)
    assert not eq([complex(1, np.nan)], [complex(1, 0)], np.complex128)


def test_expect_almost_eq_uses_absolute_tolerance_and_sign():
    almost = lambda a, e: conformance.compare(
        "expect_almost_eq", np.array(a, np.float32), np.array(e, np.float32))[0]
    assert almost([1.0], [1.0009]) and not almost([1.0], [1.002])
    assert not almost([-1e-5], [1e-5])  # the interpreter also wants the same sign
    assert almost([np.nan, np.inf], [np.nan, np.inf]) and not almost([np.inf], [1.0])


def test_sample_is_deterministic_and_spread_over_families():
    files = conformance.corpus_files()
    if not files:
        pytest.skip("conformance corpus not found")
    chosen = conformance.sample(files, SAMPLE_SIZE, SAMPLE_SEED)
    assert chosen == conformance.sample(files, SAMPLE_SIZE, SAMPLE_SEED)
    assert len({conformance.family(f) for f in chosen}) == SAMPLE_SIZE
