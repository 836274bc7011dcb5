# RUN: %python %s | FileCheck %s
# RUN: %python %s | sed -n '/^module/,$p' | hlo-opt - > /dev/null
# cholesky's VJP is two triangular solves against the factor (its upper triangle zeroed
# first, as stablehlo.cholesky leaves it unspecified; conjugate_a dropped for real
# matrices, as JAX's wrapper does). triangular_solve lowers as JAX's: LAPACK's trsm on
# CPU, flags as characters (side, uplo, trans_x, diag); elsewhere
# stablehlo.triangular_solve. Either way a conjugate without transpose is applied to a
# first (both conjugate only as part of an adjoint).
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from lowered import print_stablehlo
from tracehlo.lowering import lower_graph
from tracehlo.primitives.linalg import triangular_solve


def cholesky_grad(a):
    return tracehlo.grad(lambda a: tnp.sum(tnp.linalg.cholesky(a, symmetrize_input=False)))(a)


graph = tracehlo.make_ir(cholesky_grad)(np.eye(2, dtype=np.float32))
tracehlo.verify(graph)
assert str(tracehlo.parse_ir(str(graph))) == str(graph)
print(graph)
# CHECK-LABEL: func @cholesky_grad(%0: f32[2,2]) -> (f32[2,2]) {
# CHECK:         %1: f32[2,2] = cholesky %0
# CHECK:         %[[L:[0-9]+]]: f32[2,2] = select %{{[0-9]+}}, %1, %{{[0-9]+}}
# CHECK:         %[[Z:[0-9]+]]: f32[2,2] = triangular_solve[left_side=true, lower=true, transpose_a=true, conjugate_a=false, unit_diagonal=false] %[[L]], %{{[0-9]+}}
# CHECK-NEXT:    %[[G:[0-9]+]]: f32[2,2] = triangular_solve[left_side=false, lower=true, transpose_a=false, conjugate_a=false, unit_diagonal=false] %[[L]], %[[Z]]
# CHECK-NEXT:    return %[[G]]


def solves(a, b, c):
    return (triangular_solve(a, b, conjugate_a=True, lower=True),
            triangular_solve(a, c, left_side=True, transpose_a=True, conjugate_a=True,
                             unit_diagonal=True))


operands = (np.eye(2, dtype=np.complex64), np.ones((3, 2), np.complex64),
            np.ones((2, 1), np.complex64))
print_stablehlo(solves, *operands)
# CHECK-LABEL: func.func public @main
# CHECK:         %[[CONJ:[0-9]+]] = stablehlo.complex
# CHECK:         "stablehlo.custom_call"(%[[CONJ]], %arg1) {api_version = 1 : i32, backend_config = "", call_target_name = "lapack_ctrsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], mhlo.backend_config = {side = 82 : ui8, uplo = 76 : ui8, trans_x = 78 : ui8, diag = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<2x2xcomplex<f32>>, tensor<3x2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
# CHECK:         "stablehlo.custom_call"(%arg0, %arg2) {{.*}} mhlo.backend_config = {side = 76 : ui8, uplo = 85 : ui8, trans_x = 67 : ui8, diag = 85 : ui8}

def solves_gpu(a, b, c):  # each module its own name: hlo-opt reads them from one stream
    return solves(a, b, c)


print(lower_graph(tracehlo.make_ir(solves_gpu)(*operands), locations=False, platform="cuda"),
      end="")
# CHECK-LABEL: module @solves_gpu
# CHECK:         %[[CONJ:[0-9]+]] = stablehlo.complex
# CHECK:         "stablehlo.triangular_solve"(%[[CONJ]], %arg1) {left_side = false, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2xcomplex<f32>>, tensor<3x2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
# CHECK:         "stablehlo.triangular_solve"(%arg0, %arg2) {left_side = true, lower = false, unit_diagonal = true, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x2xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>
