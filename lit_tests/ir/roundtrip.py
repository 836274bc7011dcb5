# RUN: %python %s | FileCheck %s
# print(parse(print(g))) == print(g) for graphs covering every parameter kind:
# tuples, dtypes, strings, booleans, literals of several dtypes, small and large
# constants, multiple results; the parsed graph verifies.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax

big = np.linspace(-1, 1, 40, dtype=np.float32).reshape(5, 8)


def many_ops(x, i, b):
    y = tnp.sort(x, axis=0) + big
    keys, vals = lax.sort([x, y], dimension=1, num_keys=1)
    z = tnp.where(b, tnp.exp(x) * 0.5, -tnp.inf)
    m = tnp.argmax(x, axis=1) + i
    t = tnp.take(x, tnp.array([0, 2]), axis=1)
    return keys, vals, z, m, t, x[1:4:2, ::-1], tnp.cumsum(x, 0), lax.round(x), tnp.isnan(x)


args = (np.zeros((5, 8), np.float32), np.int32(3), np.zeros((5, 8), bool))
for name, fn in [("many_ops", many_ops)]:
    g = tracehlo.make_ir(fn)(*args)
    for locations in (False, True):
        text = g.to_text(locations=locations)
        again = tracehlo.parse_ir(text)
        tracehlo.verify(again)
        assert again.to_text(locations=locations) == text, (text, again.to_text(locations))
    print(f"roundtrip ok: {name}: {len(g.eqns)} equations")
    print(text)
# CHECK: roundtrip ok: many_ops
# CHECK: constant dense<"0x
# CHECK: sort[dimension=0, num_keys=1]
# CHECK: , %{{[0-9]+}}: f32[5,8] = sort[dimension=1, num_keys=1] %0, %{{[0-9]+}}
# CHECK: -inf:f32[]
# CHECK: argmax[axes=(1,), index_dtype=i32]
# CHECK: gather[offset_dims=(0,), collapsed_slice_dims=(1,)
# CHECK: rev[dimensions=(1,)]
# CHECK: round[method='away_from_zero']

# Parse errors say where.
try:
    tracehlo.parse_ir("func @f(%0: f32[3]) -> (f32[3]) {\n  %1: f32[3] = frobnicate %0\n  return %1\n}")
except ValueError as e:
    print("error:", e)
# CHECK: error: line 2: unknown primitive 'frobnicate'
try:
    tracehlo.parse_ir("func @f(%0: f32[3]) -> (f32[3]) {\n  %1: f32[3] = sin %7\n  return %1\n}")
except ValueError as e:
    print("error:", e)
# CHECK: error: line 2: %7 is used before it is defined

# The verifier rejects an equation whose output type disagrees with its shape rule.
g = tracehlo.parse_ir("func @f(%0: f32[3]) -> (f32[4]) {\n  %1: f32[4] = sin %0\n  return %1\n}")
try:
    tracehlo.verify(g)
except ValueError as e:
    print("verify:", e)
# CHECK: verify: @f: equation 0: sin produces f32[3] but its outputs are typed f32[4]
