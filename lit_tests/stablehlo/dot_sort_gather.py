# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# dot_general with batch/contracting dims, a stable multi-operand sort with a
# total-order comparator, gather for integer-array indexing and scatter for .at[].
import numpy as np
from lowered import print_stablehlo
import tracehlo.numpy as tnp


def linalg_and_indexing(a, b, idx):
    return (a @ b, tnp.einsum("bij,bjk->bik", b, a), tnp.argsort(a, axis=-1), a[:, idx],
            a.at[0, idx].add(1.0))


print_stablehlo(linalg_and_indexing, np.zeros((2, 3, 3), np.float32),
                np.zeros((2, 3, 3), np.float32), np.zeros(2, np.int32))
# CHECK-LABEL: func.func public @main
# CHECK:       "stablehlo.dot_general"(%arg0, %arg1) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
# CHECK:       "stablehlo.dot_general"(%arg1, %arg0)
# CHECK:       "stablehlo.sort"(%arg0, %{{.*}}) ({
# CHECK:         stablehlo.compare LT, %{{.*}}, %{{.*}}, TOTALORDER
# CHECK:       }) {dimension = 2 : i64, is_stable = true}
# CHECK:       "stablehlo.gather"(%arg0, %{{.*}}) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 2, 1, 3>, indices_are_sorted = false} : (tensor<2x3x3xf32>, tensor<2x1xi32>) -> tensor<2x2x3xf32>
# CHECK:       "stablehlo.scatter"(%arg0, %{{.*}}, %{{.*}}) ({
# CHECK:         stablehlo.add
# CHECK:       }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false}
