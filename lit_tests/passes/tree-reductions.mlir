// RUN: hlo-opt %s --split-input-file --pass-pipeline=tree-reductions | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s --check-prefix=FUSED
// RUN: hlo-opt %s --split-input-file --pass-pipeline=tree-reductions --backend=gpu | FileCheck %s --check-prefix=GPU
// XLA CPU adds up a float reduce over a dimension longer than 32 as a tree: a
// reduce_window of 32-element windows, the dimension padded evenly, then a reduce of
// the partial results, split again while one is longer than 32. The pass splits it
// first, so no fusion of ours sums it in another order. XLA GPU's rewrite is not
// modelled: nothing splits there.
// GPU-NOT: reduce_window

// An f64 sum of 40 numbers: windows of 32 over 40 padded to 64, 12 on each side.
// CHECK-LABEL: func.func @sum40
// CHECK: "stablehlo.reduce_window"(%{{.*}}) <{padding = dense<{{\[\[}}0, 0], [12, 12]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 32>, window_strides = array<i64: 1, 32>}>
// CHECK: stablehlo.add
// CHECK: -> tensor<3x2xf64>
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<3x2xf64>, tensor<f64>) -> tensor<3xf64>
// The arithmetic before fuses, the reduce_window stays its own kernel, and the sum
// of partial sums fuses with what reads it.
// FUSED-LABEL: func.func @sum40
// FUSED: "mhlo.fusion"
// FUSED: stablehlo.multiply
// FUSED: stablehlo.add
// FUSED: "stablehlo.reduce_window"
// FUSED: "mhlo.fusion"
// FUSED: stablehlo.reduce
// FUSED: stablehlo.negate
func.func @sum40(%x: tensor<3x40xf64>) -> tensor<3xf64> {
  %two = stablehlo.constant dense<2.0> : tensor<3x40xf64>
  %twice = stablehlo.multiply %x, %two : tensor<3x40xf64>
  %y = stablehlo.add %twice, %two : tensor<3x40xf64>
  %zero = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<3x40xf64>, tensor<f64>) -> tensor<3xf64>
  %n = stablehlo.negate %s : tensor<3xf64>
  return %n : tensor<3xf64>
}

// -----

// 10000 f16: 313 partial sums (pad 8 and 8), 10 of those (pad 3 and 4), then one sum.
// CHECK-LABEL: func.func @sum10000
// CHECK: "stablehlo.reduce_window"{{.*}}padding = dense<8> : tensor<1x2xi64>, window_dimensions = array<i64: 32>
// CHECK: -> tensor<313xf16>
// CHECK: "stablehlo.reduce_window"{{.*}}padding = dense<{{\[\[}}3, 4]]>{{.*}}window_dimensions = array<i64: 32>
// CHECK: -> tensor<10xf16>
// CHECK: stablehlo.reduce({{.*}}) {{.*}} : (tensor<10xf16>, tensor<f16>) -> tensor<f16>
func.func @sum10000(%x: tensor<10000xf16>) -> tensor<f16> {
  %zero = stablehlo.constant dense<0.0> : tensor<f16>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<10000xf16>, tensor<f16>) -> tensor<f16>
  return %s : tensor<f16>
}

// -----

// Over two dimensions, a short one is one window of its own length.
// CHECK-LABEL: func.func @both_dims
// CHECK: "stablehlo.reduce_window"{{.*}}padding = dense<{{\[\[}}12, 12], [0, 0]]>{{.*}}window_dimensions = array<i64: 32, 3>
// CHECK: -> tensor<2x1xf32>
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<f32>
func.func @both_dims(%x: tensor<40x3xf32>) -> tensor<f32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<40x3xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// 32 elements are summed in one piece; a max and an integer sum come out the same
// in any order; XLA CPU's library takes an f32 sum of 4096 whole: none splits.
// CHECK-LABEL: func.func @unsplit
// CHECK-NOT: reduce_window
// CHECK: return
func.func @unsplit(%a: tensor<3x32xf64>, %b: tensor<3x40xf32>, %c: tensor<3x40xi32>, %d: tensor<4096xf32>) -> (tensor<3xf64>, tensor<3xf32>, tensor<3xi32>, tensor<f32>) {
  %z64 = stablehlo.constant dense<0.0> : tensor<f64>
  %sa = stablehlo.reduce(%a init: %z64) applies stablehlo.add across dimensions = [1] : (tensor<3x32xf64>, tensor<f64>) -> tensor<3xf64>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mb = stablehlo.reduce(%b init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<3x40xf32>, tensor<f32>) -> tensor<3xf32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %sc = stablehlo.reduce(%c init: %zi) applies stablehlo.add across dimensions = [1] : (tensor<3x40xi32>, tensor<i32>) -> tensor<3xi32>
  %z32 = stablehlo.constant dense<0.0> : tensor<f32>
  %sd = stablehlo.reduce(%d init: %z32) applies stablehlo.add across dimensions = [0] : (tensor<4096xf32>, tensor<f32>) -> tensor<f32>
  return %sa, %mb, %sc, %sd : tensor<3xf64>, tensor<3xf32>, tensor<3xi32>, tensor<f32>
}

// -----

// Nothing to add up in an empty value: it stays (and XLA folds it).
// CHECK-LABEL: func.func @empty
// CHECK-NOT: reduce_window
// CHECK: stablehlo.reduce
func.func @empty(%x: tensor<0x40xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<0x40xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
