"""Process-wide switches, named as in JAX where JAX has the same switch."""
from __future__ import annotations

import dataclasses
import os


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes")


@dataclasses.dataclass
class Config:
    # Like jax_enable_x64: without it, 64-bit inputs are narrowed to 32 bits and
    # Python floats/ints default to float32/int32.
    enable_x64: bool = _env_flag("TRACEHLO_ENABLE_X64")
    # Print how long trace, lower, passes and XLA compile took for each compile.
    log_compiles: bool = _env_flag("TRACEHLO_LOG_COMPILES")
    # When a jit cache misses, say which argument changed and how.
    explain_cache_misses: bool = _env_flag("TRACEHLO_EXPLAIN_CACHE_MISSES")

    def update(self, name: str, value) -> None:
        """jax.config.update-style setter that rejects unknown names."""
        if not any(f.name == name for f in dataclasses.fields(self)):
            known = ", ".join(f.name for f in dataclasses.fields(self))
            raise AttributeError(f"tracehlo.config has no option {name!r}; options: {known}")
        setattr(self, name, value)


config = Config()
