"""jax.ad_checkpoint's names: checkpoint (remat), its policies, and checkpoint_name,
which names a value for the policies that save values by name."""
from .ad import checkpoint, checkpoint_policies, remat
from .primitives.elementwise import checkpoint_name

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
