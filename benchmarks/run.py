"""Side-by-side benchmarks: tracehlo vs jax.jit (and NumPy), one process.

    python benchmarks/run.py [--quick] [--json out.json] [--only mlp,softmax]
                             [--measure frontend,first_call,dispatch,steady,kernels]
    python benchmarks/run.py --suite fusion [--quick] [--json out.json] [--only ...]

Prints one table per measurement with the median time of each library and the
ratio tracehlo / jax; the target column says what ratio we aim for. The fusion
suite instead compares tracehlo.compile(fusion="tracehlo"|"xla"|"none") of one
function: kernels, bytes accessed, time against fusion="xla". Ratios are
reported, never asserted: this is not a test. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402

import measure  # noqa: E402
import preflight  # noqa: E402
import workloads as W  # noqa: E402

# measurement -> (target ratio tracehlo/jax, one-line meaning)
TARGETS = {
    "frontend": (0.5, "trace + lower to the compiler input (no XLA compile), fresh fn each rep"),
    "first_call": (1.0, "first call of a fresh jitted fn: trace+lower+XLA compile+run, ready"),
    "dispatch": (1.5, "per call, compiled, tiny input already on device, back-to-back"),
    "steady": (1.05, "per call at realistic size, each call blocked until ready"),
}

SETTINGS = {
    # frontend / first_call / kernels: samples per library; dispatch: (samples, calls per
    # sample); steady: (samples, seconds per sample, at least one call)
    # Short samples: on a shared machine a sample that is preempted is an outlier the
    # median drops; a long sample is preempted nearly always and every sample is noisy.
    "quick": dict(frontend=21, first_call=7, dispatch=(61, 100), steady=(41, 0.001), kernels=15),
    "full": dict(frontend=61, first_call=31, dispatch=(301, 100), steady=(151, 0.001),
                 kernels=41),
}
# fusion suite: rounds of the side-by-side timing (each round calls every program once,
# or more often when a call is shorter than the steady sample time)
FUSION_REPS = {"quick": 101, "full": 301}
# the fusion issue's targets for fusion="tracehlo" against fusion="xla"
FUSION_TARGETS = {"geomean": 1.0, "case": 1.15}


def fmt_time(s) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    if s < 1:
        return f"{s * 1e3:8.3f} ms"
    return f"{s:8.3f} s "


def fmt_bytes(b) -> str:
    return "-" if b is None else f"{b / 2**20:.2f} MiB"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep] + [line(r) for r in rows])


RATIO_HEADER = ["workload", "tracehlo", "jax", "numpy", "ratio", "target", "",
                "med/med", "min/min"]


def ratio_of(res) -> float:
    """The headline ratio: median over rounds of tracehlo_i / jax_i (paired)."""
    return measure.paired_ratio(res["tracehlo"]["samples"], res["jax"]["samples"])


def ratio_row(name, res, target, extra=()):
    """Medians; the paired ratio against its target; and two cross-checks: the
    ratio of the medians and the ratio of the minima (the least disturbed sample
    of each side). Under steady load all three agree; when they do not, the
    machine was noisy and the row should be re-run."""
    th, jx = res["tracehlo"]["median"], res["jax"]["median"]
    ratio = ratio_of(res)
    npy = res.get("numpy", {}).get("median")
    status = "ok" if ratio <= target else "OVER"
    rmin = res["tracehlo"]["min"] / res["jax"]["min"]
    return [name, fmt_time(th), fmt_time(jx), fmt_time(npy) if npy is not None else "-",
            f"{ratio:.3f}x", f"<= {target}x", status, f"{th / jx:.3f}x", f"{rmin:.3f}x",
            *extra]


def git_commit() -> str:
    """Short HEAD, "+dirty" when frontend/ or passes/ have local changes, and which
    of passes/ (others edit it while benchmarks run: results can move under you)."""
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True,  # noqa: E731
                                        text=True).stdout
        rev = git("rev-parse", "--short", "HEAD").strip()
        dirty = git("status", "--porcelain", "--", "frontend", "passes").strip()
        passes = [ln[3:] for ln in git("status", "--porcelain", "--", "passes").splitlines()]
        return (rev + ("+dirty" if dirty else "")
                + (f" (passes/ local changes: {', '.join(passes)})" if passes else
                   " (passes/ clean)"))
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=list(W.SUITES), default="default",
                    help="default: tracehlo vs jax (five measurements); fusion: our fusion "
                    "passes vs XLA's vs none on six fusion cases (--measure is ignored)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (< 2 min)")
    ap.add_argument("--json", metavar="PATH", help="write every sample and median here")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: the "
                    "suite's): " + ",".join(W.BY_NAME))
    ap.add_argument("--measure", default="frontend,first_call,dispatch,steady,kernels",
                    help="comma-separated measurements to run")
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy steady column")
    ap.add_argument("--no-preflight", action="store_true",
                    help="skip the child-process compile check (an XLA abort then kills "
                    "the run)")
    ap.add_argument("--no-fusion", action="store_true",
                    help=f"skip the '{measure.XLA_VARIANT}' columns of first_call and steady")
    args = ap.parse_args(argv)

    cfg = SETTINGS["quick" if args.quick else "full"]
    wls = [W.BY_NAME[n] for n in (args.only.split(",") if args.only else W.SUITES[args.suite])]
    wanted = ["fusion"] if args.suite == "fusion" else [m for m in args.measure.split(",") if m]
    libs = W.libs()
    modes = measure.fusion_modes()

    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "suite": args.suite,
        "mode": "quick" if args.quick else "full",
        "commit": git_commit(),
        "python": platform.python_version(),
        "jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__,
        "device": str(jax.devices()[0]), "cpus": os.cpu_count(),
        "tracehlo_fusion_option": modes,
        "tracehlo_path": os.path.dirname(measure.tracehlo.__file__),
        "loadavg_start": _loadavg(),
    }
    print(f"# tracehlo benchmarks, suite {args.suite} ({env['mode']}) {env['date']}  "
          f"commit {env['commit']}")
    print(f"# python {env['python']}  jax/jaxlib {env['jax']}/{env['jaxlib']}  numpy "
          f"{env['numpy']}  {env['device']}  {env['cpus']} cpus  load avg {env['loadavg_start']}")
    print(f"# tracehlo imported from {env['tracehlo_path']}; fusion= option: "
          f"{', '.join(modes) if modes else 'absent'}")
    if args.suite == "default":
        print("# ratio = median over rounds of tracehlo/jax, samples taken side by side "
              "(lower is better);\n# med/med = ratio of the medians, min/min = ratio of the "
              "fastest samples")
    print()

    results: dict = {"env": env, "workloads": {w.name: w.describe for w in wls}}
    t_start = time.perf_counter()

    # programs that abort or fail XLA compile in a child process are left out below
    default = "tracehlo" if modes else "default"
    if args.no_preflight:
        verdict = {}
    else:
        t_sec = time.perf_counter()
        verdict = preflight.run([w.name for w in wls], modes or ["default"],
                                dispatch="dispatch" in wanted)
        results["preflight"] = {f"{n} fusion={m} {s}": v for (n, m, s), v in verdict.items()}
        bad_programs = {k: v for k, v in results["preflight"].items() if v}
        print(f"preflight ({time.perf_counter() - t_sec:.1f} s): compiled and ran "
              f"{len(verdict) - len(bad_programs)}/{len(verdict)} programs in a child process"
              + ("; FAILED (left out below):" if bad_programs else ""))
        for k, v in bad_programs.items():
            print(f"  {k}: {v}")
        print()

    def broken(w, mode=None, size=None) -> str | None:
        """Why tracehlo cannot run `w` in `mode` at `size` (None: it can)."""
        return verdict.get((w.name, mode or default, w.size if size is None else size))

    if args.suite == "fusion":
        fusion_suite(wls, libs, modes, broken, results,
                     FUSION_REPS[env["mode"]], cfg["steady"][1])
        return _finish(results, args, env, t_start)

    fusion_cols = not args.no_fusion
    skipped: dict = {}

    def runnable(ws, measurement, size_of=lambda w: w.size):
        out = []
        for w in ws:
            why = broken(w, size=size_of(w))
            if why:
                skipped.setdefault(measurement, {})[w.name] = why
            else:
                out.append(w)
        return out

    def print_skipped(measurement):
        for n, why in skipped.get(measurement, {}).items():
            print(f"  {n}: not measured, tracehlo's default program failed in preflight "
                  f"({why[:80]})")

    # correctness first: a fast wrong answer is not a result
    results["check"] = {w.name: measure.check(w, libs) for w in runnable(wls, "check")}
    bad = {k: v for k, v in results["check"].items() if not v["ok"]}
    print("correctness vs jax.jit (max abs diff): " + ", ".join(
        f"{k} tracehlo={v['tracehlo'] if isinstance(v['tracehlo'], str) else format(v['tracehlo'], '.1e')}"
        for k, v in results["check"].items()) + ("  MISMATCH: " + ", ".join(bad) if bad else ""))
    print()

    if "frontend" in wanted:
        t_sec = time.perf_counter()
        res = results["frontend"] = {w.name: measure.frontend(w, libs, cfg["frontend"])
                                     for w in wls}
        rows = [ratio_row(n, r, TARGETS["frontend"][0], (
            fmt_time(r["parts"]["tracehlo.trace"]), fmt_time(r["parts"]["tracehlo.lower"]),
            fmt_time(r["parts"]["jax.trace"]), fmt_time(r["parts"]["jax.lower"])))
            for n, r in res.items()]
        print(f"1. frontend: {TARGETS['frontend'][1]}")
        print(table(rows, RATIO_HEADER + ["th.trace", "th.lower", "jax.trace", "jax.lower"]))
        print(f"({time.perf_counter() - t_sec:.1f} s)\n")

    if "first_call" in wanted:
        t_sec = time.perf_counter()
        res = results["first_call"] = {
            w.name: measure.first_call(w, libs, cfg["first_call"],
                                       fusion=fusion_cols and not broken(w, "xla"))
            for w in runnable(wls, "first_call")}
        rows = []
        for n, r in res.items():
            p = r["parts"]
            rows.append(ratio_row(n, r, TARGETS["first_call"][0], (
                _control_ratio(r), _variant_ratio(r), fmt_time(p["tracehlo.trace"] + p["tracehlo.lower"]),
                fmt_time(p.get("tracehlo.passes")), fmt_time(p["tracehlo.xla_compile"]))))
        print(f"2. first call: {TARGETS['first_call'][1]}")
        header = RATIO_HEADER + ["A/A", f"{measure.XLA_VARIANT} ratio", "th.trace+lower",
                                 "th.passes", "th.xla_compile"]
        print(table(rows, header))
        print_skipped("first_call")
        print(f"({time.perf_counter() - t_sec:.1f} s)\n")

    if "dispatch" in wanted:
        t_sec = time.perf_counter()
        reps, calls = cfg["dispatch"]
        res = results["dispatch"] = {
            w.name: measure.dispatch(w, libs, reps, calls)
            for w in runnable(wls, "dispatch", lambda w: w.dispatch_size)}
        rows = []
        for n, r in res.items():
            rows.append(ratio_row(f"{n} {_shape_text(W.BY_NAME[n])}", r,
                                  TARGETS["dispatch"][0], (
                _control_ratio(r), fmt_time(r["th.call_flat"]["median"]) if "th.call_flat" in r else "-",
                fmt_time(r["pjrt floor"]["median"]) if "pjrt floor" in r else "-",
                f"{measure.paired_ratio(r['pjrt floor']['samples'], r['jax']['samples']):.3f}x"
                if "pjrt floor" in r else "-")))
        print(f"3. dispatch: {TARGETS['dispatch'][1]} "
              f"({calls} calls/sample; the target is for the one-element rows)")
        header = RATIO_HEADER + ["A/A", "th.call_flat", "pjrt floor", "floor/jax"]
        print(table(rows, header))
        print_skipped("dispatch")
        print(f"({time.perf_counter() - t_sec:.1f} s)\n")

    if "steady" in wanted:
        t_sec = time.perf_counter()
        reps, sample_s = cfg["steady"]
        res = results["steady"] = {
            w.name: measure.steady(w, libs, reps, sample_s, with_numpy=not args.no_numpy,
                                   fusion=fusion_cols and not broken(w, "xla"))
            for w in runnable(wls, "steady")}
        rows = [ratio_row(n, r, TARGETS["steady"][0],
                          (_control_ratio(r), _variant_ratio(r), str(r["calls_per_sample"])))
                for n, r in res.items()]
        print(f"4. steady state: {TARGETS['steady'][1]}")
        header = RATIO_HEADER + ["A/A", f"{measure.XLA_VARIANT} ratio", "calls/sample"]
        print(table(rows, header))
        print_skipped("steady")
        print(f"({time.perf_counter() - t_sec:.1f} s)\n")

    if "kernels" in wanted:
        t_sec = time.perf_counter()
        reps, sample_s = cfg["kernels"], cfg["steady"][1]
        res = results["kernels"] = {}
        for w in wls:
            ok = None if modes is None else [m for m in modes if not broken(w, m)]
            res[w.name] = measure.kernels(w, libs, reps, sample_s, ok)
            if modes is None and broken(w):
                res[w.name]["tracehlo"] = {"error": broken(w)}
            for m in (modes or []):
                if broken(w, m):
                    res[w.name][f"fusion={m}"] = {"error": "left out (preflight: "
                                                  + broken(w, m).split(":")[0] + ")"}
        rows = []
        for n, r in res.items():
            for prog, e in r.items():
                t = e.get("timings", {})
                rows.append([n, prog, e.get("error", e.get("kernels", "-")),
                             fmt_bytes(e.get("bytes")),
                             fmt_time(e["run"]["median"]) if "run" in e else "-",
                             f"{e['run_ratio']:.3f}x" if "run_ratio" in e else "-",
                             fmt_time(t.get("passes")) if t else "-",
                             fmt_time(t.get("xla_compile")) if t else "-"])
        note = ("tracehlo.compile(fusion=...) for each of " + ", ".join(modes) if modes else
                "this tracehlo build has no fusion= option: one tracehlo row")
        print("5. kernels: launches in XLA's optimized HLO entry, cost_analysis()['bytes "
              f"accessed'], run time per call (blocked) and its ratio to jax ({note})")
        print(table(rows, ["workload", "program", "kernels", "bytes accessed", "run",
                           "run/jax", "passes", "xla_compile"]))
        print(f"({time.perf_counter() - t_sec:.1f} s)\n")

    results["skipped"] = skipped
    summary = _summary(results, wanted)
    results["summary"] = summary
    print("summary (ratio tracehlo/jax, target):")
    for m, items in summary.items():
        print(f"  {m:11s} " + "  ".join(f"{n}={v['ratio']:.2f}{'' if v['ok'] else '!'}"
                                       for n, v in items.items())
              + f"   (target <= {TARGETS[m][0]}x; ! = over)" + _noise(items))
    return _finish(results, args, env, t_start)


def _finish(results, args, env, t_start) -> int:
    env["loadavg_end"] = _loadavg()
    results["elapsed_s"] = time.perf_counter() - t_start
    print(f"elapsed {results['elapsed_s']:.1f} s; load avg at end {env['loadavg_end']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=str)
        print(f"wrote {args.json}")
    return 0


def fusion_suite(wls, libs, modes, broken, results, reps, sample_s) -> None:
    """Per case: kernels and bytes accessed of tracehlo.compile(fusion=tracehlo|xla|none)
    of one function (and jax.jit of its jax.numpy twin), outputs checked against
    jax.jit, then steady-state time of all of them side by side; time ratios are
    paired against fusion=xla. Misses of the fusion issue's targets are listed."""
    if modes is None:
        print("this tracehlo build has no fusion= option: no fusion suite")
        return
    t_sec = time.perf_counter()
    res = results["fusion"] = {}
    rows, misses, ratios = [], {}, {}
    for w in wls:
        ok = [m for m in modes if not broken(w, m)]
        r = res[w.name] = measure.kernels(w, libs, reps, sample_s, ok, control=True)
        for m in modes:
            if broken(w, m):
                r[f"fusion={m}"] = {"error": "left out (preflight: "
                                    + broken(w, m).split(":")[0] + ")"}
        th, xla, none = (r[f"fusion={m}"] for m in modes)
        jx, aa = r["jax"], r.get(measure.XLA_CONTROL, {})

        def vs_xla(e):
            if "run" not in e or "run" not in xla:
                return None
            return measure.paired_ratio(e["run"]["samples"], xla["run"]["samples"])
        ratio = vs_xla(th)
        r["ratios_vs_xla"] = {"tracehlo": ratio, "none": vs_xla(none), "jax": vs_xla(jx),
                              "xla A/A": vs_xla(aa)}
        miss = []
        if any("error" in e for e in (th, xla)):
            miss.append("failed: " + (th.get("error") or xla.get("error")))
        else:
            ratios[w.name] = ratio
            if th["kernels"] > xla["kernels"]:
                miss.append(f"kernels {th['kernels']} > {xla['kernels']}")
            if th["bytes"] > xla["bytes"]:
                miss.append(f"bytes {th['bytes'] / xla['bytes']:.2f}x")
            if ratio > FUSION_TARGETS["case"]:
                miss.append(f"time {ratio:.2f}x > {FUSION_TARGETS['case']}x")
        wrong = [p for p, e in r.items() if isinstance(e, dict) and e.get("ok") is False]
        if wrong:
            miss.append("output MISMATCH vs jax: " + ", ".join(wrong))
        if miss:
            misses[w.name] = miss

        def three(key, fmt):
            return " / ".join(fmt(e[key]) if key in e else "x" for e in (th, xla, none))
        fr = lambda x: "-" if x is None else f"{x:.3f}x"  # noqa: E731
        rows.append([w.name, three("kernels", str), str(jx.get("kernels", "-")),
                     three("bytes", lambda b: f"{b / 2**20:.2f}"),
                     fmt_bytes(jx.get("bytes")),
                     *(fmt_time(e["run"]["median"]) if "run" in e else "-"
                       for e in (th, xla, none, jx)),
                     fr(ratio), fr(th["run"]["min"] / xla["run"]["min"]
                                   if "run" in th and "run" in xla else None),
                     fr(r["ratios_vs_xla"]["none"]), fr(r["ratios_vs_xla"]["jax"]),
                     fr(r["ratios_vs_xla"]["xla A/A"]),
                     f"{max(e.get('max_diff', 0) for e in (th, xla, none)):.0e}",
                     "ok" if not miss else "MISS"])
    print("fusion: tracehlo.compile(f, fusion=tracehlo / xla / none) of the same function; "
          "jax = jax.jit of the jax.numpy twin.\nkernels = len(Compiled.kernels()); bytes = "
          "cost_analysis()['bytes accessed'] in MiB; times = median per call, blocked;\n"
          "ratios = median over rounds of (program / fusion=xla), paired; min/min = th/xla of "
          "the fastest samples;\nxla A/A = a second "
          "fusion=xla compile (noise); diff = max abs diff vs jax.jit, all modes")
    print(table(rows, ["case", "kernels th/xla/none", "jax", "MiB th/xla/none", "jax",
                       "t tracehlo", "t xla", "t none", "t jax", "th/xla", "min/min", "none/xla",
                       "jax/xla", "xla A/A", "diff", ""]))
    geo = math.exp(statistics.fmean(math.log(x) for x in ratios.values())) if ratios else None
    results["fusion_summary"] = {"geomean_tracehlo_over_xla": geo, "misses": misses}
    print(f"({time.perf_counter() - t_sec:.1f} s)\n")
    if geo is not None:
        print(f"geomean tracehlo/xla over {len(ratios)} cases: {geo:.3f}x (target <= "
              f"{FUSION_TARGETS['geomean']}x: {'ok' if geo <= FUSION_TARGETS['geomean'] else 'MISS'})")
    print(f"targets per case: kernels and bytes <= fusion=xla's, time <= "
          f"{FUSION_TARGETS['case']}x of fusion=xla; "
          + ("all met" if not misses else f"missed on {len(misses)}:"))
    for n, miss in misses.items():
        print(f"  {n}: " + "; ".join(miss) + f"   (python benchmarks/diagnose.py fusion "
              f"--workload {n})")


def _variant_ratio(r) -> str:
    v = measure.XLA_VARIANT
    return f"{measure.paired_ratio(r[v]['samples'], r['jax']['samples']):.3f}x" if v in r else "-"


def _loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def _noise(items) -> str:
    aa = [v["control_ratio"] for v in items.values() if "control_ratio" in v]
    return f" A/A noise up to {max(abs(x - 1) for x in aa) * 100:.0f}%" if aa else ""


def _control_ratio(r) -> str:
    c = measure.CONTROL
    return f"{measure.paired_ratio(r[c]['samples'], r['jax']['samples']):.3f}x" if c in r else "-"


def _shape_text(w) -> str:
    shape = w.dispatch_size
    if w.name == "mlp":
        return f"[batch {shape[0]}, width {shape[1]}]"
    return f"f32[{','.join(map(str, shape))}]"


def _summary(results, wanted) -> dict:
    out = {}
    for m in ("frontend", "first_call", "dispatch", "steady"):
        if m in wanted and m in results:
            out[m] = {}
            for n, r in results[m].items():
                ratio = ratio_of(r)
                out[m][n] = {"ratio": ratio, "ok": ratio <= TARGETS[m][0],
                             "ratio_of_medians": r["tracehlo"]["median"] / r["jax"]["median"],
                             "ratio_of_minima": r["tracehlo"]["min"] / r["jax"]["min"],
                             "tracehlo_s": r["tracehlo"]["median"],
                             "jax_s": r["jax"]["median"]}
                c = measure.CONTROL
                if c in r:
                    out[m][n]["control_ratio"] = measure.paired_ratio(
                        r[c]["samples"], r["jax"]["samples"])
    return out


if __name__ == "__main__":
    sys.exit(main())
