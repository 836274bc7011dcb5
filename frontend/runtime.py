"""The one module that talks to jaxlib's PJRT runtime.

jaxlib's Python APIs move between releases (tested: 0.10.2 CPU, in CI; 0.11.2 CPU and
CUDA on a GPU machine, where CUDA takes no fused module: FusionsRefusedError), so
every jaxlib-specific call lives here and nowhere else. Device buffers are
`jax.Array`s, so results interoperate with JAX and NumPy.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import jax
import jax.core
import jax.sharding
import jaxlib
from jaxlib import xla_client

from .passes import mlir_io

_jaxlib = xla_client._xla  # the nanobind extension (jaxlib._jax) behind xla_client
ArrayImpl = _jaxlib.ArrayImpl  # the class of every device buffer: jax.Array's implementation

# XLA pass names that perform fusion, per platform: switched off per compile when our
# own passes choose the kernels (env_option_overrides, never the process-wide XLA_FLAGS).
XLA_FUSION_PASSES = {
    "cpu": "fusion,cpu_multi_output_fusion",
    "cuda": "priority-fusion,multi_output_fusion,fusion,horizontal-loop-fusion,"
            "sibling-multi-output-fusion",
    "rocm": "priority-fusion,multi_output_fusion,fusion,horizontal-loop-fusion,"
            "sibling-multi-output-fusion",
}


# XLA CPU with its fusion off miscompiles a transpose of unsigned or complex elements:
# layout assignment makes the transpose a bitcast plus a copy, no fusion wraps that
# copy, and the simplifier after layout assignment then drops it, silently returning
# the untransposed data (python_tests/test_runtime_xla_workarounds.py). That pipeline
# is switched off for such modules; it only tidies what fusion would have absorbed.
_UNFUSED_TRANSPOSE_HAZARD = re.compile(r"tensor<(?:\d+x){2,}(?:ui\d+|complex<)")
_CPU_SIMPLIFICATION_AFTER_LAYOUT = "simplification after layout assignment"
# XLA CPU's own fusion crashes the process (SIGSEGV, jaxlib 0.10.2; JAX's jit of
# x.astype(int8) & y too) on an and or an or that reads a convert from a signed integer
# type to a narrower one (passes.capability.bitwise_of_narrowing_problem keeps such ops
# out of our fusions; read through another op, it compiles). A module with one
# compiles with XLA's fusion off. Only where calls or control flow could bring the two
# together once XLA has inlined them does any and or or beside such a convert count:
# that turned XLA's fusion off for every argmin (its reducer ands bools) of a program
# that also narrowed an integer, so fusion="xla" was not JAX's jit's program (fuzz jit
# --bitwise 5450).
_SIGNED_CONVERT = re.compile(r"(%[\w.\-]+) = stablehlo\.convert [^\n]*?: "
                             r"\(tensor<(?:\d+x)*i(\d+)>\) -> tensor<(?:\d+x)*i(\d+)>")
_BITWISE_AND_OR = re.compile(r"= stablehlo\.(?:and|or) ([^:\n]*)")
_SSA_NAME = re.compile(r"%[\w.\-]+")
_INLINED_BY_XLA = re.compile(r"\bcall @|stablehlo\.(?:while|case|if)\b")
_CALL = re.compile(r"\bcall @")
_FUNCTION_RETURN = re.compile(r"\s*(?:return|\"?func\.return\"?)\b")
_WHILE_OPERANDS = re.compile(r"stablehlo\.while\"?\(([^)]*)\)")
# data movement XLA's simplifier may drop (a reshape, broadcast or transpose to the
# operand's own shape, ...): a convert read through one may be read directly
_MOVED = re.compile(r"(%[\w.\-]+) = stablehlo\.(?:reshape|broadcast_in_dim|transpose|reverse|"
                    r"slice) (%[\w.\-]+)")


def _narrowing_bitwise_hazard(stablehlo_text: str) -> bool:
    narrowed = {name for name, src, to in _SIGNED_CONVERT.findall(stablehlo_text)
                if 1 < int(to) < int(src)}
    if not narrowed:
        return False
    for moved, operand in _MOVED.findall(stablehlo_text):  # in program order
        if operand in narrowed:
            narrowed.add(moved)
    bitwise = _BITWISE_AND_OR.findall(stablehlo_text)
    if bitwise and _INLINED_BY_XLA.search(stablehlo_text) and _may_meet_once_inlined(
            stablehlo_text, narrowed):
        return True
    return any(not narrowed.isdisjoint(_SSA_NAME.findall(operands)) for operands in bitwise)


def _may_meet_once_inlined(stablehlo_text: str, narrowed: set) -> bool:
    """Whether XLA's inlining may hand a narrowing convert to an and or an or under
    another name: always past a call (its arguments and results are renamed); past a
    loop or a branch, only where a region names the convert (makes or reads it), or a
    loop takes it as an operand (renamed as its block argument). (Any and or or beside
    any convert counted wherever a loop was: a 4,000-op program with three loops and
    one narrowing convert far from them compiled with XLA's fusion off, 2,491 kernels
    where JAX's jit makes 445.)"""
    if _CALL.search(stablehlo_text):
        return True
    lines = stablehlo_text.splitlines()
    returns = [_indent(line) for line in lines if _FUNCTION_RETURN.match(line)]
    top = min(returns or [_indent(line) for line in lines if _SSA_NAME.match(line.strip())]
              or [0])
    in_regions = any(_indent(line) > top and not narrowed.isdisjoint(_SSA_NAME.findall(line))
                     for line in lines)
    return in_regions or any(not narrowed.isdisjoint(_SSA_NAME.findall(operands))
                             for operands in _WHILE_OPERANDS.findall(stablehlo_text))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class XlaCompileError(RuntimeError):
    """XLA refused a program; the message is XLA's own."""


class FusionsRefusedError(XlaCompileError):
    """The device's runtime takes no fused module at all. jaxlib 0.11 hands a module
    to a PJRT plugin (CUDA's, for one) as portable StableHLO, converting MHLO ops to
    StableHLO first; StableHLO has no fusion op, so every mhlo.fusion fails there
    (seen on 0.11.2 CUDA: "failed to legalize operation 'mhlo.fusion'"). XLA's own
    fusion is then the only one that device can run."""


_FUSION_NOT_CONVERTED = re.compile(r"failed to legalize operation '(?:mhlo|stablehlo)\.fusion'")
_REFUSES_FUSIONS: dict = {}  # device -> XLA's words, once a fused module was refused


def refuses_fusions(backend: str | None = None) -> str | None:
    """Why `backend`'s device takes no fused module (FusionsRefusedError), once seen."""
    return _REFUSES_FUSIONS.get(device(backend))


def _compile_error(error: Exception, dev) -> XlaCompileError:
    """XLA's error as ours; one saying the device takes no fusion is remembered for
    that device (refuses_fusions), so later programs skip our passes there."""
    message = f"XLA could not compile the program: {error}"
    if _FUSION_NOT_CONVERTED.search(str(error)):
        _REFUSES_FUSIONS[dev] = (
            f"jaxlib {jaxlib.__version__} hands {dev.platform} programs to XLA as portable "
            "StableHLO, which has no fusion op")
        return FusionsRefusedError(message)
    return XlaCompileError(message)


@functools.lru_cache(maxsize=None)
def device(backend: str | None = None):
    """The first device of `backend` ('cpu', 'gpu', 'cuda', 'tpu'; None = JAX's default)."""
    try:
        return jax.devices(backend)[0]
    except RuntimeError as e:
        raise ValueError(f"backend {backend!r} is not available here: {e}") from None


def platform(backend: str | None = None) -> str:
    """The PJRT platform of `backend`'s device ('cpu', 'gpu', ...): what the lowering
    targets where a primitive lowers per platform."""
    return device(backend).platform


def fusion_backend(backend: str | None = None) -> str:
    """The capability model our fusion passes use for this backend: 'cpu' or 'gpu'."""
    return "cpu" if platform(backend) == "cpu" else "gpu"


@functools.lru_cache(maxsize=None)
def _sharding(dev):
    return jax.sharding.SingleDeviceSharding(dev)


@functools.lru_cache(maxsize=None)
def _aval(shape: tuple, dtype: np.dtype, weak_type: bool = False):
    return jax.core.ShapedArray(shape, dtype, weak_type=weak_type)


_X64_DTYPES = frozenset(map(np.dtype, ("int64", "uint64", "float64", "complex128")))


def to_device(x, dev, weak: bool = False) -> jax.Array:
    """A NumPy array or scalar as a committed device buffer (copied: later mutation
    of `x` by the caller must not show through); `weak` types it as JAX types Python
    scalars."""
    x = np.asarray(x)
    if x.dtype in _X64_DTYPES and not jax.config.jax_enable_x64:
        # a 64-bit value reaches here only under tracehlo's enable_x64; jaxlib narrows
        # it to 32 bits (keeping the 64-bit type) unless JAX's own x64 is on
        with jax.enable_x64(True):
            return _put(x, dev, weak)
    return _put(x, dev, weak)


def _put(x: np.ndarray, dev, weak: bool) -> jax.Array:
    try:
        return _jaxlib.batched_device_put(
            _aval(x.shape, x.dtype, weak), _sharding(dev), [x], [dev], True, True,
            _jaxlib.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
    except Exception:  # jaxlib moved the fast path: fall back to the public API
        return jax.device_put(x, dev)


def compile_options(stablehlo_text: str, backend_platform: str, xla_fusion: bool,
                    passes_off=()):
    disabled = list(passes_off)
    if xla_fusion and backend_platform == "cpu" and _narrowing_bitwise_hazard(stablehlo_text):
        xla_fusion = False
    if not xla_fusion:
        disabled.insert(0, XLA_FUSION_PASSES.get(backend_platform, "fusion"))
        if backend_platform == "cpu" and _UNFUSED_TRANSPOSE_HAZARD.search(stablehlo_text):
            disabled.append(_CPU_SIMPLIFICATION_AFTER_LAYOUT)
    opts = xla_client.CompileOptions()
    if disabled:
        opts.env_option_overrides = [("xla_disable_hlo_passes", ",".join(disabled))]
    return opts


def _result_handler(aval, sharding):
    """jaxlib's handler that wraps a result buffer as a jax.Array. 0.10 takes
    `_skip_checks` (the aval and sharding are ours, so checking them again is waste);
    0.11 dropped it."""
    if _HANDLER_SKIPS_CHECKS:
        return _jaxlib.array_result_handler(aval, sharding, committed=True, _skip_checks=True)
    return _jaxlib.array_result_handler(aval, sharding, committed=True)


_HANDLER_SKIPS_CHECKS = "_skip_checks" in (_jaxlib.array_result_handler.__doc__ or "")


class Executable:
    """A compiled program on one device with a lean call path: buffers in, jax.Arrays out."""

    __slots__ = ("loaded", "device", "_handlers", "out_types")

    def __init__(self, loaded, dev, out_types):
        self.loaded = loaded
        self.device = dev
        self.out_types = out_types
        sharding = _sharding(dev)
        self._handlers = [_result_handler(_aval(tuple(t[0]), np.dtype(t[1]), *t[2:]), sharding)
                          for t in out_types]

    def __call__(self, buffers: list) -> list:
        return self.loaded.execute_sharded(buffers).consume_with_handlers(self._handlers)

    def hlo_text(self) -> str:
        return "\n\n".join(m.to_string() for m in self.loaded.hlo_modules())

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self):
        return self.loaded.get_compiled_memory_stats()


@functools.lru_cache(maxsize=None)
def _load_lapack():
    """jaxlib's LAPACK kernels call SciPy's LAPACK through pointers set here, once (JAX
    sets them when it lowers such a call): run unset, they crash the process."""
    from jaxlib.cpu import _lapack
    _lapack.initialize()


def compile(program, out_types, backend: str | None = None, xla_fusion: bool = True,
            passes_off=(), source_text: str | None = None) -> Executable:
    """Compile a StableHLO program for one device: its text, or a parsed module
    (jaxlib's MLIR bindings), which XLA compiles without printing and parsing it again,
    as JAX hands XLA its modules. Text is parsed here, into the shared context: handed
    text, XLA builds a context with every dialect for each compile, 10 of the 30 ms an
    eager op's small module takes. The checks for XLA's hazards above read text: for a
    module, `source_text` if given, the text our passes made it from (they create no
    transpose and no custom call), else the module printed. `out_types` is
    [(shape, dtype[, weak])] of the results (weak: a weakly typed jax.Array, as JAX
    returns for Python-scalar math); `passes_off` names further XLA passes to switch
    off for this compile."""
    text = program if isinstance(program, str) else source_text or str(program)
    dev = device(backend)
    if dev.platform == "cpu" and "lapack_" in text:  # a custom call's target
        _load_lapack()
    opts = compile_options(text, dev.platform, xla_fusion, passes_off)
    if isinstance(program, str):
        try:
            program = mlir_io.parse(text)
        except mlir_io.ParseError as e:
            raise XlaCompileError(f"XLA could not compile the program: {e}") from None
    try:
        loaded = dev.client.compile_and_load(program, xla_client.DeviceList((dev,)), opts)
    except Exception as e:  # XlaRuntimeError / JaxRuntimeError: keep XLA's words
        raise _compile_error(e, dev) from None
    return Executable(loaded, dev, out_types)


_NOT_KERNELS = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
_HLO_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.-]+)\s*=\s*.*?\s([a-z][\w-]*)\(")


def entry_kernels(hlo_text: str) -> list[str]:
    """Names of the ENTRY computation's instructions that run as kernels."""
    kernels, in_entry = [], False
    for line in hlo_text.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
        elif in_entry and line.startswith("}"):
            break
        elif in_entry:
            m = _HLO_INSTRUCTION.match(line)
            if m and m.group(2) not in _NOT_KERNELS:
                kernels.append(m.group(1))
    return kernels


def is_device_array(x) -> bool:
    return isinstance(x, jax.Array)


def as_buffer(x, dtype: np.dtype, dev):
    """An argument as a device buffer of `dtype` (the hot path: jax.Arrays pass through)."""
    if isinstance(x, jax.Array) and x.dtype == dtype:
        return x
    return to_device(np.asarray(x, dtype), dev)


def move_to(buffers: list, dev) -> list:
    """Buffers that live on another device, copied to `dev` (the slow path after a failure)."""
    return [jax.device_put(b, dev) for b in buffers]
