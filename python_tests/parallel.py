"""Run the pytest suite as one process per core (conftest.py's --shard K/N), as lit runs
its tests: most of a test's time is XLA compiling on one core, so a 2-core machine runs
the suite in about 0.6 of the time. pytest-xdist would do this, but the test
dependencies are pytest, lit and FileCheck only.

    python3 python_tests/parallel.py [-j N] [pytest options...]   (-j: default, the cores)

Each shard's output is printed whole when it ends; the exit status is the worst shard's.
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
    shards = []
    for k in range(jobs):
        log = tempfile.TemporaryFile("w+")
        command = [sys.executable, "-m", "pytest", HERE, f"--shard={k}/{jobs}", *argv]
        shards.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
    codes = []
    try:
        for k, (proc, log) in enumerate(shards):
            codes.append(proc.wait())
            log.seek(0)
            print(f"===== shard {k}/{jobs} (exit {codes[-1]}) =====\n{log.read()}", flush=True)
    finally:
        for proc, _ in shards:
            proc.kill()
    status = worst(codes)
    print(f"{jobs} shards in {time.perf_counter() - start:.0f} s, exit status {status}")
    return status


def worst(codes):
    """pytest's exit status for the whole run: a shard killed by a signal (negative)
    failed; one that drew no tests (5, as when -k selects a few) failed only if all did."""
    if any(code < 0 for code in codes):
        return 1
    ran = [code for code in codes if code != 5]
    return max(ran) if ran else 5


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
