// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: hlo-opt %s --split-input-file --fuse --backend=gpu | FileCheck %s --check-prefix=GPU
// RUN: hlo-opt %s --split-input-file --fuse --backend=gpu --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=GPU-WHY
// The library is XLA CPU's (the cpu Backend's hooks): no gpu decision mentions it.
// GPU-WHY: fusion report (gpu)
// GPU-WHY-NOT: library

// softmax: XLA CPU's library (YNNPACK) computes max, its broadcast, the subtract and
// the exp in one kernel reading x once, which no loop fusion can; the CPU pipeline
// leaves that chain (and the scale only it reads) unfused, and fuses the rest. Each
// divide by a broadcast is a multiply by the broadcast reciprocal, as XLA makes it.
// CHECK-LABEL: func.func @softmax
// CHECK: stablehlo.multiply %arg0
// CHECK: stablehlo.reduce
// CHECK: stablehlo.exponential
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reduce
// CHECK: stablehlo.divide
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.multiply
// CHECK-NOT: mhlo.fusion
// WHY: not fused: {{.*}}: left to XLA CPU's library: it computes the reduce at {{.*}}, the 3 ops after it up to stablehlo.exponential, with the 2 ops only it reads in one kernel, reading the reduce's input once
// GPU-LABEL: func.func @softmax
// GPU: "mhlo.fusion"
// GPU: stablehlo.exponential
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %c = stablehlo.constant dense<4.0> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<64x128xf32>
  %s = stablehlo.divide %x, %cb : tensor<64x128xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %d = stablehlo.subtract %s, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %d : tensor<64x128xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %r = stablehlo.divide %e, %sb : tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// Below 4096 elements XLA keeps the reduce out of its library: a loop fusion then.
// CHECK-LABEL: func.func @small_softmax
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reduce
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.exponential
func.func @small_softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
  %d = stablehlo.subtract %x, %mb : tensor<8x16xf32>
  %e = stablehlo.exponential %d : tensor<8x16xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
  %r = stablehlo.divide %e, %sb : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// layernorm's centering: the chain after the mean ends in a cheap subtract, which
// each consumer recomputes from x; nothing is left to the library but the reduces.
// CHECK-LABEL: func.func @centered_twice
// CHECK: stablehlo.reduce
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.subtract
// CHECK: stablehlo.multiply
// CHECK: stablehlo.reduce
func.func @centered_twice(%x: tensor<64x128xf32>) -> (tensor<64xf32>, tensor<64x128xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %c = stablehlo.subtract %x, %mb : tensor<64x128xf32>
  %sq = stablehlo.multiply %c, %c : tensor<64x128xf32>
  %var = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %n = stablehlo.negate %c : tensor<64x128xf32>
  return %var, %n : tensor<64xf32>, tensor<64x128xf32>
}

// -----

// logits = dot + bias, shifted = logits - max(logits), read twice: our plan writes
// the logits and reads them three times; the library kernel takes the dot, the bias,
// the max and the subtract and writes shifted once, which moves fewer bytes.
// CHECK-LABEL: func.func @shifted_logits
// CHECK: stablehlo.dot_general
// CHECK-NEXT: stablehlo.broadcast_in_dim
// CHECK-NEXT: stablehlo.add
// CHECK: stablehlo.reduce
// CHECK: %[[S:.*]] = stablehlo.subtract
// CHECK: stablehlo.exponential %[[S]]
// CHECK: stablehlo.multiply %[[S]]
// WHY: not fused: stablehlo.dot_general {{.*}}: left to XLA CPU's library: it computes the reduce at {{.*}}, the 2 ops after it up to stablehlo.subtract, with the 3 ops only it reads in one kernel
func.func @shifted_logits(%h: tensor<64x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>, %y: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<128xf32>) -> tensor<64x128xf32>
  %logits = stablehlo.add %d, %bb : tensor<64x128xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%logits init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %s = stablehlo.subtract %logits, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %s : tensor<64x128xf32>
  %t = stablehlo.multiply %s, %y : tensor<64x128xf32>
  return %e, %t : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// A column reduction keeps the minor dimension: a loop fusion reads it with a stride,
// XLA CPU's library does not. It is left to the library with the producer only it
// reads; the row reduction beside it is ours.
// CHECK-LABEL: func.func @column_and_row_sums
// CHECK: %[[N:.*]] = stablehlo.exponential %arg0
// CHECK: stablehlo.reduce(%[[N]]
// CHECK-SAME: dimensions = [0]
// CHECK: "mhlo.fusion"(%arg0)
// CHECK: stablehlo.abs
// CHECK: dimensions = [1]
// WHY: not fused: stablehlo.exponential {{.*}} + stablehlo.reduce {{.*}}: left to XLA CPU's library: the reduce at {{.*}} keeps the minor dimension, which a loop fusion reads with a stride (measured 3-13x slower), with the 1 op only it reads
func.func @column_and_row_sums(%x: tensor<128x512xf32>) -> (tensor<512xf32>, tensor<128xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.exponential %x : tensor<128x512xf32>
  %c = stablehlo.reduce(%n init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<128x512xf32>, tensor<f32>) -> tensor<512xf32>
  %a = stablehlo.abs %x : tensor<128x512xf32>
  %r = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<128x512xf32>, tensor<f32>) -> tensor<128xf32>
  return %c, %r : tensor<512xf32>, tensor<128xf32>
}

// -----

// A lone f32 sum of 4096+ elements XLA CPU's library also computes faster than a
// loop fusion; on GPU it is an input fusion.
// CHECK-LABEL: func.func @lone_sum
// CHECK-NOT: mhlo.fusion
// CHECK: return
// WHY: not fused: stablehlo.constant {{.*}} + stablehlo.reduce {{.*}}: a reduce alone: XLA CPU's library computes it faster than a loop fusion
// GPU-LABEL: func.func @lone_sum
// GPU: "mhlo.fusion"{{.*}}kInput
// GPU: stablehlo.reduce
func.func @lone_sum(%x: tensor<64x128xf32>) -> tensor<64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}
