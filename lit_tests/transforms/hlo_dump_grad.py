# RUN: hlo-dump %s -f df --stage ir | FileCheck %s
# hlo-dump takes a module-level transformed function; the backward pass's equations
# carry the source line of the forward operation they differentiate.
import tracehlo
import tracehlo.numpy as tnp


def f(x):
    return tnp.sum(tnp.sin(x) * x)


df = tracehlo.grad(f)
HLO_DUMP = {"df": ["f32[4]"]}

# CHECK:      func @f(%0: f32[4]) -> (f32[4]) {
# CHECK-NEXT:   %1: f32[4] = sin %0  loc("{{.*}}hlo_dump_grad.py":9)
# CHECK:        %7: f32[4] = cos %0  loc("{{.*}}hlo_dump_grad.py":9)
# CHECK:        %9: f32[4] = add %6, %8  loc("{{.*}}hlo_dump_grad.py":9)
# CHECK-NEXT:   return %9
