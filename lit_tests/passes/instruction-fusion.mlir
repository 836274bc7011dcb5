// RUN: hlo-opt %s --split-input-file --pass-pipeline=instruction-fusion | FileCheck %s
// RUN: hlo-opt %s --split-input-file --pass-pipeline='instruction-fusion{max-operands=2}' --fusion-report 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: hlo-opt %s --split-input-file --pass-pipeline=instruction-fusion --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// RUN: hlo-opt %s --split-input-file --pass-pipeline=instruction-fusion --backend=gpu | FileCheck %s --check-prefix=GPU

// An expensive producer with two users is not duplicated into either.
// CHECK-LABEL: func.func @expensive_two_users
// CHECK: %[[E:.*]] = stablehlo.exponential %arg0
// CHECK: "mhlo.fusion"(%[[E]])
// CHECK: "mhlo.fusion"(%[[E]])
// WHY: not fused: stablehlo.exponential {{.*}} expensive stablehlo.exponential has users outside this fusion: fusing would duplicate it
func.func @expensive_two_users(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<16xf32>
  %e = stablehlo.exponential %x : tensor<16xf32>
  %a = stablehlo.add %e, %b : tensor<16xf32>
  %m = stablehlo.multiply %e, %b : tensor<16xf32>
  return %a, %m : tensor<16xf32>, tensor<16xf32>
}

// -----

// A multiply by a broadcast reciprocal (what canonicalize makes of a divide by a
// broadcast, see canonicalize.mlir) is cheap, so copied into both users.
// CHECK-LABEL: func.func @divide_by_constant_is_cheap
// CHECK: %[[R:.*]] = stablehlo.divide %{{.*}}, %cst
// CHECK: "mhlo.fusion"(%arg0, %[[R]])
// CHECK: stablehlo.multiply
// CHECK: stablehlo.add
// CHECK: "mhlo.fusion"(%arg0, %[[R]])
// CHECK: stablehlo.multiply
// CHECK: stablehlo.multiply
// CHECK-NOT: stablehlo.divide %arg
// WHY: fused: stablehlo.multiply {{.*}}: cheap producer copied
func.func @divide_by_constant_is_cheap(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c = stablehlo.constant dense<8.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %r = stablehlo.divide %one, %c : tensor<f32>
  %b = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<16xf32>
  %d = stablehlo.multiply %x, %b : tensor<16xf32>
  %a = stablehlo.add %d, %x : tensor<16xf32>
  %m = stablehlo.multiply %d, %x : tensor<16xf32>
  return %a, %m : tensor<16xf32>, tensor<16xf32>
}

// -----

// An integer divide (or remainder) by a broadcast constant is cheap, as in XLA's
// IsExpensive (LLVM makes it multiplies and shifts): copied into both users. By a
// parameter it is a division per element, computed once.
// CHECK-LABEL: func.func @integer_divide_by_constant_is_cheap
// CHECK: "mhlo.fusion"(%arg0)
// CHECK: stablehlo.divide
// CHECK: stablehlo.add
// CHECK: "mhlo.fusion"(%arg0)
// CHECK: stablehlo.divide
// CHECK: stablehlo.multiply
// CHECK: %[[V:.*]] = stablehlo.remainder %arg0, %arg1 : tensor<16xi32>
// CHECK-NEXT: stablehlo.add %[[V]], %arg0
// CHECK-NEXT: stablehlo.multiply %[[V]], %arg0
func.func @integer_divide_by_constant_is_cheap(%x: tensor<16xi32>, %y: tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>, tensor<16xi32>, tensor<16xi32>) {
  %c = stablehlo.constant dense<4> : tensor<i32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16xi32>
  %q = stablehlo.divide %x, %b : tensor<16xi32>
  %a = stablehlo.add %q, %x : tensor<16xi32>
  %m = stablehlo.multiply %q, %x : tensor<16xi32>
  %v = stablehlo.remainder %x, %y : tensor<16xi32>
  %va = stablehlo.add %v, %x : tensor<16xi32>
  %vm = stablehlo.multiply %v, %x : tensor<16xi32>
  return %a, %m, %va, %vm : tensor<16xi32>, tensor<16xi32>, tensor<16xi32>, tensor<16xi32>
}

// -----

// A cheap broadcast is copied into each consumer's fusion.
// CHECK-LABEL: func.func @cheap_broadcast_duplicated
// CHECK-NOT: stablehlo.broadcast_in_dim %arg1
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.add
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.broadcast_in_dim
// CHECK: stablehlo.multiply
// WHY: fused: stablehlo.broadcast_in_dim {{.*}}: cheap producer copied
func.func @cheap_broadcast_duplicated(%x: tensor<4x8xf32>, %y: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %b = stablehlo.broadcast_in_dim %y, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %a = stablehlo.add %x, %b : tensor<4x8xf32>
  %m = stablehlo.multiply %x, %b : tensor<4x8xf32>
  return %a, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An expensive producer with one elementwise user joins it.
// CHECK-LABEL: func.func @expensive_sole_user
// CHECK: "mhlo.fusion"(%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: stablehlo.exponential
// CHECK-NEXT: stablehlo.negate
// CHECK-NEXT: stablehlo.return
func.func @expensive_sole_user(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = stablehlo.exponential %x : tensor<16xf32>
  %n = stablehlo.negate %e : tensor<16xf32>
  return %n : tensor<16xf32>
}

// -----

// A reduce is not fused into a broadcast: it would be recomputed per element.
// CHECK-LABEL: func.func @reduce_into_broadcast
// CHECK: %[[R:.*]] = "mhlo.fusion"(%arg0)
// CHECK: stablehlo.reduce
// CHECK: "mhlo.fusion"(%arg0, %[[R]])
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.broadcast_in_dim
// WHY: not fused: stablehlo.reduce {{.*}} expensive stablehlo.reduce would be recomputed: stablehlo.broadcast_in_dim reads each element more than once
func.func @reduce_into_broadcast(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %s = stablehlo.subtract %x, %b : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// dot_general, CHLO ops and side-effecting custom calls are never fused.
// CHECK-LABEL: func.func @never_fused
// CHECK: stablehlo.dot_general
// CHECK: chlo.erf
// CHECK: stablehlo.custom_call @effect
// CHECK-NOT: mhlo.fusion
// WHY: not fused: chlo.erf {{.*}}: chlo.erf is not an op the fusion passes understand
// WHY: not fused: stablehlo.dot_general {{.*}}: stablehlo.dot_general stays its own kernel
func.func @never_fused(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = stablehlo.negate %d : tensor<4x4xf32>
  %e = chlo.erf %n : tensor<4x4xf32> -> tensor<4x4xf32>
  %a = stablehlo.abs %e : tensor<4x4xf32>
  stablehlo.custom_call @effect(%a) {has_side_effect = true} : (tensor<4x4xf32>) -> ()
  return %a : tensor<4x4xf32>
}

// -----

// Ops on either side of a side-effecting op stay apart.
// CHECK-LABEL: func.func @across_side_effect
// CHECK: stablehlo.negate
// CHECK: stablehlo.custom_call @effect
// CHECK: stablehlo.abs
// CHECK-NOT: mhlo.fusion
// WHY: not fused: stablehlo.negate {{.*}}: a side-effecting op lies between these ops
func.func @across_side_effect(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = stablehlo.negate %x : tensor<4xf32>
  stablehlo.custom_call @effect() {has_side_effect = true} : () -> ()
  %a = stablehlo.abs %n : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// The operand+output bound: with at most 2, add(x, y) takes no producers.
// CHECK-LABEL: func.func @operand_bound
// CHECK: "mhlo.fusion"(%arg0, %arg1)
// BOUND: not fused: stablehlo.negate {{.*}} 3 operands+outputs exceed the bound of 2
// BOUND-LABEL: func.func @operand_bound
// BOUND-NOT: mhlo.fusion
// BOUND: return
func.func @operand_bound(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %n = stablehlo.negate %x : tensor<4xf32>
  %a = stablehlo.add %n, %y : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Arguments every call passes a constant are constants: XLA inlines the call and
// folds what is computed from them alone (rounding an f16 result to f16), so that
// stays outside the fusion. @scale_any is also called with a variable: fused.
// CHECK-LABEL: func.func private @scale_constant
// CHECK: %[[D:.*]] = stablehlo.subtract %arg2, %arg1
// CHECK: "mhlo.fusion"(%arg0, %[[D]], %arg1)
// CHECK-LABEL: func.func private @scale_any
// CHECK: "mhlo.fusion"(%arg0, %arg2, %arg1)
// CHECK: stablehlo.subtract
// WHY: not fused: stablehlo.subtract {{.*}}: arithmetic on constants: left to XLA's constant folding
func.func @calls_with_constants(%x: tensor<4xf16>, %v: tensor<f16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %lo = stablehlo.constant dense<6.1e-05> : tensor<f16>
  %hi = stablehlo.constant dense<1.0> : tensor<f16>
  %a = func.call @scale_constant(%x, %lo, %hi) : (tensor<4xf16>, tensor<f16>, tensor<f16>) -> tensor<4xf16>
  %b = func.call @scale_any(%x, %lo, %v) : (tensor<4xf16>, tensor<f16>, tensor<f16>) -> tensor<4xf16>
  return %a, %b : tensor<4xf16>, tensor<4xf16>
}
func.func private @scale_constant(%x: tensor<4xf16>, %lo: tensor<f16>, %hi: tensor<f16>) -> tensor<4xf16> {
  %d = stablehlo.subtract %hi, %lo : tensor<f16>
  %bd = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f16>) -> tensor<4xf16>
  %m = stablehlo.multiply %x, %bd : tensor<4xf16>
  %bl = stablehlo.broadcast_in_dim %lo, dims = [] : (tensor<f16>) -> tensor<4xf16>
  %a = stablehlo.add %m, %bl : tensor<4xf16>
  return %a : tensor<4xf16>
}
func.func private @scale_any(%x: tensor<4xf16>, %lo: tensor<f16>, %hi: tensor<f16>) -> tensor<4xf16> {
  %d = stablehlo.subtract %hi, %lo : tensor<f16>
  %bd = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f16>) -> tensor<4xf16>
  %m = stablehlo.multiply %x, %bd : tensor<4xf16>
  %bl = stablehlo.broadcast_in_dim %lo, dims = [] : (tensor<f16>) -> tensor<4xf16>
  %a = stablehlo.add %m, %bl : tensor<4xf16>
  return %a : tensor<4xf16>
}

// -----

// A cheap producer whose result is written anyway (a dot reads it) is copied into a
// consumer only if its operands cost no more to read than that result: the select
// reads two full arrays, so the reduce reads its result instead.
// CHECK-LABEL: func.func @copy_would_read_more
// CHECK: %[[S:.*]] = "mhlo.fusion"(%arg0, %arg1)
// CHECK: stablehlo.select
// CHECK: stablehlo.dot_general %[[S]]
// CHECK: "mhlo.fusion"(%[[S]])
// CHECK-NOT: stablehlo.select
// CHECK: stablehlo.reduce
// WHY: not fused: stablehlo.select {{.*}}: a copy would read 5120 bytes of operands instead of its 4096-byte result, which stays written for other users
func.func @copy_would_read_more(%h: tensor<32x32xf32>, %g: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
  %pos = stablehlo.compare GT, %h, %zb : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xi1>
  %s = stablehlo.select %pos, %g, %zb : tensor<32x32xi1>, tensor<32x32xf32>
  %d = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0] : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = stablehlo.reduce(%s init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<32x32xf32>, tensor<f32>) -> tensor<32xf32>
  return %d, %r : tensor<32x32xf32>, tensor<32xf32>
}

// -----

// XLA CPU's loop fusion computes each reduce per output element, so a quotient of
// two sums is one kernel (XLA CPU fuses softmax cross-entropy's so itself); on GPU
// a reduction kernel follows one reduce, the hero, and the sums stay apart.
// CHECK-LABEL: func.func @quotient_of_two_sums
// CHECK: "mhlo.fusion"
// CHECK-COUNT-2: stablehlo.reduce
// CHECK: stablehlo.divide
// CHECK-NEXT: stablehlo.return
// GPU-LABEL: func.func @quotient_of_two_sums
// GPU: "mhlo.fusion"
// GPU-COUNT-1: stablehlo.reduce
// GPU: stablehlo.return
// GPU: "mhlo.fusion"
func.func @quotient_of_two_sums(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %b : tensor<4x8xf32>
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %n = stablehlo.negate %a : tensor<4x8xf32>
  %t = stablehlo.reduce(%n init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %d = stablehlo.divide %t, %s : tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// Scaled logits feed a max and the exp of their shift: each reader copies the
// add, effectively unary (the bias comes broadcast), as XLA copies it, and with it
// the scaling multiply, which so dies too and gets no fusion of its own.
// CHECK-LABEL: func.func @copies_of_copies_leave_no_dead_fusion
// CHECK-COUNT-2: "mhlo.fusion"
// CHECK-NOT: "mhlo.fusion"
// CHECK: return %{{.*}} : tensor<16xf32>, tensor<16x30xf32>
// WHY: fused: stablehlo.add {{.*}}: cheap producer copied
func.func @copies_of_copies_leave_no_dead_fusion(%x: tensor<16x30xf32>, %w: tensor<30xf32>, %b: tensor<30xf32>) -> (tensor<16xf32>, tensor<16x30xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %wb = stablehlo.broadcast_in_dim %w, dims = [1] : (tensor<30xf32>) -> tensor<16x30xf32>
  %m = stablehlo.multiply %x, %wb : tensor<16x30xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<30xf32>) -> tensor<16x30xf32>
  %z = stablehlo.add %m, %bb : tensor<16x30xf32>
  %r = stablehlo.reduce(%z init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<16x30xf32>, tensor<f32>) -> tensor<16xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<16xf32>) -> tensor<16x30xf32>
  %s = stablehlo.subtract %z, %rb : tensor<16x30xf32>
  %e = stablehlo.exponential %s : tensor<16x30xf32>
  return %r, %e : tensor<16xf32>, tensor<16x30xf32>
}

// -----

// A fusion's parameters come in the order XLA's post-order walk of the unfused ops
// reaches them (operands first to last, depth first), not in the order the ops are
// written: XLA's simplifier rewrites in that order, and f's constant (1 / 3) / sqrt(d)
// folded one ulp off jax.jit's while the loop's v was read before log(d).
// CHECK-LABEL: func.func @parameters_in_walk_order
// CHECK: "mhlo.fusion"(%arg0, %arg1)
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<2xf64>, %[[V:.*]]: tensor<2xf64>):
// CHECK-NEXT: stablehlo.log %[[V]]
func.func @parameters_in_walk_order(%logd: tensor<2xf64>, %v: tensor<2xf64>) -> tensor<2xf64> {
  %logv = stablehlo.log %v : tensor<2xf64>
  %s = stablehlo.add %logd, %logv : tensor<2xf64>
  return %s : tensor<2xf64>
}

// -----

// A binary producer reading more than it writes is copied into each of its users
// when every one of them fuses it on all paths (XLA's ComputeGloballyUnfusible:
// CanFuseOnAllPaths): the original dies, so the copies read its operands instead
// of it, as XLA does with the Threefry rounds' shared adds. (With a reader that no
// fusion holds, it stays written: @copy_would_read_more.)
// CHECK-LABEL: func.func @copied_where_every_user_fuses_it
// CHECK-NOT: stablehlo.add
// CHECK: "mhlo.fusion"(%arg0, %arg1, %arg2)
// CHECK: stablehlo.add
// CHECK: stablehlo.multiply
// CHECK: "mhlo.fusion"(%arg0, %arg1, %arg3)
// CHECK: stablehlo.add
// CHECK: stablehlo.subtract
// WHY: fused: stablehlo.add {{.*}} + stablehlo.subtract {{.*}}: cheap producer copied
// WHY: fused: stablehlo.add {{.*}} + stablehlo.multiply {{.*}}: cheap producer copied
func.func @copied_where_every_user_fuses_it(%x: tensor<16xf32>, %y: tensor<16xf32>, %z: tensor<16xf32>, %w: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = stablehlo.add %x, %y : tensor<16xf32>
  %m = stablehlo.multiply %a, %z : tensor<16xf32>
  %s = stablehlo.subtract %a, %w : tensor<16xf32>
  return %m, %s : tensor<16xf32>, tensor<16xf32>
}

// -----

// XLA CPU computes bf16 arithmetic in f32: a plain bf16 exp becomes three kernels
// (convert, exp, convert) with XLA's fusion off, so one alone is a fusion of its
// own, converted inside it; so is a bf16 multiply with a constant (no lone-op rule
// keeps it plain). A bf16 transpose (data movement, kept in bf16) and an f32 exp
// stay plain. On GPU none is fused.
// CHECK-LABEL: func.func @bf16_arithmetic_alone
// CHECK: stablehlo.transpose
// CHECK: "mhlo.fusion"(%{{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: stablehlo.exponential
// CHECK: "mhlo.fusion"(%arg1)
// CHECK: stablehlo.constant
// CHECK: stablehlo.multiply
// CHECK: stablehlo.exponential %arg2 : tensor<2x4xf32>
// CHECK-NEXT: return
// WHY: fused: stablehlo.exponential {{.*}}: a bf16 stablehlo.exponential alone: XLA CPU computes it in f32, unfused as three kernels (convert, op, convert), fused as one
// GPU-LABEL: func.func @bf16_arithmetic_alone
// GPU-NOT: mhlo.fusion
// GPU: return
func.func @bf16_arithmetic_alone(%x: tensor<4x2xbf16>, %s: tensor<bf16>, %y: tensor<2x4xf32>) -> (tensor<2x4xbf16>, tensor<bf16>, tensor<2x4xf32>) {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x2xbf16>) -> tensor<2x4xbf16>
  %e = stablehlo.exponential %t : tensor<2x4xbf16>
  %c = stablehlo.constant dense<2.0> : tensor<bf16>
  %m = stablehlo.multiply %s, %c : tensor<bf16>
  %f = stablehlo.exponential %y : tensor<2x4xf32>
  return %e, %m, %f : tensor<2x4xbf16>, tensor<bf16>, tensor<2x4xf32>
}
