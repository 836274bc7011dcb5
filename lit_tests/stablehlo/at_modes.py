# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# x.at[i] with a traced scalar i: mode='clip' clamps, which is dynamic_update_slice's
# own semantics; the default drops an out-of-bounds update, which takes a scatter.
import numpy as np
from lowered import print_stablehlo


def at_modes(x, i):
    return x.at[i].set(5.0, mode="clip"), x.at[i].add(5.0)


print_stablehlo(at_modes, np.zeros((4, 3), np.float32), np.int32(1))
# CHECK-LABEL: func.func public @main
# CHECK:       "stablehlo.dynamic_update_slice"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
# CHECK:       "stablehlo.scatter"(%arg0, %{{.*}}, %{{.*}}) ({
# CHECK:         stablehlo.add
# CHECK:       }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 0>, indices_are_sorted = false, unique_indices = false} : (tensor<4x3xf32>, tensor<1xi32>, tensor<3xf32>) -> tensor<4x3xf32>
