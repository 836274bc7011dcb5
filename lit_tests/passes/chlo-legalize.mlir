// RUN: hlo-opt %s --split-input-file --pass-pipeline=chlo-legalize | FileCheck %s
// RUN: hlo-opt %s --split-input-file --pass-pipeline=chlo-legalize --backend=gpu | FileCheck %s --check-prefix=GPU
// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s --check-prefix=FUSED

// atan is atan2(x, 1), as XLA's import writes it; its splat 1 becomes a broadcast
// scalar, as XLA's simplifier makes it, so the fusion holds the constant (read as a
// parameter, LLVM could not fold it: one ulp apart from XLA's own fusion).
// CHECK-LABEL: func.func @atan_sqrt
// CHECK-NOT:   chlo.
// CHECK:       %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[B:.*]] = stablehlo.broadcast_in_dim %[[ONE]], dims = [] : (tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT:  %[[A:.*]] = stablehlo.atan2 %arg0, %[[B]] : tensor<8xf32>
// CHECK-NEXT:  stablehlo.sqrt %[[A]]
// FUSED-LABEL: func.func @atan_sqrt
// FUSED-NEXT:  "mhlo.fusion"(%arg0)
// FUSED:       stablehlo.constant dense<1.000000e+00> : tensor<f32>
// FUSED-NEXT:  stablehlo.broadcast_in_dim
// FUSED-NEXT:  stablehlo.atan2
// FUSED-NEXT:  stablehlo.sqrt
// FUSED-NEXT:  stablehlo.return
func.func @atan_sqrt(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = chlo.atan %x : tensor<8xf32> -> tensor<8xf32>
  %s = stablehlo.sqrt %a : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// erf is an HLO op of its own on every backend, fused with its users as XLA fuses
// it; sinh one on GPU only (getGpuChloToHighLevelMhloOptions), expanded on CPU.
// CHECK-LABEL: func.func @erf_sinh
// CHECK:       mhlo.erf %arg0
// CHECK-NOT:   sinh
// CHECK:       stablehlo.exponential_minus_one %arg0
// GPU-LABEL:   func.func @erf_sinh
// GPU:         mhlo.erf %arg0
// GPU:         mhlo.sinh %arg0
// FUSED-LABEL: func.func @erf_sinh
// FUSED:       "mhlo.fusion"(%arg0, %arg1)
// FUSED-NEXT:  ^bb0
// FUSED-NEXT:  mhlo.erf
// FUSED-NEXT:  stablehlo.multiply
func.func @erf_sinh(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = chlo.erf %x : tensor<8xf32> -> tensor<8xf32>
  %m = stablehlo.multiply %e, %y : tensor<8xf32>
  %s = chlo.sinh %x : tensor<8xf32> -> tensor<8xf32>
  return %m, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// lgamma (poisson's PTRS) becomes XLA's Lanczos series, each coefficient a scalar
// broadcast; fused, the whole series is one kernel, as under jax.jit.
// CHECK-LABEL: func.func @lgamma
// CHECK-NOT:   chlo.
// CHECK:       %[[C:.*]] = stablehlo.constant dense<676.520386> : tensor<f32>
// CHECK-NEXT:  stablehlo.broadcast_in_dim %[[C]], dims = []
// CHECK:       stablehlo.log
// FUSED-LABEL: func.func @lgamma
// FUSED-COUNT-1: "mhlo.fusion"
// FUSED-NOT:   "mhlo.fusion"
// FUSED:       return
func.func @lgamma(%x: tensor<8xf32>) -> tensor<8xf32> {
  %l = chlo.lgamma %x : tensor<8xf32> -> tensor<8xf32>
  return %l : tensor<8xf32>
}

// -----

// A splat constant of the module's own stays as it is; a module without CHLO ops is
// left alone.
// CHECK-LABEL: func.func @own_constant
// CHECK:       stablehlo.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK:       stablehlo.atan2
// CHECK-LABEL: func.func @no_chlo
// CHECK-NEXT:  %[[C:.*]] = stablehlo.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-NEXT:  %[[M:.*]] = stablehlo.multiply %arg0, %[[C]] : tensor<8xf32>
// CHECK-NEXT:  return %[[M]]
func.func @own_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<8xf32>
  %a = chlo.atan %x : tensor<8xf32> -> tensor<8xf32>
  %m = stablehlo.multiply %a, %c : tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

func.func @no_chlo(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<8xf32>
  %m = stablehlo.multiply %x, %c : tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

// In a loop body too (poisson's PTRS draws its lgamma in a while loop).
// CHECK-LABEL: func.func @in_loop
// CHECK:       stablehlo.while
// CHECK-NOT:   chlo.
// CHECK:       stablehlo.log
// CHECK:       stablehlo.return
func.func @in_loop(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<8xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %l = chlo.lgamma %v : tensor<8xf32> -> tensor<8xf32>
    stablehlo.return %j, %l : tensor<i32>, tensor<8xf32>
  }
  return %r#1 : tensor<8xf32>
}
