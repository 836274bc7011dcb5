"""Run the pytest suite as one process per core, as lit runs its tests: the processes
claim the tests one by one from a shared counter (conftest.py's --claim-tests). Most of
a test's time is XLA compiling on one core, so a 2-core machine runs the suite in about
0.6 of the time. pytest-xdist would do this, but the test dependencies are pytest, lit
and FileCheck only.

    python3 python_tests/parallel.py [-j N] [pytest options and paths...]
    (-j: default, the cores; no path: all of python_tests)

Each process's output is printed whole when it ends; the exit status is the worst one's.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    jobs = os.cpu_count() or 1
    if argv[:1] == ["-j"]:
        jobs, argv = int(argv[1]), argv[2:]
    start = time.perf_counter()
    counter = tempfile.NamedTemporaryFile(prefix="tracehlo-tests-claimed-")
    paths = [a for a in argv if not a.startswith("-") and os.path.exists(a.split("::")[0])]
    processes = []
    for _ in range(jobs):
        log = tempfile.TemporaryFile("w+")
        command = [sys.executable, "-m", "pytest", *([] if paths else [HERE]),
                   f"--claim-tests={counter.name}", *argv]
        processes.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
    codes = []
    try:
        for k, (proc, log) in enumerate(processes):
            codes.append(proc.wait())
            log.seek(0)
            print(f"===== pytest process {k + 1} of {jobs} (exit {codes[-1]}) =====",
                  log.read(), sep="\n", flush=True)
    finally:
        for proc, _ in processes:
            proc.kill()
    status = worst(codes)
    print(f"{jobs} pytest processes in {time.perf_counter() - start:.0f} s, exit status {status}")
    return status


def worst(codes):
    """pytest's exit status for the whole run; a process killed by a signal (negative)
    failed."""
    return 1 if any(code < 0 for code in codes) else max(codes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
