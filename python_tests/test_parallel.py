"""parallel.py and conftest's --shard: the shards split the tests exactly, and the run's
exit status is the worst shard's."""
import subprocess
import sys
from pathlib import Path

import pytest

from parallel import worst

HERE = Path(__file__).parent


@pytest.mark.parametrize("codes, status", [
    ([0, 0], 0), ([0, 1], 1), ([2, 1], 2),
    ([5, 0], 0), ([5, 5], 5),  # 5: the shard drew no tests (-k selecting a few)
    ([-9, 0], 1), ([0, -6], 1),  # killed by a signal (an XLA abort)
])
def test_the_worst_shard_decides(codes, status):
    assert worst(codes) == status


def collected(*args):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-o", "addopts=",
                           "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=HERE)
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_shards_split_the_tests_exactly_and_keep_a_one_shard_module_whole():
    files = ["test_namespaces.py", "test_fuzz.py", "test_wheel.py", "test_parallel.py"]
    everything = collected(*files)
    shards = [collected(*files, f"--shard={k}/3") for k in range(3)]
    assert sorted(sum(shards, [])) == sorted(everything)
    for file in ("test_namespaces.py", "test_fuzz.py"):  # dealt out
        assert all(any(t.split("::")[0].endswith(file) for t in shard) for shard in shards), file
    wheel = [[t for t in shard if "test_wheel.py::" in t] for shard in shards]
    assert sorted(map(len, wheel)) == [0, 0, 2]  # marked one_shard: built once
