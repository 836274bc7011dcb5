// --split-input-file: each `// -----` chunk on its own; an error in one chunk
// names its line in the whole file, the other chunks still print, status 1.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: split-input-file.mlir:17:8: error:
// CHECK-LABEL: func.func @first
// CHECK: // -----
// CHECK-LABEL: func.func @third
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  // the next line is broken
  %0 = "stablehlo.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @third(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
