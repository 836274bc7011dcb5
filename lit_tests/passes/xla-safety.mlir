// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// XLA's import folds or(x, true) to true inside a fusion, leaving the fused
// parameter %x unread, which XLA's verifier refuses: the fusion is undone.
// CHECK-LABEL: func.func @or_true_is_folded_by_xla
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.not
// CHECK: stablehlo.or
// WHY: [xla-import] not fused: stablehlo.constant {{.*}} + stablehlo.or @ {{.*}}: XLA's import folds the fused ops that read one of its operands
func.func @or_true_is_folded_by_xla(%x: tensor<8xi1>) -> tensor<8xi1> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %b = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<i1>) -> tensor<8xi1>
  %n = stablehlo.not %x : tensor<8xi1>
  %o = stablehlo.or %n, %b : tensor<8xi1>
  return %o : tensor<8xi1>
}

// -----

// A zero-element result is a constant, as XLA makes it: the reduce read only
// through it is dead, so no sibling fusion keeps it as an output nothing reads.
// CHECK-LABEL: func.func @zero_element_values_are_constants
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}), (%{{.*}} init: %{{.*}}) across
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.constant dense<> : tensor<0xf32>
// CHECK-NOT: stablehlo.slice
func.func @zero_element_values_are_constants(%x: tensor<5xf32>) -> (tensor<f32>, tensor<0xf32>, tensor<1xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<5xf32>
  %s0 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %s1 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %p = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %b0 = stablehlo.broadcast_in_dim %s0, dims = [] : (tensor<f32>) -> tensor<1xf32>
  %empty = stablehlo.slice %b0 [1:1] : (tensor<1xf32>) -> tensor<0xf32>
  %bp = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<f32>) -> tensor<1xf32>
  return %s1, %empty, %bp : tensor<f32>, tensor<0xf32>, tensor<1xf32>
}
