"""lit configuration: each test file says in its RUN line what it runs."""
import os
import shutil
import sys

import lit.formats

config.name = "tracehlo"
config.test_format = lit.formats.ShTest(execute_external=False)  # internal shell: `not` is built in
config.suffixes = [".py", ".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

# `filecheck` is the Python port of LLVM FileCheck; tests spell it FileCheck as in MLIR.
config.substitutions.append(("FileCheck", shutil.which("filecheck") or "filecheck"))
config.substitutions.append(("%python", sys.executable))
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(os.path.dirname(__file__), "Inputs")] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
for var in ("HOME", "PATH", "XLA_FLAGS", "JAX_PLATFORMS", "TF_CPP_MIN_LOG_LEVEL",
            "TRACEHLO_TESTDATA"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# the CHECK lines say what CPU makes of each program: a GPU machine's default is another
config.environment.setdefault("JAX_PLATFORMS", "cpu")
# hlo-opt and hlo-dump from the environment lit runs in (a virtualenv's bin/ first), so a
# worktree's lit tests its own install, not whichever copy comes first on PATH
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), config.environment.get("PATH", "")])
