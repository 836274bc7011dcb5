// RUN: hlo-opt %s --pass-pipeline=canonicalize,instruction-fusion,fusion-merger | FileCheck %s
// RUN: hlo-opt %s --pass-pipeline=canonicalize,instruction-fusion,fusion-merger --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// With the calls kept (a pipeline without inline-calls), XLA inlines them, folds
// x != x to a splat, and moves the reverse in @flip past the fusion in
// @floor_divide as if it were one binary op, rebuilding it with the opcode `fusion`
// (aborts; fuzzer, hlo-opt seeds 917, 1160, where it was a divide: canonicalize
// now guards every integer divide, so an add stands in): a fusion of two operands
// that a reverse reads, here through a call, is undone.
// CHECK-LABEL: func.func private @floor_divide
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.add
// CHECK: return
// WHY: [xla-import] not fused: stablehlo.convert {{.*}} + stablehlo.add {{.*}}: two operands, read by a reverse: XLA's simplifier takes the fusion for a binary op when it moves the reverse past it (aborts)
func.func public @main(%x: tensor<1x1x2xui32>) -> tensor<1x1x2xui32> {
  %c = stablehlo.compare NE, %x, %x, UNSIGNED : (tensor<1x1x2xui32>, tensor<1x1x2xui32>) -> tensor<1x1x2xi1>
  %0 = call @floor_divide(%x, %c) : (tensor<1x1x2xui32>, tensor<1x1x2xi1>) -> tensor<1x1x2xui32>
  %1 = call @flip(%0) : (tensor<1x1x2xui32>) -> tensor<1x1x2xui32>
  return %1 : tensor<1x1x2xui32>
}
func.func private @floor_divide(%a: tensor<1x1x2xui32>, %b: tensor<1x1x2xi1>) -> tensor<1x1x2xui32> {
  %1 = stablehlo.convert %b : (tensor<1x1x2xi1>) -> tensor<1x1x2xui32>
  %2 = stablehlo.add %a, %1 : tensor<1x1x2xui32>
  return %2 : tensor<1x1x2xui32>
}
func.func private @flip(%a: tensor<1x1x2xui32>) -> tensor<1x1x2xui32> {
  %r = stablehlo.reverse %a, dims = [2] : tensor<1x1x2xui32>
  return %r : tensor<1x1x2xui32>
}
