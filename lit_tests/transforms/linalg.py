# RUN: %python %s | FileCheck %s
# RUN: %python %s | sed -n '/^module/,$p' | hlo-opt - > /dev/null
# cholesky's VJP is two triangular solves against the factor (its upper triangle zeroed
# first, as stablehlo.cholesky leaves it unspecified); triangular_solve lowers to
# stablehlo.triangular_solve, with a conjugate without transpose applied to a first
# (StableHLO conjugates only as part of ADJOINT).
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from lowered import print_stablehlo
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
# CHECK-NEXT:    %[[G:[0-9]+]]: f32[2,2] = triangular_solve[left_side=false, lower=true, transpose_a=false, conjugate_a=true, unit_diagonal=false] %[[L]], %[[Z]]
# CHECK-NEXT:    return %[[G]]


def solves(a, b, c):
    return (triangular_solve(a, b, conjugate_a=True, lower=True),
            triangular_solve(a, c, left_side=True, transpose_a=True, conjugate_a=True,
                             unit_diagonal=True))


print_stablehlo(solves, np.eye(2, dtype=np.complex64), np.ones((3, 2), np.complex64),
                np.ones((2, 1), np.complex64))
# CHECK-LABEL: func.func public @main
# CHECK:         %[[CONJ:[0-9]+]] = stablehlo.complex
# CHECK:         "stablehlo.triangular_solve"(%[[CONJ]], %arg1) {left_side = false, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x2xcomplex<f32>>, tensor<3x2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
# CHECK:         "stablehlo.triangular_solve"(%arg0, %arg2) {left_side = true, lower = false, unit_diagonal = true, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x2xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x1xcomplex<f32>>
