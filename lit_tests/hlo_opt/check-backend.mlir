// --check-backend refuses a fusion the backend cannot compile, before XLA sees
// it: on CPU a tuple-root loop fusion aborts XLA, so it is a Python error here.
// RUN: not hlo-opt %s --check-backend 2>&1 | FileCheck %s
// RUN: hlo-opt %s --check-backend --backend=gpu | FileCheck %s --check-prefix=GPU

// CHECK: error: {{.*}}2-output fusion: cpu compiles multi-output fusions only as one variadic reduce
// GPU: "mhlo.fusion"
func.func @multi_output(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = "mhlo.fusion"(%a) ({
  ^bb0(%x: tensor<4x8xf32>):
    %e = stablehlo.exponential %x : tensor<4x8xf32>
    %n = stablehlo.negate %e : tensor<4x8xf32>
    stablehlo.return %e, %n : tensor<4x8xf32>, tensor<4x8xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
