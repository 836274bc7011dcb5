# RUN: %python %s | FileCheck %s
# A jit function called while tracing is one pjit equation holding the callee's graph,
# printed inline; it lowers to a private func.func and a func.call (XLA inlines it).
# Two calls with the same argument types share one traced graph, so one func.func.
import numpy as np
import tracehlo
import tracehlo.numpy as tnp
from tracehlo.lowering import lower_graph


@tracehlo.jit
def scale(a, k):
    return a * k


def caller(x):
    return scale(x, 2.0) + scale(x, 3.0)


g = tracehlo.make_ir(caller)(np.zeros(3, np.float32))
print(g)
# CHECK-LABEL: func @caller(%0: f32[3]) -> (f32[3]) {
# CHECK-NEXT:    %1: f32[3] = pjit[name='scale', graph=func @scale(%0: f32[3], %1: f32[]) -> (f32[3]) {
# CHECK-NEXT:        %2: f32[] = convert_element_type[new_dtype=f32, weak_type=false] %1
# CHECK-NEXT:        %3: f32[3] = mul %0, %2
# CHECK-NEXT:        return %3
# CHECK-NEXT:      }] %0, 2.0:f32[]
# CHECK-NEXT:    %2: f32[3] = pjit[name='scale', graph=func @scale(%0: f32[3], %1: f32[]) -> (f32[3]) {
# CHECK:           }] %0, 3.0:f32[]
# CHECK-NEXT:    %3: f32[3] = add %1, %2
# CHECK-NEXT:    return %3

print(lower_graph(g, locations=False))
# CHECK-LABEL: module @caller
# CHECK:         func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {
# CHECK-NEXT:      %0 = stablehlo.constant dense<2.0> : tensor<f32>
# CHECK-NEXT:      %1 = func.call @scale(%arg0, %0) : (tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>)
# CHECK-NEXT:      %2 = stablehlo.constant dense<3.0> : tensor<f32>
# CHECK-NEXT:      %3 = func.call @scale(%arg0, %2) : (tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>)
# CHECK-NEXT:      %4 = stablehlo.add %1, %3
# CHECK-NEXT:      return %4 : tensor<3xf32>
# CHECK-NEXT:    }
# CHECK-NEXT:    func.func private @scale(%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> (tensor<3xf32>) {
# CHECK-NEXT:      %0 = stablehlo.broadcast_in_dim %arg1, dims = []
# CHECK-NEXT:      %1 = stablehlo.multiply %arg0, %0
# CHECK-NEXT:      return %1 : tensor<3xf32>
# CHECK-NEXT:    }
# CHECK-NOT:     func.func

# The parsed text is the same graph, and XLA runs it.
again = tracehlo.parse_ir(g.to_text(locations=True))
tracehlo.verify(again)
assert again.to_text(locations=True) == g.to_text(locations=True)
print(tracehlo.jit(caller)(np.arange(3, dtype=np.float32)))
# CHECK: [ 0.  5. 10.]
