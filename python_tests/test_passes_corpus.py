"""The StableHLO corpus (../shared/stablehlo-testdata) through the fusion pipeline:
a sample across op families, fused, compiled with XLA's fusion off, run and
checked. Files run in a child process: should a fusion abort XLA, the test fails
instead of the test run dying. (`python /path/to/this/file ALL` runs every file.)"""
import json
import subprocess
import sys

import pytest

from tracehlo.tools import conformance

pytestmark = pytest.mark.slow

SAMPLE = 80

CHILD = """
import json, sys
from pathlib import Path
from tracehlo.tools import conformance
fuse = conformance.fusion_transform("cpu")
for line in sys.stdin:
    path = Path(line.strip())
    fused = conformance.run_file(path, fuse, "cpu", xla_fusion=False)
    if fused.passed:
        print(json.dumps([path.stem, "pass", ""]), flush=True)
        continue
    # a file that fails without our passes (XLA's fusion off) cannot blame them
    base = conformance.run_file(path, None, "cpu", xla_fusion=False)
    print(json.dumps([path.stem, "baseline-fails" if not base.passed else fused.status,
                      fused.detail[:300]]), flush=True)
"""


def run_files(files):
    proc = subprocess.run([sys.executable, "-c", CHILD], input="\n".join(map(str, files)),
                          capture_output=True, text=True, timeout=1200)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    if len(results) < len(files):
        crashed = files[len(results)].stem
        results.append([crashed, f"crash (exit {proc.returncode})", proc.stderr[-500:]])
    return results


def test_corpus_sample_still_passes_after_fusion():
    if conformance.corpus_dir() is None:
        pytest.skip(f"corpus not found; set {conformance.ENV_VAR}")
    files = conformance.sample(conformance.corpus_files(), SAMPLE, seed=1)
    results = run_files(files)
    broken = [r for r in results if r[1] not in ("pass", "baseline-fails")]
    assert not broken, broken
    assert sum(r[1] == "pass" for r in results) >= 0.95 * len(files)


if __name__ == "__main__":
    chosen = conformance.corpus_files() if sys.argv[1:] == ["ALL"] else conformance.sample(
        conformance.corpus_files(), SAMPLE, seed=1)
    for row in run_files(chosen):
        if row[1] != "pass":
            print(*row)
