# RUN: %python %s | FileCheck %s
# RUN: hlo-dump %s -f clip_step --stage stablehlo --no-locations | FileCheck %s --check-prefix=COND
# RUN: hlo-dump %s -f halve_until --stage stablehlo --no-locations | FileCheck %s --check-prefix=WHILE
# RUN: hlo-dump %s -f cumsum --stage stablehlo --no-locations | FileCheck %s --check-prefix=SCAN
# RUN: hlo-dump %s -f rnn_grad --stage stablehlo --no-locations | FileCheck %s --check-prefix=GRAD
# Control flow as sub-graphs: make_ir prints a cond's branches, a while's cond and body
# and a scan's body inline (a closed-over value becomes an extra operand), the text
# parses back to the same graph and verifies; the StableHLO is a stablehlo.case whose
# regions read the operands from the enclosing scope, a stablehlo.while, and for a scan
# a stablehlo.while over (index, carry, stacked ys) with dynamic_slice and
# dynamic_update_slice. Reverse mode of a scan is two loops, as in JAX: a forward scan
# that also stacks the residuals its backward step reads, and a backward scan.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from tracehlo import lax


def clip_step(x, k):
    return lax.cond(x >= 0, lambda v: v + k, lambda v: v - 3, x)


def halve_until(x):
    return lax.while_loop(lambda c: c > 1, lambda c: c * 0.5, x)


def cumsum(xs):
    return lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)


def rnn_loss(w, xs):
    def step(h, x):
        h = tnp.tanh(h * (w * 2) + x)
        return h, h
    return (lax.scan(step, xs[0], xs)[1] ** 2).sum()


rnn_grad = tracehlo.grad(rnn_loss)


HLO_DUMP = {"clip_step": ["f32[]", "f32[]"], "halve_until": ["f32[]"], "cumsum": ["f32[5]"],
            "rnn_grad": ["f32[3]", "f32[5,3]"]}
# COND-LABEL: func.func public @main(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32>
# COND:         %[[I:.*]] = stablehlo.convert %{{.*}} : (tensor<i1>) -> tensor<i32>
# COND-NEXT:    %[[R:.*]] = "stablehlo.case"(%[[I]]) ({
# COND-NEXT:      %[[C:.*]] = stablehlo.constant dense<3.000000e+00> : tensor<f32>
# COND-NEXT:      %[[S:.*]] = stablehlo.subtract %arg0, %[[C]] : tensor<f32>
# COND-NEXT:      stablehlo.return %[[S]] : tensor<f32>
# COND-NEXT:    }, {
# COND-NEXT:      %[[A:.*]] = stablehlo.add %arg0, %arg1 : tensor<f32>
# COND-NEXT:      stablehlo.return %[[A]] : tensor<f32>
# COND-NEXT:    }) : (tensor<i32>) -> tensor<f32>
# COND-NEXT:    return %[[R]] : tensor<f32>

# WHILE-LABEL: func.func public @main(%arg0: tensor<f32>) -> tensor<f32>
# WHILE:         %[[W:.*]] = stablehlo.while(%[[IT:.*]] = %arg0) : tensor<f32>
# WHILE-NEXT:    cond {
# WHILE:           %[[P:.*]] = stablehlo.compare GT, %[[IT]], %{{.*}}, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
# WHILE-NEXT:      stablehlo.return %[[P]] : tensor<i1>
# WHILE-NEXT:    } do {
# WHILE:           %[[M:.*]] = stablehlo.multiply %[[IT]], %{{.*}} : tensor<f32>
# WHILE-NEXT:      stablehlo.return %[[M]] : tensor<f32>
# WHILE-NEXT:    }
# WHILE-NEXT:    return %[[W]] : tensor<f32>

# SCAN-LABEL: func.func public @main(%arg0: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32>)
# SCAN:         %[[W:.*]]:3 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[YS:.*]] = %{{.*}}) : tensor<i32>, tensor<f32>, tensor<5xf32>
# SCAN-NEXT:    cond {
# SCAN-NEXT:      %[[LT:.*]] = stablehlo.compare LT, %[[I]], %{{.*}} : (tensor<i32>, tensor<i32>) -> tensor<i1>
# SCAN-NEXT:      stablehlo.return %[[LT]] : tensor<i1>
# SCAN-NEXT:    } do {
# SCAN-NEXT:      %[[X:.*]] = stablehlo.dynamic_slice %arg0, %[[I]], sizes = [1] : (tensor<5xf32>, tensor<i32>) -> tensor<1xf32>
# SCAN-NEXT:      %[[X0:.*]] = stablehlo.reshape %[[X]] : (tensor<1xf32>) -> tensor<f32>
# SCAN-NEXT:      %[[SUM:.*]] = stablehlo.add %[[C]], %[[X0]] : tensor<f32>
# SCAN-NEXT:      %[[ROW:.*]] = stablehlo.reshape %[[SUM]] : (tensor<f32>) -> tensor<1xf32>
# SCAN-NEXT:      %[[NEW:.*]] = stablehlo.dynamic_update_slice %[[YS]], %[[ROW]], %[[I]] : (tensor<5xf32>, tensor<1xf32>, tensor<i32>) -> tensor<5xf32>
# SCAN-NEXT:      %[[NEXT:.*]] = stablehlo.add %[[I]], %{{.*}} : tensor<i32>
# SCAN-NEXT:      stablehlo.return %[[NEXT]], %[[SUM]], %[[NEW]] : tensor<i32>, tensor<f32>, tensor<5xf32>
# SCAN-NEXT:    }
# SCAN-NEXT:    return %[[W]]#1, %[[W]]#2 : tensor<f32>, tensor<5xf32>

# GRAD-LABEL: func.func public @main
# GRAD-COUNT-2: stablehlo.while
# GRAD-NOT:     stablehlo.while


def main():
    f32 = np.float32
    g1 = tracehlo.make_ir(clip_step)(f32(1), f32(2))
    print(g1)
    # CHECK-LABEL: func @clip_step(%0: f32[], %1: f32[]) -> (f32[]) {
    # CHECK-NEXT:    %2: bool[] = compare[direction='GE'] %0, 0.0:f32[]
    # CHECK-NEXT:    %3: i32[] = convert_element_type[new_dtype=i32, weak_type=false] %2
    # CHECK-NEXT:    %4: f32[] = cond[branches=(func @branch0(%0: f32[], %1: f32[]) -> (f32[]) {
    # CHECK-NEXT:        %2: f32[] = sub %0, 3.0:f32[]
    # CHECK-NEXT:        return %2
    # CHECK-NEXT:      }, func @branch1(%0: f32[], %1: f32[]) -> (f32[]) {
    # CHECK-NEXT:        %2: f32[] = add %0, %1
    # CHECK-NEXT:        return %2
    # CHECK-NEXT:      })] %3, %0, %1
    # CHECK-NEXT:    return %4
    # CHECK-NEXT:  }

    g2 = tracehlo.make_ir(halve_until)(f32(10))
    print(g2)
    # CHECK-LABEL: func @halve_until(%0: f32[]) -> (f32[]) {
    # CHECK-NEXT:    %1: f32[] = while[cond=func @cond_fun(%0: f32[]) -> (bool[]) {
    # CHECK-NEXT:        %1: bool[] = compare[direction='GT'] %0, 1.0:f32[]
    # CHECK-NEXT:        return %1
    # CHECK-NEXT:      }, body=func @body_fun(%0: f32[]) -> (f32[]) {
    # CHECK-NEXT:        %1: f32[] = mul %0, 0.5:f32[]
    # CHECK-NEXT:        return %1
    # CHECK-NEXT:      }] %0
    # CHECK-NEXT:    return %1
    # CHECK-NEXT:  }

    g3 = tracehlo.make_ir(cumsum)(np.zeros(5, f32))
    print(g3)
    # CHECK-LABEL: func @cumsum(%0: f32[5]) -> (f32[], f32[5]) {
    # CHECK-NEXT:    %1: f32[], %2: f32[5] = scan[body=func @scan_body(%0: f32[], %1: f32[]) -> (f32[], f32[]) {
    # CHECK-NEXT:        %2: f32[] = convert_element_type[new_dtype=f32, weak_type=false] %0
    # CHECK-NEXT:        %3: f32[] = add %2, %1
    # CHECK-NEXT:        return %3, %3
    # CHECK-NEXT:      }, length=5, reverse=false, num_carry=1, num_consts=0] 0.0:f32[], %0
    # CHECK-NEXT:    return %1, %2
    # CHECK-NEXT:  }

    # The forward scan's one extra y is the residual the ys do not hold already: the
    # carry entering the step (%0, read by mul's VJP); tanh's result, read by its VJP,
    # is the y itself (%5). x is read by no VJP, and w * 2 reads only w, so it is
    # computed once before the backward scan (%7), not saved per step.
    g4 = tracehlo.make_ir(rnn_grad)(np.zeros(3, f32), np.zeros((5, 3), f32))
    print(g4)
    # CHECK-LABEL: func @rnn_loss(%0: f32[3], %1: f32[5,3]) -> (f32[3]) {
    # CHECK:         %4: f32[3], %5: f32[5,3], %6: f32[5,3] = scan[body=func @scan_body(%0: f32[3], %1: f32[3], %2: f32[3]) -> (f32[3], f32[3], f32[3]) {
    # CHECK:             %6: f32[3] = tanh %5
    # CHECK-NEXT:        return %6, %6, %0
    # CHECK-NEXT:      }, length=5, reverse=false, num_carry=1, num_consts=1] %3, %1, %0
    # CHECK-NEXT:    %7: f32[3] = mul %0, 2.0:f32[]
    # CHECK:         %15: f32[3], %16: f32[3] = scan[body=func @vjp_scan_body(%0: f32[3], %1: f32[3], %2: f32[3], %3: f32[3], %4: f32[3], %5: f32[3]) -> (f32[3], f32[3]) {
    # CHECK-NOT:     scan[
    # CHECK:           }, length=5, reverse=true, num_carry=2, num_consts=1] %13, %13, %5, %6, %12, %7
    # CHECK-NEXT:    return %16

    for g in (g1, g2, g3, g4):
        text = g.to_text(locations=True)
        again = tracehlo.parse_ir(text)
        tracehlo.verify(again)
        assert again.to_text(locations=True) == text
        print("roundtrip ok:", g.name)
    # CHECK: roundtrip ok: clip_step
    # CHECK: roundtrip ok: halve_until
    # CHECK: roundtrip ok: cumsum
    # CHECK: roundtrip ok: rnn_loss

    print(tracehlo.jit(cumsum)(np.arange(1, 6, dtype=f32))[1])
    # CHECK: [ 1.  3.  6. 10. 15.]


if __name__ == "__main__":  # hlo-dump runs this file for its definitions only
    main()
