# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# Elementwise families lower to one StableHLO (or CHLO) op each; rank-0 operands
# are broadcast with broadcast_in_dim; compare picks its type from the dtype.
import numpy as np
from lowered import print_stablehlo
import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax


def elementwise(x, y, i, u):
    return (tnp.exp(x) + tnp.log1p(y) * 2.0, tnp.arctan2(x, y), tnp.tanh(x), lax.erf(x),
            tnp.sinh(x), i // 3, i % 3, tnp.maximum(i, u.astype(tnp.int32)), x < y, i >= 0,
            u > 1, tnp.where(x > 0, x, 0.), tnp.clip(x, -1., 1.), tnp.isfinite(x),
            i & 6, ~i, i << 1, tnp.exp2(x), tnp.round(x), x.astype(tnp.bool_))


print_stablehlo(elementwise, np.zeros(4, np.float32), np.zeros(4, np.float32),
                np.zeros(4, np.int32), np.zeros(4, np.uint32))
# CHECK-LABEL: func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xi32>, %arg3: tensor<4xui32>)
# CHECK:       stablehlo.exponential %arg0 : (tensor<4xf32>) -> tensor<4xf32>
# CHECK:       stablehlo.log_plus_one %arg1
# CHECK:       %[[TWO:.*]] = stablehlo.constant dense<2.0> : tensor<f32>
# CHECK:       stablehlo.broadcast_in_dim %[[TWO]], dims = [] : (tensor<f32>) -> tensor<4xf32>
# CHECK:       stablehlo.multiply
# CHECK:       stablehlo.add
# CHECK:       stablehlo.atan2 %arg0, %arg1
# CHECK:       stablehlo.tanh %arg0
# CHECK:       "chlo.erf"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
# CHECK:       "chlo.sinh"(%arg0)
# a constant divisor other than 0 and -1 needs no guard against XLA's folder:
# CHECK:       stablehlo.divide %arg2
# CHECK-NOT:   compare EQ
# CHECK:       stablehlo.remainder %arg2
# CHECK:       stablehlo.convert %arg3 : (tensor<4xui32>) -> tensor<4xi32>
# CHECK:       stablehlo.maximum %arg2
# CHECK:       stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
# CHECK:       stablehlo.compare GE, %arg2, {{.*}}, SIGNED
# CHECK:       stablehlo.compare GT, %arg3, {{.*}}, UNSIGNED
# CHECK:       stablehlo.select
# CHECK:       stablehlo.maximum
# CHECK:       stablehlo.minimum
# CHECK:       stablehlo.is_finite %arg0 : (tensor<4xf32>) -> tensor<4xi1>
# CHECK:       stablehlo.and %arg2
# CHECK:       stablehlo.not %arg2
# CHECK:       stablehlo.shift_left %arg2
# CHECK:       stablehlo.constant dense<0.6931471824645996> : tensor<f32>
# CHECK:       stablehlo.round_nearest_even %arg0
# float -> bool means x != 0, not truncation; the zero is a broadcast of a scalar, as
# JAX lowers it, which fusion copies into the compare's kernel:
# CHECK:       %[[ZEROS:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4xf32>
# CHECK-NEXT:  stablehlo.compare NE, %arg0, %[[ZEROS]], FLOAT


def exponents(x):  # float64 constants whose repr has no point (2e-06, 1e+20)
    return x * 2e-06 + 1e20


tracehlo.config.update("enable_x64", True)
print_stablehlo(exponents, np.zeros(4))
# CHECK-LABEL: func.func public @main(%arg0: tensor<4xf64>)
# CHECK:       stablehlo.constant dense<2.0e-06> : tensor<f64>
# CHECK:       stablehlo.constant dense<1.0e+20> : tensor<f64>
