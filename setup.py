"""The import name `tracehlo` maps onto three source folders; every subpackage inside
them is found here, so a new module folder is packaged without a list to keep up.
Everything else about the package is in pyproject.toml."""
from setuptools import find_packages, setup

FOLDERS = {"tracehlo": "frontend", "tracehlo.passes": "passes", "tracehlo.tools": "tools"}

setup(package_dir=FOLDERS,
      packages=[f"{name}{'.' + sub if sub else ''}" for name, folder in FOLDERS.items()
                for sub in ["", *find_packages(folder)]])
