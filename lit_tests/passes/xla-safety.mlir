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

// -----

// XLA CPU computes a bf16 select in f32: its on_true becomes a convert made
// inside the fusion, which has no layout there, and XLA aborted ("has_layout()"
// in InferSelectShape; fuzzer, hlo-opt seeds 58 and 74). It stays unfused.
// CHECK-LABEL: func.func @bf16_select_stays_out_of_fusions
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.select
// WHY: [instruction-fusion] not fused: stablehlo.broadcast_in_dim {{.*}} + stablehlo.select {{.*}}: a fused bf16 select: XLA CPU converts its on_true to f32 inside the fusion, where the convert has no layout (aborts)
func.func @bf16_select_stays_out_of_fusions(%p: tensor<3xi1>, %a: tensor<3xbf16>, %s: tensor<bf16>) -> tensor<3xbf16> {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
  %r = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xbf16>
  return %r : tensor<3xbf16>
}

// -----

// A fused value read by a slice and an or ends a function of XLA CPU's loop
// emitter, whose result needs a layout XLA does not give ops inside our fusions:
// it aborted ("has_layout()" in CreateSubgraphMlirFunction; fuzzer, hlo-opt
// seed 84). The convert stays outside, and the fusion reads it as a parameter.
// CHECK-LABEL: func.func @a_value_read_by_a_slice_and_an_or
// CHECK: %[[C:.*]] = stablehlo.convert
// CHECK: "mhlo.fusion"(%[[C]])
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.slice
// CHECK: stablehlo.or
// WHY: [instruction-fusion] not fused: stablehlo.convert {{.*}} + stablehlo.or {{.*}}: stablehlo.convert read by 2 fused ops (stablehlo.or, stablehlo.slice) ends a function of XLA CPU's loop emitter, which needs a layout it lacks inside our fusions (aborts)
func.func @a_value_read_by_a_slice_and_an_or(%x: tensor<4x5xf16>) -> tensor<4x5xui32> {
  %c = stablehlo.convert %x : (tensor<4x5xf16>) -> tensor<4x5xui32>
  %s = stablehlo.slice %c [3:4, 0:5] : (tensor<4x5xui32>) -> tensor<1x5xui32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<1x5xui32>) -> tensor<4x5xui32>
  %r = stablehlo.or %b, %c : tensor<4x5xui32>
  return %r : tensor<4x5xui32>
}

// -----

// The same through two reverses (fuzzer, hlo-opt seed 71): the first reverse is
// read by the second and by a shift, under two index maps.
// CHECK-LABEL: func.func @a_value_read_under_two_index_maps
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reverse
// CHECK-NOT: stablehlo.reverse
// CHECK: stablehlo.return
// CHECK: "mhlo.fusion"
// WHY: read by 2 fused ops (stablehlo.reverse, stablehlo.shift_right_logical) ends a function of XLA CPU's loop emitter
func.func @a_value_read_under_two_index_maps(%x: tensor<3x4xi1>) -> tensor<3x4xi32> {
  %c = stablehlo.convert %x : (tensor<3x4xi1>) -> tensor<3x4xi32>
  %m = stablehlo.multiply %c, %c : tensor<3x4xi32>
  %r1 = stablehlo.reverse %m, dims = [1] : tensor<3x4xi32>
  %r2 = stablehlo.reverse %r1, dims = [1] : tensor<3x4xi32>
  %r = stablehlo.shift_right_logical %r2, %r1 : tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}
