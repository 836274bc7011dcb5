// RUN: hlo-opt %s --split-input-file --pass-pipeline=inline-calls | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s --check-prefix=FUSED

// A call in a while body (JAX lowers a sampler drawn in a scan so) becomes its
// callee's body, the calls in that body too; so does a call outside regions. The
// callees, referenced no more, go.
// CHECK-LABEL: func.func @scan_body_calls
// CHECK-NOT:   call
// CHECK:       %[[E:.*]] = stablehlo.exponential %arg0 : tensor<8xf32>
// CHECK:       stablehlo.while
// CHECK:       } do {
// CHECK-NOT:   call
// CHECK:       %[[L:.*]] = stablehlo.log_plus_one %{{.*}} : tensor<8xf32>
// CHECK-NEXT:  %[[S:.*]] = stablehlo.sqrt %[[L]] : tensor<8xf32>
// CHECK-NEXT:  %[[M:.*]] = stablehlo.multiply %{{.*}}, %[[S]] : tensor<8xf32>
// CHECK-NEXT:  %[[A:.*]] = stablehlo.add %[[M]], %{{.*}} : tensor<8xf32>
// CHECK-NOT:   call
// CHECK:       stablehlo.return %{{.*}}, %[[A]]
// CHECK:       return %{{.*}}, %[[E]]
// CHECK-NOT:   func.func
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

// A constant argument reaches the inlined body through a call of an identity
// function, one per type: XLA's import would fold tanh of a constant it sees
// exactly, where through a call XLA folds it after inlining, as under JAX's jit.
// An argument computed from that call is no constant XLA's import sees: passed as
// it is. Math on the constants stays unfused, for XLA to fold. A recursive
// function is left alone.
// CHECK-LABEL: func.func @constant_arguments
// CHECK:       %[[C:.*]] = stablehlo.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK-NEXT:  %[[ID:.*]] = call @constant_argument_0(%[[C]])
// CHECK-NEXT:  %[[T:.*]] = stablehlo.tanh %[[ID]]
// CHECK-NEXT:  %[[N:.*]] = stablehlo.negate %[[T]]
// CHECK-NEXT:  %[[M:.*]] = stablehlo.multiply %[[N]], %arg0
// CHECK-NEXT:  %[[R:.*]] = call @loop(%[[M]])
// CHECK-NEXT:  return %[[R]]
// CHECK:       func.func private @loop
// CHECK:       func.func private @constant_argument_0(%arg0: tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    return %arg0 : tensor<2xf32>
// FUSED-LABEL: func.func @constant_arguments
// FUSED:       call @constant_argument_0
// FUSED-NEXT:  stablehlo.tanh
// FUSED-NEXT:  stablehlo.negate
// FUSED-NEXT:  stablehlo.multiply
func.func @constant_arguments(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %t = func.call @tanh(%c) : (tensor<2xf32>) -> tensor<2xf32>
  %n = func.call @negate(%t) : (tensor<2xf32>) -> tensor<2xf32>
  %m = stablehlo.multiply %n, %x : tensor<2xf32>
  %r = func.call @loop(%m) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
func.func private @tanh(%w: tensor<2xf32>) -> tensor<2xf32> {
  %s = stablehlo.tanh %w : tensor<2xf32>
  return %s : tensor<2xf32>
}
func.func private @negate(%w: tensor<2xf32>) -> tensor<2xf32> {
  %s = stablehlo.negate %w : tensor<2xf32>
  return %s : tensor<2xf32>
}
func.func private @loop(%w: tensor<2xf32>) -> tensor<2xf32> {
  %s = func.call @loop(%w) : (tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// So does a constant a callee returns (the conformance corpus's inputs): XLA's
// import saw a call result where the caller reads it.
// CHECK-LABEL: func.func @constant_results
// CHECK:       %[[C:.*]] = stablehlo.constant dense<[5.000000e-01, 1.500000e+00]>
// CHECK-NEXT:  %[[ID:.*]] = call @constant_argument_0(%[[C]])
// CHECK-NEXT:  %[[T:.*]] = stablehlo.tanh %[[ID]]
// CHECK-NEXT:  return %[[T]]
func.func @constant_results() -> tensor<2xf32> {
  %i = func.call @inputs() : () -> tensor<2xf32>
  %t = stablehlo.tanh %i : tensor<2xf32>
  return %t : tensor<2xf32>
}
func.func private @inputs() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[0.5, 1.5]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
