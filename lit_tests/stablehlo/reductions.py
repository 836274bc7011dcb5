# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# Reductions become stablehlo.reduce with a one-op body and the identity as init;
# argmax is a variadic (value, index) reduce; cumsum a reduce_window over the prefix.
import numpy as np
from lowered import print_stablehlo
import tracehlo.numpy as tnp


def reductions(x, b):
    return (tnp.sum(x, axis=-1), tnp.max(x, axis=0, keepdims=True), tnp.min(x), tnp.prod(x, 1),
            tnp.all(b), tnp.any(b, 0), tnp.argmax(x, axis=1), tnp.cumsum(x, axis=1))


print_stablehlo(reductions, np.zeros((3, 4), np.float32), np.zeros((3, 4), bool))
# CHECK-LABEL: func.func public @main
# CHECK:       %[[ZERO:.*]] = stablehlo.constant dense<0.0> : tensor<f32>
# CHECK:       "stablehlo.reduce"(%arg0, %[[ZERO]]) ({
# CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
# CHECK-NEXT:      stablehlo.add %[[A]], %[[B]] : tensor<f32>
# CHECK:       }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
# CHECK:       stablehlo.constant dense<0xFF800000> : tensor<f32>
# CHECK:       stablehlo.maximum
# CHECK:       stablehlo.constant dense<0x7F800000> : tensor<f32>
# CHECK:       stablehlo.minimum
# CHECK:       {dimensions = array<i64: 0, 1>}
# CHECK:       stablehlo.multiply
# CHECK:       stablehlo.constant dense<true> : tensor<i1>
# CHECK:       stablehlo.and
# CHECK:       stablehlo.or
# CHECK:       stablehlo.iota dim = 1 : tensor<3x4xi32>
# CHECK:       "stablehlo.reduce"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) ({
# CHECK:         stablehlo.compare GT
# CHECK:         stablehlo.compare NE
# CHECK:         stablehlo.return %{{.*}}, %{{.*}} : tensor<f32>, tensor<i32>
# CHECK:       -> (tensor<3xf32>, tensor<3xi32>)
# CHECK:       "stablehlo.reduce_window"(%arg0,
# CHECK:       {window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>, padding = dense<{{\[}}[0, 0], [3, 0]]> : tensor<2x2xi64>}
