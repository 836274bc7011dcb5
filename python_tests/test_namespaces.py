"""Public namespaces hold public names only: what dir() shows and what the module binds
is its explicit __all__ (no imported helpers, no internal modules)."""
import importlib
import types

import pytest

NAMESPACES = ["tracehlo", "tracehlo.numpy", "tracehlo.numpy.fft", "tracehlo.numpy.linalg",
              "tracehlo.nn", "tracehlo.lax", "tracehlo.lax.linalg", "tracehlo.random",
              "tracehlo.ad_checkpoint"]


def _public(names):
    return sorted(n for n in names if not n.startswith("_"))


@pytest.mark.parametrize("name", NAMESPACES)
def test_dir_is_all(name):
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__"
    assert _public(dir(module)) == sorted(module.__all__)
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("name", NAMESPACES)
def test_binds_no_helpers(name):
    """Every public binding is in __all__, except a package's own submodules, which
    Python's import system sets on the package (tracehlo.core after `import
    tracehlo.core`); a module from elsewhere (numpy as np, a primitive family) is a leak."""
    module = importlib.import_module(name)
    leaked = [n for n, v in vars(module).items()
              if not n.startswith("_") and n not in getattr(module, "__all__", ())
              and not (isinstance(v, types.ModuleType) and v.__name__ == f"{name}.{n}")]
    assert leaked == []


@pytest.mark.parametrize("name", NAMESPACES)
def test_all_resolves(name):
    module = importlib.import_module(name)
    missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert missing == []
