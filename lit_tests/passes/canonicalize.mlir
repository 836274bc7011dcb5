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
// once on the small operand. In bf16 the rounded reciprocal would change quotients,
// and a divisor as large as the quotient gains nothing: both stay divides.
// CHECK-LABEL: func.func @divide
// CHECK:      %[[EIGHT:.*]] = stablehlo.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.divide %[[ONE]], %[[EIGHT]] : tensor<f32>
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

// What stays: a max over a unit dim (only sums become reshapes), a divide of
// reshapes also returned at 8x1 (it would need a reshape back for that reader),
// a transposing broadcast_in_dim (not a reshape), and reshapes from two shapes.
// CHECK-LABEL: func.func @unit_dim_reshapes_that_stay
// CHECK: stablehlo.reduce(%{{.*}}) applies stablehlo.maximum
// CHECK: stablehlo.divide %{{.*}}, %{{.*}} : tensor<8x1xf32>
// CHECK: stablehlo.multiply %{{.*}} : tensor<2x1x2xf32>
// CHECK: stablehlo.add %{{.*}} : tensor<8x1xf32>
func.func @unit_dim_reshapes_that_stay(%x: tensor<8x1xf32>, %s: tensor<8xf32>, %t: tensor<2x2xf32>, %v: tensor<1x8xf32>) -> (tensor<8xf32>, tensor<8x1xf32>, tensor<2x1x2xf32>, tensor<8xf32>) {
  %m0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
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

// An integer division XLA would fold (both operands fold to constants, here after
// the self-compares fold) gets a safe divisor and XLA's run-time results selected:
// XLA's evaluator dies on x / 0 and INT_MIN / -1. A divide of a parameter stays.
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
// CHECK-NEXT: %[[V:.*]] = stablehlo.divide %[[XI]], %[[B]] : tensor<4xi32>
// CHECK-NEXT: return %[[RG]], %[[QG]], %[[V]]
func.func @constant_integer_division(%x: tensor<4xui16>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi32>) {
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
  return %r, %q, %v : tensor<4xi32>, tensor<4xui8>, tensor<4xi32>
}
