"""Compile every (workload, fusion mode, size) once in a child process first.

XLA aborts the whole process (a C++ CHECK failure, not an exception) on some
fusions it cannot emit; DESIGN.md lists such cases. A benchmark process that
dies mid-table reports nothing, so run.py asks a child process to compile and
run each program first, and leaves out (and reports) the ones that killed or
failed in the child.

    python benchmarks/preflight.py            # prints the verdict of each program
"""
from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _programs(workload_names, modes, dispatch=True):
    import workloads as W
    for name in workload_names:
        w = W.BY_NAME[name]
        for mode in modes:
            for size in dict.fromkeys([w.size] + ([w.dispatch_size] if dispatch else [])):
                yield name, mode, size


def _child(workload_names, modes, skip: int, dispatch: bool):
    """Compile and run each program after the first `skip`; print START/OK/FAIL lines."""
    import jax
    import tracehlo
    import workloads as W
    libs = W.libs(("tracehlo",))
    for i, (name, mode, size) in enumerate(_programs(workload_names, modes, dispatch)):
        if i < skip:
            continue
        print(f"START {i}", flush=True)
        w = W.BY_NAME[name]
        try:
            args = jax.device_put(w.args(size))
            opts = {"fusion": mode} if mode != "default" else {}
            jax.block_until_ready(tracehlo.jit(w.make(libs["tracehlo"]), **opts)(*args))
            print(f"OK {i}", flush=True)
        except Exception as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
            print(f"FAIL {i} {msg}", flush=True)


def run(workload_names, modes, timeout_s=600, dispatch=True) -> dict:
    """{(workload, mode, size): None if it compiled and ran, else the reason}.
    dispatch=False: only each workload's realistic size, not its dispatch size."""
    programs = list(_programs(workload_names, modes, dispatch))
    verdict, skip = {}, 0
    while skip < len(programs):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", ",".join(workload_names),
               ",".join(modes), str(skip), str(int(dispatch))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        started = None
        for line in proc.stdout.splitlines():
            kind, _, rest = line.partition(" ")
            idx, _, msg = rest.partition(" ")
            if kind == "START":
                started = int(idx)
            elif kind == "OK":
                verdict[programs[int(idx)]] = None
                started = None
            elif kind == "FAIL":
                verdict[programs[int(idx)]] = f"error: {msg}"
                started = None
        if started is None:
            if proc.returncode != 0 and len(verdict) < len(programs):
                # died outside any program (import error, ...): report it on all left
                why = _last_line(proc.stderr) or f"exit {proc.returncode}"
                for p in programs[len(verdict):]:
                    verdict[p] = f"child failed: {why}"
            break
        why = _last_check_line(proc.stderr) or f"exit status {proc.returncode}"
        verdict[programs[started]] = f"process abort: {why}"
        skip = started + 1
    return verdict


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _last_check_line(text: str) -> str:
    for line in text.splitlines():
        if "Check failed" in line or "F0" in line[:3] or "F1" in line[:3]:
            return line.strip()[:300]
    return _last_line(text)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2].split(","), sys.argv[3].split(","), int(sys.argv[4]),
               bool(int(sys.argv[5])))
        return
    import measure
    import workloads as W
    modes = measure.fusion_modes() or ["default"]
    for (name, mode, size), why in run([w.name for w in W.WORKLOADS], modes).items():
        print(f"{name:12s} fusion={mode:9s} {str(size):12s} {why or 'ok'}")


if __name__ == "__main__":
    main()
