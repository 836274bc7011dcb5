# RUN: %python %s | FileCheck %s
# RUN: hlo-dump %s -f batched_affine --stage stablehlo --no-locations | FileCheck %s --check-prefix=DUMP
# make_ir of vmap(f): the batched graph. A batched 1-D operand of a matmul keeps its
# batch axis leading, a free axis of the dot (a vector contracts as it is, as in
# JAX's matmul, with no unit axis added); a shared argument of full rank is
# broadcast, a scalar stays an inline literal; batch axes stay where the arguments have
# them (in_axes=1 and out_axes=1 add no transpose); a nested jit is a call of the
# batched callee; a per-example index is a gather with batching dimensions. Every
# printout parses back to the same text and verifies; hlo-dump finds a module-level
# vmap'd function.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax


def affine(x, w, b):
    return tnp.tanh(x @ w + b) * 2.0


batched_affine = tracehlo.vmap(affine, in_axes=(0, None, None))
HLO_DUMP = {"batched_affine": ["f32[8,4]", "f32[4,5]", "f32[5]"]}
# DUMP-LABEL: module @jit_affine
# DUMP:         func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<5xf32>) -> tensor<8x5xf32>
# DUMP:         stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
# DUMP:         stablehlo.tanh %{{.*}} : tensor<8x5xf32>


def row_sums(x):
    return lax.reduce_sum(lax.sin(x), (1,))


@tracehlo.jit
def scale(a, k):
    return a * k


def outer(xs, k):
    return tracehlo.vmap(scale, in_axes=(0, None))(xs, k)


def per_example_index(x, i):
    return x[i]


def main():
    g1 = tracehlo.make_ir(batched_affine)(
        np.zeros((8, 4), np.float32), np.zeros((4, 5), np.float32), np.zeros(5, np.float32))
    print(g1)
    # CHECK-LABEL: func @affine(%0: f32[8,4], %1: f32[4,5], %2: f32[5]) -> (f32[8,5]) {
    # CHECK-NEXT:    %3: f32[8,5] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] %0, %1
    # CHECK-NEXT:    %4: f32[8,5] = broadcast_in_dim[shape=(8, 5), broadcast_dimensions=(1,)] %2
    # CHECK-NEXT:    %5: f32[8,5] = add %3, %4
    # CHECK-NEXT:    %6: f32[8,5] = tanh %5
    # CHECK-NEXT:    %7: f32[8,5] = mul %6, 2.0:f32[]
    # CHECK-NEXT:    return %7
    # CHECK-NEXT:  }

    g2 = tracehlo.make_ir(tracehlo.vmap(row_sums, in_axes=1, out_axes=1))(
        np.zeros((2, 6, 4), np.float32))
    print(g2)
    # CHECK-LABEL: func @row_sums(%0: f32[2,6,4]) -> (f32[2,6]) {
    # CHECK-NEXT:    %1: f32[2,6,4] = sin %0
    # CHECK-NEXT:    %2: f32[2,6] = reduce_sum[axes=(2,)] %1
    # CHECK-NEXT:    return %2
    # CHECK-NEXT:  }

    g3 = tracehlo.make_ir(outer)(np.zeros((3, 4), np.float32), np.float32(2))
    print(g3)
    # CHECK-LABEL: func @outer(%0: f32[3,4], %1: f32[]) -> (f32[3,4]) {
    # CHECK-NEXT:    %2: f32[3,4] = pjit[name='scale', graph=func @scale(%0: f32[3,4], %1: f32[]) -> (f32[3,4]) {
    # CHECK-NEXT:        %2: f32[3,4] = mul %0, %1
    # CHECK-NEXT:        return %2
    # CHECK-NEXT:      }] %0, %1
    # CHECK-NEXT:    return %2
    # CHECK-NEXT:  }

    g4 = tracehlo.make_ir(tracehlo.vmap(per_example_index))(
        np.zeros((3, 5), np.float32), np.zeros(3, np.int32))
    print(g4)
    # CHECK-LABEL: func @per_example_index(%0: f32[3,5], %1: i32[3]) -> (f32[3]) {
    # CHECK:         %5: i32[3,1] = expand_dims[dimensions=(1,)] %4
    # CHECK-NEXT:    %6: f32[3,1] = gather[offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,), index_vector_dim=1, slice_sizes=(1, 1), mode='clip'] %0, %5
    # CHECK-NEXT:    %7: f32[3] = squeeze[dimensions=(1,)] %6

    for g in (g1, g2, g3, g4):
        text = g.to_text(locations=True)
        again = tracehlo.parse_ir(text)
        tracehlo.verify(again)
        assert again.to_text(locations=True) == text
        print("roundtrip ok:", g.name)
    # CHECK: roundtrip ok: affine
    # CHECK: roundtrip ok: row_sums
    # CHECK: roundtrip ok: outer
    # CHECK: roundtrip ok: per_example_index

    print(tracehlo.jit(outer)(np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(2)))
    # CHECK:      {{\[\[}} 0.  2.  4.]
    # CHECK-NEXT:  [ 6.  8. 10.]]


if __name__ == "__main__":  # hlo-dump runs this file for its definitions only
    main()
