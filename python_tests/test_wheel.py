"""The built wheel is a working package: installed into a fresh virtual environment
(no editable checkout to lean on), run from outside the repository, it imports every
subpackage, runs hlo-dump and compiles a function."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# one build at a time: pip builds the wheel in the checkout (build/, *.egg-info)
pytestmark = [pytest.mark.slow, pytest.mark.one_process]

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, bin folder) of a venv holding only the wheel; the dependencies
    (jax, numpy) come from the system site-packages, so no network is needed."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q",
                    "-w", str(root / "dist")], check=True, cwd=root)
    wheel, = (root / "dist").glob("tracehlo-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(root / "env")],
                   check=True)
    bin_dir = root / "env" / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps",
                    str(wheel)], check=True)
    return wheel, bin_dir, root


def test_wheel_holds_every_source_package(installed):
    wheel, _, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, package in (("frontend", "tracehlo"), ("passes", "tracehlo/passes"),
                            ("tools", "tracehlo/tools")):
        for source in (REPO / folder).rglob("*.py"):
            assert f"{package}/{source.relative_to(REPO / folder).as_posix()}" in names


def test_installed_wheel_dumps_and_compiles(installed):
    _, bin_dir, root = installed
    dump = subprocess.run([str(bin_dir / "hlo-dump"), str(REPO / "examples" / "mlp.py"),
                           "-f", "mlp", "--stage", "hlo"],
                          capture_output=True, text=True, cwd=root)
    assert dump.returncode == 0, dump.stderr
    assert "HloModule jit_mlp" in dump.stdout and "fusion" in dump.stdout
    script = ("import sys, numpy as np, tracehlo\n"
              f"sys.path.insert(0, {str(REPO / 'examples')!r})\n"
              "import mlp\n"
              "x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)\n"
              "print(tracehlo.__file__)\n"
              "print(float(tracehlo.jit(mlp.scaled_sum)(x, x[0])))\n"
              "print(float(np.sum(x + np.sin(x[0]) * 3.0)))\n")
    run = subprocess.run([str(bin_dir / "python"), "-c", script],
                         capture_output=True, text=True, cwd=root)
    assert run.returncode == 0, run.stderr
    location, got, want = run.stdout.split()
    assert location.startswith(str(root / "env"))  # the wheel, not a checkout
    assert float(got) == pytest.approx(float(want), rel=1e-5)
