// RUN: hlo-opt %s --split-input-file --pass-pipeline=fusion-merger | FileCheck %s
// RUN: hlo-opt %s --split-input-file --pass-pipeline=fusion-merger --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// A loop fusion merges into all of its users when that moves fewer bytes:
// its output is then never written.
// CHECK-LABEL: func.func @merge_into_all_users
// CHECK-NOT: stablehlo.exponential %arg0
// CHECK: "mhlo.fusion"(%arg0, %arg1)
// CHECK: stablehlo.exponential
// CHECK: stablehlo.add
// CHECK: "mhlo.fusion"(%arg0, %arg1)
// CHECK: stablehlo.exponential
// CHECK: stablehlo.multiply
// WHY: fused: mhlo.fusion {{.*}} + mhlo.fusion {{.*}} + mhlo.fusion {{.*}}: modelled bytes do not grow
func.func @merge_into_all_users(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %f = "mhlo.fusion"(%x) ({
  ^bb0(%a: tensor<64xf32>):
    %e = stablehlo.exponential %a : tensor<64xf32>
    stablehlo.return %e : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>) -> tensor<64xf32>
  %u1 = "mhlo.fusion"(%f, %y) ({
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %s = stablehlo.add %a, %b : tensor<64xf32>
    stablehlo.return %s : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %u2 = "mhlo.fusion"(%f, %y) ({
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %m = stablehlo.multiply %a, %b : tensor<64xf32>
    stablehlo.return %m : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %u1, %u2 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Merging would make every user read two large inputs instead of one small
// output: the bytes grow, so it merges into none.
// CHECK-LABEL: func.func @bytes_would_grow
// CHECK: %[[F:.*]] = "mhlo.fusion"(%arg0, %arg1)
// CHECK: "mhlo.fusion"(%[[F]], %arg2)
// CHECK: "mhlo.fusion"(%[[F]], %arg2)
// CHECK: "mhlo.fusion"(%[[F]], %arg2)
// WHY: not fused: mhlo.fusion {{.*}}: modelled bytes would grow from 4608 to 7680
func.func @bytes_would_grow(%x: tensor<64x4xf32>, %y: tensor<64x4xf32>, %z: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %f = "mhlo.fusion"(%x, %y) ({
  ^bb0(%a: tensor<64x4xf32>, %b: tensor<64x4xf32>):
    %m = stablehlo.multiply %a, %b : tensor<64x4xf32>
    %z0 = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%m init: %z0) applies stablehlo.add across dimensions = [1] : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
    stablehlo.return %r : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64xf32>
  %u1 = "mhlo.fusion"(%f, %z) ({
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %s = stablehlo.add %a, %b : tensor<64xf32>
    stablehlo.return %s : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %u2 = "mhlo.fusion"(%f, %z) ({
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %s = stablehlo.subtract %a, %b : tensor<64xf32>
    stablehlo.return %s : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %u3 = "mhlo.fusion"(%f, %z) ({
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %s = stablehlo.multiply %a, %b : tensor<64xf32>
    stablehlo.return %s : tensor<64xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %u1, %u2, %u3 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// All or none: one user is a dot, which takes no fusion, so the fusion stays.
// CHECK-LABEL: func.func @all_or_none
// CHECK: %[[F:.*]] = "mhlo.fusion"(%arg0)
// CHECK: stablehlo.dot_general %[[F]]
// CHECK: stablehlo.negate %[[F]]
// WHY: not fused: {{.*}}: cannot merge into stablehlo.dot_general: stablehlo.dot_general stays its own kernel
func.func @all_or_none(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %f = "mhlo.fusion"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %e = stablehlo.exponential %a : tensor<4x4xf32>
    stablehlo.return %e : tensor<4x4xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = stablehlo.dot_general %f, %f, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = stablehlo.negate %f : tensor<4x4xf32>
  return %d, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A fusion whose value the function returns is written anyway: no merge.
// CHECK-LABEL: func.func @returned
// CHECK: %[[F:.*]] = "mhlo.fusion"(%arg0)
// CHECK: stablehlo.negate %[[F]]
// WHY: not fused: {{.*}}: its result is a function result: it must be written anyway
func.func @returned(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %f = "mhlo.fusion"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %e = stablehlo.exponential %a : tensor<4xf32>
    stablehlo.return %e : tensor<4xf32>
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<4xf32>) -> tensor<4xf32>
  %n = stablehlo.negate %f : tensor<4xf32>
  return %f, %n : tensor<4xf32>, tensor<4xf32>
}
