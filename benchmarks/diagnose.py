"""Where does tracehlo's time go? Profiles for the rows of run.py that miss a target.

    python benchmarks/diagnose.py dispatch   [--workload elementwise] [--calls 20000]
    python benchmarks/diagnose.py first_call [--workload softmax] [--reps 7]
    python benchmarks/diagnose.py steady     [--workload softmax] [--reps 31]
    python benchmarks/diagnose.py profile    {frontend,first_call,dispatch} [--workload W]
    python benchmarks/diagnose.py fusion     [--workload attention] [--hlo]

dispatch    best-of-N timings of each layer of one call, outermost first: jax.jit,
            tracehlo.jit, Compiled.call_flat, the raw PJRT binding, and the Python
            pieces of JitFunction.__call__ (flatten, cache key, lookup, unflatten).
first_call  trace / lower / passes / xla_compile per fusion mode, repeated and
            interleaved, plus XLA compile of the same module text with and without
            our fusion (isolates "our passes" from "XLA compiling fused input").
steady      cost_analysis (flops, transcendentals, bytes) and run time per fusion
            mode against jax.jit, side by side.
profile     cProfile of the tracehlo side of one measurement, top entries by own
            time and by cumulative time.
fusion      why fusion="tracehlo" differs from fusion="xla" (run.py --suite fusion's
            misses): each mode's kernels as XLA's optimized entry lists them (op,
            shape, bytes each reads and writes), our fusion report (fusions and
            rejected candidates with the pass and reason), and with --hlo the .fused
            module and both optimized HLO modules.

Uses tracehlo internals (Compiled._exe, runtime.compile) for the layer breakdown;
a layer that has moved is reported as missing, not fixed up.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import statistics
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
from jax import tree_util  # noqa: E402

import tracehlo  # noqa: E402
from tracehlo import api, runtime  # noqa: E402

import measure  # noqa: E402
import workloads as W  # noqa: E402


def best_of(stmt, g, number, repeat=51) -> float:
    """Seconds per call, the minimum over `repeat` runs of `number` calls, blocking
    on the last result of each run (calls are asynchronous: without the block, a
    run would time the enqueueing only and let work pile up into the next run).
    The minimum is the least disturbed estimate of a few microseconds of work."""
    timer = timeit.Timer(f"_out = {stmt}", globals=g)
    src = (f"def _loop(_n):\n    _out = None\n    _t0 = _perf()\n"
           f"    for _ in range(_n):\n        _out = {stmt}\n"
           f"    _block(_out)\n    return _perf() - _t0\n")
    ns = dict(g, _perf=measure.perf, _block=_block_any)
    exec(src, ns)  # noqa: S102 - our own statement strings
    del timer
    return min(ns["_loop"](number) for _ in range(repeat)) / number


def _block_any(x):
    try:
        jax.block_until_ready(x)
    except Exception:  # noqa: BLE001 - an ExecuteResults or a key: nothing to wait on
        pass


def cmd_dispatch(w, a):
    libs = W.libs()
    args = measure.device_args(w.args(w.dispatch_size))
    jt = tracehlo.jit(w.make(libs["tracehlo"]))
    jj = jax.jit(w.make(libs["jax"]))
    for _ in range(100):
        jt(*args)
        jj(*args)
    c = jt.lower(*args)
    leaves, tree = tree_util.tree_flatten((args, {}))
    exe = c._exe
    key = (tree, (), *map(api._leaf_key, leaves))
    g = dict(jt=jt, jj=jj, args=args, c=c, leaves=leaves, tree=tree, exe=exe, key=key,
             api=api, tree_util=tree_util, runtime=runtime)
    stmts = [
        ("jax.jit(*args)", "jj(*args)"),
        ("tracehlo.jit(*args)", "jt(*args)"),
        ("  Compiled.call_flat(leaves, ())", "c.call_flat(leaves, ())"),
        ("    runtime.Executable(leaves)", "exe(leaves)"),
        ("      execute_sharded (raw)", "exe.loaded.execute_sharded(leaves)"),
        ("      execute_sharded+consume", "exe.loaded.execute_sharded(leaves)"
         ".consume_with_handlers(exe._handlers)"),
        ("  tree_flatten((args, {}))", "tree_util.tree_flatten((args, {}))"),
        ("  cache key (map _leaf_key)", "(tree, (), *map(api._leaf_key, leaves))"),
        ("  cache lookup (dict.get)", "jt._cache.get(key)"),
        ("  tree_unflatten(out)", "tree_util.tree_unflatten(c._out_tree, leaves[:1])"),
    ]
    print(f"dispatch layers, {w.name} at {w.dispatch_size} ({len(leaves)} leaves); "
          f"best of 51 x {a.calls} calls, us per call (nested rows are parts of the row above)")
    for _ in range(2):  # first pass warms up; print the second
        rows = []
        for label, s in stmts:
            try:
                rows.append((label, best_of(s, g, a.calls) * 1e6))
            except Exception as e:  # noqa: BLE001
                rows.append((label, f"missing: {type(e).__name__}: {e}"))
    jax_t = rows[0][1]
    for label, t in rows:
        if isinstance(t, float):
            print(f"  {label:36s} {t:8.2f} us   {t / jax_t:5.2f}x jax")
        else:
            print(f"  {label:36s} {t}")
    n = max(a.calls, 20000)
    _profile(lambda: [jt(*args) for _ in range(n)], f"{n} tracehlo.jit calls", 14)


def cmd_first_call(w, a):
    libs = W.libs()
    args = measure.device_args(w.args())
    modes = measure.fusion_modes() or [None]
    rows = {m: [] for m in modes}
    jax_t, plain, fused = [], [], []
    for r in range(a.reps + 1):
        for m in modes:
            c = tracehlo.compile(w.make(libs["tracehlo"]), args,
                                 **({"fusion": m} if m else {}))
            if r:
                rows[m].append(c.timings)
            if m == "tracehlo":
                # the same two module texts compiled again, XLA fusion on for the plain
                # one (as jax) and off for our fused one (as fusion="tracehlo")
                outs = [(t.shape, t.dtype) for t in c.ir.out_types]
                t0 = measure.perf()
                runtime.compile(c.stablehlo, outs, xla_fusion=True)
                t1 = measure.perf()
                runtime.compile(c.fused, outs, xla_fusion=False)
                t2 = measure.perf()
                if r:
                    plain.append(t1 - t0)
                    fused.append(t2 - t1)
        lo = jax.jit(w.make(libs["jax"])).lower(*args)
        t0 = measure.perf()
        lo.compile()
        if r:
            jax_t.append(measure.perf() - t0)
    med = lambda xs: statistics.median(xs) * 1e3  # noqa: E731
    print(f"first call parts, {w.name}: median of {a.reps}, ms")
    for m, ts in rows.items():
        keys = list(ts[0])
        print(f"  fusion={m}: " + "  ".join(f"{k} {med([t[k] for t in ts]):7.2f}"
                                            for k in keys)
              + f"  total {med([sum(t.values()) for t in ts]):7.2f}")
    print(f"  jax lowered.compile()            {med(jax_t):7.2f}")
    print(f"  our StableHLO, XLA fusion on     {med(plain):7.2f}   (same text jax-style)")
    print(f"  our fused module, XLA fusion off {med(fused):7.2f}   (what fusion=tracehlo "
          "compiles)")
    if "tracehlo" in modes:
        def one():
            tracehlo.compile(w.make(libs["tracehlo"]), args, fusion="tracehlo")
        _profile(lambda: [one() for _ in range(3)], "3 x tracehlo.compile(fusion='tracehlo')",
                 25)


def cmd_steady(w, a):
    libs = W.libs()
    args = measure.device_args(w.args())
    modes = measure.fusion_modes() or [None]
    progs = {"jax": jax.jit(w.make(libs["jax"]))}
    for m in modes:
        progs[f"fusion={m}"] = tracehlo.jit(w.make(libs["tracehlo"]),
                                            **({"fusion": m} if m else {}))
    print(f"steady state, {w.name} at {w.size}; programs called through jit")
    for name, p in progs.items():
        p = p.lower(*args)
        if name == "jax":
            p = p.compile()
        ca = p.cost_analysis()
        ca = ca[0] if isinstance(ca, (list, tuple)) else ca
        hlo = p.as_text() if name == "jax" else p.hlo
        print(f"  {name:16s} kernels {measure.kernel_count(hlo):3d}  flops "
              f"{ca.get('flops', 0):12.0f}  transcendentals {ca.get('transcendentals', 0):10.0f}"
              f"  bytes {ca.get('bytes accessed', 0):11.0f}")
    for p in progs.values():
        measure.block(p(*args))
    n = measure._calls_per_sample(progs["jax"], args, 0.005)
    res = measure.summarize(measure.interleaved(
        {k: measure._timed_loop(p, args, n) for k, p in progs.items()}, a.reps))
    for k, v in res.items():
        print(f"  {k:16s} median {v['median'] * 1e6:9.1f} us  min {v['min'] * 1e6:9.1f} us  "
              f"paired ratio to jax "
              f"{measure.paired_ratio(v['samples'], res['jax']['samples']):.3f}x")
    if a.hlo:
        for k, p in progs.items():
            p = p.lower(*args)
            print(f"\n==== {k}\n" + (p.compile().as_text() if k == "jax" else p.hlo))


def cmd_profile(w, a):
    libs = W.libs()
    if a.what == "dispatch":
        args = measure.device_args(w.args(w.dispatch_size))
        jt = tracehlo.jit(w.make(libs["tracehlo"]))
        jt(*args)
        _profile(lambda: [jt(*args) for _ in range(20000)], "20000 tracehlo.jit calls", 20)
        return
    args = measure.device_args(w.args())
    if a.what == "frontend":
        from tracehlo.lowering import lower_graph

        def one():
            g = tracehlo.make_ir(w.make(libs["tracehlo"]))(*args)
            lower_graph(g, locations=True)
        one()
        _profile(lambda: [one() for _ in range(50)], "50 x make_ir + lower_graph", 25)
    else:
        tracehlo.jit(w.make(libs["tracehlo"]))(*args)
        _profile(lambda: [measure.block(tracehlo.jit(w.make(libs["tracehlo"]))(*args))
                          for _ in range(3)], "3 x first call of tracehlo.jit", 30)


_ENTRY_OP = re.compile(r"^\s*(?:ROOT )?(%?[\w.-]+) = (\S+|\(.*?\)) ([a-z][\w-]*)\((.*?)\)")
_SHAPE = re.compile(r"([a-z]\d*)\[([\d,]*)\]")
_DTYPE_BYTES = {"f32": 4, "s32": 4, "u32": 4, "pred": 1, "f64": 8, "s64": 8, "f16": 2,
                "bf16": 2, "s8": 1, "u8": 1}


def _nbytes(shape_text: str) -> int:
    total = 0
    for dt, dims in _SHAPE.findall(shape_text):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * _DTYPE_BYTES.get(dt, 4)
    return total


def entry_kernel_lines(hlo_text: str) -> list[str]:
    """One line per kernel of the optimized ENTRY: name, op, output shape, and the
    bytes of its operands and output (how much that kernel moves)."""
    names = set(runtime.entry_kernels(hlo_text))
    body = hlo_text[hlo_text.index("\nENTRY"):]
    shapes = {m.group(1).lstrip("%"): m.group(2) for m in map(_ENTRY_OP.match, body.splitlines())
              if m}
    shapes.update({m.group(1).lstrip("%"): m.group(2)
                   for m in re.finditer(r"(%?[\w.-]+) = (\S+) parameter\(", body)})
    out = []
    for line in body.splitlines():
        m = _ENTRY_OP.match(line)
        if not m or m.group(1).lstrip("%") not in names:
            continue
        name, shape, op, operands = m.groups()
        ins = sum(_nbytes(shapes.get(o.strip().lstrip("%"), ""))
                  for o in operands.split(",") if o.strip())
        calls = re.search(r"calls=(%?[\w.-]+)", line)
        out.append(f"{name.lstrip('%'):22s} {op:10s} {shape:28s} reads {ins / 2**20:7.2f} MiB "
                   f"writes {_nbytes(shape) / 2**20:6.2f} MiB"
                   + (f"  calls {calls.group(1)}" if calls else ""))
    return out


def cmd_fusion(w, a):
    libs = W.libs()
    args = measure.device_args(w.args())
    f = w.make(libs["tracehlo"])
    progs = {m: tracehlo.compile(f, args, fusion=m) for m in ("tracehlo", "xla", "none")}
    print(f"fusion, {w.name} at {w.size}: one function, tracehlo.compile(fusion=...)")
    for m, c in progs.items():
        ca = c.cost_analysis()
        print(f"\n== fusion={m}: {len(c.kernels())} kernels, bytes accessed "
              f"{ca.get('bytes accessed', 0) / 2**20:.2f} MiB")
        if m != "none":
            for line in entry_kernel_lines(c.hlo):
                print("  " + line)
    print(f"\n== {progs['tracehlo'].fusion_report()}")
    if a.hlo:
        print("\n==== fusion=tracehlo: .fused (what our passes hand to XLA)\n"
              + progs["tracehlo"].fused)
        for m in ("tracehlo", "xla"):
            print(f"\n==== fusion={m}: XLA's optimized HLO\n" + progs[m].hlo)


def _profile(fn, what, top):
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    for key in ("tottime", "cumulative"):
        s = io.StringIO()
        pstats.Stats(pr, stream=s).strip_dirs().sort_stats(key).print_stats(top)
        text = s.getvalue()
        body = text[text.index("ncalls"):] if "ncalls" in text else text
        print(f"\ncProfile of {what}, by {key}:\n{body.rstrip()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("dispatch", "first_call", "steady", "profile", "fusion"):
        p = sub.add_parser(name)
        if name == "profile":
            p.add_argument("what", choices=["frontend", "first_call", "dispatch"])
        p.add_argument("--workload", default="softmax", choices=list(W.BY_NAME))
        p.add_argument("--calls", type=int, default=200)
        p.add_argument("--reps", type=int, default=7 if name == "first_call" else 31)
        p.add_argument("--hlo", action="store_true",
                       help="steady, fusion: print each program")
    a = ap.parse_args(argv)
    w = W.BY_NAME[a.workload]
    {"dispatch": cmd_dispatch, "first_call": cmd_first_call, "steady": cmd_steady,
     "profile": cmd_profile, "fusion": cmd_fusion}[a.cmd](w, a)


if __name__ == "__main__":
    main()
