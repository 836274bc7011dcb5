# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# erf_inv lowers to plain StableHLO, the polynomial XLA expands chlo.erf_inv into
# (so the fusion passes fuse it): w = -log1p(-x*x); w < 5 picks between the two
# branches' polynomials, evaluated each with its own constants, c + p * v; +-inf at
# |x| = 1. bf16 (and f16) computes in f32.
import numpy as np
import jax.numpy as jnp
from lowered import print_stablehlo
from tracehlo import lax

print_stablehlo(lax.erf_inv, np.zeros(4, np.float32))
# CHECK-LABEL: func.func public @main(%arg0: tensor<4xf32>)
# CHECK-NOT:   chlo
# CHECK:       %[[ABS:.*]] = stablehlo.abs %arg0
# CHECK:       %[[POLE:.*]] = stablehlo.compare EQ, %[[ABS]]
# CHECK:       %[[INF:.*]] = stablehlo.multiply %arg0
# CHECK:       %[[NEG:.*]] = stablehlo.negate %arg0
# CHECK:       %[[SQ:.*]] = stablehlo.multiply %arg0, %[[NEG]]
# CHECK:       %[[L:.*]] = stablehlo.log_plus_one %[[SQ]]
# CHECK:       %[[W:.*]] = stablehlo.negate %[[L]]
# CHECK:       stablehlo.constant dense<5.0>
# CHECK:       %[[SMALL:.*]] = stablehlo.compare LT, %[[W]]
# CHECK:       %[[V1:.*]] = stablehlo.subtract %[[W]]
# CHECK:       stablehlo.constant dense<2.810226362726098e-08>
# CHECK:       %[[P1:.*]] = stablehlo.multiply %{{.*}}, %[[V1]]
# CHECK:       stablehlo.add %{{.*}}, %[[P1]]
# CHECK:       %[[ROOT:.*]] = stablehlo.sqrt %[[W]]
# CHECK:       %[[V2:.*]] = stablehlo.subtract %[[ROOT]]
# CHECK:       stablehlo.constant dense<-0.0002002142573473975>
# CHECK:       stablehlo.constant dense<2.832976818084717>
# CHECK:       %[[LAST:.*]] = stablehlo.multiply %{{.*}}, %[[V2]]
# CHECK:       %[[P2:.*]] = stablehlo.add %{{.*}}, %[[LAST]]
# CHECK:       %[[P:.*]] = stablehlo.select %[[SMALL]], %{{.*}}, %[[P2]]
# CHECK:       %[[Y:.*]] = stablehlo.multiply %[[P]], %arg0
# CHECK:       stablehlo.select %[[POLE]], %[[INF]], %[[Y]]



def erf_inv_bf16(x):  # a module of its own name: hlo-opt reads both from one stream
    return lax.erf_inv(x)


print_stablehlo(erf_inv_bf16, np.zeros(4, jnp.bfloat16))
# CHECK-LABEL: func.func public @main(%arg0: tensor<4xbf16>)
# CHECK:       %[[X:.*]] = stablehlo.convert %arg0 : (tensor<4xbf16>) -> tensor<4xf32>
# CHECK:       stablehlo.abs %[[X]] : tensor<4xf32>
# CHECK:       stablehlo.select
# CHECK:       %[[R:.*]] = stablehlo.select
# CHECK-NEXT:  stablehlo.convert %[[R]] : (tensor<4xf32>) -> tensor<4xbf16>
