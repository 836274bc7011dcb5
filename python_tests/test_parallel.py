"""parallel.py and conftest's --claim-tests: the processes of a run share out the tests
exactly, a module marked one_process whole, and the run's exit status is the worst one's."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parallel import worst

HERE = Path(__file__).parent


@pytest.mark.parametrize("codes, status", [
    ([0, 0], 0), ([0, 1], 1), ([2, 1], 2), ([5, 5], 5),
    ([-9, 0], 1), ([0, -6], 1),  # killed by a signal (an XLA abort)
])
def test_the_worst_process_decides(codes, status):
    assert worst(codes) == status


def test_processes_claim_each_test_once_and_a_one_process_module_whole(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path)
    (tmp_path / "test_whole.py").write_text(
        "import pytest\npytestmark = pytest.mark.one_process\n"
        "def test_w1(): pass\ndef test_w2(): pass\n")
    (tmp_path / "test_dealt.py").write_text("".join(f"def test_d{i}(): pass\n" for i in range(6)))
    counter = tmp_path / "claimed"

    def run():
        proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                               f"--claim-tests={counter}", "test_dealt.py", "test_whole.py"],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [line.split("::")[1].split()[0] for line in proc.stdout.splitlines()
                if " PASSED" in line]

    counter.write_text("3")  # another process has claimed the first three tests
    first = run()
    assert first == ["test_d3", "test_d4", "test_d5", "test_w1", "test_w2"]
    assert run() == []  # nothing left to claim
    counter.write_text("6")  # the whole module is one claim, after the six dealt ones
    assert run() == ["test_w1", "test_w2"]
    counter.write_text("7")  # so there is no eighth
    assert run() == []


def test_two_processes_claiming_at_once_run_each_test_once(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path)
    (tmp_path / "test_many.py").write_text(
        "import time\n" + "".join(f"def test_m{i}(): time.sleep(0.01)\n" for i in range(40)))
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
               f"--claim-tests={tmp_path / 'claimed'}", "test_many.py"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=tmp_path)
             for _ in range(2)]
    ran = [[line.split("::")[1].split()[0] for line in proc.communicate()[0].splitlines()
            if " PASSED" in line] for proc in procs]
    assert sorted(ran[0] + ran[1]) == sorted(f"test_m{i}" for i in range(40))
