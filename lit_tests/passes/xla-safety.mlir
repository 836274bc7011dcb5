// RUN: hlo-opt %s --split-input-file --fuse | FileCheck %s
// RUN: hlo-opt %s --split-input-file --fuse --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY

// XLA's import folds x * 1 to x for integers, then x == x to true, inside a fusion,
// leaving the fused parameter %x unread, which XLA's verifier refuses: the fusion
// is undone. (or(x, true), the case this once was, canonicalize now folds itself,
// as XLA's simplifier does before its fusion: canonicalize.mlir.)
// CHECK-LABEL: func.func @multiply_by_one_is_folded_by_xla
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.multiply
// CHECK: stablehlo.compare EQ
// WHY: [xla-import] not fused: stablehlo.constant {{.*}} + stablehlo.compare @ {{.*}}: XLA's import folds the fused ops that read one of its operands
func.func @multiply_by_one_is_folded_by_xla(%x: tensor<8xi32>) -> tensor<8xi1> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<i32>) -> tensor<8xi32>
  %n = stablehlo.not %x : tensor<8xi32>
  %m = stablehlo.multiply %n, %b : tensor<8xi32>
  %r = stablehlo.compare EQ, %n, %m, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  return %r : tensor<8xi1>
}

// -----

// A zero-element result is a constant, as XLA makes it: the reduce read only
// through it is dead, so no sibling fusion keeps it as an output nothing reads.
// CHECK-LABEL: func.func @zero_element_values_are_constants
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}), (%{{.*}} init: %{{.*}}) across
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.constant dense<> : tensor<0xf32>
// CHECK-NOT: stablehlo.slice
func.func @zero_element_values_are_constants(%x: tensor<5xf32>) -> (tensor<f32>, tensor<0xf32>, tensor<1xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<5xf32>
  %s0 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %s1 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %p = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
  %b0 = stablehlo.broadcast_in_dim %s0, dims = [] : (tensor<f32>) -> tensor<1xf32>
  %empty = stablehlo.slice %b0 [1:1] : (tensor<1xf32>) -> tensor<0xf32>
  %bp = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<f32>) -> tensor<1xf32>
  return %s1, %empty, %bp : tensor<f32>, tensor<0xf32>, tensor<1xf32>
}

// -----

// XLA CPU computes a bf16 select in f32: its on_true becomes a convert made
// inside the fusion, which has no layout there, and XLA aborted ("has_layout()"
// in InferSelectShape; fuzzer, hlo-opt seeds 58 and 74). It stays unfused.
// CHECK-LABEL: func.func @bf16_select_stays_out_of_fusions
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.select
// WHY: [instruction-fusion] not fused: stablehlo.broadcast_in_dim {{.*}} + stablehlo.select {{.*}}: a fused bf16 select: XLA CPU converts its on_true to f32 inside the fusion, where the convert has no layout (aborts)
func.func @bf16_select_stays_out_of_fusions(%p: tensor<3xi1>, %a: tensor<3xbf16>, %s: tensor<bf16>) -> tensor<3xbf16> {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
  %r = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xbf16>
  return %r : tensor<3xbf16>
}

// -----

// A fused value read by a slice and an or ends a function of XLA CPU's loop
// emitter, whose result needs a layout XLA does not give ops inside our fusions:
// it aborted ("has_layout()" in CreateSubgraphMlirFunction; fuzzer, hlo-opt
// seed 84). The convert stays outside, and the fusion reads it as a parameter.
// CHECK-LABEL: func.func @a_value_read_by_a_slice_and_an_or
// CHECK: %[[C:.*]] = stablehlo.convert
// CHECK: "mhlo.fusion"(%[[C]])
// CHECK-NOT: stablehlo.convert
// CHECK: stablehlo.slice
// CHECK: stablehlo.or
// WHY: [instruction-fusion] not fused: stablehlo.convert {{.*}} + stablehlo.or {{.*}}: stablehlo.convert read by 2 fused ops (stablehlo.or, stablehlo.slice) ends a function of XLA CPU's loop emitter, which needs a layout it lacks inside our fusions (aborts)
func.func @a_value_read_by_a_slice_and_an_or(%x: tensor<4x5xf16>) -> tensor<4x5xui32> {
  %c = stablehlo.convert %x : (tensor<4x5xf16>) -> tensor<4x5xui32>
  %s = stablehlo.slice %c [3:4, 0:5] : (tensor<4x5xui32>) -> tensor<1x5xui32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<1x5xui32>) -> tensor<4x5xui32>
  %r = stablehlo.or %b, %c : tensor<4x5xui32>
  return %r : tensor<4x5xui32>
}

// -----

// The same through two reverses (fuzzer, hlo-opt seed 71): the first reverse is
// read by the second and by a shift, under two index maps.
// CHECK-LABEL: func.func @a_value_read_under_two_index_maps
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reverse
// CHECK-NOT: stablehlo.reverse
// CHECK: stablehlo.return
// CHECK: "mhlo.fusion"
// WHY: read by 2 fused ops (stablehlo.reverse, stablehlo.shift_right_logical) ends a function of XLA CPU's loop emitter
func.func @a_value_read_under_two_index_maps(%x: tensor<3x4xi1>) -> tensor<3x4xi32> {
  %c = stablehlo.convert %x : (tensor<3x4xi1>) -> tensor<3x4xi32>
  %m = stablehlo.multiply %c, %c : tensor<3x4xi32>
  %r1 = stablehlo.reverse %m, dims = [1] : tensor<3x4xi32>
  %r2 = stablehlo.reverse %r1, dims = [1] : tensor<3x4xi32>
  %r = stablehlo.shift_right_logical %r2, %r1 : tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}

// -----

// Two values computed outside count as one operand to XLA's CSE when they have one
// type: XLA may fold both into one constant (fuzzer, jit seed 677: an argmax over a
// unit axis and a one-element argsort, both 0). Then the two broadcasts are one,
// read through the reverse and directly, and XLA CPU aborts: one stays outside.
// CHECK-LABEL: func.func @operands_xla_may_fold_into_one
// CHECK: stablehlo.broadcast_in_dim
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.broadcast_in_dim
// CHECK-NOT: stablehlo.broadcast_in_dim
// CHECK: stablehlo.return
// WHY: not fused: stablehlo.broadcast_in_dim {{.*}}: stablehlo.broadcast_in_dim read by 2 fused ops (stablehlo.compare) ends a function of XLA CPU's loop emitter
func.func @operands_xla_may_fold_into_one(%x: tensor<1xi32>, %y: tensor<1xi32>, %z: tensor<4xi32>) -> tensor<4xi1> {
  %a = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%p: tensor<i32>, %q: tensor<i32>):
    %lt = stablehlo.compare LT, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<1xi32>) -> tensor<1xi32>
  %b = "stablehlo.sort"(%y) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%p: tensor<i32>, %q: tensor<i32>):
    %lt = stablehlo.compare LT, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<1xi32>) -> tensor<1xi32>
  %ba = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<1xi32>) -> tensor<4xi32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<1xi32>) -> tensor<4xi32>
  %c = stablehlo.compare LT, %z, %ba, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %r = stablehlo.reverse %c, dims = [0] : tensor<4xi1>
  %v = stablehlo.convert %r : (tensor<4xi1>) -> tensor<4xi32>
  %n = stablehlo.compare NE, %v, %bb, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %n : tensor<4xi1>
}

// -----

// XLA CPU computes bf16 in f32, converting a bf16 parameter inside the fusion:
// read by a slice and a remainder, that convert ends an emitter function and
// XLA aborted (fuzzer, jit seed 43). The slice stays outside.
// CHECK-LABEL: func.func @a_bf16_parameter_read_by_a_slice_and_a_remainder
// CHECK: %[[S:.*]] = stablehlo.slice
// CHECK: "mhlo.fusion"(%arg0, %[[S]])
// CHECK-NOT: stablehlo.slice
// CHECK: stablehlo.remainder
// WHY: not fused: stablehlo.slice {{.*}}: a bf16 fusion parameter (XLA CPU converts it to f32 inside the fusion) read by 2 fused ops (stablehlo.remainder, stablehlo.slice)
func.func @a_bf16_parameter_read_by_a_slice_and_a_remainder(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %s = stablehlo.slice %x [0:1] : (tensor<2xbf16>) -> tensor<1xbf16>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<1xbf16>) -> tensor<2xbf16>
  %r = stablehlo.remainder %x, %b : tensor<2xbf16>
  return %r : tensor<2xbf16>
}

// -----

// XLA drops a fused variadic reduce's unread result; two left make a tuple root
// XLA CPU cannot emit (aborted, "has_layout()" in GetWorkDimensions; fuzzer, jit
// seeds 8 and 99). So the reduce takes in no producer.
// CHECK-LABEL: func.func @a_reduce_with_an_unread_result_among_three
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.reduce
// WHY: not fused: stablehlo.abs {{.*}} + stablehlo.reduce {{.*}}: 1 of the 3 outputs unread: XLA drops them, leaving a tuple-root fusion CPU cannot compile
func.func @a_reduce_with_an_unread_result_among_three(%x: tensor<3xf32>, %y: tensor<3xi32>) -> (tensor<i32>, tensor<f32>) {
  %i = stablehlo.abs %y : tensor<3xi32>
  %n = stablehlo.negate %x : tensor<3xf32>
  %c0 = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %c1 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.reduce(%x init: %c0), (%i init: %c1), (%n init: %c0) across dimensions = [0] : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<f32>)
   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<i32>, %b1: tensor<i32>) (%a2: tensor<f32>, %b2: tensor<f32>) {
    %s = stablehlo.minimum %a0, %b0 : tensor<f32>
    %m = stablehlo.minimum %a1, %b1 : tensor<i32>
    %t = stablehlo.minimum %a2, %b2 : tensor<f32>
    stablehlo.return %s, %m, %t : tensor<f32>, tensor<i32>, tensor<f32>
  }
  return %r#1, %r#2 : tensor<i32>, tensor<f32>
}

// -----

// XLA's simplifier makes convert(p) * y a select outside fusions, so a false p
// gives 0 even for an infinite y (a bool divided by a bool 0 is 0 under jax.jit;
// fuzzer, hlo-opt seeds 170 and 171). The passes do the same before fusing.
// CHECK-LABEL: func.func @a_float_multiply_by_a_bool_is_a_select
// CHECK-NOT: stablehlo.multiply
// CHECK: %[[Z:.*]] = stablehlo.broadcast_in_dim
// CHECK: stablehlo.select %{{.*}}, %{{.*}}, %[[Z]]
// CHECK-NOT: stablehlo.multiply
func.func @a_float_multiply_by_a_bool_is_a_select(%p: tensor<4xi1>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf32>
  %r = stablehlo.multiply %y, %c : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Copies of one reverse, each read by a slice, are one reverse to XLA after its
// CSE, read by two slices: an emitter function ends at it and XLA CPU aborted
// ("has_layout()", tracehlo.lax.associative_scan(reverse=True)). The merger keeps
// the two slices in different fusions. (The exponential, expensive, is not copied
// into its two readers, as a slice alone would be; nor would the add under it be,
// if they read it directly: XLA copies a producer that reads more than it writes
// where every reader fuses it on all paths.)
// CHECK-LABEL: func.func @identical_reverses_read_by_slices
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reverse
// CHECK-NEXT: stablehlo.slice
// CHECK-NEXT: stablehlo.add
// CHECK-NEXT: stablehlo.exponential
// CHECK-NEXT: stablehlo.return
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.reverse
// CHECK-NEXT: stablehlo.slice
// CHECK-NOT: stablehlo.reverse
// CHECK: stablehlo.return
// WHY: [fusion-merger] not fused: {{.*}}: stablehlo.reverse read by 2 fused ops (stablehlo.slice) ends a function of XLA CPU's loop emitter
func.func @identical_reverses_read_by_slices(%x: tensor<3x2xf32>, %y: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %r = stablehlo.reverse %x, dims = [1] : tensor<3x2xf32>
  %s0 = stablehlo.slice %r [0:3, 0:1:2] : (tensor<3x2xf32>) -> tensor<3x1xf32>
  %s1 = stablehlo.slice %r [0:3, 1:2:2] : (tensor<3x2xf32>) -> tensor<3x1xf32>
  %u = stablehlo.add %s1, %y : tensor<3x1xf32>
  %t1 = stablehlo.exponential %u : tensor<3x1xf32>
  %m = stablehlo.multiply %s0, %t1 : tensor<3x1xf32>
  %n = stablehlo.maximum %s0, %t1 : tensor<3x1xf32>
  return %m, %n : tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// XLA's simplifier makes select(not(p), a, b) a select(p, b, a): with the not fused,
// on_false becomes an on_true computed inside the fusion, whose layout XLA CPU
// lacks (aborted, "has_layout() pred[4]"; fuzzer, jit seed 2034). Nothing fuses.
// CHECK-LABEL: func.func @a_select_on_a_fused_not
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.not
// CHECK-NEXT: stablehlo.select
// WHY: a fused select on a fused not: XLA swaps its operands, so on_false becomes on_true and must come from outside the fusion too (layouts)
func.func @a_select_on_a_fused_not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %n = stablehlo.not %x : tensor<4xi1>
  %s = stablehlo.select %n, %x, %n : tensor<4xi1>, tensor<4xi1>
  return %s : tensor<4xi1>
}

// -----

// XLA's CSE makes two copies of a convert one op, read here by a broadcast and a
// compare: that ends an emitter function, whose result needs a layout. Instruction
// fusion, joining the copies one at a time, each read once, must see them as one
// (fuzzer, hlo-opt seed 217: check_backend refused the fusion the passes built).
// CHECK-LABEL: func.func @copies_of_a_convert_are_one_to_xla
// CHECK: stablehlo.convert
// CHECK: "mhlo.fusion"
// CHECK-COUNT-1: stablehlo.convert
// CHECK: stablehlo.return
// WHY: [instruction-fusion] not fused: stablehlo.convert @ {{.*}} + stablehlo.and @ {{.*}}: stablehlo.convert read by 2 fused ops (stablehlo.broadcast_in_dim, stablehlo.compare) ends a function of XLA CPU's loop emitter
func.func @copies_of_a_convert_are_one_to_xla(%x: tensor<ui8>, %y: tensor<2xf16>) -> tensor<2xi1> {
  %c = stablehlo.convert %x : (tensor<ui8>) -> tensor<f16>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f16>) -> tensor<2xf16>
  %c2 = stablehlo.convert %x : (tensor<ui8>) -> tensor<f16>
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %e = stablehlo.compare NE, %c2, %z, FLOAT : (tensor<f16>, tensor<f16>) -> tensor<i1>
  %eb = stablehlo.broadcast_in_dim %e, dims = [] : (tensor<i1>) -> tensor<2xi1>
  %n = stablehlo.compare NE, %b, %y, FLOAT : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xi1>
  %r = stablehlo.and %n, %eb : tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

// XLA inlines calls, folds x != x to a splat (so does canonicalize), and would move
// the reverse in @flip past a fusion of the add's two operands as if it were one
// add, rebuilding it with the opcode `fusion` (aborts; fuzzer, hlo-opt seeds 917,
// 1160, with a divide, which canonicalize now guards). Inlined first, as XLA
// inlines, the reverse joins the add's fusion; with the calls kept, that fusion is
// undone (xla-import-reverse.mlir).
// CHECK-LABEL: func.func public @main
// CHECK: stablehlo.convert
// CHECK: "mhlo.fusion"
// CHECK: stablehlo.add
// CHECK-NEXT: stablehlo.reverse
// CHECK-NOT: func.func private
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

// -----

// A select reading a predicate from outside with on_true computed inside aborts
// XLA CPU ("has_layout()" in InferSelectShape): the broadcast stays outside.
// CHECK-LABEL: func.func @a_select_on_a_parameter_reads_on_true_from_outside
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim
// CHECK-NOT: mhlo.fusion
// CHECK: stablehlo.select %{{.*}}, %[[B]]
// WHY: [instruction-fusion] not fused: stablehlo.broadcast_in_dim {{.*}} + stablehlo.select {{.*}}: a fused select needs its on_true operand from outside the fusion (layouts)
func.func @a_select_on_a_parameter_reads_on_true_from_outside(%p: tensor<4xi1>, %s: tensor<f32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %r = stablehlo.select %p, %b, %y : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// ReLU's backward pass as tracehlo.grad writes it: with each predicate a compare
// of numbers made in the fusion, which XLA's simplifier never makes a parameter,
// a computed on_true is safe, and the whole pass is one kernel.
// CHECK-LABEL: func.func @relu_backward_is_one_fusion
// CHECK: "mhlo.fusion"
// CHECK-COUNT-2: stablehlo.select
// CHECK: stablehlo.return
// CHECK-NOT: stablehlo.select
func.func @relu_backward_is_one_fusion(%x: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %h = stablehlo.maximum %x, %zb : tensor<4xf32>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %hb = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %g2 = stablehlo.multiply %g, %hb : tensor<4xf32>
  %tie = stablehlo.compare EQ, %zb, %h, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %s = stablehlo.select %tie, %g2, %g : tensor<4xi1>, tensor<4xf32>
  %on = stablehlo.compare EQ, %x, %h, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = stablehlo.select %on, %s, %zb : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An and or an or of a convert to a narrower signed integer type crashes XLA CPU's
// compiler (SIGSEGV) when both are in one fusion: they stay apart. An xor of it,
// and an and of an unsigned narrowing convert, fuse.
// CHECK-LABEL: func.func @bitwise_of_a_narrowing_signed_convert
// CHECK: %[[C:.*]] = stablehlo.convert %arg0 : (tensor<8xi32>) -> tensor<8xi8>
// CHECK: "mhlo.fusion"(%[[C]], %arg1)
// CHECK: stablehlo.and
// CHECK: "mhlo.fusion"(%arg0, %arg1)
// CHECK: stablehlo.convert
// CHECK-NEXT: stablehlo.xor
// CHECK: "mhlo.fusion"(%arg2, %arg3)
// CHECK: stablehlo.convert
// CHECK-NEXT: stablehlo.and
// WHY: [instruction-fusion] not fused: stablehlo.convert {{.*}} + stablehlo.and {{.*}}: a fused stablehlo.and of a narrowing signed integer convert crashes XLA CPU's compiler (SIGSEGV)
func.func @bitwise_of_a_narrowing_signed_convert(%x: tensor<8xi32>, %y: tensor<8xi8>, %u: tensor<8xui32>, %v: tensor<8xui8>) -> (tensor<8xi8>, tensor<8xi8>, tensor<8xui8>) {
  %c = stablehlo.convert %x : (tensor<8xi32>) -> tensor<8xi8>
  %n = stablehlo.negate %y : tensor<8xi8>
  %a = stablehlo.and %c, %n : tensor<8xi8>
  %d = stablehlo.convert %x : (tensor<8xi32>) -> tensor<8xi8>
  %o = stablehlo.xor %d, %y : tensor<8xi8>
  %e = stablehlo.convert %u : (tensor<8xui32>) -> tensor<8xui8>
  %b = stablehlo.and %e, %v : tensor<8xui8>
  return %a, %o, %b : tensor<8xi8>, tensor<8xi8>, tensor<8xui8>
}

// -----

// XLA's import folds x - x and x == x of integers to constants, leaving the fused
// parameter they read unread, which its verifier refuses: those stay out. For
// floats a NaN or an infinity keeps them (x - x is NaN), so they fuse.
// CHECK-LABEL: func.func @identical_operands_fold_for_integers_only
// CHECK:      "mhlo.fusion"
// CHECK:        stablehlo.exponential
// CHECK-NEXT:   stablehlo.subtract %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK-NEXT:   stablehlo.multiply
// CHECK:      stablehlo.subtract %{{.*}}, %{{.*}} : tensor<8xi32>
// CHECK-NOT:  "mhlo.fusion"
// WHY: [instruction-fusion] not fused: stablehlo.subtract {{.*}}: XLA folds stablehlo.subtract of identical operands
func.func @identical_operands_fold_for_integers_only(%x: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
  %e = stablehlo.exponential %x : tensor<8xf32>
  %d = stablehlo.subtract %e, %e : tensor<8xf32>
  %s = stablehlo.multiply %d, %x : tensor<8xf32>
  %n = stablehlo.negate %i : tensor<8xi32>
  %z = stablehlo.subtract %n, %n : tensor<8xi32>
  %m = stablehlo.multiply %z, %i : tensor<8xi32>
  return %s, %m : tensor<8xf32>, tensor<8xi32>
}

// -----

// XLA's simplifier makes some dots of a converted bool a select of the bool, so
// a false times a NaN is 0 under jax.jit; which dots depends on their shapes
// (fuzz jit 10903: a [1] NaN vector times a false [1] vector). The convert and
// the dot stay as jax.jit hands them to XLA, which then decides alike: no
// multiply of ours, and the convert in no fusion.
// CHECK-LABEL: func.func @bool_converted_for_a_dot
// CHECK:      %[[P:.*]] = "mhlo.fusion"
// CHECK:        stablehlo.compare
// CHECK-NEXT:   stablehlo.return
// CHECK:      %[[C:.*]] = stablehlo.convert %[[P]] : (tensor<3x1xi1>) -> tensor<3x1xf32>
// CHECK-NEXT: stablehlo.dot_general %[[C]], %arg2, contracting_dims = [1] x [0]
// CHECK-NOT:  stablehlo.multiply
// WHY: [fusion-merger] not fused: {{.*}} + stablehlo.convert {{.*}}: a bool converted for a dot_general: XLA's simplifier makes the dot a select of the bool where it sees the convert, as under JAX's jit
func.func @bool_converted_for_a_dot(%x: tensor<3x1xf32>, %y: tensor<3x1xf32>, %v: tensor<1xf32>) -> tensor<3xf32> {
  %s = stablehlo.add %x, %y : tensor<3x1xf32>
  %p = stablehlo.compare LT, %s, %y, FLOAT : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xi1>
  %c = stablehlo.convert %p : (tensor<3x1xi1>) -> tensor<3x1xf32>
  %d = stablehlo.dot_general %c, %v, contracting_dims = [1] x [0] : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3xf32>
  return %d : tensor<3xf32>
}

// -----

// XLA's import puts a broadcast under a select of a scalar predicate, which its CSE
// makes one op with a broadcast of the same bool: here read by the select's
// function and by a reduce operand's, so it ends a function of XLA CPU's loop
// emitter, which aborted for its layout (fuzzer, hlo-opt seed 10325). The select
// stays out of the fusion.
// CHECK-LABEL: func.func @scalar_predicate_and_its_broadcast
// CHECK:      %[[S:.*]] = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<4xf32>
// CHECK:      "mhlo.fusion"(%[[S]],
// CHECK:        stablehlo.broadcast_in_dim
// CHECK-NOT:    stablehlo.select %{{.*}} : tensor<i1>, tensor<4xf32>
// CHECK:        stablehlo.reduce
// WHY: [instruction-fusion] not fused: stablehlo.select {{.*}}: stablehlo.broadcast_in_dim read by 2 fused ops (stablehlo.compare, stablehlo.select) ends a function of XLA CPU's loop emitter
func.func @scalar_predicate_and_its_broadcast(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi8>) -> tensor<4xi1> {
  %s = stablehlo.select %p, %x, %y : tensor<i1>, tensor<4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<4xf32>
  %sz = stablehlo.compare NE, %s, %z, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %b = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<i1>) -> tensor<4xi1>
  %zi = stablehlo.constant dense<0> : tensor<4xi8>
  %n = stablehlo.compare LT, %i, %zi, SIGNED : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
  %c = stablehlo.compare NE, %n, %b, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %m = stablehlo.select %c, %i, %zi : tensor<4xi1>, tensor<4xi8>
  %init = stablehlo.constant dense<127> : tensor<i8>
  %r = stablehlo.reduce(%m init: %init) applies stablehlo.minimum across dimensions = [0] : (tensor<4xi8>, tensor<i8>) -> tensor<i8>
  %zr = stablehlo.constant dense<0> : tensor<i8>
  %rc = stablehlo.compare NE, %r, %zr, SIGNED : (tensor<i8>, tensor<i8>) -> tensor<i1>
  %rb = stablehlo.broadcast_in_dim %rc, dims = [] : (tensor<i1>) -> tensor<4xi1>
  %o = stablehlo.xor %sz, %rb : tensor<4xi1>
  return %o : tensor<4xi1>
}

// -----

// Two tails of random.t's Threefry, alike but for the values they read from
// outside: uniform bits made floats twice. The passes key a value computed
// outside a fusion by its type (XLA's simplifier may fold two into one), so the
// two chains whole look like one to XLA's CSE, and a group holding both passes the
// emitter check; only a merge of their inputs, which XLA need not make, makes it
// so. Instruction fusion checks a grown group whole once, trusting only the merges
// XLA surely makes; on such a verdict it grows the group again step by step, where
// the first chain's xor and constants stay out, as before that check existed.
// CHECK-LABEL: func.func @two_chains_alike_but_for_their_inputs
// CHECK:      %[[X:.*]] = stablehlo.xor %0, %1
// CHECK:      "mhlo.fusion"(%[[X]],
// WHY: [instruction-fusion] not fused: stablehlo.constant {{.*}}: stablehlo.broadcast_in_dim read by 2 fused ops (stablehlo.or) ends a function of XLA CPU's loop emitter
func.func @two_chains_alike_but_for_their_inputs(%a: tensor<100xui32>, %b: tensor<100xui32>, %c: tensor<100xui32>, %d: tensor<100xui32>, %x: tensor<100xf32>) -> tensor<100xf32> {
  %0 = stablehlo.optimization_barrier %a : tensor<100xui32>
  %1 = stablehlo.optimization_barrier %b : tensor<100xui32>
  %2 = stablehlo.xor %0, %1 : tensor<100xui32>
  %nine = stablehlo.constant dense<9> : tensor<ui32>
  %3 = stablehlo.broadcast_in_dim %nine, dims = [] : (tensor<ui32>) -> tensor<100xui32>
  %4 = stablehlo.shift_right_logical %2, %3 : tensor<100xui32>
  %one = stablehlo.constant dense<1065353216> : tensor<ui32>
  %5 = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<ui32>) -> tensor<100xui32>
  %6 = stablehlo.or %4, %5 : tensor<100xui32>
  %7 = stablehlo.bitcast_convert %6 : (tensor<100xui32>) -> tensor<100xf32>
  %8 = stablehlo.add %7, %x : tensor<100xf32>
  %10 = stablehlo.optimization_barrier %c : tensor<100xui32>
  %11 = stablehlo.optimization_barrier %d : tensor<100xui32>
  %12 = stablehlo.xor %10, %11 : tensor<100xui32>
  %nine_again = stablehlo.constant dense<9> : tensor<ui32>
  %13 = stablehlo.broadcast_in_dim %nine_again, dims = [] : (tensor<ui32>) -> tensor<100xui32>
  %14 = stablehlo.shift_right_logical %12, %13 : tensor<100xui32>
  %one_again = stablehlo.constant dense<1065353216> : tensor<ui32>
  %15 = stablehlo.broadcast_in_dim %one_again, dims = [] : (tensor<ui32>) -> tensor<100xui32>
  %16 = stablehlo.or %14, %15 : tensor<100xui32>
  %17 = stablehlo.bitcast_convert %16 : (tensor<100xui32>) -> tensor<100xf32>
  %18 = stablehlo.sqrt %17 : tensor<100xf32>
  %r = stablehlo.multiply %8, %18 : tensor<100xf32>
  return %r : tensor<100xf32>
}

// -----

// Two compares of one select, with the constants 1 and 0. Grown step by step,
// instruction fusion keys the constants, still outside, by their type, so the
// compares look like one to XLA's CSE and the select like a value read once; then
// the 0 joins (the compare making the select's predicate reads it too), the
// compares differ, and the select is read by two: check_backend refuses that
// fusion. Checked whole as check_backend checks it, the group grows once more,
// trusting only the merges XLA's CSE surely makes: the compare with 1 stays out
// (fuzz jit --transform grad 221: the transpose of a select of an integer
// predicate compares it with each case's index, as JAX's select_n).
// CHECK-LABEL: func.func @compares_of_one_select_with_constants_alike_by_type
// CHECK:      %[[DIV:.*]] = "mhlo.fusion"
// CHECK:        stablehlo.divide
// CHECK:      %[[IS1:.*]] = "mhlo.fusion"
// CHECK:        stablehlo.compare EQ, %{{.*}}, %c_0, UNSIGNED
// CHECK-NEXT:   stablehlo.return
// CHECK:      "mhlo.fusion"(%[[IS1]], %arg1, %arg0, %[[DIV]])
// WHY: [instruction-fusion] not fused: stablehlo.compare {{.*}}: ops XLA's CSE makes one only if its simplifier folds their different operands into one
func.func @compares_of_one_select_with_constants_alike_by_type(%p: tensor<ui32>, %g: tensor<2xf16>) -> (tensor<2xf16>, tensor<i1>) {
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %q = stablehlo.compare EQ, %p, %zero, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %one = stablehlo.constant dense<1> : tensor<ui32>
  %safe = stablehlo.select %q, %one, %p : tensor<i1>, tensor<ui32>
  %d = stablehlo.divide %p, %safe : tensor<ui32>
  %max = stablehlo.constant dense<4294967295> : tensor<ui32>
  %s = stablehlo.select %q, %max, %d : tensor<i1>, tensor<ui32>
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %is1 = stablehlo.compare EQ, %s, %one, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %b1 = stablehlo.broadcast_in_dim %is1, dims = [] : (tensor<i1>) -> tensor<2xi1>
  %z1 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f16>) -> tensor<2xf16>
  %a = stablehlo.select %b1, %g, %z1 : tensor<2xi1>, tensor<2xf16>
  %is0 = stablehlo.compare EQ, %s, %zero, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %b0 = stablehlo.broadcast_in_dim %is0, dims = [] : (tensor<i1>) -> tensor<2xi1>
  %z0 = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f16>) -> tensor<2xf16>
  %b = stablehlo.select %b0, %g, %z0 : tensor<2xi1>, tensor<2xf16>
  %r = stablehlo.add %a, %b : tensor<2xf16>
  %ne = stablehlo.compare NE, %s, %zero, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  return %r, %ne : tensor<2xf16>, tensor<i1>
}

// -----

// The gradient of roll, log1p and flip in bf16 reads its cotangent, a constant
// made bf16, twice: lowered as two equal constants, each converted. To us they were
// two fusion parameters, one reversed and one added; XLA's CSE makes the constants
// one, then the converts, and passes one bf16 parameter read by two fused ops, which
// ends an emitter function: XLA CPU aborted (has_layout(); fuzz jit --transform grad
// 477). A parameter's source is now what XLA's CSE makes of it, so the merger keeps
// the reverse and the add apart.
// CHECK-LABEL: func.func @equal_constants_made_bf16_are_one_parameter_to_xla
// WHY: [fusion-merger] not fused: {{.*}}: a bf16 fusion parameter (XLA CPU converts it to f32 inside the fusion) read by 2 fused ops (stablehlo.add, stablehlo.reverse)
func.func @equal_constants_made_bf16_are_one_parameter_to_xla(%arg0: tensor<3xbf16>) -> (tensor<3xbf16>) {
  %0 = stablehlo.constant dense<"0x0000204050940240B3BB8A3F"> : tensor<3xf32>
  %1 = stablehlo.constant dense<"0x0000204050940240B3BB8A3F"> : tensor<3xf32>
  %2 = "stablehlo.slice"(%arg0) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<2xbf16>
  %3 = "stablehlo.slice"(%arg0) {start_indices = array<i64: 2>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<1xbf16>
  %4 = "stablehlo.concatenate"(%3, %2) {dimension = 0 : i64} : (tensor<1xbf16>, tensor<2xbf16>) -> tensor<3xbf16>
  %5 = stablehlo.constant dense<1.0> : tensor<f32>
  %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %7 = stablehlo.multiply %6, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %8 = stablehlo.convert %7 : (tensor<3xf32>) -> tensor<3xbf16>
  %9 = stablehlo.multiply %6, %0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %10 = stablehlo.convert %9 : (tensor<3xf32>) -> tensor<3xbf16>
  %11 = "stablehlo.reverse"(%8) {dimensions = array<i64: 0>} : (tensor<3xbf16>) -> tensor<3xbf16>
  %12 = stablehlo.constant dense<1.0> : tensor<bf16>
  %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
  %14 = stablehlo.add %4, %13 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %15 = stablehlo.divide %11, %14 : tensor<3xbf16>
  %16 = stablehlo.add %10, %15 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %17 = "stablehlo.slice"(%16) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<1xbf16>
  %18 = "stablehlo.slice"(%16) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<2xbf16>
  %19 = stablehlo.constant dense<0.0> : tensor<bf16>
  %20 = "stablehlo.pad"(%17, %19) {edge_padding_low = array<i64: 2>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<1xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %21 = "stablehlo.pad"(%18, %19) {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<2xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %22 = stablehlo.add %20, %21 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  return %22 : tensor<3xbf16>
}

// -----

// As above, but the two bf16 values are only equal once XLA folds them: a converted
// three-element constant, and the first three elements sliced from a converted
// six-element one. XLA folds both to the literal [2.5, 2.04, 1.08], its CSE makes
// them one parameter, read by a reverse and an add, and XLA CPU aborted (fuzz jit
// --transform grad 477, unshrunk). For the rule on bf16 parameters read twice, any
// two values XLA folds to constants of one type count as one.
// CHECK-LABEL: func.func @constants_xla_folds_equal_are_one_bf16_parameter
// WHY: [fusion-merger] not fused: {{.*}}: a bf16 fusion parameter (XLA CPU converts it to f32 inside the fusion) read by 2 fused ops (stablehlo.add, stablehlo.reverse)
func.func @constants_xla_folds_equal_are_one_bf16_parameter(%arg0: tensor<3xbf16>) -> (tensor<3xbf16>) {
  %0 = stablehlo.constant dense<"0x0000204050940240B3BB8A3FDA8F023FD0AA583F0B4FE43F"> : tensor<6xf32>
  %1 = stablehlo.constant dense<"0x0000204050940240B3BB8A3F"> : tensor<3xf32>
  %2 = "stablehlo.slice"(%arg0) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<2xbf16>
  %3 = "stablehlo.slice"(%arg0) {start_indices = array<i64: 2>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<1xbf16>
  %4 = "stablehlo.concatenate"(%3, %2) {dimension = 0 : i64} : (tensor<1xbf16>, tensor<2xbf16>) -> tensor<3xbf16>
  %5 = stablehlo.constant dense<1.0> : tensor<f32>
  %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %7 = stablehlo.multiply %6, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %8 = stablehlo.convert %7 : (tensor<3xf32>) -> tensor<3xbf16>
  %9 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<6xf32>
  %10 = stablehlo.multiply %9, %0 : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %11 = stablehlo.convert %10 : (tensor<6xf32>) -> tensor<6xbf16>
  %12 = "stablehlo.reverse"(%8) {dimensions = array<i64: 0>} : (tensor<3xbf16>) -> tensor<3xbf16>
  %13 = stablehlo.constant dense<1.0> : tensor<bf16>
  %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
  %15 = stablehlo.add %4, %14 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %16 = stablehlo.divide %12, %15 : tensor<3xbf16>
  %17 = "stablehlo.slice"(%11) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<6xbf16>) -> tensor<3xbf16>
  %18 = "stablehlo.slice"(%11) {start_indices = array<i64: 3>, limit_indices = array<i64: 6>, strides = array<i64: 1>} : (tensor<6xbf16>) -> tensor<3xbf16>
  %19 = stablehlo.add %16, %17 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %20 = stablehlo.add %19, %18 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %21 = "stablehlo.slice"(%20) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<1xbf16>
  %22 = "stablehlo.slice"(%20) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<3xbf16>) -> tensor<2xbf16>
  %23 = stablehlo.constant dense<0.0> : tensor<bf16>
  %24 = "stablehlo.pad"(%21, %23) {edge_padding_low = array<i64: 2>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<1xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %25 = "stablehlo.pad"(%22, %23) {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<2xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %26 = stablehlo.add %24, %25 : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  return %26 : tensor<3xbf16>
}
