# RUN: %python %s | FileCheck %s
# RUN: %python %s | hlo-opt - > /dev/null
# cholesky lowers per platform. On CPU, as JAX's CPU lowering: LAPACK's potrf through
# XLA's FFI on column-major matrices, a status per matrix, NaNs where it is not 0; the
# wrapper's tril is the one mask. f16 (no LAPACK path in JAX) and other platforms keep
# stablehlo.cholesky.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from lowered import print_stablehlo
from tracehlo.lowering import lower_graph

print_stablehlo(tnp.linalg.cholesky, np.zeros((2, 3, 3), np.float32))
# CHECK-LABEL: func.func public @main(%arg0: tensor<2x3x3xf32>)
# CHECK:       %[[T:.*]] = "stablehlo.transpose"(%arg0)
# CHECK:       %[[SUM:.*]] = stablehlo.add %arg0, %[[T]]
# CHECK:       %[[SYM:.*]] = stablehlo.divide %[[SUM]]
# CHECK:       %[[L:.*]]:2 = "stablehlo.custom_call"(%[[SYM]]) {api_version = 1 : i32, backend_config = "", call_target_name = "lapack_spotrf_ffi", operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[0]> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}} : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2xi32>)
# CHECK:       %[[OK:.*]] = stablehlo.compare EQ, %[[L]]#1, %{{.*}}, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
# CHECK:       %[[OKS:.*]] = stablehlo.broadcast_in_dim %[[OK]], dims = [0] : (tensor<2xi1>) -> tensor<2x3x3xi1>
# CHECK:       %[[NAN:.*]] = stablehlo.constant dense<0x7FC00000> : tensor<f32>
# CHECK:       %[[NANS:.*]] = stablehlo.broadcast_in_dim %[[NAN]]
# CHECK:       %[[F:.*]] = stablehlo.select %[[OKS]], %[[L]]#0, %[[NANS]]
# CHECK:       %[[OUT:.*]] = stablehlo.select %{{.*}}, %[[F]], %{{.*}}
# CHECK-NOT:   stablehlo.select
# CHECK:       return %[[OUT]]


def cholesky_c128(x):  # each module its own name: hlo-opt reads them from one stream
    return tnp.linalg.cholesky(x, symmetrize_input=False)


tracehlo.config.update("enable_x64", True)
print_stablehlo(cholesky_c128, np.zeros((4, 4), np.complex128))
# CHECK-LABEL: func.func public @main(%arg0: tensor<4x4xcomplex<f64>>)
# CHECK:       "stablehlo.custom_call"(%arg0) {{.*}} call_target_name = "lapack_zpotrf_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]
# CHECK-SAME:  num_batch_dims = "0"
# CHECK-SAME:  -> (tensor<4x4xcomplex<f64>>, tensor<i32>)
# CHECK:       stablehlo.constant dense<(0x7FF8000000000000, 0x7FF8000000000000)>


def cholesky_f16(x):
    return tnp.linalg.cholesky(x)


print_stablehlo(cholesky_f16, np.zeros((3, 3), np.float16))
# CHECK-LABEL: func.func public @main(%arg0: tensor<3x3xf16>)
# CHECK-NOT:   custom_call
# CHECK:       "stablehlo.cholesky"(%{{.*}}) {lower = true} : (tensor<3x3xf16>) -> tensor<3x3xf16>


def cholesky_gpu(x):
    return tnp.linalg.cholesky(x)


print(lower_graph(tracehlo.make_ir(cholesky_gpu)(np.zeros((3, 3), np.float32)),
                  locations=False, platform="cuda"), end="")
# CHECK-LABEL: module @cholesky_gpu
# CHECK-NOT:   custom_call
# CHECK:       "stablehlo.cholesky"(%{{.*}}) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>
