// RUN: hlo-opt %s --split-input-file --pass-pipeline=canonicalize | FileCheck %s

// op(x, x) is x for the idempotent ops (select(p, x, x) too); x + x stays.
// CHECK-LABEL: func.func @idempotent
// CHECK-NEXT: %[[A:.*]] = stablehlo.add %arg2, %arg2
// CHECK-NEXT: return %arg1, %arg2, %[[A]]
func.func @idempotent(%p: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = stablehlo.select %p, %x, %x : tensor<4xi1>, tensor<4xf32>
  %m = stablehlo.maximum %y, %y : tensor<4xf32>
  %a = stablehlo.add %y, %y : tensor<4xf32>
  return %s, %m, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An f32 divide by a broadcast is a multiply by the broadcast reciprocal, computed
// once on the small operand; of a constant, the reciprocal is the constant XLA folds
// it to. In bf16 the rounded reciprocal would change quotients, and a divisor as large
// as the quotient gains nothing: both stay divides.
// CHECK-LABEL: func.func @divide
// CHECK:      %[[R:.*]] = stablehlo.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT: %[[RB:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = []
// CHECK-NEXT: %[[Q:.*]] = stablehlo.multiply %arg0, %[[RB]] : tensor<16xf32>
// CHECK:      %[[QH:.*]] = stablehlo.divide %arg1, %{{.*}} : tensor<16xbf16>
// CHECK-NEXT: %[[QV:.*]] = stablehlo.divide %arg0, %arg2 : tensor<16xf32>
// CHECK-NEXT: return %[[Q]], %[[QH]], %[[QV]]
func.func @divide(%x: tensor<16xf32>, %h: tensor<16xbf16>, %v: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xbf16>, tensor<16xf32>) {
  %c = stablehlo.constant dense<8.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<16xf32>
  %d = stablehlo.divide %x, %b : tensor<16xf32>
  %ch = stablehlo.constant dense<8.0> : tensor<bf16>
  %bh = stablehlo.broadcast_in_dim %ch, dims = [] : (tensor<bf16>) -> tensor<16xbf16>
  %dh = stablehlo.divide %h, %bh : tensor<16xbf16>
  %dv = stablehlo.divide %x, %v : tensor<16xf32>
  return %d, %dh, %dv : tensor<16xf32>, tensor<16xbf16>, tensor<16xf32>
}

// -----

// A zero-element result is a constant, and what only it read is dead.
// CHECK-LABEL: func.func @zero_elements
// CHECK-NEXT: %[[E:.*]] = stablehlo.constant dense<> : tensor<0xf32>
// CHECK-NEXT: return %[[E]]
func.func @zero_elements(%x: tensor<5xf32>) -> tensor<0xf32> {
  %n = stablehlo.negate %x : tensor<5xf32>
  %e = stablehlo.slice %n [1:1] : (tensor<5xf32>) -> tensor<0xf32>
  return %e : tensor<0xf32>
}

// -----

// Unread ops the passes know are erased; custom calls, which may have effects, stay.
// CHECK-LABEL: func.func @dead_code
// CHECK-NEXT: stablehlo.custom_call @effect()
// CHECK-NEXT: stablehlo.custom_call @unknown(%arg0)
// CHECK-NEXT: return %arg0
func.func @dead_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = stablehlo.negate %x : tensor<4xf32>
  %e = stablehlo.exponential %n : tensor<4xf32>
  stablehlo.custom_call @effect() {has_side_effect = true} : () -> ()
  %u = stablehlo.custom_call @unknown(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// In f16 and complex types XLA's simplifier makes the same multiply, the reciprocal
// rounded in the element type (measured: dirichlet's f16 softmax, normal's complex
// samples over sqrt(2)).
// CHECK-LABEL: func.func @divide_f16_and_complex
// CHECK:      %[[RH:.*]] = stablehlo.divide %{{.*}}, %arg1 : tensor<4xf16>
// CHECK-NEXT: %[[BH:.*]] = stablehlo.broadcast_in_dim %[[RH]], dims = [0] : (tensor<4xf16>) -> tensor<4x3xf16>
// CHECK-NEXT: stablehlo.multiply %arg0, %[[BH]] : tensor<4x3xf16>
// CHECK:      %[[ONE:.*]] = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
// CHECK-NEXT: %[[RC:.*]] = stablehlo.divide %[[ONE]], %{{.*}} : tensor<complex<f32>>
// CHECK-NEXT: %[[BC:.*]] = stablehlo.broadcast_in_dim %[[RC]], dims = [] : (tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
// CHECK-NEXT: stablehlo.multiply %arg2, %[[BC]] : tensor<8xcomplex<f32>>
func.func @divide_f16_and_complex(%x: tensor<4x3xf16>, %s: tensor<4xf16>, %z: tensor<8xcomplex<f32>>) -> (tensor<4x3xf16>, tensor<8xcomplex<f32>>) {
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf16>) -> tensor<4x3xf16>
  %d = stablehlo.divide %x, %sb : tensor<4x3xf16>
  %c = stablehlo.constant dense<(1.41421354, 0.0)> : tensor<complex<f32>>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<complex<f32>>) -> tensor<8xcomplex<f32>>
  %dz = stablehlo.divide %z, %cb : tensor<8xcomplex<f32>>
  return %d, %dz : tensor<4x3xf16>, tensor<8xcomplex<f32>>
}

// -----

// A divide by what XLA folds to a constant (here a converted false, 0.0) is a
// multiply by its reciprocal, and a converted bool times y a select: a bool
// divided by a converted false is 0 where the bool is false, as under jax.jit
// (fused as a divide it gave nan; fuzzer, jit seed 2073).
// CHECK-LABEL: func.func @divide_by_a_folded_constant
// CHECK:      %[[F:.*]] = stablehlo.constant dense<false> : tensor<i1>
// CHECK-NEXT: %[[Z:.*]] = stablehlo.convert %[[F]] : (tensor<i1>) -> tensor<f32>
// CHECK-NEXT: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.divide %[[ONE]], %[[Z]] : tensor<f32>
// CHECK:      %[[S:.*]] = stablehlo.select %arg0, %[[R]], %{{.*}} : tensor<i1>, tensor<f32>
// CHECK-NEXT: return %[[S]]
func.func @divide_by_a_folded_constant(%p: tensor<i1>) -> tensor<f32> {
  %f = stablehlo.constant dense<false> : tensor<i1>
  %z = stablehlo.convert %f : (tensor<i1>) -> tensor<f32>
  %c = stablehlo.convert %p : (tensor<i1>) -> tensor<f32>
  %q = stablehlo.divide %c, %z : tensor<f32>
  return %q : tensor<f32>
}

// -----

// A divide by a broadcast of a value of rank 1 or more, not a constant, is a
// multiply by its reciprocal too, but XLA makes that multiply after its simplifier's
// bool rule has run, so a converted bool times it stays a multiply: a false divided
// by a broadcast 0 is nan, as under jax.jit (a select gave 0; fuzz jit --transform
// vmap seed 3026). No marker is left on the multiply.
// CHECK-LABEL: func.func @bool_divided_by_a_broadcast_row
// CHECK:      %[[R:.*]] = stablehlo.divide %{{.*}}, %arg1 : tensor<3xf32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [1]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %{{.*}}, %[[B]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[M]]
// CHECK-NOT:  late_product
func.func @bool_divided_by_a_broadcast_row(%p: tensor<2x3xi1>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %c = stablehlo.convert %p : (tensor<2x3xi1>) -> tensor<2x3xf32>
  %b = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %q = stablehlo.divide %c, %b : tensor<2x3xf32>
  return %q : tensor<2x3xf32>
}

// -----

// In bf16 a converted bool times y stays a multiply: XLA CPU computes it in f32
// between converts, where its simplifier does not match it, so inf * false is nan
// under jax.jit (fuzzer, jit seed 3001).
// CHECK-LABEL: func.func @bf16_bool_multiply_stays
// CHECK:      %[[C:.*]] = stablehlo.convert %arg0 : (tensor<4xi1>) -> tensor<4xbf16>
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg1, %[[C]] : tensor<4xbf16>
// CHECK-NEXT: return %[[M]]
func.func @bf16_bool_multiply_stays(%p: tensor<4xi1>, %y: tensor<4xbf16>) -> tensor<4xbf16> {
  %c = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xbf16>
  %m = stablehlo.multiply %y, %c : tensor<4xbf16>
  return %m : tensor<4xbf16>
}

// -----

// A converted broadcast bool times y stays a multiply: XLA sinks the broadcast past
// the convert first (as _sink_broadcasts does), so its multiply reads
// broadcast(convert(p)), not a convert, and a broadcast false times inf is nan under
// jax.jit (fuzzer, jit seed 8048).
// CHECK-LABEL: func.func @broadcast_bool_multiply_stays
// CHECK:      %[[C:.*]] = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<f32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[C]], dims = [] : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[B]], %arg1 : tensor<3xf32>
// CHECK-NEXT: return %[[M]]
func.func @broadcast_bool_multiply_stays(%p: tensor<i1>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %b = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<i1>) -> tensor<3xi1>
  %c = stablehlo.convert %b : (tensor<3xi1>) -> tensor<3xf32>
  %m = stablehlo.multiply %c, %y : tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

// A dot_general contracting only dimensions of size 1 is an outer product (vmap of a
// weight gradient): broadcast(lhs) * broadcast(rhs), as XLA's simplifier writes it,
// so the fusion passes see (and fuse) the multiply. A real contraction, batch
// dimensions that do not lead, or a widening dot stay dots.
// CHECK-LABEL: func.func @outer_product
// CHECK:      %[[L:.*]] = stablehlo.reshape %arg0 : (tensor<8x1x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[LB:.*]] = stablehlo.broadcast_in_dim %[[L]], dims = [0, 1] : (tensor<8x3xf32>) -> tensor<8x3x5xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg1 : (tensor<8x1x5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT: %[[RB:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [0, 2] : (tensor<8x5xf32>) -> tensor<8x3x5xf32>
// CHECK-NEXT: %[[P:.*]] = stablehlo.multiply %[[LB]], %[[RB]] : tensor<8x3x5xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [1] x [1]
// CHECK-NEXT: %[[T:.*]] = stablehlo.dot_general %arg0, %arg1, batching_dims = [1] x [1]
// CHECK-NEXT: %[[W:.*]] = stablehlo.dot_general %arg3, %arg3
// CHECK-NEXT: return %[[P]], %[[D]], %[[T]], %[[W]]
func.func @outer_product(%a: tensor<8x1x3xf32>, %b: tensor<8x1x5xf32>, %c: tensor<8x2x3xf32>, %h: tensor<4x1xbf16>) -> (tensor<8x3x5xf32>, tensor<8x3x3xf32>, tensor<1x8x3x8x5xf32>, tensor<4x4xf32>) {
  %p = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<8x1x3xf32>, tensor<8x1x5xf32>) -> tensor<8x3x5xf32>
  %d = stablehlo.dot_general %c, %c, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<8x2x3xf32>, tensor<8x2x3xf32>) -> tensor<8x3x3xf32>
  %t = stablehlo.dot_general %a, %b, batching_dims = [1] x [1], contracting_dims = [] x [] : (tensor<8x1x3xf32>, tensor<8x1x5xf32>) -> tensor<1x8x3x8x5xf32>
  %w = stablehlo.dot_general %h, %h, contracting_dims = [1] x [1] : (tensor<4x1xbf16>, tensor<4x1xbf16>) -> tensor<4x4xf32>
  return %p, %d, %t, %w : tensor<8x3x5xf32>, tensor<8x3x3xf32>, tensor<1x8x3x8x5xf32>, tensor<4x4xf32>
}

// -----

// In f16 (and bf16) the outer product is an f32 multiply between converts, as XLA
// computes it: an f16 multiply of a converted bool became XLA's select, and false *
// inf was 0, nan under jax.jit (fuzz jit seed 8294).
// CHECK-LABEL: func.func @f16_outer_product
// CHECK:      %[[L:.*]] = stablehlo.convert %arg0 : (tensor<4x1xf16>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[LR:.*]] = stablehlo.reshape %[[L]] : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[LB:.*]] = stablehlo.broadcast_in_dim %[[LR]], dims = [0] : (tensor<4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.convert %arg1 : (tensor<2x1xf16>) -> tensor<2x1xf32>
// CHECK-NEXT: %[[RR:.*]] = stablehlo.reshape %[[R]] : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[RB:.*]] = stablehlo.broadcast_in_dim %[[RR]], dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[P:.*]] = stablehlo.multiply %[[LB]], %[[RB]] : tensor<4x2xf32>
// CHECK-NEXT: %[[C:.*]] = stablehlo.convert %[[P]] : (tensor<4x2xf32>) -> tensor<4x2xf16>
// CHECK-NEXT: return %[[C]]
func.func @f16_outer_product(%a: tensor<4x1xf16>, %b: tensor<2x1xf16>) -> tensor<4x2xf16> {
  %p = stablehlo.dot_general %a, %b, contracting_dims = [1] x [1] : (tensor<4x1xf16>, tensor<2x1xf16>) -> tensor<4x2xf16>
  return %p : tensor<4x2xf16>
}

// -----

// Free dimensions of size 1 leave a dot_general (XLA would lay its result out with the
// unit dimension major, then copy it to the layout a fusion reads): the dot runs on
// the squeezed operands, and a reshape, a bitcast to XLA, restores them. Batch and
// contracting dimensions of size 1 stay.
// CHECK-LABEL: func.func @squeeze
// CHECK:      %[[L:.*]] = stablehlo.reshape %arg0 : (tensor<8x1x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[L]], %arg1, contracting_dims = [1] x [1], precision = [HIGHEST, HIGHEST] : (tensor<8x3xf32>, tensor<5x3xf32>) -> tensor<8x5xf32>
// CHECK-NEXT: %[[DR:.*]] = stablehlo.reshape %[[D]] : (tensor<8x5xf32>) -> tensor<8x1x5xf32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: return %[[DR]], %[[B]]
func.func @squeeze(%a: tensor<8x1x3xf32>, %w: tensor<5x3xf32>, %c: tensor<1x4x2xf32>) -> (tensor<8x1x5xf32>, tensor<1x4x4xf32>) {
  %d = stablehlo.dot_general %a, %w, contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<8x1x3xf32>, tensor<5x3xf32>) -> tensor<8x1x5xf32>
  %b = stablehlo.dot_general %c, %c, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x4xf32>
  return %d, %b : tensor<8x1x5xf32>, tensor<1x4x4xf32>
}

// -----

// compare(x, x) of integers is a constant, as XLA folds it after us (a fusion reading
// the folded broadcast, reversed, made XLA CPU abort: fuzzer, hlo-opt seed 453);
// of floats it stays (NaN != NaN).
// CHECK-LABEL: func.func @self_compare
// CHECK-DAG: %[[F:.*]] = stablehlo.constant dense<false> : tensor<4xi1>
// CHECK-DAG: %[[T:.*]] = stablehlo.constant dense<true> : tensor<4xi1>
// CHECK: %[[N:.*]] = stablehlo.compare EQ, %arg1, %arg1
// CHECK-NEXT: return %[[F]], %[[T]], %[[N]]
func.func @self_compare(%x: tensor<4xi32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = stablehlo.compare NE, %x, %x, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = stablehlo.compare GE, %x, %x, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = stablehlo.compare EQ, %y, %y, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// The backward pass of sum(..., keepdims=True) / s: a sum reshaped to 8x1, divided,
// summed over the unit dim back to 8. The unit-dim sum is a reshape (as XLA's
// simplifier makes it), the divide sinks below the reshapes (as XLA's
// reshape-mover would), and the reshapes fold: the divide reads the sums, and a
// fusion may take it in.
// CHECK-LABEL: func.func @unit_dim_reshapes_fold
// CHECK:      %[[S:.*]] = stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.add across dimensions = [1]
// CHECK-NEXT: %[[D:.*]] = stablehlo.divide %[[S]], %arg1 : tensor<8xf32>
// CHECK-NEXT: return %[[D]]
func.func @unit_dim_reshapes_fold(%x: tensor<8x4xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  %a = stablehlo.reshape %r : (tensor<8xf32>) -> tensor<8x1xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
  %d = stablehlo.divide %a, %b : tensor<8x1xf32>
  %u = stablehlo.reduce(%d init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
  return %u : tensor<8xf32>
}

// -----

// A bool XLA folds to a constant (x != x of integers) has its convert folded to a
// float constant before XLA visits the multiply, so no select: -inf * 0 stays nan,
// as under JAX's jit (fuzz jit seed 9594).
// CHECK-LABEL: func.func @multiply_by_a_converted_constant_bool
// CHECK:      %[[C:.*]] = stablehlo.constant dense<false> : tensor<4xi1>
// CHECK-NEXT: %[[F:.*]] = stablehlo.convert %[[C]] : (tensor<4xi1>) -> tensor<4xf32>
// CHECK-NOT:  stablehlo.select
// CHECK:      stablehlo.multiply %{{.*}}, %[[F]] : tensor<4xf32>
func.func @multiply_by_a_converted_constant_bool(%x: tensor<4xui8>) -> tensor<4xf32> {
  %p = stablehlo.compare NE, %x, %x, UNSIGNED : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %f = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf32>
  %l = stablehlo.log %f : tensor<4xf32>
  %m = stablehlo.multiply %l, %f : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// What stays: a divide of reshapes also returned at 8x1 (it would need a reshape
// back for that reader), a transposing broadcast_in_dim (not a reshape), and
// reshapes from two shapes. A max over a unit dim is a reshape, whatever its init
// (XLA takes an init for its reducer's identity: jax.jit of reduce(x, 5.0, max)
// over a unit dim returns x).
// CHECK-LABEL: func.func @unit_dim_reshapes_that_stay
// CHECK:      %[[M:.*]] = stablehlo.reshape %arg0 : (tensor<8x1xf32>) -> tensor<8xf32>
// CHECK-NOT:  stablehlo.maximum
// CHECK: stablehlo.divide %{{.*}}, %{{.*}} : tensor<8x1xf32>
// CHECK: stablehlo.multiply %{{.*}} : tensor<2x1x2xf32>
// CHECK: stablehlo.add %{{.*}} : tensor<8x1xf32>
func.func @unit_dim_reshapes_that_stay(%x: tensor<8x1xf32>, %s: tensor<8xf32>, %t: tensor<2x2xf32>, %v: tensor<1x8xf32>) -> (tensor<8xf32>, tensor<8x1xf32>, tensor<2x1x2xf32>, tensor<8xf32>) {
  %m0 = stablehlo.constant dense<5.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %m0) applies stablehlo.maximum across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
  %r = stablehlo.reshape %s : (tensor<8xf32>) -> tensor<8x1xf32>
  %d = stablehlo.divide %r, %b : tensor<8x1xf32>
  %p = stablehlo.broadcast_in_dim %t, dims = [2, 0] : (tensor<2x2xf32>) -> tensor<2x1x2xf32>
  %q = stablehlo.broadcast_in_dim %t, dims = [0, 2] : (tensor<2x2xf32>) -> tensor<2x1x2xf32>
  %pq = stablehlo.multiply %p, %q : tensor<2x1x2xf32>
  %w = stablehlo.reshape %v : (tensor<1x8xf32>) -> tensor<8x1xf32>
  %a = stablehlo.add %w, %b : tensor<8x1xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %u = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1xf32>, tensor<f32>) -> tensor<8xf32>
  return %m, %d, %pq, %u : tensor<8xf32>, tensor<8x1xf32>, tensor<2x1x2xf32>, tensor<8xf32>
}

// -----

// A reduce over no dims is a reshape before the float rules run, so log sees the
// power through it, as XLA's simplifier does (fuzz --bitwise, jit seed 5050: log10
// of a max over no dims of 1.5 ** x rounded differently fused).
// CHECK-LABEL: func.func @log_of_power_past_an_empty_reduce
// CHECK-NOT:  stablehlo.reduce
// CHECK:      %[[L:.*]] = stablehlo.log
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[L]], %arg0
// CHECK:      %[[S:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[M]]
// CHECK-NEXT: return %[[S]]
func.func @log_of_power_past_an_empty_reduce(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = stablehlo.constant dense<1.5> : tensor<f32>
  %ab = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %p = stablehlo.power %ab, %x : tensor<2xf32>
  %i = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%p init: %i) applies stablehlo.maximum across dimensions = [] : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %l = stablehlo.log %m : tensor<2xf32>
  return %l : tensor<2xf32>
}

// -----

// A sunk op keeps its attributes (fuzzer, hlo-opt seed 1321: a compare).
// CHECK-LABEL: func.func @sunk_compare_keeps_its_direction
// CHECK-NEXT: %[[C:.*]] = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: return %[[C]]
func.func @sunk_compare_keeps_its_direction(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %ra = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<1x4xf32>
  %rb = stablehlo.reshape %b : (tensor<4xf32>) -> tensor<1x4xf32>
  %c = stablehlo.compare LT, %ra, %rb, FLOAT : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xi1>
  %r = stablehlo.reshape %c : (tensor<1x4xi1>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

// Float arithmetic with constants, as XLA's simplifier rewrites it before its own
// fusion (never inside one): scalar constants fold in the element type, x * 1 and
// x + 0 are x, x - c is x + (-c), and (x + c1) + c2 is x + (c1 + c2) with c1 + c2
// rounded to f16 (-1 + 6.1e-5 is -1: u - 1, as jax.jit computes float16 gumbel).
// A broadcast constant on the left is not reassociated (XLA's pattern wants it on
// the right), and integers keep their subtract.
// CHECK-LABEL: func.func @constant_arithmetic
// CHECK:      %[[M1:.*]] = stablehlo.constant dense<-1.000000e+00> : tensor<f16>
// CHECK-NEXT: %[[M1B:.*]] = stablehlo.broadcast_in_dim %[[M1]], dims = []
// CHECK-NEXT: %[[U:.*]] = stablehlo.add %arg0, %[[M1B]] : tensor<8xf16>
// CHECK:      %[[L:.*]] = stablehlo.add %{{.*}}, %arg0 : tensor<8xf16>
// CHECK-NEXT: %[[LL:.*]] = stablehlo.add %[[L]], %{{.*}} : tensor<8xf16>
// CHECK:      %[[S:.*]] = stablehlo.constant dense<6.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SX:.*]] = stablehlo.multiply %arg2, %[[S]] : tensor<f32>
// CHECK:      %[[I:.*]] = stablehlo.subtract %arg1, %{{.*}} : tensor<8xi32>
// CHECK-NEXT: return %[[U]], %[[LL]], %[[SX]], %[[I]]
func.func @constant_arithmetic(%u: tensor<8xf16>, %i: tensor<8xi32>, %s: tensor<f32>) -> (tensor<8xf16>, tensor<8xf16>, tensor<f32>, tensor<8xi32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f16>
  %tiny = stablehlo.constant dense<6.103520e-05> : tensor<f16>
  %zero = stablehlo.constant dense<0.0> : tensor<8xf16>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f16>) -> tensor<8xf16>
  %shifted = stablehlo.subtract %u, %ones : tensor<8xf16>
  %span = stablehlo.subtract %one, %tiny : tensor<f16>
  %spans = stablehlo.broadcast_in_dim %span, dims = [] : (tensor<f16>) -> tensor<8xf16>
  %scaled = stablehlo.multiply %shifted, %spans : tensor<8xf16>
  %tinys = stablehlo.broadcast_in_dim %tiny, dims = [] : (tensor<f16>) -> tensor<8xf16>
  %uniform = stablehlo.add %scaled, %tinys : tensor<8xf16>
  %kept = stablehlo.add %uniform, %zero : tensor<8xf16>
  %left = stablehlo.add %tinys, %u : tensor<8xf16>
  %left2 = stablehlo.add %left, %tinys : tensor<8xf16>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %three = stablehlo.constant dense<3.0> : tensor<f32>
  %s2 = stablehlo.multiply %two, %s : tensor<f32>
  %s6 = stablehlo.multiply %s2, %three : tensor<f32>
  %ci = stablehlo.constant dense<3> : tensor<8xi32>
  %di = stablehlo.subtract %i, %ci : tensor<8xi32>
  return %kept, %left2, %s6, %di : tensor<8xf16>, tensor<8xf16>, tensor<f32>, tensor<8xi32>
}

// -----

// An integer division XLA may fold (both operands fold to constants, here after
// the self-compares fold) gets a safe divisor and XLA's run-time results selected:
// XLA's evaluator dies on x / 0 and INT_MIN / -1. Which divisions MHLO's folders
// make constant is not ours to know, so a divide of a parameter is guarded too;
// one by a constant holding neither 0 nor -1 stays.
// CHECK-LABEL: func.func @constant_integer_division
// CHECK:      %[[A:.*]] = stablehlo.convert %c : (tensor<4xi1>) -> tensor<4xi32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.convert %c_0 : (tensor<4xi1>) -> tensor<4xi32>
// CHECK-NEXT: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<4xi32>
// CHECK-NEXT: %[[BY_ZERO:.*]] = stablehlo.compare EQ, %[[B]], %[[ZERO]]
// CHECK-NEXT: %[[MIN:.*]] = stablehlo.constant dense<-2147483648> : tensor<4xi32>
// CHECK-NEXT: %[[A_MIN:.*]] = stablehlo.compare EQ, %[[A]], %[[MIN]]
// CHECK-NEXT: %[[M1:.*]] = stablehlo.constant dense<-1> : tensor<4xi32>
// CHECK-NEXT: %[[B_M1:.*]] = stablehlo.compare EQ, %[[B]], %[[M1]]
// CHECK-NEXT: %[[OVER:.*]] = stablehlo.and %[[A_MIN]], %[[B_M1]]
// CHECK-NEXT: %[[UNSAFE:.*]] = stablehlo.or %[[BY_ZERO]], %[[OVER]]
// CHECK-NEXT: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<4xi32>
// CHECK-NEXT: %[[SAFE:.*]] = stablehlo.select %[[UNSAFE]], %[[ONE]], %[[B]]
// CHECK-NEXT: %[[R:.*]] = stablehlo.remainder %[[A]], %[[SAFE]]
// CHECK-NEXT: %[[RG:.*]] = stablehlo.select %[[BY_ZERO]], %[[A]], %[[R]]
// CHECK:      %[[BU:.*]] = stablehlo.convert %c_0 : (tensor<4xi1>) -> tensor<4xui8>
// CHECK-NEXT: %[[ZU:.*]] = stablehlo.constant dense<0> : tensor<4xui8>
// CHECK-NEXT: %[[BY_ZERO_U:.*]] = stablehlo.compare EQ, %[[BU]], %[[ZU]]
// CHECK-NEXT: %[[ONE_U:.*]] = stablehlo.constant dense<1> : tensor<4xui8>
// CHECK-NEXT: %[[SAFE_U:.*]] = stablehlo.select %[[BY_ZERO_U]], %[[ONE_U]], %[[BU]]
// CHECK-NEXT: %[[Q:.*]] = stablehlo.divide %{{.*}}, %[[SAFE_U]] : tensor<4xui8>
// CHECK-NEXT: %[[ALL_ONES:.*]] = stablehlo.constant dense<255> : tensor<4xui8>
// CHECK-NEXT: %[[QG:.*]] = stablehlo.select %[[BY_ZERO_U]], %[[ALL_ONES]], %[[Q]]
// CHECK-NEXT: %[[XI:.*]] = stablehlo.convert %arg0
// CHECK:      %[[SAFE_V:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[B]]
// CHECK-NEXT: %[[V:.*]] = stablehlo.divide %[[XI]], %[[SAFE_V]] : tensor<4xi32>
// CHECK:      %[[SEVEN:.*]] = stablehlo.constant dense<[7, 3, -2, 5]> : tensor<4xi32>
// CHECK-NEXT: %[[W:.*]] = stablehlo.divide %[[XI]], %[[SEVEN]] : tensor<4xi32>
// CHECK-NEXT: return %[[RG]], %[[QG]], %{{.*}}, %[[W]]
func.func @constant_integer_division(%x: tensor<4xui16>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi32>, tensor<4xi32>) {
  %t = stablehlo.compare LE, %x, %x : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xi1>
  %f = stablehlo.compare GT, %x, %x : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xi1>
  %a = stablehlo.convert %t : (tensor<4xi1>) -> tensor<4xi32>
  %b = stablehlo.convert %f : (tensor<4xi1>) -> tensor<4xi32>
  %r = stablehlo.remainder %a, %b : tensor<4xi32>
  %au = stablehlo.convert %t : (tensor<4xi1>) -> tensor<4xui8>
  %bu = stablehlo.convert %f : (tensor<4xi1>) -> tensor<4xui8>
  %q = stablehlo.divide %au, %bu : tensor<4xui8>
  %xi = stablehlo.convert %x : (tensor<4xui16>) -> tensor<4xi32>
  %v = stablehlo.divide %xi, %b : tensor<4xi32>
  %seven = stablehlo.constant dense<[7, 3, -2, 5]> : tensor<4xi32>
  %w = stablehlo.divide %xi, %seven : tensor<4xi32>
  return %r, %q, %v, %w : tensor<4xi32>, tensor<4xui8>, tensor<4xi32>, tensor<4xi32>
}

// -----

// A divisor broadcast from a constant is as safe as the constant: a Python divisor
// (unravel_index's dims) stays unguarded. Guarded, its constant compares were folded
// by XLA after our fusions were made, and each became a broadcast kernel of its own
// (test_searching's nonzero program: 245 kernels, now 148). One of 0 is guarded.
// CHECK-LABEL: func.func @broadcast_constant_divisor
// CHECK:      %[[FOUR:.*]] = stablehlo.broadcast_in_dim %c, dims = []
// CHECK-NEXT: %[[Q:.*]] = stablehlo.divide %arg0, %[[FOUR]] : tensor<5xi32>
// CHECK:      %[[ZERO:.*]] = stablehlo.broadcast_in_dim %c_0, dims = []
// CHECK:      %[[SAFE:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[ZERO]]
// CHECK-NEXT: %[[R:.*]] = stablehlo.remainder %arg0, %[[SAFE]] : tensor<5xi32>
func.func @broadcast_constant_divisor(%x: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>) {
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %four = stablehlo.broadcast_in_dim %c4, dims = [] : (tensor<i32>) -> tensor<5xi32>
  %q = stablehlo.divide %x, %four : tensor<5xi32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<i32>) -> tensor<5xi32>
  %r = stablehlo.remainder %x, %zero : tensor<5xi32>
  return %q, %r : tensor<5xi32>, tensor<5xi32>
}

// -----

// ui64's all ones does not fit the int64 the bindings take (it raised std::bad_cast:
// the corpus's div_uint64_2_uint64_2 under --fuse).
// CHECK-LABEL: func.func @constant_uint64_division
// CHECK:      %[[Q:.*]] = stablehlo.divide %{{.*}}, %{{.*}} : tensor<2xui64>
// CHECK-NEXT: %[[ALL_ONES:.*]] = stablehlo.constant dense<18446744073709551615> : tensor<2xui64>
// CHECK-NEXT: stablehlo.select %{{.*}}, %[[ALL_ONES]], %[[Q]]
func.func @constant_uint64_division() -> tensor<2xui64> {
  %a = stablehlo.constant dense<[7, 18446744073709551615]> : tensor<2xui64>
  %b = stablehlo.constant dense<[0, 2]> : tensor<2xui64>
  %q = stablehlo.divide %a, %b : tensor<2xui64>
  return %q : tensor<2xui64>
}

// -----

// exp(a) / exp(b) is exp(a - b) and a / exp(b) is a * exp(-b), XLA's first divide
// rules, even where the exp has other readers (1 / exp2(x) ** x rounded one ulp off
// fused; fuzz --bitwise, jit seed 5012).
// CHECK-LABEL: func.func @divide_by_exp
// CHECK:      %[[E:.*]] = stablehlo.exponential %arg1
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %arg1
// CHECK-NEXT: %[[EN:.*]] = stablehlo.exponential %[[N]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %[[EN]]
// CHECK-NEXT: %[[S:.*]] = stablehlo.subtract %arg0, %arg1
// CHECK-NEXT: %[[ES:.*]] = stablehlo.exponential %[[S]]
// CHECK-NEXT: return %[[M]], %[[ES]], %[[E]]
func.func @divide_by_exp(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %eb = stablehlo.exponential %b : tensor<4xf32>
  %q = stablehlo.divide %a, %eb : tensor<4xf32>
  %ea = stablehlo.exponential %a : tensor<4xf32>
  %r = stablehlo.divide %ea, %eb : tensor<4xf32>
  return %q, %r, %eb : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// XLA's simplifier makes a / sqrt(b) a * rsqrt(b), a / rsqrt(b) a * sqrt(b) and
// a / pow(b, c) a * pow(b, -c) before its fusion; fused, the divide would round
// differently (gamma's (1 / 3) / sqrt(d)). A root with another use stays.
// CHECK-LABEL: func.func @divide_by_root_or_power
// CHECK-NEXT: %[[R:.*]] = stablehlo.rsqrt %arg1
// CHECK-NEXT: %[[D0:.*]] = stablehlo.multiply %arg0, %[[R]]
// CHECK-NEXT: %[[S:.*]] = stablehlo.sqrt %arg1
// CHECK-NEXT: %[[D1:.*]] = stablehlo.multiply %arg0, %[[S]]
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %arg2
// CHECK-NEXT: %[[P:.*]] = stablehlo.power %arg1, %[[N]]
// CHECK-NEXT: %[[D2:.*]] = stablehlo.multiply %arg0, %[[P]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.sqrt %arg2
// CHECK-NEXT: %[[D3:.*]] = stablehlo.divide %arg0, %[[T]]
// CHECK-NEXT: %[[U:.*]] = stablehlo.add %[[D3]], %[[T]]
// CHECK-NEXT: return %[[D0]], %[[D1]], %[[D2]], %[[U]]
func.func @divide_by_root_or_power(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = stablehlo.sqrt %b : tensor<4xf32>
  %d0 = stablehlo.divide %a, %s : tensor<4xf32>
  %r = stablehlo.rsqrt %b : tensor<4xf32>
  %d1 = stablehlo.divide %a, %r : tensor<4xf32>
  %p = stablehlo.power %b, %c : tensor<4xf32>
  %d2 = stablehlo.divide %a, %p : tensor<4xf32>
  %t = stablehlo.sqrt %c : tensor<4xf32>
  %d3 = stablehlo.divide %a, %t : tensor<4xf32>
  %u = stablehlo.add %d3, %t : tensor<4xf32>
  return %d0, %d1, %d2, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Divides of divides reassociate as XLA's simplifier writes them:
// (a / b) / (c / d) = (a * d) / (b * c), (a / b) / c = a / (b * c),
// a / (c / d) = (a * d) / c.
// CHECK-LABEL: func.func @reassociate_divides
// CHECK-NEXT: %[[AD:.*]] = stablehlo.multiply %arg0, %arg3
// CHECK-NEXT: %[[BC:.*]] = stablehlo.multiply %arg1, %arg2
// CHECK-NEXT: %[[Q0:.*]] = stablehlo.divide %[[AD]], %[[BC]]
// CHECK-NEXT: %[[BC1:.*]] = stablehlo.multiply %arg1, %arg2
// CHECK-NEXT: %[[Q1:.*]] = stablehlo.divide %arg0, %[[BC1]]
// CHECK-NEXT: %[[AD2:.*]] = stablehlo.multiply %arg0, %arg3
// CHECK-NEXT: %[[Q2:.*]] = stablehlo.divide %[[AD2]], %arg2
// CHECK-NEXT: return %[[Q0]], %[[Q1]], %[[Q2]]
func.func @reassociate_divides(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ab = stablehlo.divide %a, %b : tensor<4xf32>
  %cd = stablehlo.divide %c, %d : tensor<4xf32>
  %q0 = stablehlo.divide %ab, %cd : tensor<4xf32>
  %q1 = stablehlo.divide %ab, %c : tensor<4xf32>
  %q2 = stablehlo.divide %a, %cd : tensor<4xf32>
  return %q0, %q1, %q2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// sqrt(x) * sqrt(x) is x and rsqrt(x) * rsqrt(x) is 1 / x where XLA knows x is not
// negative (exp, abs, ...); of an x it knows nothing about the product stays.
// CHECK-LABEL: func.func @roots_times_roots
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %arg0
// CHECK-NEXT: %[[A:.*]] = stablehlo.abs %arg0
// CHECK:      %[[R:.*]] = stablehlo.divide %{{.*}}, %[[A]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.sqrt %arg1
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[T]], %[[T]]
// CHECK-NEXT: return %[[E]], %[[R]], %[[M]]
func.func @roots_times_roots(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %s = stablehlo.sqrt %e : tensor<4xf32>
  %m0 = stablehlo.multiply %s, %s : tensor<4xf32>
  %a = stablehlo.abs %x : tensor<4xf32>
  %r = stablehlo.rsqrt %a : tensor<4xf32>
  %m1 = stablehlo.multiply %r, %r : tensor<4xf32>
  %t = stablehlo.sqrt %y : tensor<4xf32>
  %m2 = stablehlo.multiply %t, %t : tensor<4xf32>
  return %m0, %m1, %m2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// XLA's fast-math rules, whatever else reads the exp or the square: log(exp(a)) is
// a, exp(a) * exp(b) is exp(a + b) and sqrt(a * a) is |a| (as written, exp(90) and
// a square of 1e20 overflow in f32; fuzz --bitwise, jit seed 5611); an exp nothing
// reads any more goes. Not in bf16, which XLA CPU computes between converts its
// patterns do not see through.
// CHECK-LABEL: func.func @exp_log_and_square_root
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %arg0
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %arg0, %arg1
// CHECK-NEXT: %[[ES:.*]] = stablehlo.exponential %[[S]]
// CHECK-NEXT: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK-NEXT: %[[A:.*]] = stablehlo.abs %arg0
// CHECK-NEXT: %[[H:.*]] = stablehlo.exponential %arg2
// CHECK-NEXT: %[[HL:.*]] = stablehlo.log %[[H]]
// CHECK-NEXT: return %arg0, %[[ES]], %[[A]], %[[E]], %[[SQ]], %[[HL]]
func.func @exp_log_and_square_root(%a: tensor<4xf32>, %b: tensor<4xf32>, %h: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>) {
  %e = stablehlo.exponential %a : tensor<4xf32>
  %l = stablehlo.log %e : tensor<4xf32>
  %eb = stablehlo.exponential %b : tensor<4xf32>
  %m = stablehlo.multiply %e, %eb : tensor<4xf32>
  %sq = stablehlo.multiply %a, %a : tensor<4xf32>
  %r = stablehlo.sqrt %sq : tensor<4xf32>
  %he = stablehlo.exponential %h : tensor<4xbf16>
  %hl = stablehlo.log %he : tensor<4xbf16>
  return %l, %m, %r, %e, %sq, %hl : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>
}

// -----

// For an x XLA knows is not negative (here |a|, exp(a)): rsqrt(pow(x, -2)) is x,
// rsqrt(1 / x) is sqrt(x), x >= 0 is true and 0 > x false, NaN or not, and abs(x)
// is x (XLA's HandleRsqrt, HandleCompare and HandleAbs). Of an a it knows nothing
// about, all stay.
// CHECK-LABEL: func.func @known_not_negative
// CHECK-DAG:  %[[E:.*]] = stablehlo.exponential %arg0
// CHECK-DAG:  %[[T:.*]] = stablehlo.constant dense<true> : tensor<i1>
// CHECK-DAG:  %[[F:.*]] = stablehlo.constant dense<false> : tensor<i1>
// CHECK-DAG:  %[[A:.*]] = stablehlo.abs %arg0
// CHECK-DAG:  %[[S:.*]] = stablehlo.sqrt %[[A]]
// CHECK-DAG:  %[[TB:.*]] = stablehlo.broadcast_in_dim %[[T]], dims = []
// CHECK-DAG:  %[[FB:.*]] = stablehlo.broadcast_in_dim %[[F]], dims = []
// CHECK-DAG:  %[[R:.*]] = stablehlo.rsqrt %{{.*}} : tensor<4xf32>
// CHECK-DAG:  %[[G:.*]] = stablehlo.compare GE, %arg0, %{{.*}}
// CHECK:      return %[[A]], %[[S]], %[[TB]], %[[FB]], %[[R]], %[[G]], %[[E]]
func.func @known_not_negative(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %x = stablehlo.abs %a : tensor<4xf32>
  %m2 = stablehlo.constant dense<-2.0> : tensor<f32>
  %m2b = stablehlo.broadcast_in_dim %m2, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %p = stablehlo.power %x, %m2b : tensor<4xf32>
  %r0 = stablehlo.rsqrt %p : tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %oneb = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %q = stablehlo.divide %oneb, %x : tensor<4xf32>
  %r1 = stablehlo.rsqrt %q : tensor<4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %ge = stablehlo.compare GE, %x, %zb, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %gt = stablehlo.compare GT, %zb, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %pa = stablehlo.power %a, %m2b : tensor<4xf32>
  %r2 = stablehlo.rsqrt %pa : tensor<4xf32>
  %ga = stablehlo.compare GE, %a, %zb, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %e = stablehlo.exponential %a : tensor<4xf32>
  %ae = stablehlo.abs %e : tensor<4xf32>
  return %r0, %r1, %ge, %gt, %r2, %ga, %ae : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

// An elementwise op whose operands are all broadcasts, of one type with the same
// dimensions or of scalars, computes on the small shape and is broadcast after
// (XLA's TryToSinkBroadcastAfterElementwiseOps; x / x of a broadcast stays exactly
// 1: fuzz jit seed 7091); sunk ops sink again. Not past an operand that is no
// broadcast, broadcasts along other dimensions, or broadcasts that only add unit
// dimensions (XLA makes those reshapes first).
// CHECK-LABEL: func.func @sink_broadcasts
// CHECK:      %[[BS:.*]] = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %[[BS]] : tensor<3xf32>
// CHECK-NEXT: %[[A:.*]] = stablehlo.add %[[M]], %arg1 : tensor<3xf32>
// CHECK-NEXT: %[[AB:.*]] = stablehlo.broadcast_in_dim %[[A]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[C:.*]] = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT: %[[CB:.*]] = stablehlo.broadcast_in_dim %[[C]], dims = [1] : (tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %[[I:.*]] = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
// CHECK-NEXT: %[[IB:.*]] = stablehlo.broadcast_in_dim %[[I]], dims = [1]
// CHECK-NEXT: %[[N:.*]] = stablehlo.add %{{.*}}, %arg3 : tensor<2x3xf32>
// CHECK:      %[[T:.*]] = stablehlo.subtract %{{.*}}, %{{.*}} : tensor<3x3xf32>
// CHECK:      %[[E:.*]] = stablehlo.add %{{.*}}, %{{.*}} : tensor<1x3xf32>
// CHECK-NEXT: return %[[AB]], %[[CB]], %[[IB]], %[[N]], %[[T]], %[[E]]
func.func @sink_broadcasts(%x: tensor<3xf32>, %y: tensor<3xf32>, %s: tensor<f32>, %v: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<1x3xf32>) {
  %bx = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %by = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %m = stablehlo.multiply %bx, %bs : tensor<2x3xf32>
  %a = stablehlo.add %m, %by : tensor<2x3xf32>
  %c = stablehlo.compare LT, %bx, %by, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %i = stablehlo.convert %bx : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %n = stablehlo.add %bx, %v : tensor<2x3xf32>
  %tx = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %ty = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<3xf32>) -> tensor<3x3xf32>
  %t = stablehlo.subtract %tx, %ty : tensor<3x3xf32>
  %rx = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %ry = stablehlo.broadcast_in_dim %y, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
  %e = stablehlo.add %rx, %ry : tensor<1x3xf32>
  return %a, %c, %i, %n, %t, %e : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<1x3xf32>
}

// -----

// XLA's HandleReduce: a sum over the dims a broadcast added is the operand times
// their size plus the init; over dims of the broadcast's operand, any reducer reduces
// the operand and broadcasts after; a reduce of a reshape that leaves the kept dims
// alone reduces the reshape's operand; a sum of a sum is one sum (each adds in
// another order than as written). A plain reduce stays.
// CHECK-LABEL: func.func @reduce_rules
// CHECK:      %[[N:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NB:.*]] = stablehlo.broadcast_in_dim %[[N]], dims = []
// CHECK-NEXT: %[[IB:.*]] = stablehlo.broadcast_in_dim %arg2, dims = []
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg1, %[[NB]] : tensor<16xf32>
// CHECK-NEXT: %[[S0:.*]] = stablehlo.add %[[IB]], %[[M]] : tensor<16xf32>
// CHECK-NEXT: %[[S1:.*]] = stablehlo.reduce(%arg0 init: %arg2) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT: %[[S2:.*]] = stablehlo.reduce(%arg0 init: %arg2) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT: %[[X:.*]] = stablehlo.reduce(%arg0 init: %arg2) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[XB:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [] : (tensor<f32>) -> tensor<5xf32>
// CHECK-NEXT: %[[MI:.*]] = stablehlo.reduce(%arg0 init: %arg2) applies stablehlo.maximum across dimensions = [1]
// CHECK-NEXT: return %[[S0]], %[[S1]], %[[S2]], %[[XB]], %[[MI]]
func.func @reduce_rules(%a: tensor<8x16xf32>, %v: tensor<16xf32>, %z: tensor<f32>) -> (tensor<16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<5xf32>, tensor<8xf32>) {
  %row = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %s0 = stablehlo.reduce(%row init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  %r = stablehlo.reshape %a : (tensor<8x16xf32>) -> tensor<8x4x4xf32>
  %s1 = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [1, 2] : (tensor<8x4x4xf32>, tensor<f32>) -> tensor<8xf32>
  %i = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [2] : (tensor<8x4x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %s2 = stablehlo.reduce(%i init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  %cube = stablehlo.broadcast_in_dim %a, dims = [0, 2] : (tensor<8x16xf32>) -> tensor<8x5x16xf32>
  %m = stablehlo.reduce(%cube init: %z) applies stablehlo.maximum across dimensions = [0, 2] : (tensor<8x5x16xf32>, tensor<f32>) -> tensor<5xf32>
  %mi = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %s0, %s1, %s2, %m, %mi : tensor<16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<5xf32>, tensor<8xf32>
}

// -----

// A unit dim that a broadcast widens is the broadcast's own, as XLA's import makes
// it (a reshape dropping it, a broadcast adding it): a sum over it is the operand
// times its size (it once reduced the operand's size-1 dim: fuzz jit --loop 11056);
// one over the operand's other dim reduces the operand, then widens.
// CHECK-LABEL: func.func @reduce_of_a_widening_broadcast
// CHECK-NEXT: %[[X:.*]] = stablehlo.reshape %arg0 : (tensor<1x16xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[N:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NB:.*]] = stablehlo.broadcast_in_dim %[[N]], dims = []
// CHECK-NEXT: %[[IB:.*]] = stablehlo.broadcast_in_dim %arg1, dims = []
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[X]], %[[NB]] : tensor<16xf32>
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %[[IB]], %[[M]] : tensor<16xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.add across dimensions = [1] : (tensor<1x16xf32>, tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT: %[[T:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [0] : (tensor<1xf32>) -> tensor<8xf32>
// CHECK-NEXT: return %[[S]], %[[T]]
func.func @reduce_of_a_widening_broadcast(%a: tensor<1x16xf32>, %z: tensor<f32>) -> (tensor<16xf32>, tensor<8xf32>) {
  %w = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<8x16xf32>
  %s = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  %t = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  return %s, %t : tensor<16xf32>, tensor<8xf32>
}

// -----

// (a * c) * broadcast(s) is a * broadcast(s * c): the constant scales the small
// operand (x * 0.1 * scale).
// CHECK-LABEL: func.func @scale_broadcast_factor
// CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[SC:.*]] = stablehlo.multiply %arg1, %[[C]] : tensor<f32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[SC]], dims = []
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %[[B]]
// CHECK-NEXT: return %[[M]]
func.func @scale_broadcast_factor(%a: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.000000e-01> : tensor<f32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %m = stablehlo.multiply %a, %cb : tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %r = stablehlo.multiply %m, %sb : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// (c1 - a) + c2 is (c1 + c2) - a, the constants added in f32.
// CHECK-LABEL: func.func @constant_minus
// CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<8.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[C]], dims = []
// CHECK-NEXT: %[[D:.*]] = stablehlo.subtract %[[B]], %arg0
// CHECK-NEXT: return %[[D]]
func.func @constant_minus(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
  %b1 = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %c2 = stablehlo.constant dense<7.000000e-01> : tensor<f32>
  %b2 = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %d = stablehlo.subtract %b1, %a : tensor<4xf32>
  %r = stablehlo.add %d, %b2 : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// log(pow(a, b)) is select(b == 0, 0, log(abs(a)) * b), log(sqrt(a)) log(a) * 0.5
// and log(rsqrt(a)) log(a) * -0.5.
// CHECK-LABEL: func.func @log_of_power_or_root
// CHECK-NEXT: %[[A:.*]] = stablehlo.abs %arg0
// CHECK-NEXT: %[[L:.*]] = stablehlo.log %[[A]]
// CHECK-NEXT: %[[LB:.*]] = stablehlo.multiply %[[L]], %arg1
// CHECK:      %[[Z:.*]] = stablehlo.compare EQ, %arg1, %{{.*}}
// CHECK:      %[[P:.*]] = stablehlo.select %[[Z]], %{{.*}}, %[[LB]]
// CHECK-NEXT: %[[L1:.*]] = stablehlo.log %arg0
// CHECK-NEXT: %[[H:.*]] = stablehlo.constant dense<5.000000e-01>
// CHECK-NEXT: %[[HB:.*]] = stablehlo.broadcast_in_dim %[[H]]
// CHECK-NEXT: %[[S:.*]] = stablehlo.multiply %[[L1]], %[[HB]]
// CHECK-NEXT: %[[L2:.*]] = stablehlo.log %arg0
// CHECK-NEXT: %[[M:.*]] = stablehlo.constant dense<-5.000000e-01>
// CHECK-NEXT: %[[MB:.*]] = stablehlo.broadcast_in_dim %[[M]]
// CHECK-NEXT: %[[R:.*]] = stablehlo.multiply %[[L2]], %[[MB]]
// CHECK-NEXT: return %[[P]], %[[S]], %[[R]]
func.func @log_of_power_or_root(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p = stablehlo.power %a, %b : tensor<4xf32>
  %l0 = stablehlo.log %p : tensor<4xf32>
  %s = stablehlo.sqrt %a : tensor<4xf32>
  %l1 = stablehlo.log %s : tensor<4xf32>
  %r = stablehlo.rsqrt %a : tensor<4xf32>
  %l2 = stablehlo.log %r : tensor<4xf32>
  return %l0, %l1, %l2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// pow(a, 3) is a * (a * a) (a correctly rounded power is not); pow(a, 2) is a * a
// before log sees it, as under jax.jit; pow(x, 0.5) is sqrt(x) for an x XLA knows is
// not negative only.
// CHECK-LABEL: func.func @constant_powers
// CHECK-NEXT: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK-NEXT: %[[CU:.*]] = stablehlo.multiply %arg0, %[[SQ]]
// CHECK-NEXT: %[[SQ2:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK-NEXT: %[[L:.*]] = stablehlo.log %[[SQ2]]
// CHECK-NEXT: %[[H:.*]] = stablehlo.constant dense<5.000000e-01>
// CHECK-NEXT: %[[E:.*]] = stablehlo.abs %arg0
// CHECK-NEXT: %[[S:.*]] = stablehlo.sqrt %[[E]]
// CHECK-NEXT: %[[P:.*]] = stablehlo.power %arg0, %[[H]]
// CHECK-NEXT: return %[[CU]], %[[L]], %[[S]], %[[P]]
func.func @constant_powers(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c3 = stablehlo.constant dense<3.000000e+00> : tensor<4xf32>
  %p3 = stablehlo.power %a, %c3 : tensor<4xf32>
  %c2 = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
  %p2 = stablehlo.power %a, %c2 : tensor<4xf32>
  %l = stablehlo.log %p2 : tensor<4xf32>
  %ch = stablehlo.constant dense<5.000000e-01> : tensor<4xf32>
  %e = stablehlo.abs %a : tensor<4xf32>
  %ph = stablehlo.power %e, %ch : tensor<4xf32>
  %pa = stablehlo.power %a, %ch : tensor<4xf32>
  return %p3, %l, %ph, %pa : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// pow(exp(x), b) is exp(x * b) for any b, a constant 2 or 0.5 too (XLA's HandlePower
// tries it before the expansions; exp2(x) ** x rounded differently fused, fuzz
// --bitwise, jit seed 5012).
// CHECK-LABEL: func.func @power_of_exp
// CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<2.000000e+00>
// CHECK-NEXT: %[[M2:.*]] = stablehlo.multiply %arg0, %[[C]]
// CHECK-NEXT: %[[E2:.*]] = stablehlo.exponential %[[M2]]
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %arg1
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %[[M]]
// CHECK-NEXT: return %[[E2]], %[[E]]
func.func @power_of_exp(%x: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %c2 = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
  %p2 = stablehlo.power %e, %c2 : tensor<4xf32>
  %p = stablehlo.power %e, %b : tensor<4xf32>
  return %p2, %p : tensor<4xf32>, tensor<4xf32>
}

// -----

// An integer exponent (lax.pow(x, 3)) reaches the power through a convert, which
// XLA's constant folder folds first: the power then expands as a float one does.
// A bool converted is not a number these rules read.
// CHECK-LABEL: func.func @converted_integer_powers
// CHECK-NEXT: %[[SQ:.*]] = stablehlo.multiply %arg0, %arg0
// CHECK-NEXT: %[[CU:.*]] = stablehlo.multiply %arg0, %[[SQ]]
// CHECK-NEXT: %[[T:.*]] = stablehlo.constant dense<true>
// CHECK-NEXT: %[[TB:.*]] = stablehlo.broadcast_in_dim %[[T]]
// CHECK-NEXT: %[[TF:.*]] = stablehlo.convert %[[TB]]
// CHECK-NEXT: %[[P:.*]] = stablehlo.power %arg0, %[[TF]]
// CHECK-NEXT: return %[[CU]], %[[P]]
func.func @converted_integer_powers(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %b3 = stablehlo.broadcast_in_dim %c3, dims = [] : (tensor<i32>) -> tensor<4xi32>
  %f3 = stablehlo.convert %b3 : (tensor<4xi32>) -> tensor<4xf32>
  %p3 = stablehlo.power %a, %f3 : tensor<4xf32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %bt = stablehlo.broadcast_in_dim %t, dims = [] : (tensor<i1>) -> tensor<4xi1>
  %ft = stablehlo.convert %bt : (tensor<4xi1>) -> tensor<4xf32>
  %pt = stablehlo.power %a, %ft : tensor<4xf32>
  return %p3, %pt : tensor<4xf32>, tensor<4xf32>
}

// -----

// A broadcast of a reshape that only inserts unit dims broadcasts the reshape's
// operand, as XLA rewrites it before the divide's rules look (ball's
// g / (s ** (1 / p))[..., None]); then the divide by a broadcast power is a
// multiply by the broadcast inverse power.
// CHECK-LABEL: func.func @broadcast_of_unit_reshape
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %arg2
// CHECK-NEXT: %[[P:.*]] = stablehlo.power %arg1, %[[N]]
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[P]], dims = [0] : (tensor<4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %[[B]]
// CHECK-NEXT: return %[[M]]
func.func @broadcast_of_unit_reshape(%x: tensor<4x2xf32>, %s: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<4x2xf32> {
  %w = stablehlo.power %s, %p : tensor<4xf32>
  %r = stablehlo.reshape %w : (tensor<4xf32>) -> tensor<4x1xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x2xf32>
  %d = stablehlo.divide %x, %b : tensor<4x2xf32>
  return %d : tensor<4x2xf32>
}

// -----

// x / broadcast(s) stays a divide where s has another use (a / s + s under
// jax.jit), and a bf16 divide by a root stays (XLA CPU computes it in f32 between
// converts, which its patterns do not see through).
// CHECK-LABEL: func.func @divides_that_stay
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %arg0
// CHECK-NEXT: %[[D:.*]] = stablehlo.divide %arg1, %[[B]]
// CHECK:      %[[S:.*]] = stablehlo.sqrt %arg3
// CHECK-NEXT: %[[H:.*]] = stablehlo.divide %arg2, %[[S]]
func.func @divides_that_stay(%s: tensor<f32>, %a: tensor<4xf32>, %h: tensor<4xbf16>, %g: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %b0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %d = stablehlo.divide %a, %b0 : tensor<4xf32>
  %b1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %r = stablehlo.add %d, %b1 : tensor<4xf32>
  %t = stablehlo.sqrt %g : tensor<4xbf16>
  %q = stablehlo.divide %h, %t : tensor<4xbf16>
  return %r, %q : tensor<4xf32>, tensor<4xbf16>
}

// -----

// x / 1 is x, XLA's first divide rule, in bf16 too; not x * (1 / 1), which XLA
// folds back to x but our rules would leave. And taking a unit dim away and
// putting it back (x[:, 0][:, None]) is x, as XLA's simplifier makes it: var over a
// unit axis is then x - x, exactly 0, where a fused recomputed copy of x next to a
// read-back one met in an FMA (fuzzer, jit seed 10539: 1.7e-13).
// CHECK-LABEL: func.func @unit_divisor_and_unit_round_trip
// CHECK-NEXT: %[[D:.*]] = stablehlo.subtract %arg0, %arg0 : tensor<3x1xf32>
// CHECK-NEXT: %[[S:.*]] = stablehlo.multiply %[[D]], %[[D]]
// CHECK-NEXT: return %[[S]], %arg1
func.func @unit_divisor_and_unit_round_trip(%x: tensor<3x1xf32>, %h: tensor<3xbf16>) -> (tensor<3x1xf32>, tensor<3xbf16>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<3x1xf32>
  %r = stablehlo.reshape %x : (tensor<3x1xf32>) -> tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
  %mean = stablehlo.divide %b, %ones : tensor<3x1xf32>
  %d = stablehlo.subtract %x, %mean : tensor<3x1xf32>
  %s = stablehlo.multiply %d, %d : tensor<3x1xf32>
  %hone = stablehlo.constant dense<1.0> : tensor<bf16>
  %hones = stablehlo.broadcast_in_dim %hone, dims = [] : (tensor<bf16>) -> tensor<3xbf16>
  %q = stablehlo.divide %h, %hones : tensor<3xbf16>
  return %s, %q : tensor<3x1xf32>, tensor<3xbf16>
}

// -----

// x / broadcast(b) for a b of rank 1 or more is a multiply by the broadcast
// reciprocal whatever else reads b (here b + 1), as XLA CPU rewrites it; a scalar b
// read elsewhere keeps the divide (@divides_that_stay). Under XLA CPU a reciprocal
// below the smallest normal float is 0 (fuzzer, jit seed 10651).
// CHECK-LABEL: func.func @divide_by_broadcast_of_a_vector_read_twice
// CHECK:      %[[R:.*]] = stablehlo.divide %{{.*}}, %arg1 : tensor<2xf32>
// CHECK-NEXT: %[[RB:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[Q:.*]] = stablehlo.multiply %arg0, %[[RB]] : tensor<4x2xf32>
// CHECK:      return %[[Q]]
func.func @divide_by_broadcast_of_a_vector_read_twice(%a: tensor<4x2xf32>, %b: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %q = stablehlo.divide %a, %bb : tensor<4x2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %p = stablehlo.add %b, %one : tensor<2xf32>
  return %q, %p : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// A divisor already guarded as canonicalize guards it (select(d == 0, 1, d)) stays
// as it is, so canonicalize is idempotent; a user's where(p, 1, y) is no guard
// (it is y where p is false) and gets one.
// CHECK-LABEL: func.func @guarded_divisors
// CHECK:      %[[Q:.*]] = stablehlo.divide %arg0, %{{.*}} : tensor<4xui32>
// CHECK:      %[[G:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[Q]]
// CHECK:      %[[USER:.*]] = stablehlo.select %arg2, %{{.*}}, %arg1
// CHECK:      %[[SAFE2:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[USER]]
// CHECK-NEXT: %[[R:.*]] = stablehlo.divide %arg0, %[[SAFE2]]
// CHECK:      return %[[G]], %{{.*}}
func.func @guarded_divisors(%x: tensor<4xui32>, %y: tensor<4xui32>, %p: tensor<4xi1>) -> (tensor<4xui32>, tensor<4xui32>) {
  %zero = stablehlo.constant dense<0> : tensor<4xui32>
  %one = stablehlo.constant dense<1> : tensor<4xui32>
  %by_zero = stablehlo.compare EQ, %y, %zero : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %safe = stablehlo.select %by_zero, %one, %y : tensor<4xi1>, tensor<4xui32>
  %q = stablehlo.divide %x, %safe : tensor<4xui32>
  %all = stablehlo.constant dense<4294967295> : tensor<4xui32>
  %g = stablehlo.select %by_zero, %all, %q : tensor<4xi1>, tensor<4xui32>
  %user = stablehlo.select %p, %one, %y : tensor<4xi1>, tensor<4xui32>
  %r = stablehlo.divide %x, %user : tensor<4xui32>
  return %g, %r : tensor<4xui32>, tensor<4xui32>
}

// -----

// A dot_general of a converted bool stays a dot, its operands as they are: XLA's
// simplifier makes some such dots a select of the bool, by shape, and must see
// them as jax.jit hands them over (fuzz jit seed 10903).
// CHECK-LABEL: func.func @dot_of_a_converted_bool_stays
// CHECK-NEXT: %[[C:.*]] = stablehlo.convert %arg0 : (tensor<3x1xi1>) -> tensor<3x1xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %[[C]], %arg1, contracting_dims = [1] x [0] : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %[[D]]
func.func @dot_of_a_converted_bool_stays(%p: tensor<3x1xi1>, %x: tensor<1xf32>) -> tensor<3xf32> {
  %c = stablehlo.convert %p : (tensor<3x1xi1>) -> tensor<3x1xf32>
  %d = stablehlo.dot_general %c, %x, contracting_dims = [1] x [0] : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3xf32>
  return %d : tensor<3xf32>
}

// -----

// The same through the reshapes between them (a vector matmul of bools written
// with explicit axes): the dot stays, for XLA's simplifier to see the convert.
// CHECK-LABEL: func.func @dot_of_a_reshaped_converted_bool_stays
// CHECK-NEXT: %[[C:.*]] = stablehlo.convert %arg0 : (tensor<1xi1>) -> tensor<1xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %[[C]] : (tensor<1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %arg1, %[[R]], contracting_dims = [1] x [0] : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT: return %[[D]]
func.func @dot_of_a_reshaped_converted_bool_stays(%p: tensor<1xi1>, %x: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %c = stablehlo.convert %p : (tensor<1xi1>) -> tensor<1xf32>
  %r = stablehlo.reshape %c : (tensor<1xf32>) -> tensor<1x1xf32>
  %d = stablehlo.dot_general %x, %r, contracting_dims = [1] x [0] : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return %d : tensor<1x1xf32>
}

// -----

// XLA folds an op of constants before its simplifier runs; the exact ones are folded
// here too, and the simplifier's rules for bools and selects follow: hypot(x, 0.0) asks
// whether |0.0| is infinite, so or(|x| == inf, that) is the compare of numbers, which a
// fused select may take as its predicate with an on_true computed in the fusion. A
// compare of NaN stays; a large unsigned number compares as unsigned.
// CHECK-LABEL: func.func @exact_constants_fold
// CHECK:      %[[INF:.*]] = stablehlo.compare EQ, %arg0, %{{.*}}, FLOAT
// CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate %arg0
// CHECK-NEXT: %[[PICK:.*]] = stablehlo.select %[[INF]], %[[NEG]], %arg0
// CHECK-NEXT: %[[TRUE:.*]] = stablehlo.constant dense<true> : tensor<i1>
// CHECK:      %[[NAN:.*]] = stablehlo.compare NE, %cst{{.*}}, %cst{{.*}}, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT: return %[[PICK]], %[[TRUE]], %[[NAN]], %arg0
func.func @exact_constants_fold(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i1>, tensor<i1>, tensor<3xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %abs_zero = stablehlo.abs %zero : tensor<f32>
  %inf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %zero_is_inf = stablehlo.compare EQ, %abs_zero, %inf, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %no = stablehlo.broadcast_in_dim %zero_is_inf, dims = [] : (tensor<i1>) -> tensor<3xi1>
  %infs = stablehlo.broadcast_in_dim %inf, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %x_is_inf = stablehlo.compare EQ, %x, %infs, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %either = stablehlo.or %x_is_inf, %no : tensor<3xi1>
  %neg = stablehlo.negate %x : tensor<3xf32>
  %pick = stablehlo.select %either, %neg, %x : tensor<3xi1>, tensor<3xf32>
  %big = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
  %five = stablehlo.constant dense<5> : tensor<ui64>
  %gt = stablehlo.compare GT, %big, %five, UNSIGNED : (tensor<ui64>, tensor<ui64>) -> tensor<i1>
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %nan_ne = stablehlo.compare NE, %nan, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %f = stablehlo.not %t : tensor<i1>
  %fs = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<i1>) -> tensor<3xi1>
  %neither = stablehlo.and %x_is_inf, %fs : tensor<3xi1>
  %kept = stablehlo.select %neither, %neg, %x : tensor<3xi1>, tensor<3xf32>
  return %pick, %gt, %nan_ne, %kept : tensor<3xf32>, tensor<i1>, tensor<i1>, tensor<3xf32>
}
