import tracehlo.numpy as tnp
raise RuntimeError("module-level failure")
