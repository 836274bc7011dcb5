"""Public entry points: make_ir, compile and jit.

Data flows one way: trace (core) -> lower (lowering) -> [passes] -> compile and
execute (runtime). Each stage's output stays on the Compiled object as text.
"""
from __future__ import annotations

import functools
import logging
import threading
import time

from . import pytree as tree_util

from . import calls, core, eager, runtime  # noqa: F401  (eager: the evaluation trace)
from .arguments import (Signature, as_tuple, donated_leaves, fn_location, fn_name,
                        leaf_type, trace, with_float0)
from .config import config
from .ir import ArrayType
from .lowering import lower_graph

logger = logging.getLogger("tracehlo")
FUSION_MODES = ("tracehlo", "xla", "none")


def make_ir(fn, static_argnums=(), static_argnames=()):
    """`make_ir(f)(*args)` -> the Graph that tracing f on these arguments records."""
    sig = Signature(fn, static_argnums, static_argnames)

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        return trace(sig, args, kwargs).graph
    return traced


# ---------------------------------------------------------------- compiled programs

class Compiled:
    """A traced, lowered and compiled function; every stage is inspectable text."""

    def __init__(self, fn, sig, args, kwargs, backend=None, donate_argnums=(),
                 fusion="tracehlo", after_pass=None):
        if fusion not in FUSION_MODES:
            raise ValueError(f"fusion must be one of {FUSION_MODES}, got {fusion!r}")
        times = {}
        t0 = time.perf_counter()
        traced = trace(sig, args, kwargs)
        self.ir, self._in_tree, self._out_tree = traced.graph, traced.in_tree, traced.out_tree
        self._float0_outputs = traced.float0_outputs
        self._leaf_names = traced.leaf_names
        times["trace"] = time.perf_counter() - t0
        self._sig, self._static = sig, sig.split(args, kwargs)[2]
        t0 = time.perf_counter()
        self.stablehlo = lower_graph(self.ir, locations=True, module_name=f"jit_{fn_name(fn)}",
                                     donated=donated_leaves(sig, args, donate_argnums),
                                     loc=fn_location(fn), platform=runtime.platform(backend))
        times["lower"] = time.perf_counter() - t0
        if fusion == "tracehlo" and runtime.refuses_fusions(backend):
            fusion = "xla"  # this device takes no fused module (warned when first seen)
        self.fusion = fusion
        self._fused = None  # passes.FusionResult
        # XLA's import is asked which fusions its folders break only once XLA has
        # refused the module (passes.fuse_with_report's import_probe): a dump that
        # watches the passes asks at once, to show one run of them
        probed = after_pass is not None
        if fusion == "tracehlo":
            t0 = time.perf_counter()
            self._fused = self._fuse(backend, after_pass, probed)
            times["passes"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out_types = [(t.shape, t.dtype, t.weak) for t in self.ir.out_types]
        try:
            if self._fused is None:
                self._exe = runtime.compile(self.stablehlo, out_types, backend,
                                            xla_fusion=(fusion == "xla"))
            else:
                self._exe = runtime.compile(self._fused.module, out_types, backend,
                                            xla_fusion=False,
                                            passes_off=self._fused.xla_passes_off,
                                            source_text=self.stablehlo)
        except runtime.FusionsRefusedError as e:
            self._fused.report.fallback = f"{runtime.refuses_fusions(backend)}: {e}"
            logger.warning("%s: %s, so XLA fuses the programs compiled for this device "
                           "(fusion='xla'); our passes' decisions stay in hlo-dump's report",
                           fn_name(fn), runtime.refuses_fusions(backend))
            self.fusion = "xla"
            self._exe = runtime.compile(self.stablehlo, out_types, backend, xla_fusion=True)
        except runtime.XlaCompileError as e:
            if self._fused is None:
                raise
            self._exe = self._compile_refused(fn, e, out_types, backend, probed)
        times["xla_compile"] = time.perf_counter() - t0
        self.timings = times
        self._single_output = self._out_tree == tree_util.tree_structure(0)
        self._in_types = [v.type for v in self.ir.inputs]
        self._dtypes = [t.dtype for t in self._in_types]
        if config.log_compiles:
            logger.warning("compiled %s for %s: %s", fn_name(fn), self.signature_text(),
                           ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()))

    def _fuse(self, backend, after_pass=None, import_probe=True):
        from . import passes  # tracehlo.passes: parsed with jaxlib's MLIR bindings
        return passes.fuse_with_report(self.stablehlo, runtime.fusion_backend(backend),
                                       after_pass=after_pass, import_probe=import_probe)

    def _compile_refused(self, fn, error, out_types, backend, probed: bool):
        """XLA refused our fused module. Unless XLA's import was asked already, the
        passes run again asking it, and what its folders break stays unfused. Still
        refused, it is a bug in the passes (check_backend promises XLA compiles what
        they emit), but the program must run all the same, so XLA chooses the
        kernels, and the report and a warning say so."""
        if not probed:
            result = self._fuse(backend)
            if result.text != self._fused.text:
                self._fused = result
                try:
                    return runtime.compile(result.module, out_types, backend, xla_fusion=False,
                                           passes_off=result.xla_passes_off,
                                           source_text=self.stablehlo)
                except runtime.XlaCompileError as e:
                    error = e
        self._fused.report.fallback = f"XLA rejected the fused module: {error}"
        logger.warning("%s: XLA rejected the fused module, compiling with XLA's own "
                       "fusion instead (a tracehlo bug, please report it): %s", fn_name(fn),
                       error)
        self.fusion = "xla"
        return runtime.compile(self.stablehlo, out_types, backend, xla_fusion=True)

    @property
    def hlo(self) -> str:
        """XLA's optimized HLO: the kernels that actually run."""
        return self._exe.hlo_text()

    def kernels(self) -> list[str]:
        """The kernels XLA launches: the entry computation's instructions that compute
        (fusions, dots, custom calls, ...), not parameters, constants or tuples."""
        return runtime.entry_kernels(self.hlo)

    def cost_analysis(self) -> dict:
        return self._exe.cost_analysis()

    @property
    def fused(self) -> str | None:
        """The module our passes fused, as text: what XLA compiled unless it refused
        it (fusion_report().fallback then says why). None unless fusion="tracehlo"."""
        return None if self._fused is None else self._fused.text

    def fusion_report(self):
        """Each fusion our passes made (ops, source lines, kind, modelled bytes saved)
        and each candidate they rejected, with its reason. None unless fusion="tracehlo"."""
        return None if self._fused is None else self._fused.report

    def memory_analysis(self):
        return self._exe.memory_analysis()

    def signature_text(self) -> str:
        return ", ".join(f"{n}: {t}" for n, t in zip(self._leaf_names, self._in_types))

    def __call__(self, *args, **kwargs):
        dyn_args, dyn_kwargs, static = self._sig.split(args, kwargs)
        if static != self._static:
            raise TypeError(f"static arguments differ from the compiled ones: got "
                            f"{dict(static)}, compiled for {dict(self._static)}")
        leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        if tree != self._in_tree:
            raise TypeError(f"arguments have tree structure {tree}, but the function was "
                            f"compiled for {self._in_tree}")
        for name, leaf, expected in zip(self._leaf_names, leaves, self._in_types):
            got = leaf_type(leaf)
            if got != expected:
                what = "shape" if got.dtype == expected.dtype else (
                    "dtype" if got.shape == expected.shape else "shape and dtype")
                raise TypeError(f"argument {name} has {what} {got}, but the function was "
                                f"compiled for {expected}; call tracehlo.compile again for "
                                "this signature, or use tracehlo.jit")
        return self.call_flat(leaves)

    def call_flat(self, leaves, convert=None):
        """The dispatch hot path: leaves already match the compiled types. `convert`
        lists the leaves that are not yet device buffers of the right dtype (None:
        check every leaf)."""
        exe = self._exe
        if convert is None:
            buffers = [runtime.as_buffer(x, d, exe.device) for x, d in zip(leaves, self._dtypes)]
        elif convert:
            buffers = list(leaves)
            for i in convert:
                buffers[i] = runtime.as_buffer(buffers[i], self._dtypes[i], exe.device)
        else:
            buffers = leaves
        try:
            outs = exe(buffers)
        except Exception:
            outs = exe(runtime.move_to(buffers, exe.device))  # arrays on another device
        if self._float0_outputs:
            outs = with_float0(outs, self._float0_outputs)
        return outs[0] if self._single_output else tree_util.tree_unflatten(self._out_tree, outs)


def compile(fn, example_args=(), example_kwargs=None, *, static_argnums=(),
            static_argnames=(), donate_argnums=(), backend=None,
            fusion="tracehlo", after_pass=None) -> Compiled:
    """Trace, lower and compile `fn` for the types of `example_args`.

    fusion: "tracehlo" (our passes choose the kernels; XLA's fusion is off for this
    compile), "xla" (XLA's own fusion) or "none" (every op its own kernel).
    Buffers of `donate_argnums` arguments may be reused for outputs; a donated
    jax.Array is deleted by the call, as in JAX. `after_pass(name, module)` sees the
    module after each of our passes (passes.PassManager), as hlo-dump prints it."""
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    sig = Signature(fn, static_argnums, static_argnames)
    return Compiled(fn, sig, tuple(example_args), dict(example_kwargs or {}), backend,
                    as_tuple(donate_argnums), fusion, after_pass)


# ---------------------------------------------------------------- jit

def _leaf_key(x):
    """The part of a leaf that selects a compiled program: a jax.Array's aval (shape,
    dtype and weak type in one attribute read), else shape and dtype, or scalar type."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, (bool, int, float, complex)):
        return type(x)
    try:
        return (x.shape, x.dtype)
    except AttributeError:
        return leaf_type(x)  # lists and other array-likes: full conversion (rare, slow)


def _needs_conversion(leaf_keys, dtypes) -> tuple:
    """Indices of leaves that must be copied to the device (or converted) per call."""
    return tuple(i for i, (k, d) in enumerate(zip(leaf_keys, dtypes))
                 if not (hasattr(k, "dtype") and hasattr(k, "weak_type") and k.dtype == d))


class JitFunction:
    """Compiles on the first call per signature and caches; later calls only dispatch."""

    def __init__(self, fn, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None, fusion="tracehlo"):
        if fusion not in FUSION_MODES:
            raise ValueError(f"fusion must be one of {FUSION_MODES}, got {fusion!r}")
        functools.update_wrapper(self, fn)
        self._fusion = fusion
        self._fn = fn
        self._sig = Signature(fn, static_argnums, static_argnames)
        self._donate = as_tuple(donate_argnums)
        self._backend = backend
        self._cache: dict = {}
        # Calls whose arguments are all jax.Arrays, positional: keyed by their avals alone,
        # skipping pytree flattening (the common case on the hot path).
        self._array_args_cache: dict = {}
        self._last_key = None
        self._compile_lock = threading.RLock()  # concurrent first calls compile once

    def __call__(self, *args, **kwargs):
        if core.tracing():  # called inside another trace: one call equation
            return calls.call(self._sig, args, kwargs)
        if not kwargs:  # a None aval (not a jax.Array) never matches: no exception cost
            compiled = self._array_args_cache.get((config.enable_x64, *[
                getattr(a, "aval", None) for a in args]))
            if compiled is not None:
                return compiled.call_flat(args, ())
        key, leaves = self._key(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile_for(key, args, kwargs)
        compiled, convert = entry
        if not kwargs and not self._sig.has_static and not convert and len(leaves) == len(args):
            self._array_args_cache[key[2:]] = compiled  # each arg is one jax.Array leaf
        return compiled.call_flat(leaves, convert)

    def _key(self, args, kwargs):
        """(cache key, traced leaves): tree structure, static values, the x64 mode (it
        sets the types of Python scalars and of what the function creates), one key
        per leaf."""
        sig = self._sig
        dyn_args, dyn_kwargs, static = sig.split(args, kwargs) if (
            sig.has_static) else (args, kwargs, ())
        # the same leaves either way; the tree (part of the key) tells the forms apart
        leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs) if dyn_kwargs else dyn_args)
        return (tree, static, config.enable_x64, *map(_leaf_key, leaves)), leaves

    def _compile_for(self, key, args, kwargs):
        """The cache entry for key, compiled by the first of the threads that miss."""
        with self._compile_lock:
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            if config.explain_cache_misses:
                logger.warning("%s", self.explain_miss(key))
            compiled = Compiled(self._fn, self._sig, args, kwargs, self._backend, self._donate,
                                self._fusion)
            entry = (compiled, _needs_conversion(key[3:], compiled._dtypes))
            self._cache[key] = entry
            self._last_key = key
            return entry

    def explain_miss(self, key) -> str:
        name = fn_name(self._fn)
        if self._last_key is None:
            return f"cache miss for {name}: first call, compiling"
        old, new = self._last_key, key
        if old[0] != new[0]:
            return f"cache miss for {name}: argument tree structure changed from {old[0]} to {new[0]}"
        if old[1] != new[1]:
            return f"cache miss for {name}: static arguments changed from {dict(old[1])} to {dict(new[1])}"
        if old[2] != new[2]:
            return f"cache miss for {name}: enable_x64 changed from {old[2]} to {new[2]}"
        leaf_names = self._cache[old][0]._leaf_names
        changes = [f"{n}: {_describe(a)} -> {_describe(b)}"
                   for n, a, b in zip(leaf_names, old[3:], new[3:]) if a != b]
        return f"cache miss for {name}: " + "; ".join(changes)

    def lower(self, *args, **kwargs) -> Compiled:
        """The Compiled object for these arguments (cached like a call)."""
        key, _ = self._key(args, kwargs)
        return (self._cache.get(key) or self._compile_for(key, args, kwargs))[0]


def _describe(leaf_key) -> str:
    if isinstance(leaf_key, type):
        return f"Python {leaf_key.__name__}"
    shape, dtype = leaf_key if isinstance(leaf_key, tuple) else (leaf_key.shape, leaf_key.dtype)
    return str(ArrayType(tuple(shape), dtype))


def jit(fn=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None,
        fusion="tracehlo"):
    """`@jit` or `@jit(static_argnums=...)`: compile per signature, cache, dispatch fast.
    `fusion` is as for compile()."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, backend=backend, fusion=fusion)
    return JitFunction(fn, static_argnums, static_argnames, donate_argnums, backend, fusion)


__all__ = ["make_ir", "compile", "jit", "Compiled", "JitFunction"]
