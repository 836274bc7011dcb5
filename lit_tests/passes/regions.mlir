// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// Each block of a while, case or if region is fused as a dataflow graph of its
// own: the body's exponential -> tanh -> multiply becomes one fusion inside it,
// reading the loop value as its parameter; nothing crosses the region boundary.
// The counter's add of a constant stays plain: XLA's while-loop simplifier, which
// runs before XLA makes it a kernel alike, must see it as the induction variable.
// CHECK-LABEL: func.func @while_body_is_fused
// CHECK: stablehlo.while(%[[I:.*]] = %{{.*}}, %[[V:.*]] = %arg0)
// CHECK: cond {
// CHECK-NEXT: stablehlo.compare LT
// CHECK-NEXT: stablehlo.return
// CHECK: } do {
// CHECK-NEXT: %[[ONE:.*]] = stablehlo.constant dense<1>
// CHECK-NEXT: stablehlo.add %[[I]], %[[ONE]]
// CHECK-NEXT: "mhlo.fusion"(%[[V]])
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[A]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.tanh %[[E]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[T]], %[[A]]
// CHECK-NEXT: stablehlo.return %[[M]]
// CHECK: return
// WHY: @while_body_is_fused: kLoop fusion of 3 ops (stablehlo.exponential, stablehlo.tanh, stablehlo.multiply)
// WHY: not fused: stablehlo.constant {{.*}} + stablehlo.add {{.*}}: one stablehlo.add with constants: XLA makes the same kernel of it, after its simplifiers have seen the op
func.func @while_body_is_fused(%x: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<8xf32>
   cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %e = stablehlo.exponential %v : tensor<8xf32>
    %t = stablehlo.tanh %e : tensor<8xf32>
    %m = stablehlo.multiply %t, %v : tensor<8xf32>
    stablehlo.return %i2, %m : tensor<i32>, tensor<8xf32>
  }
  return %r#1 : tensor<8xf32>
}

// -----

// Each branch of a case is fused on its own; the outer value %x they capture is
// each fusion's parameter.
// CHECK-LABEL: func.func @case_branches_are_fused
// CHECK: "stablehlo.case"(%arg0) ({
// CHECK-NEXT: "mhlo.fusion"(%arg1)
// CHECK: stablehlo.exponential
// CHECK-NEXT: stablehlo.negate
// CHECK: }, {
// CHECK-NEXT: "mhlo.fusion"(%arg1)
// CHECK: stablehlo.sine
// CHECK-NEXT: stablehlo.abs
func.func @case_branches_are_fused(%k: tensor<i32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %r = "stablehlo.case"(%k) ({
    %e = stablehlo.exponential %x : tensor<8xf32>
    %n = stablehlo.negate %e : tensor<8xf32>
    stablehlo.return %n : tensor<8xf32>
  }, {
    %s = stablehlo.sine %x : tensor<8xf32>
    %a = stablehlo.abs %s : tensor<8xf32>
    stablehlo.return %a : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// XLA CPU compiles a while loop touching under 1 KiB an iteration whole, laying out
// a fusion in it at its parameters and root only; a fused reduce there aborted it
// ("has_layout()", a vmapped while_loop's any-active test). The compare is fused,
// the reduce stays out.
// CHECK-LABEL: func.func @no_reduce_fused_in_a_region
// CHECK: cond {
// CHECK-NEXT: %[[F:.*]] = "mhlo.fusion"
// CHECK-NOT: stablehlo.reduce
// CHECK: stablehlo.return %{{.*}} : tensor<3xi1>
// CHECK: stablehlo.reduce(%[[F]] init:
// WHY: a reduce in a loop XLA compiles whole needs layouts XLA gives no fused op there
func.func @no_reduce_fused_in_a_region(%a: tensor<3xf32>) -> tensor<3xf32> {
  %r = stablehlo.while(%c = %a) : tensor<3xf32>
   cond {
    %m = stablehlo.multiply %c, %c : tensor<3xf32>
    %d = stablehlo.subtract %m, %a : tensor<3xf32>
    %gt = stablehlo.compare GT, %d, %a, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %f = stablehlo.constant dense<false> : tensor<i1>
    %any = stablehlo.reduce(%gt init: %f) applies stablehlo.or across dimensions = [0] : (tensor<3xi1>, tensor<i1>) -> tensor<i1>
    stablehlo.return %any : tensor<i1>
  } do {
    %n = stablehlo.negate %c : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

// There, too, a broadcast reads its operand through a layout: a broadcast of the
// converted counter joins the multiply, the convert stays out and the broadcast
// reads it as a parameter.
// CHECK-LABEL: func.func @broadcast_reads_a_parameter_in_a_region
// CHECK: do {
// CHECK: %[[S:.*]] = stablehlo.convert
// CHECK-NEXT: "mhlo.fusion"(%{{.*}}, %[[S]]) {{.*}}{
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<3xf32>, %[[P:.*]]: tensor<f32>):
// CHECK-NEXT: stablehlo.broadcast_in_dim %[[P]]
// WHY: a fused stablehlo.broadcast_in_dim reading a value computed in the fusion, in a loop XLA compiles whole
func.func @broadcast_reads_a_parameter_in_a_region(%a: tensor<3xf32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %c = %a) : tensor<i32>, tensor<3xf32>
   cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %m = stablehlo.multiply %c, %b : tensor<3xf32>
    %t = stablehlo.tanh %m : tensor<3xf32>
    stablehlo.return %next, %t : tensor<i32>, tensor<3xf32>
  }
  return %r#1 : tensor<3xf32>
}

// -----

// A broadcast_in_dim widening a unit dim (4x1 -> 4x8) is a reshape and a broadcast
// to XLA, which in a region lack layouts inside a fusion: it stays out, and the
// fusion reads it as a parameter. Widening nothing (4 -> 4x8), it joins.
// CHECK-LABEL: func.func @broadcast_widening_a_unit_dim_in_a_region
// CHECK: do {
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: "mhlo.fusion"(%{{.*}}, %arg2, %[[B]])
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: stablehlo.broadcast_in_dim %{{.*}}, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: stablehlo.multiply
// CHECK-NEXT: stablehlo.add
// CHECK-NEXT: stablehlo.return
// WHY: a broadcast_in_dim widening a unit dim in a loop XLA compiles whole
func.func @broadcast_widening_a_unit_dim_in_a_region(%a: tensor<4x8xf32>, %col: tensor<4x1xf32>, %row: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %a) : tensor<i32>, tensor<4x8xf32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %wide = stablehlo.broadcast_in_dim %col, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x8xf32>
    %rows = stablehlo.broadcast_in_dim %row, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %m = stablehlo.multiply %v, %rows : tensor<4x8xf32>
    %s = stablehlo.add %m, %wide : tensor<4x8xf32>
    stablehlo.return %next, %s : tensor<i32>, tensor<4x8xf32>
  }
  return %r#1 : tensor<4x8xf32>
}

// -----

// A loop writing 1 KiB an iteration XLA CPU runs kernel by kernel, its fusion
// emitters laying out what they need: there a reduce and a broadcast of the
// converted counter fuse as outside any loop (small_loops.py).
// CHECK-LABEL: func.func @a_larger_loop_fuses_as_outside_one
// CHECK: do {
// CHECK: %[[E:.*]] = "mhlo.fusion"(%{{.*}}, %{{.*}})
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<i32>):
// CHECK-NEXT: stablehlo.convert
// CHECK-NEXT: stablehlo.broadcast_in_dim
// CHECK: "mhlo.fusion"(%[[E]])
// CHECK: stablehlo.reduce
// WHY: @a_larger_loop_fuses_as_outside_one: kLoop fusion of 4 ops (stablehlo.convert, stablehlo.broadcast_in_dim, stablehlo.multiply, stablehlo.exponential)
// WHY: @a_larger_loop_fuses_as_outside_one: kLoop fusion of {{.*}}stablehlo.reduce
func.func @a_larger_loop_fuses_as_outside_one(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<16x16xf32>
   cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %m = stablehlo.multiply %v, %b : tensor<16x16xf32>
    %e = stablehlo.exponential %m : tensor<16x16xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
    %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
    %d = stablehlo.divide %e, %sb : tensor<16x16xf32>
    stablehlo.return %next, %d : tensor<i32>, tensor<16x16xf32>
  }
  return %r#1 : tensor<16x16xf32>
}

// -----

// A bf16 exp alone is a fusion of its own on CPU (Backend.fuse_alone), but not in a
// loop XLA CPU may compile whole (small_loops.py): there a fused bf16 op, converted
// to f32 inside its fusion, lacks the layouts that emitter needs.
// CHECK-LABEL: func.func @small_loop_keeps_a_bf16_op_plain
// CHECK: } do {
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.exponential
// CHECK: return
// WHY-NOT: stablehlo.exponential {{.*}} alone
func.func @small_loop_keeps_a_bf16_op_plain(%x: tensor<8xbf16>, %n: tensor<i32>) -> tensor<8xbf16> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<8xbf16>
   cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %e = stablehlo.exponential %v : tensor<8xbf16>
    stablehlo.return %i2, %e : tensor<i32>, tensor<8xbf16>
  }
  return %r#1 : tensor<8xbf16>
}
