"""The measurements: each returns per-library medians (seconds) and raw samples.

Every measurement times tracehlo and jax (and NumPy where it means something) in
the same process, interleaved sample by sample in a rotating order, so slow
drift of the machine (thermal, other processes, page cache) hits both sides
alike. The garbage collector is switched off inside a sample and run between
samples. Results are medians; ratios are tracehlo / jax.
"""
from __future__ import annotations

import functools
import gc
import inspect
import re
import statistics
import time

import numpy as np
import jax

import tracehlo
from tracehlo.lowering import lower_graph

from workloads import Lib, Workload

perf = time.perf_counter


# ------------------------------------------------------------------ sampling

def interleaved(samplers: dict, reps: int, warmup: int = 2) -> dict:
    """Run each sampler (a no-argument callable returning seconds) `warmup + reps`
    times, rotating the order every round. Returns {name: [seconds]} without warm-up.

    Sample i of every sampler comes from the same round, close together in time,
    so per-round ratios (see `paired_ratio`) cancel slow drift in machine load.
    The garbage collector is off inside each round; the young generations are
    collected between rounds (a full collection costs ~50 ms in a process that
    has jax and MLIR loaded, more than many samples). `reps` is rounded up to a
    multiple of the samplers, so each runs first equally often: of two compiling
    first calls, the second of a round measured ~3% slower (issue 10's train step),
    which an odd count tilted towards one library."""
    names = list(samplers)
    reps = -(-reps // len(names)) * len(names)
    out = {n: [] for n in names}
    gc.collect()
    for r in range(warmup + reps):
        order = names[r % len(names):] + names[:r % len(names)]
        gc.collect(1)
        gc.disable()
        try:
            for n in order:
                t = samplers[n]()
                if r >= warmup:
                    out[n].append(t)
        finally:
            gc.enable()
    return out


def paired_ratio(a: list, b: list) -> float:
    """Median over rounds of a[i] / b[i]: the ratio estimate that is robust to load
    that drifts over seconds (both samples of a round see the same load) and to
    short bursts (the median drops the rounds they hit)."""
    return statistics.median(x / y for x, y in zip(a, b))


def report(name: str, samples: dict, width: int = 24, digits: int = 3) -> None:
    """One line: tracehlo's and JAX's medians and their paired ratio."""
    th, jx = samples["tracehlo"], samples["jax"]
    print(f"{name:<{width}} tracehlo {statistics.median(th) * 1e3:9.{digits}f} ms   "
          f"jax {statistics.median(jx) * 1e3:9.{digits}f} ms   "
          f"ratio {paired_ratio(th, jx):6.{digits}f}x")


def summarize(samples: dict) -> dict:
    """{name: {"median": s, "min": s, "iqr": s, "n": k, "samples": [...]}}."""
    out = {}
    for n, xs in samples.items():
        q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
        out[n] = {"median": statistics.median(xs), "min": min(xs), "iqr": q[2] - q[0],
                  "n": len(xs), "samples": xs}
    return out


def device_args(args):
    """Inputs as committed jax.Arrays on the default device, ready before timing."""
    out = jax.device_put(args)
    jax.block_until_ready(out)
    return out


def block(x):
    return jax.block_until_ready(x)


# ------------------------------------------------------------------ 1. frontend

def frontend(w: Workload, libs: dict[str, Lib], reps: int) -> dict:
    """Python function -> compiler input, nothing cached.

    tracehlo: make_ir (trace to our Graph) + lower_graph (Graph -> StableHLO text,
              with locations, exactly what Compiled does before XLA compile).
    jax:      jax.jit(f).trace(*args) (trace to a jaxpr) + .lower() (jaxpr ->
              in-memory StableHLO MLIR module, what jax hands to XLA compile).
    A fresh function object per sample defeats both libraries' tracing caches.
    Both outputs are the thing each library passes to PJRT compile; jax's
    module is not printed to text (that would add cost jax does not pay)."""
    args = device_args(w.args())
    th, jx = libs["tracehlo"], libs["jax"]
    parts = {"tracehlo.trace": [], "tracehlo.lower": [], "jax.trace": [], "jax.lower": []}

    def s_th():
        f = w.make(th)
        t0 = perf()
        g = tracehlo.make_ir(f)(*args)
        t1 = perf()
        lower_graph(g, locations=True, module_name=f"jit_{w.name}")
        t2 = perf()
        parts["tracehlo.trace"].append(t1 - t0)
        parts["tracehlo.lower"].append(t2 - t1)
        return t2 - t0

    def s_jax():
        f = w.make(jx)
        t0 = perf()
        traced = jax.jit(f).trace(*args)
        t1 = perf()
        traced.lower()
        t2 = perf()
        parts["jax.trace"].append(t1 - t0)
        parts["jax.lower"].append(t2 - t1)
        return t2 - t0

    res = summarize(interleaved({"tracehlo": s_th, "jax": s_jax}, reps))
    # the part lists include warm-up samples; keep the last `reps`
    res["parts"] = {k: statistics.median(v[-reps:]) for k, v in parts.items()}
    return res


# ------------------------------------------------------------------ variants

def fusion_modes() -> list[str] | None:
    """The values of tracehlo's `fusion=` option if this build has it."""
    try:
        params = inspect.signature(tracehlo.compile).parameters
    except (TypeError, ValueError):
        return None
    if "fusion" not in params:
        return None
    return ["tracehlo", "xla", "none"]


XLA_VARIANT = "th fusion=xla"
# A second jax.jit of the same function, timed like the others: its paired ratio to
# "jax" should be 1.000x, and how far it is from 1 is the noise of that table.
CONTROL = "jax A/A"


def th_variants(fusion: bool) -> dict[str, dict]:
    """tracehlo columns: the default jit, plus (when `fusion` and tracehlo has the
    option) the same program compiled with XLA's own fusion instead of ours, which
    separates the cost of our fusion decisions from the rest of tracehlo."""
    out = {"tracehlo": {}}
    if fusion and fusion_modes():
        out[XLA_VARIANT] = {"fusion": "xla"}
    return out


# ------------------------------------------------------------------ 2. first call

def first_call(w: Workload, libs: dict[str, Lib], reps: int, fusion: bool = True) -> dict:
    """Wall time of the first call of a freshly jitted, fresh function object:
    trace + lower (+ our fusion passes) + XLA compile + dispatch + execute, until
    the output is ready. No compilation cache can hit (jax's persistent cache is
    off by default; both in-memory caches are keyed on the function object)."""
    args = device_args(w.args())
    th, jx = libs["tracehlo"], libs["jax"]
    breakdown = []

    def s_th(opts, record):
        def sample():
            f = w.make(th)
            t0 = perf()
            jf = tracehlo.jit(f, **opts)
            block(jf(*args))
            t1 = perf()
            if record:
                breakdown.append(dict(jf.lower(*args).timings))  # cached: same Compiled
            return t1 - t0
        return sample

    def s_jax():
        f = w.make(jx)
        t0 = perf()
        block(jax.jit(f)(*args))
        return perf() - t0

    samplers = {name: s_th(opts, name == "tracehlo")
                for name, opts in th_variants(fusion).items()}
    samplers["jax"] = s_jax
    samplers[CONTROL] = s_jax  # A/A: the same measurement again, another fresh function
    res = summarize(interleaved(samplers, reps, warmup=1))
    bd = breakdown[-reps:]
    res["parts"] = {f"tracehlo.{k}": statistics.median(b.get(k, 0.0) for b in bd)
                    for k in bd[0]}
    return res


# ------------------------------------------------------------------ 3. dispatch

def dispatch(w: Workload, libs: dict[str, Lib], reps: int, calls: int) -> dict:
    """Per-call time of an already compiled function on a tiny input that is
    already on the device: `calls` back-to-back calls, block on the last output,
    divide by `calls`. Measures the Python + C++ call path (argument checks,
    cache lookup, PJRT execute, output wrapping), not compute.

    Besides tracehlo.jit, jax.jit and NumPy (eager, host arrays) it times two
    layers under tracehlo.jit, to show where its time goes:
      th.call_flat  Compiled.call_flat(leaves): no flatten, no cache lookup
      pjrt floor    LoadedExecutable.execute_sharded(bufs).consume_with_handlers:
                    the jaxlib Python binding that tracehlo's runtime calls,
                    with no tracehlo code at all (the best tracehlo can do
                    without a C++ fast path of its own)."""
    np_args = w.args(w.dispatch_size)
    args = device_args(np_args)
    f_th = tracehlo.jit(w.make(libs["tracehlo"]))
    f_jax = jax.jit(w.make(libs["jax"]))
    f_np = w.make(libs["numpy"])
    for _ in range(50):  # compile and warm caches
        block(f_th(*args))
        block(f_jax(*args))
        f_np(*np_args)

    def loop(f, a, sync):
        def sample():
            t0 = perf()
            for _ in range(calls):
                out = f(*a)
            if sync:
                block(out)
            return (perf() - t0) / calls
        return sample

    f_jax2 = jax.jit(w.make(libs["jax"]))  # A/A control: a second, identical jax.jit
    block(f_jax2(*args))
    samplers = {"tracehlo": loop(f_th, args, True), "jax": loop(f_jax, args, True),
                CONTROL: loop(f_jax2, args, True)}
    # diagnostics below use tracehlo internals; skipped if they move
    compiled = f_th.lower(*args)
    leaves = jax.tree_util.tree_leaves(args)
    try:
        call_flat = compiled.call_flat
        if "convert" in inspect.signature(call_flat).parameters:
            call_flat = functools.partial(call_flat, convert=())  # as jit calls it
        block(call_flat(leaves))
        samplers["th.call_flat"] = loop(call_flat, (leaves,), True)
    except Exception:  # noqa: BLE001
        pass
    exe = getattr(compiled, "_exe", None)
    loaded, handlers = getattr(exe, "loaded", None), getattr(exe, "_handlers", None)
    if loaded is not None and handlers is not None:
        samplers["pjrt floor"] = loop(
            lambda bufs: loaded.execute_sharded(bufs).consume_with_handlers(handlers),
            (leaves,), True)
    res = summarize(interleaved(samplers, reps))
    res.update(summarize(interleaved({"numpy": loop(f_np, np_args, False)},
                                     max(5, reps // 5))))
    return res


# ------------------------------------------------------------------ 4. steady state

def _per_call(f, args):
    t0 = perf()
    block(f(*args))
    return perf() - t0


def _calls_per_sample(f, args, sample_s):
    est = min(_per_call(f, args) for _ in range(3))
    return max(1, min(1000, int(sample_s / max(est, 1e-7))))


def _timed_loop(f, args, n, sync=True):
    def sample():
        t0 = perf()
        for _ in range(n):
            out = f(*args)
            if sync:
                block(out)
        return (perf() - t0) / n
    return sample


def steady(w: Workload, libs: dict[str, Lib], reps: int, sample_s: float,
           with_numpy: bool = True, fusion: bool = True) -> dict:
    """Per-call run time at a realistic size, each call blocked until its output
    is ready (compute + dispatch; at these sizes compute dominates). Many short
    samples (about `sample_s` each, at least one call), interleaved across
    libraries, so that a burst of load from other processes lands in a few
    samples of every library rather than in all samples of one."""
    np_args = w.args()
    args = device_args(np_args)
    fns = {name: tracehlo.jit(w.make(libs["tracehlo"]), **opts)
           for name, opts in th_variants(fusion).items()}
    fns["jax"] = jax.jit(w.make(libs["jax"]))
    fns[CONTROL] = jax.jit(w.make(libs["jax"]))  # A/A control: same program again
    for _ in range(3):
        for f in fns.values():
            block(f(*args))
    n = _calls_per_sample(fns["jax"], args, sample_s)
    samplers = {name: _timed_loop(f, args, n) for name, f in fns.items()}
    res = summarize(interleaved(samplers, reps, warmup=1))
    if with_numpy:  # a reference only, not paired with anything: fewer samples
        f_np = w.make(libs["numpy"])
        f_np(*np_args)
        res.update(summarize(interleaved({"numpy": _timed_loop(f_np, np_args, n, sync=False)},
                                         max(5, reps // 5), warmup=1)))
    res["calls_per_sample"] = n
    return res


# ------------------------------------------------------------------ correctness

def max_diff(got, ref) -> float:
    """Largest absolute difference over the leaves of two output pytrees."""
    gl, rl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(ref)
    if len(gl) != len(rl):
        raise ValueError(f"{len(gl)} outputs, expected {len(rl)}")
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(r, np.float64))))
               for g, r in zip(gl, rl))


def close_enough(diff: float, ref) -> bool:
    """Within f32 rounding of a reference output whose largest magnitude sets the scale."""
    scale = max(float(np.max(np.abs(np.asarray(r)))) for r in jax.tree_util.tree_leaves(ref))
    return diff <= 1e-4 * (scale or 1.0) + 1e-5


def check(w: Workload, libs: dict[str, Lib]) -> dict:
    """Max abs difference of tracehlo and NumPy outputs against jax.jit's (not an
    assertion: a benchmark of a wrong result is reported, not hidden)."""
    np_args = w.args()
    args = device_args(np_args)
    ref = jax.jit(w.make(libs["jax"]))(*args)
    out = {}
    for name, f, a in (("tracehlo", tracehlo.jit(w.make(libs["tracehlo"])), args),
                       ("numpy", w.make(libs["numpy"]), np_args)):
        try:
            out[name] = max_diff(f(*a), ref)
        except Exception as e:  # noqa: BLE001 - report, do not hide the table
            out[name] = f"error: {type(e).__name__}: {e}"
    out["ok"] = all(isinstance(v, float) and close_enough(v, ref)
                    for k, v in out.items() if k == "tracehlo")
    return out


# ------------------------------------------------------------------ kernels / fusion

_SKIP_OPS = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
_OP_RE = re.compile(r"=\s*(?:\([^=]*?\)|\S+)\s+([a-z][\w-]*)\(")


def kernel_count(hlo_text: str) -> int:
    """Instructions of XLA's optimized ENTRY computation that launch work
    (fusions, custom calls, unfused ops); parameters, constants, tuples,
    get-tuple-element and bitcasts are free and not counted."""
    m = re.search(r"^ENTRY [^\n]*\{\n(.*?)^\}", hlo_text, re.S | re.M)
    if not m:
        return -1
    n = 0
    for line in m.group(1).splitlines():
        op = _OP_RE.search(line)
        if op and op.group(1) not in _SKIP_OPS:
            n += 1
    return n


# A second fusion="xla" compile of the same function in kernels(control=True): its
# paired ratio to fusion=xla is the noise of the fusion suite's time ratios.
XLA_CONTROL = "fusion=xla A/A"


def kernels(w: Workload, libs: dict[str, Lib], reps: int, sample_s: float,
            modes: list[str] | None, control: bool = False) -> dict:
    """Kernel count and bytes accessed of XLA's optimized program, for jax.jit and
    for tracehlo.compile of one function object in each fusion mode (or its only
    mode, if it has no `fusion=`), so that only the fusion decision differs.
    Each program's output is checked against jax.jit's first (max_diff, ok); then
    all programs are timed side by side (steady state, each call blocked).
    `run_ratio` is against jax; run.py's fusion suite pairs the samples against
    fusion=xla instead. control=True adds XLA_CONTROL, timed like the others."""
    args = device_args(w.args())
    out, programs = {}, {}
    f_jax = jax.jit(w.make(libs["jax"]))  # timed through jit's call path
    cj = f_jax.lower(*args).compile()
    out["jax"] = {"kernels": kernel_count(cj.as_text()), "bytes": _bytes(cj.cost_analysis())}
    programs["jax"] = f_jax
    ref = f_jax(*args)
    f_th = w.make(libs["tracehlo"])
    for mode in (modes if modes is not None else [None]):
        name = f"fusion={mode}" if mode else "tracehlo"
        try:
            c = tracehlo.compile(f_th, args, **({"fusion": mode} if mode else {}))
            diff = max_diff(c(*args), ref)
            out[name] = {"kernels": len(c.kernels()), "bytes": _bytes(c.cost_analysis()),
                         "timings": dict(c.timings), "max_diff": diff,
                         "ok": close_enough(diff, ref)}
            programs[name] = c
        except Exception as e:  # noqa: BLE001 - a mode that fails is a result too
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    if control and "fusion=xla" in programs:
        out[XLA_CONTROL] = {}
        programs[XLA_CONTROL] = tracehlo.compile(f_th, args, fusion="xla")
    for c in programs.values():
        block(c(*args))
    n = _calls_per_sample(programs["jax"], args, sample_s)
    times = summarize(interleaved({k: _timed_loop(c, args, n) for k, c in programs.items()},
                                  reps, warmup=1))
    for k, v in times.items():
        out[k]["run"] = v
        out[k]["run_ratio"] = paired_ratio(v["samples"], times["jax"]["samples"])
    return out


def _bytes(cost) -> float | None:
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    try:
        return float(cost["bytes accessed"])
    except (KeyError, TypeError):
        return None
