# RUN: %python %s | FileCheck %s
# The IR printout of a traced function: one typed line per equation, weak Python
# scalars inline as literals, and source lines on request.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp


def scaled_sum(first, second):
    return tnp.sum(first + tnp.sin(second) * 3.)


g = tracehlo.make_ir(scaled_sum)(np.zeros((8, 4), np.float32), np.zeros(4, np.float32))
print(g)
# CHECK-LABEL: func @scaled_sum(%0: f32[8,4], %1: f32[4]) -> (f32[]) {
# CHECK-NEXT:    %2: f32[4] = sin %1
# CHECK-NEXT:    %3: f32[4] = mul %2, 3.0:f32[]
# CHECK-NEXT:    %4: f32[8,4] = broadcast_in_dim[shape=(8, 4), broadcast_dimensions=(1,)] %3
# CHECK-NEXT:    %5: f32[8,4] = add %0, %4
# CHECK-NEXT:    %6: f32[] = reduce_sum[axes=(0, 1)] %5
# CHECK-NEXT:    return %6
# CHECK-NEXT:  }

print(g.to_text(locations=True))
# CHECK-LABEL: func @scaled_sum
# CHECK:         %2: f32[4] = sin %1  loc("{{.*}}print.py":10)


def promote(x, n):
    return x * 2, n + 1.5, x > n
g = tracehlo.make_ir(promote)(np.zeros(3, np.float16), np.zeros(3, np.int32))
print(g)
# Weak Python scalars keep the array's dtype; int32 + 1.5 becomes float32, and
# float16 vs int32 compares in float16 (JAX's promotion lattice, not NumPy's). As in
# JAX, int32 + 1.5 is weakly typed (the convert says weak_type=true).
# CHECK-LABEL: func @promote(%0: f16[3], %1: i32[3]) -> (f16[3], f32[3], bool[3]) {
# CHECK-NEXT:    %2: f16[3] = mul %0, 2.0:f16[]
# CHECK-NEXT:    %3: f32[3] = convert_element_type[new_dtype=f32, weak_type=true] %1
# CHECK-NEXT:    %4: f32[3] = add %3, 1.5:f32[]
# CHECK-NEXT:    %5: f16[3] = convert_element_type[new_dtype=f16, weak_type=false] %1
# CHECK-NEXT:    %6: bool[3] = compare[direction='GT'] %0, %5
# CHECK-NEXT:    return %2, %4, %6

const = np.arange(3, dtype=np.float32)
g = tracehlo.make_ir(lambda x: x + const)(np.zeros(3, np.float32))
print(g)
# Closed-over NumPy arrays become constants.
# CHECK-LABEL: func @lambda(%0: f32[3]) -> (f32[3]) {
# CHECK-NEXT:    %1: f32[3] = constant [0.0, 1.0, 2.0]
# CHECK-NEXT:    %2: f32[3] = add %0, %1
