// A bare hlo-opt parses, verifies and prints; stdin (`-`) and -o work alike.
// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt - < %s | FileCheck %s
// RUN: hlo-opt %s -o %t && FileCheck %s < %t
// RUN: hlo-opt %s | hlo-opt - | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-NEXT: stablehlo.exponential %arg0
// CHECK-NEXT: stablehlo.negate
// CHECK-NOT: mhlo.fusion
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %n = stablehlo.negate %e : tensor<4xf32>
  return %n : tensor<4xf32>
}
