// Malformed input: MLIR's diagnostic with file:line:col, exit status 1, no traceback.
// RUN: not hlo-opt %s 2>&1 | FileCheck %s
// RUN: not hlo-opt %s --fuse 2>&1 | FileCheck %s
// RUN: not hlo-opt %s --pass-pipeline=no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not hlo-opt %s --pass-pipeline='fusion-merger{no-such-option=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not hlo-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not hlo-opt %s --print-ir-after=nope 2>&1 | FileCheck %s --check-prefix=AFTER

// CHECK: errors.mlir:16:8: error: 'stablehlo.add' op expected 2 operands, but found 1
// CHECK-NOT: Traceback
// PASS: hlo-opt: error: unknown pass 'no-such-pass'
// OPTION: hlo-opt: error: pass 'fusion-merger' has no option 'no-such-option'
// MISSING: hlo-opt: error: {{.*}}No such file
// AFTER: hlo-opt: error: --print-ir-after: unknown pass 'nope'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
