# RUN: %python %s | FileCheck %s
# Derivative graphs as make_ir prints them: the backward pass staged after the forward
# one, dead code gone (grad(sin) holds no sin, the MLP's gradient no cotangent for its
# data, and w's cotangent is one dot_general with no transpose), and each graph parses
# back to the same text and verifies.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp


def show(g):
    tracehlo.verify(g)
    assert str(tracehlo.parse_ir(str(g))) == str(g)
    print(g)


show(tracehlo.make_ir(tracehlo.grad(tnp.sin))(1.0))
# CHECK-LABEL: func @sin(%0: f32[]) -> (f32[]) {
# CHECK-NEXT:    %2: f32[] = cos %0
# CHECK-NEXT:    %3: f32[] = mul 1.0:f32[], %2
# CHECK-NEXT:    return %3


def layer(params, x):
    w, b = params
    return tnp.sum(tnp.tanh(x @ w + b))


f32 = np.float32
show(tracehlo.make_ir(tracehlo.grad(layer))((np.zeros((3, 4), f32), np.zeros(4, f32)),
                                            np.zeros((2, 3), f32)))
# CHECK-LABEL: func @layer(%0: f32[3,4], %1: f32[4], %2: f32[2,3]) -> (f32[3,4], f32[4]) {
# CHECK-NEXT:    %3: f32[2,4] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] %2, %0
# CHECK-NEXT:    %4: f32[2,4] = broadcast_in_dim[shape=(2, 4), broadcast_dimensions=(1,)] %1
# CHECK-NEXT:    %5: f32[2,4] = add %3, %4
# CHECK-NEXT:    %6: f32[2,4] = tanh %5
# CHECK-NEXT:    %8: f32[2,4] = broadcast_in_dim[shape=(2, 4), broadcast_dimensions=()] 1.0:f32[]
# CHECK-NEXT:    %9: f32[2,4] = sub 1.0:f32[], %6
# CHECK-NEXT:    %10: f32[2,4] = mul %8, %9
# CHECK-NEXT:    %11: f32[2,4] = mul %10, %6
# CHECK-NEXT:    %12: f32[2,4] = add %10, %11
# CHECK-NEXT:    %13: f32[4] = reduce_sum[axes=(0,)] %12
# CHECK-NEXT:    %14: f32[3,4] = dot_general[dimension_numbers=(((0,), (0,)), ((), ()))] %2, %12
# CHECK-NEXT:    return %14, %13


def jvp_of_exp_times(x, t):
    return tracehlo.jvp(lambda x: tnp.exp(x) * x, (x,), (t,))


show(tracehlo.make_ir(jvp_of_exp_times)(np.zeros(3, f32), np.zeros(3, f32)))
# CHECK-LABEL: func @jvp_of_exp_times(%0: f32[3], %1: f32[3]) -> (f32[3], f32[3]) {
# CHECK-NEXT:    %2: f32[3] = exp %0
# CHECK-NEXT:    %3: f32[3] = mul %1, %2
# CHECK-NEXT:    %4: f32[3] = mul %2, %0
# CHECK-NEXT:    %5: f32[3] = mul %3, %0
# CHECK-NEXT:    %6: f32[3] = mul %2, %1
# CHECK-NEXT:    %7: f32[3] = add %5, %6
# CHECK-NEXT:    return %4, %7


@tracehlo.jit
def inner(x):
    return tnp.sin(x) * x


def jvp_of_call(x, t):
    return tracehlo.jvp(inner, (x,), (t,))


# jvp of a call is a call of the jvp'd callee
show(tracehlo.make_ir(jvp_of_call)(np.zeros(3, f32), np.zeros(3, f32)))
# CHECK-LABEL: func @jvp_of_call(%0: f32[3], %1: f32[3]) -> (f32[3], f32[3]) {
# CHECK-NEXT:    %2: f32[3], %3: f32[3] = pjit[name='jvp_inner', graph=func @jvp_inner(%0: f32[3], %1: f32[3]) -> (f32[3], f32[3]) {
# CHECK-NEXT:        %2: f32[3] = sin %0
# CHECK-NEXT:        %3: f32[3] = cos %0
# CHECK-NEXT:        %4: f32[3] = mul %1, %3
# CHECK-NEXT:        %5: f32[3] = mul %2, %0
# CHECK-NEXT:        %6: f32[3] = mul %4, %0
# CHECK-NEXT:        %7: f32[3] = mul %2, %1
# CHECK-NEXT:        %8: f32[3] = add %6, %7
# CHECK-NEXT:        return %5, %8
# CHECK-NEXT:      }] %0, %1
# CHECK-NEXT:    return %2, %3


def grad_of_call(x):
    return tracehlo.grad(lambda x: tnp.sum(inner(x)))(x)


# the VJP of a call is a call of a backward graph, which runs the callee again from its
# inputs; the forward call's results are unused, so it is gone
show(tracehlo.make_ir(grad_of_call)(np.zeros(3, f32)))
# CHECK-LABEL: func @grad_of_call(%0: f32[3]) -> (f32[3]) {
# CHECK-NEXT:    %3: f32[3] = broadcast_in_dim[shape=(3,), broadcast_dimensions=()] 1.0:f32[]
# CHECK-NEXT:    %4: f32[3] = pjit[name='vjp_inner', graph=func @vjp_inner(%0: f32[3], %1: f32[3]) -> (f32[3]) {
# CHECK-NEXT:        %2: f32[3] = sin %0
# CHECK-NEXT:        %4: f32[3] = mul %1, %0
# CHECK-NEXT:        %5: f32[3] = mul %2, %1
# CHECK-NEXT:        %6: f32[3] = cos %0
# CHECK-NEXT:        %7: f32[3] = mul %4, %6
# CHECK-NEXT:        %8: f32[3] = add %5, %7
# CHECK-NEXT:        return %8
# CHECK-NEXT:      }] %0, %3
# CHECK-NEXT:    return %4
