// RUN: hlo-opt %s --split-input-file --pass-pipeline=producer-consumer-fusion --backend=gpu | FileCheck %s
// RUN: hlo-opt %s --split-input-file --pass-pipeline=producer-consumer-fusion --fusion-report 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: hlo-opt %s --split-input-file --pass-pipeline=producer-consumer-fusion --backend=gpu --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// On GPU a producer joins its consumer and stays an extra output for its other
// user (here: the function's result).
// CHECK-LABEL: func.func @extra_output
// CHECK: %[[F:[0-9]+]]:2 = "mhlo.fusion"(%arg0{{.*}}fusion_kind kInput
// CHECK: stablehlo.exponential
// CHECK: stablehlo.reduce
// CHECK: return %[[F]]#0, %[[F]]#1
// WHY: fused: stablehlo.exponential {{.*}} + stablehlo.reduce {{.*}}: producer kept as an extra output
// On CPU the same pair would be a tuple-root loop fusion, which aborts XLA.
// CPU: not fused: stablehlo.exponential {{.*}} + stablehlo.reduce {{.*}}: 2 outputs: cpu compiles multi-output fusions only as one variadic reduce
// CPU-LABEL: func.func @extra_output
// CPU-NOT: mhlo.fusion
func.func @extra_output(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<4x8xf32>
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %e, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// The producer also reaches the consumer through a dot: fusing the pair would
// make the fusion both feed and read the dot.
// CHECK-LABEL: func.func @cycle_through_dot
// CHECK-NOT: mhlo.fusion
// WHY: not fused: stablehlo.negate {{.*}} + stablehlo.add {{.*}}: would create a cycle: a path leaves the group and comes back
func.func @cycle_through_dot(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %n = stablehlo.negate %x : tensor<4x4xf32>
  %d = stablehlo.dot_general %n, %n, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = stablehlo.add %n, %d : tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}

// -----

// Each pair alone is acyclic, but with {exp, add} planned, {log, multiply} would
// feed it (log -> add) and read it (exp -> multiply): refused in that round; later
// rounds grow the first fusion over all four ops instead.
// CHECK-LABEL: func.func @cycle_between_planned_groups
// CHECK: "mhlo.fusion"
// CHECK-NOT: "mhlo.fusion"
// CHECK: return
// WHY: not fused: stablehlo.log {{.*}} + stablehlo.multiply {{.*}}: would create a cycle
func.func @cycle_between_planned_groups(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %p1 = stablehlo.exponential %x : tensor<16xf32>
  %p2 = stablehlo.log %x : tensor<16xf32>
  %c1 = stablehlo.add %p1, %p2 : tensor<16xf32>
  %c2 = stablehlo.multiply %p1, %p2 : tensor<16xf32>
  return %c1, %c2 : tensor<16xf32>, tensor<16xf32>
}
