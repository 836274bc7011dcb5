# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# Data-movement primitives: iota, broadcast, reshape, transpose, rev, concatenate,
# pad, slice, dynamic_slice, dynamic_update_slice.
import numpy as np
from lowered import print_stablehlo
import tracehlo.numpy as tnp
from tracehlo import lax


def shapes(x, i):
    return (tnp.arange(6), tnp.broadcast_to(x[0], (3, 4, 5)), x.reshape(5, 12), x.T,
            tnp.flip(x, 1), tnp.concatenate([x, x], axis=-1), tnp.pad(x, 1),
            x[1:, ::2, 3], x[i], lax.dynamic_update_slice(x, x[:1], (i, 0, 0)),
            tnp.expand_dims(x, 0), tnp.squeeze(x[:, :1], 1))


print_stablehlo(shapes, np.zeros((3, 4, 5), np.float32), np.int32(1))
# CHECK-LABEL: func.func public @main
# CHECK:       stablehlo.iota dim = 0 : tensor<6xi32>
# CHECK:       "stablehlo.slice"(%arg0) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 4, 5>, strides = array<i64: 1, 1, 1>}
# CHECK:       stablehlo.reshape {{.*}} : (tensor<1x4x5xf32>) -> tensor<4x5xf32>
# CHECK:       stablehlo.broadcast_in_dim {{.*}}, dims = [1, 2] : (tensor<4x5xf32>) -> tensor<3x4x5xf32>
# CHECK:       stablehlo.reshape %arg0 : (tensor<3x4x5xf32>) -> tensor<5x12xf32>
# CHECK:       "stablehlo.transpose"(%arg0) {permutation = array<i64: 2, 1, 0>}
# CHECK:       "stablehlo.reverse"(%arg0) {dimensions = array<i64: 1>}
# CHECK:       "stablehlo.concatenate"(%arg0, %arg0) {dimension = 2 : i64}
# CHECK:       "stablehlo.pad"(%arg0, {{.*}}) {edge_padding_low = array<i64: 1, 1, 1>, edge_padding_high = array<i64: 1, 1, 1>, interior_padding = array<i64: 0, 0, 0>}
# CHECK:       "stablehlo.slice"(%arg0) {start_indices = array<i64: 1, 0, 3>, limit_indices = array<i64: 3, 4, 4>, strides = array<i64: 1, 2, 1>}
# CHECK:       "stablehlo.dynamic_slice"(%arg0, {{.*}}) {slice_sizes = array<i64: 1, 4, 5>}
# CHECK:       "stablehlo.dynamic_update_slice"(%arg0, {{.*}}) : (tensor<3x4x5xf32>, tensor<1x4x5xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x4x5xf32>
