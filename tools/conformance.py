"""Run the StableHLO conformance corpus (../shared/stablehlo-testdata) on PJRT.

Each corpus file computes an op on constant inputs and checks the result with
`check.*` custom calls that only the StableHLO interpreter knows. We rewrite
`@main` to return the (actual, expected) pairs instead, compile it with our
runtime, run it, and compare in NumPy with the interpreter's rules. An optional
`transform` (text -> text, e.g. our fusion pipeline) is applied to the rewritten
module before compiling, so any pass can be held to "every passing file still
passes". With --runtime-inputs the inputs become arguments of @main instead
(inputs_as_arguments), so XLA cannot fold the op under test into a constant.

    python -m tracehlo.tools.conformance [--fuse | --no-xla-fusion] [--runtime-inputs]
        [--backend cpu] [--limit N] [--sample N --seed S] [--skip-disabled] [-j JOBS] [-v]
        [FILES...]

The command line runs files in worker processes (see Worker) so that a file that
crashes the process is reported as such instead of ending the run.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from tracehlo import runtime
from tracehlo.passes.mlir_io import make_context

ENV_VAR = "TRACEHLO_TESTDATA"
_REPO_ROOT = Path(__file__).resolve().parents[1]

# Files that mismatch on a backend without any transformation (the corpus README):
# a transform cannot be blamed for them, so they fail without failing a run.
KNOWN_FAILURES = {
    "cpu": frozenset({
        "cumprod_complex64_8_9",
        "pow_complex64_20_30_complex64_20_30",
        "sin_complex64_20_20",
        "triangular_solve_float32_2_8_8_float32_2_10_8",
    }),
}
# The same with runtime inputs: XLA's kernels now compute what its constant folder
# computed, and match the interpreter on other files (jaxlib 0.10.2, measured).
KNOWN_RUNTIME_INPUT_FAILURES = {
    "cpu": frozenset({
        "reduce_window_add_float32_12_12",
        "reduce_window_add_float64_4_6",
        "sinh_float64_20_20_chlo",
        "triangular_solve_float32_2_8_8_float32_2_10_8",
    }),
}

ULP_LIMIT = 3        # check.expect_close: the interpreter's max_ulp_difference
ABS_TOLERANCE = 1e-3  # check.expect_almost_eq: the interpreter's tolerance

# MLIR element type -> NumPy dtype of the buffers the runtime hands back.
DTYPES = {
    "i1": np.dtype(np.bool_),
    **{f"i{b}": np.dtype(f"int{b}") for b in (8, 16, 32, 64)},
    **{f"ui{b}": np.dtype(f"uint{b}") for b in (8, 16, 32, 64)},
    "i2": np.dtype(ml_dtypes.int2), "ui2": np.dtype(ml_dtypes.uint2),
    "i4": np.dtype(ml_dtypes.int4), "ui4": np.dtype(ml_dtypes.uint4),
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E3M4": np.dtype(ml_dtypes.float8_e3m4),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
    "complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128),
}


@dataclasses.dataclass(frozen=True)
class Check:
    """One `check.<kind>(actual, expected)` call; both operands have this type."""
    kind: str
    shape: tuple
    dtype: np.dtype


@dataclasses.dataclass
class Result:
    """The outcome for one file.

    status: pass | mismatch | compile_error | error (rewrite, transform or execution
    raised) | crash (the process died) | timeout | skipped.

    `max_error` is the largest difference over all checks, in the unit of the
    failing check (ULPs for expect_close, absolute for the others). `disabled` is the
    upstream RUN-DISABLED reason, if the file has one.
    """
    name: str
    status: str
    detail: str = ""
    max_error: float | None = None
    disabled: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status not in ("pass", "skipped")

    def line(self) -> str:
        err = "" if self.max_error is None else f" max_error={self.max_error:.6g}"
        detail = self.detail.split("\n", 1)[0][:300]  # MLIR errors can quote whole constants
        return f"{self.status.upper():13} {self.name}{err} {detail}".rstrip()


# ---------------------------------------------------------------- corpus files

def corpus_dir() -> Path | None:
    """The corpus folder ($TRACEHLO_TESTDATA, else ../shared/stablehlo-testdata from
    the repo root), or None where it is absent so callers can skip cleanly."""
    path = Path(os.environ.get(ENV_VAR) or _REPO_ROOT.parent / "shared" / "stablehlo-testdata")
    return path if path.is_dir() else None


def corpus_files(directory: Path | None = None) -> list[Path]:
    directory = directory or corpus_dir()
    return sorted(directory.glob("*.mlir")) if directory else []


_DTYPE_TOKEN = re.compile(r"^(u?int\d+|float\d+|bfloat16|complex\d+|bool|\d.*)$")


def family(path: Path) -> str:
    """The op a file tests: its name up to the first dtype or shape token
    (`dot_general_int8_4_3_...` -> `dot_general`)."""
    words = []
    for word in path.stem.split("_"):
        if _DTYPE_TOKEN.match(word) or word in ("dtypes", "shape", "inshape"):
            break
        words.append(word)
    return "_".join(w for w in words if w) or path.stem


def sample(files: Sequence[Path], n: int, seed: int = 0) -> list[Path]:
    """A deterministic sample of `n` files spread across op families: one file from
    each of a shuffled order of families, round after round, so a small sample
    still covers many ops rather than mostly scatter variants."""
    rng = random.Random(seed)
    groups = collections.defaultdict(list)
    for path in sorted(files):
        groups[family(path)].append(path)
    for group in groups.values():
        rng.shuffle(group)
    order = sorted(groups)
    rng.shuffle(order)
    chosen = []
    while len(chosen) < min(n, len(files)):
        for name in order:
            if groups[name] and len(chosen) < n:
                chosen.append(groups[name].pop())
    return sorted(chosen)


_DISABLED = re.compile(r"^// RUN-DISABLED(?:\(([^)]*)\))?", re.MULTILINE)


def disabled_reason(text: str) -> str | None:
    """Why upstream does not run this file through the interpreter, if it does not."""
    match = _DISABLED.search(text)
    return None if match is None else (match.group(1) or "no reason given")


# ---------------------------------------------------------------- rewriting

def _context() -> ir.Context:
    """The passes' MLIR context: every dialect jaxlib knows (mhlo too: fused output)."""
    return make_context()


def _dtype(element_type: ir.Type) -> np.dtype:
    try:
        return DTYPES[str(element_type)]
    except KeyError:
        raise ValueError(f"no NumPy dtype for element type {element_type}") from None


def _function(module: ir.Module, name: str):
    return next((op for op in module.body.operations
                 if op.operation.name == "func.func"
                 and ir.StringAttr(op.attributes["sym_name"]).value == name), None)


def rewrite(text: str) -> tuple[str, list[Check]]:
    """Drop the `check.*` custom calls from @main and return their operands instead,
    as actual0, expected0, actual1, expected1, ... The checks come back in order."""
    with _context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        main = _function(module, "main")
        if main is None:
            raise ValueError("the module has no @main")
        block = main.regions[0].blocks[0]
        checks, values = [], []
        for op in list(block.operations):
            if op.operation.name != "stablehlo.custom_call":
                continue
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if not target.startswith("check."):
                continue
            actual, expected = op.operands
            tensor = ir.RankedTensorType(actual.type)
            checks.append(Check(target[len("check."):], tuple(tensor.shape),
                                _dtype(tensor.element_type)))
            values += [actual, expected]
            op.operation.erase()
        if not checks:
            raise ValueError("@main has no check.* custom calls")
        old_return = list(block.operations)[-1]
        with ir.InsertionPoint(old_return):
            func.ReturnOp(values)
        old_return.operation.erase()
        main.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([], [v.type for v in values]))
        if "res_attrs" in main.attributes:  # one per old result: would not verify
            del main.attributes["res_attrs"]
        module.operation.verify()
        return str(module), checks


InputTypes = list[tuple[tuple, np.dtype]]


def inputs_as_arguments(text: str) -> tuple[str, str, InputTypes] | None:
    """Make the values @main gets from `call @inputs()` arguments of @main, so that
    XLA cannot constant-fold the ops under test and their kernels really run.

    Takes a module as `rewrite` returns it. Returns (program, inputs, types): the
    program with @main taking the inputs as arguments and @inputs moved out, a
    module whose @main returns `call @inputs()` (run it to get the arrays), and
    (shape, dtype) of each input. None where @main calls no @inputs."""
    with _context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        main, inputs = _function(module, "main"), _function(module, "inputs")
        block = main.regions[0].blocks[0]
        call = next((op for op in block.operations if op.operation.name == "func.call"
                     and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == "inputs"),
                    None)
        if call is None:
            return None
        types = [result.type for result in call.results]
        for result in call.results:
            result.replace_all_uses_with(block.add_argument(result.type, result.location))
        call.operation.erase()
        main.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(types, main.type.results))

        inputs_module = ir.Module.create()
        inputs.operation.detach_from_parent()
        inputs_module.body.append(inputs)
        with ir.InsertionPoint(inputs_module.body):
            entry = func.FuncOp("main", ([], types))
        with ir.InsertionPoint(entry.add_entry_block()):
            func.ReturnOp(func.CallOp(inputs, []).results)
        for m in (module, inputs_module):
            m.operation.verify()
        tensors = map(ir.RankedTensorType, types)
        return str(module), str(inputs_module), [
            (tuple(t.shape), _dtype(t.element_type)) for t in tensors]


# ---------------------------------------------------------------- comparing

def _float64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)  # exact for every float type up to f64


def _parts(x: np.ndarray) -> list[np.ndarray]:
    return [x.real, x.imag] if np.iscomplexobj(x) else [x]


def _ulp_difference(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """ULP distance per element as the interpreter counts it (CheckOps.cpp): 0 for
    bitwise-equal or both-NaN, distance of the sign-cleared bit patterns for finite
    values (their sum across signs), and the maximum for anything else."""
    uint = np.dtype(f"u{a.dtype.itemsize}")
    a64, e64 = _float64(a), _float64(e)
    ma = np.abs(a).view(uint).astype(np.uint64)
    me = np.abs(e).view(uint).astype(np.uint64)
    same_sign = np.signbit(a64) == np.signbit(e64)
    finite = np.where(same_sign, np.maximum(ma, me) - np.minimum(ma, me), ma + me)
    bits_equal = a.view(uint) == e.view(uint)
    both_nan = np.isnan(a64) & np.isnan(e64)
    both_finite = np.isfinite(a64) & np.isfinite(e64)
    top = np.uint64(np.iinfo(np.uint64).max)
    return np.where(bits_equal | both_nan, np.uint64(0), np.where(both_finite, finite, top))


def _same_and_difference(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal-or-both-NaN, and |a - e| with 0 where so and inf where not comparable."""
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - e)
    return same, np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))


def _almost_equal(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interpreter's areApproximatelyEqual: equal, both NaN, or finite with the
    same sign bit and |a - e| <= 1e-3."""
    a, e = _float64(a), _float64(e)
    same, diff = _same_and_difference(a, e)
    ok = same | (np.isfinite(a) & np.isfinite(e) & (np.signbit(a) == np.signbit(e))
                 & (diff <= ABS_TOLERANCE))
    return ok, diff


def _equal(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact equality, NaN equal to NaN (-0 equals +0, as the interpreter's == has it)."""
    if a.dtype.kind in "biu":
        ok = a == e
        gaps = np.zeros(a.shape)
        gaps[~ok] = [abs(int(x) - int(y))  # Python ints: an int64 gap can overflow int64
                     for x, y in zip(a[~ok].tolist(), e[~ok].tolist())]
        return ok, gaps
    return _same_and_difference(_float64(a), _float64(e))


def compare(kind: str, actual: np.ndarray, expected: np.ndarray) -> tuple[bool, float]:
    """(passed, max error) for one check; complex values must pass on re and im."""
    oks, errors = [], []
    for a, e in zip(_parts(actual), _parts(expected)):
        if kind == "expect_close":
            ulp = _ulp_difference(a, e)
            ok, err = ulp <= ULP_LIMIT, ulp.astype(np.float64)
        elif kind == "expect_almost_eq":
            ok, err = _almost_equal(a, e)
        elif kind == "expect_eq":
            ok, err = _equal(a, e)
        else:
            raise ValueError(f"unsupported check kind check.{kind}")
        oks.append(ok.all())
        errors.append(err.max(initial=0.0))
    return bool(all(oks)), float(max(errors))


# ---------------------------------------------------------------- running

Transform = Callable[[str], str]


def run_file(path: Path, transform: Transform | None = None, backend: str = "cpu",
             xla_fusion: bool = True, skip_disabled: bool = False,
             runtime_inputs: bool = False) -> Result:
    """Rewrite, transform, compile once, run and check one corpus file. Every failure
    becomes a Result rather than an exception, so one bad file cannot stop a run.

    `runtime_inputs`: @main takes its inputs as arguments (inputs_as_arguments),
    computed beforehand by XLA, so the transform and XLA see no constant inputs."""
    path = Path(path)
    start = time.perf_counter()
    text = path.read_text()
    result = Result(path.stem, "pass", disabled=disabled_reason(text))
    if skip_disabled and result.disabled is not None:
        result.status, result.detail = "skipped", f"RUN-DISABLED upstream: {result.disabled}"
        return result
    try:
        program, checks = rewrite(text)
        inputs = []
        split = inputs_as_arguments(program) if runtime_inputs else None
        if split is not None:
            program, inputs_program, input_types = split
            # the inputs stay device buffers: no round trip through the host
            inputs = runtime.compile(inputs_program, input_types, backend=backend)([])
        passes_off = ()
        if transform is not None:
            program = transform(program)
            # a FusionResult also names XLA passes its module must be compiled without
            passes_off = getattr(program, "xla_passes_off", ())
            program = str(program)
        out_types = [(c.shape, c.dtype) for c in checks for _ in (0, 1)]
        try:
            exe = runtime.compile(program, out_types, backend=backend, xla_fusion=xla_fusion,
                                  passes_off=passes_off)
        except runtime.XlaCompileError as e:
            result.status, result.detail = "compile_error", str(e)
            return result
        outs = [np.asarray(x) for x in exe(inputs)]
        failures, worst = [], 0.0
        for i, check in enumerate(checks):
            ok, err = compare(check.kind, outs[2 * i], outs[2 * i + 1])
            if not ok:
                failures.append(f"check.{check.kind}#{i}")
                worst = max(worst, err)
        if failures:
            result.status, result.max_error = "mismatch", worst
            result.detail = ", ".join(failures)
    except Exception as e:  # a broken rewrite/transform/execution is this file's failure
        result.status, result.detail = "error", f"{type(e).__name__}: {e}"
    finally:
        result.seconds = time.perf_counter() - start
    return result


class Worker:
    """A child process that runs files with run_file, one at a time. A file that
    kills the process (XLA CPU aborts on fusions it cannot compile; a misused MLIR
    binding can segfault) becomes that file's `crash` result and the next file gets
    a fresh child, so no file can end a whole run or test session. Each file still
    runs in-process in the child: one start-up serves many files."""

    def __init__(self, backend: str = "cpu", fuse: bool = False, xla_fusion: bool = True,
                 skip_disabled: bool = False, runtime_inputs: bool = False,
                 timeout: float | None = None):
        self.command = [sys.executable, "-m", "tracehlo.tools.conformance", "--worker",
                        "--backend", backend] + ["--fuse"] * fuse \
            + ["--no-xla-fusion"] * (not xla_fusion) + ["--skip-disabled"] * skip_disabled \
            + ["--runtime-inputs"] * runtime_inputs
        self.timeout = timeout  # seconds a file may take before its child is killed
        self._process = None

    def run(self, path: Path) -> Result:
        path = Path(path)
        if self._process is None:
            self._start()
        timed_out = False
        try:
            self._process.stdin.write(f"{path}\n")
            self._process.stdin.flush()
            # the child writes one line per file, so nothing is left buffered to miss
            if select.select([self._process.stdout], [], [], self.timeout)[0]:
                line = self._process.stdout.readline()
            else:
                self._process.kill()
                line, timed_out = "", True
        except BrokenPipeError:
            line = ""
        if line:
            return Result(**json.loads(line))
        code = self._process.wait()
        self._process = None
        status, detail = ("timeout", f"killed after {self.timeout:g} s") if timed_out \
            else ("crash", f"the process running it died ({_cause(code)})")
        return Result(path.stem, status, detail, disabled=disabled_reason(path.read_text()))

    def _start(self) -> None:
        """A fresh child; one that dies before saying ready is broken, not crashed by a
        file, so the run stops rather than blame every file in turn."""
        env = {"TF_CPP_MIN_LOG_LEVEL": "1", **os.environ}  # no PJRT banner per start
        self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)
        if self._process.stdout.readline() != "ready\n":
            code = self._process.wait()
            self._process = None
            raise RuntimeError(f"conformance worker did not start ({_cause(code)}): "
                               f"{' '.join(self.command)}")

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait()
            self._process = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _cause(returncode: int) -> str:
    return f"signal {signal.Signals(-returncode).name}" if returncode < 0 \
        else f"exit status {returncode}"


def _serve(backend: str, fuse: bool, xla_fusion: bool, skip_disabled: bool,
           runtime_inputs: bool) -> None:
    """The child side of Worker: paths in on stdin, one JSON Result a line out on a
    private copy of stdout; fd 1 itself goes to stderr, so no stray print (Python or
    C++) can corrupt the stream."""
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    transform = fusion_transform(backend) if fuse else None
    results.write("ready\n")
    results.flush()
    for line in sys.stdin:
        result = run_file(Path(line.rstrip("\n")), transform, backend, xla_fusion,
                          skip_disabled, runtime_inputs)
        results.write(json.dumps(dataclasses.asdict(result)) + "\n")
        results.flush()


def run_corpus(files: Iterable[Path], backend: str = "cpu", fuse: bool = False,
               xla_fusion: bool = True, skip_disabled: bool = False,
               runtime_inputs: bool = False, jobs: int = 1, timeout: float | None = None,
               report: Callable[[Result], None] | None = None) -> list[Result]:
    """Every file through `jobs` Worker processes; results in file order, `report`
    called as each finishes."""
    files = list(files)
    results: list[Result | None] = [None] * len(files)
    pending = iter(range(len(files)))
    lock = threading.Lock()

    def drain() -> None:
        with Worker(backend, fuse, xla_fusion, skip_disabled, runtime_inputs,
                    timeout) as worker:
            while True:
                with lock:
                    i = next(pending, None)
                if i is None:
                    return
                results[i] = worker.run(files[i])
                if report is not None:
                    with lock:
                        report(results[i])

    def guarded() -> None:
        try:
            drain()
        except Exception as e:  # a worker that cannot start: re-raised below
            errors.append(e)

    errors: list[Exception] = []
    threads = [threading.Thread(target=guarded) for _ in range(max(1, jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def summary(results: Sequence[Result]) -> str:
    passed = sum(r.passed for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    return f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped"


def unexpected_failures(results: Sequence[Result], backend: str = "cpu",
                        runtime_inputs: bool = False) -> list[Result]:
    table = KNOWN_RUNTIME_INPUT_FAILURES if runtime_inputs else KNOWN_FAILURES
    known = table.get(backend, frozenset())
    return [r for r in results if r.failed and r.name not in known]


def fusion_transform(backend: str = "cpu") -> Transform:
    """Our fusion pipeline as a transform (text -> FusionResult). Raises LookupError
    (with the reason) only where `tracehlo.passes` is missing; errors inside it
    propagate."""
    try:
        passes = importlib.import_module("tracehlo.passes")
    except ModuleNotFoundError as e:
        if e.name != "tracehlo.passes":
            raise
        raise LookupError("tracehlo.passes does not exist yet") from None
    return lambda text: passes.fuse_with_report(text, backend)


# ---------------------------------------------------------------- CLI

def _resolve(names: Sequence[str]) -> list[Path]:
    """Paths as given, else corpus names with or without .mlir."""
    directory = corpus_dir()
    paths = []
    for name in names:
        path = Path(name)
        if not path.exists() and directory is not None:
            path = directory / (name if name.endswith(".mlir") else name + ".mlir")
        if not path.exists():
            raise SystemExit(f"conformance: no such file or corpus entry: {name}")
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracehlo.tools.conformance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="corpus files or names (default: all)")
    parser.add_argument("--fuse", action="store_true",
                        help="run tracehlo.passes.fuse and compile with XLA's fusion off")
    parser.add_argument("--no-xla-fusion", action="store_true",
                        help="compile with XLA's fusion off, without ours (a baseline for --fuse)")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--limit", type=int, help="only the first N files")
    parser.add_argument("--sample", type=int, help="a sample of N files across op families")
    parser.add_argument("--seed", type=int, default=0, help="seed for --sample")
    parser.add_argument("--skip-disabled", action="store_true",
                        help="skip the files upstream marks RUN-DISABLED")
    parser.add_argument("--runtime-inputs", action="store_true",
                        help="pass @inputs() as arguments of @main, computed beforehand, "
                             "so XLA cannot constant-fold the ops under test")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="worker processes (files in each run in-process)")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds one file may take (default 300)")
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    xla_fusion = not (args.fuse or args.no_xla_fusion)
    if args.worker:
        _serve(args.backend, args.fuse, xla_fusion, args.skip_disabled, args.runtime_inputs)
        return 0

    if args.files:
        files = _resolve(args.files)
    else:
        if corpus_dir() is None:
            raise SystemExit(f"conformance: corpus not found; set {ENV_VAR}")
        files = corpus_files()
    if args.sample is not None:
        files = sample(files, args.sample, args.seed)
    if args.limit is not None:
        files = files[:args.limit]
    if args.fuse:
        try:
            fusion_transform(args.backend)
        except LookupError as e:
            raise SystemExit(f"conformance: --fuse needs the fusion pipeline: {e}")

    def report(r: Result) -> None:
        if args.verbose or r.failed:
            print(r.line(), flush=True)

    start = time.perf_counter()
    results = run_corpus(files, args.backend, args.fuse, xla_fusion, args.skip_disabled,
                         args.runtime_inputs, args.jobs, args.timeout, report)
    elapsed = time.perf_counter() - start

    disabled = [r for r in results if r.disabled is not None]
    if disabled:
        print(f"\nRUN-DISABLED upstream ({len(disabled)} files, reported apart): "
              f"{summary(disabled)}")
        for r in disabled:
            print(f"  {r.status:13} {r.name}  ({r.disabled})")
    unexpected = unexpected_failures(results, args.backend, args.runtime_inputs)
    known = sum(r.failed for r in results) - len(unexpected)
    print(f"\n{summary(results)} in {elapsed:.1f} s"
          + (f" ({known} known to fail on {args.backend} untransformed)" if known else ""))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
