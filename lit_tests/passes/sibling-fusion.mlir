// RUN: hlo-opt %s --split-input-file --pass-pipeline=sibling-fusion | FileCheck %s
// RUN: hlo-opt %s --split-input-file --pass-pipeline=sibling-fusion --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: hlo-opt %s --split-input-file --pass-pipeline=sibling-fusion --backend=gpu | FileCheck %s --check-prefix=GPU

// Sibling reductions over the same input and dimensions become one variadic
// reduce, the one multi-output form XLA CPU compiles.
// CHECK-LABEL: func.func @sibling_reductions
// CHECK: %[[F:[0-9]+]]:2 = "mhlo.fusion"(%arg0
// CHECK: %[[R:[0-9]+]]:2 = stablehlo.reduce(%{{.*}} init: %{{.*}}), (%{{.*}} init: %{{.*}}) across dimensions = [1]
// CHECK: stablehlo.add
// CHECK: stablehlo.maximum
// CHECK: stablehlo.return %[[R]]#0, %[[R]]#1
// CHECK: return %[[F]]#0, %[[F]]#1
// WHY: fused: stablehlo.reduce {{.*}} + stablehlo.reduce {{.*}}: shared operand read once (128 bytes)
func.func @sibling_reductions(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %s, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

// Reductions over different dimensions do not share a loop.
// CHECK-LABEL: func.func @different_dimensions
// CHECK-NOT: mhlo.fusion
// WHY: not fused: {{.*}}: reductions over different input shapes or dimensions
func.func @different_dimensions(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %t = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %s, %t : tensor<4xf32>, tensor<8xf32>
}

// -----

// The second reduction's init value is computed from the first: one kernel for
// both would feed itself.
// CHECK-LABEL: func.func @would_create_cycle
// CHECK-NOT: mhlo.fusion
// WHY: not fused: {{.*}}: would create a cycle: a path leaves the group and comes back
func.func @would_create_cycle(%x: tensor<4x8xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  %i = stablehlo.negate %s : tensor<f32>
  %t = stablehlo.reduce(%x init: %i) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  return %t : tensor<f32>
}

// -----

// Loop siblings need a multi-output fusion: not on CPU, yes on GPU.
// CHECK-LABEL: func.func @loop_siblings
// CHECK-NOT: mhlo.fusion
// WHY: not fused: stablehlo.exponential {{.*}} + stablehlo.log {{.*}}: 2 outputs: cpu compiles multi-output fusions only as one variadic reduce
// GPU-LABEL: func.func @loop_siblings
// GPU: %[[F:[0-9]+]]:2 = "mhlo.fusion"(%arg0{{.*}}fusion_kind kLoop
// GPU: stablehlo.exponential
// GPU: stablehlo.log
// GPU: return %[[F]]#0, %[[F]]#1
func.func @loop_siblings(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = stablehlo.exponential %x : tensor<16xf32>
  %l = stablehlo.log %x : tensor<16xf32>
  return %e, %l : tensor<16xf32>, tensor<16xf32>
}
