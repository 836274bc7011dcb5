// RUN: hlo-opt %s --split-input-file --pass-pipeline=inline-region-calls | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s --check-prefix=FUSED

// A call in a while body (JAX lowers a sampler drawn in a scan so) becomes its
// callee's body, the calls in that body too; the callees, referenced no more, go.
// A call outside regions stays, and so does the function it calls.
// CHECK-LABEL: func.func @scan_body_calls
// CHECK:       %[[KEEP:.*]] = call @kept(%arg0)
// CHECK:       stablehlo.while
// CHECK:       } do {
// CHECK-NOT:   call
// CHECK:       %[[L:.*]] = stablehlo.log_plus_one %{{.*}} : tensor<8xf32>
// CHECK-NEXT:  %[[S:.*]] = stablehlo.sqrt %[[L]] : tensor<8xf32>
// CHECK-NEXT:  %[[M:.*]] = stablehlo.multiply %{{.*}}, %[[S]] : tensor<8xf32>
// CHECK-NEXT:  %[[A:.*]] = stablehlo.add %[[M]], %{{.*}} : tensor<8xf32>
// CHECK-NOT:   call
// CHECK:       stablehlo.return %{{.*}}, %[[A]]
// CHECK-NOT:   func.func private @step
// CHECK-NOT:   func.func private @inner
// CHECK:       func.func private @kept
// CHECK-NOT:   func.func private @step
// CHECK-NOT:   func.func private @inner
//
// Fused, the callee's ops join the body's add in one fusion inside the loop (as
// XLA fuses the inlined body), reading the loop values as parameters.
// FUSED-LABEL: func.func @scan_body_calls
// FUSED:       } do {
// FUSED-NOT:   call
// FUSED:       "mhlo.fusion"
// FUSED:       stablehlo.log_plus_one
// FUSED-NEXT:  stablehlo.sqrt
// FUSED-NEXT:  stablehlo.multiply
// FUSED-NEXT:  stablehlo.add
// FUSED-NEXT:  stablehlo.return
func.func @scan_body_calls(%x: tensor<8xf32>, %n: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %k = func.call @kept(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<8xf32>
   cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %d = func.call @step(%v) : (tensor<8xf32>) -> tensor<8xf32>
    %a = stablehlo.add %d, %v : tensor<8xf32>
    stablehlo.return %i2, %a : tensor<i32>, tensor<8xf32>
  }
  return %r#1, %k : tensor<8xf32>, tensor<8xf32>
}
func.func private @step(%u: tensor<8xf32>) -> tensor<8xf32> {
  %l = stablehlo.log_plus_one %u : tensor<8xf32>
  %s = func.call @inner(%l) : (tensor<8xf32>) -> tensor<8xf32>
  %m = stablehlo.multiply %u, %s : tensor<8xf32>
  return %m : tensor<8xf32>
}
func.func private @inner(%w: tensor<8xf32>) -> tensor<8xf32> {
  %s = stablehlo.sqrt %w : tensor<8xf32>
  return %s : tensor<8xf32>
}
func.func private @kept(%w: tensor<8xf32>) -> tensor<8xf32> {
  %e = stablehlo.exponential %w : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// A function called both in a branch and outside regions: the branch gets a copy,
// the function stays for the other call. A recursive function is left alone.
// CHECK-LABEL: func.func @branch_and_top
// CHECK:       call @twice(%arg1)
// CHECK:       "stablehlo.case"
// CHECK-NOT:   call @twice
// CHECK:       stablehlo.add %arg1, %arg1
// CHECK:       call @loop(%arg1)
// CHECK:       func.func private @twice
// CHECK:       func.func private @loop
func.func @branch_and_top(%k: tensor<i32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = func.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "stablehlo.case"(%k) ({
    %a = func.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.return %a : tensor<4xf32>
  }, {
    %b = func.call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.return %b : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %t, %r : tensor<4xf32>, tensor<4xf32>
}
func.func private @twice(%w: tensor<4xf32>) -> tensor<4xf32> {
  %s = stablehlo.add %w, %w : tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func private @loop(%w: tensor<4xf32>) -> tensor<4xf32> {
  %s = func.call @loop(%w) : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
