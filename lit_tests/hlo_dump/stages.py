# RUN: hlo-dump %S/../../examples/mlp.py -f scaled_sum --stage all --no-locations | FileCheck %s
# RUN: hlo-dump %S/../../examples/mlp.py -f softmax --args 'f32[2,3]' | FileCheck %s --check-prefix=ARGS
# RUN: hlo-dump %S/../../examples/mlp.py | FileCheck %s --check-prefix=ALL
# RUN: hlo-dump %S/../../examples/mlp.py -f scaled_sum --stage fused | FileCheck %s --check-prefix=FUSEDLOC
# hlo-dump prints our IR, the StableHLO, the module after our fusion passes and
# XLA's optimized HLO of a function.
# RUN: hlo-dump %S/../../examples/mlp.py -f softmax --stage ir --no-locations --print-after-all --explain | FileCheck %s --check-prefix=PASSES
# PASSES: // ----- softmax: after inline-calls: 0 fusions (was 0), 0 candidates fused, 0 rejected -----
# PASSES: // ----- softmax: after canonicalize: 0 fusions (was 0), 0 candidates fused, 0 rejected -----
# PASSES: // ----- softmax: after instruction-fusion: {{[0-9]+}} fusions (was 0), {{[0-9]+}} candidates fused, {{[0-9]+}} rejected -----
# PASSES: // ----- softmax: after fusion-merger:
# PASSES: // ----- softmax: after sibling-fusion:
# PASSES: // ----- softmax: after producer-consumer-fusion:
# PASSES: // ----- softmax: fusion decisions (cpu) -----
# PASSES-NEXT: fusion report (cpu): {{[0-9]+}} fusions
# PASSES: [instruction-fusion] not fused: stablehlo.exponential {{.*}}: expensive stablehlo.exponential has users outside this fusion

# CHECK:      // ----- scaled_sum: ir -----
# CHECK-NEXT: func @scaled_sum(%0: f32[8,4], %1: f32[4]) -> (f32[]) {
# CHECK-NEXT:   %2: f32[4] = sin %1
# CHECK:      // ----- scaled_sum: stablehlo -----
# CHECK-NEXT: module @jit_scaled_sum
# CHECK:        stablehlo.sine %arg1 : tensor<4xf32>{{$}}
# CHECK:      // ----- scaled_sum: fused (cpu) -----
# CHECK:        "mhlo.fusion"(%arg0, %arg1) <{fusion_kind = #mhlo<fusion_kind kLoop>}>
# CHECK:      // ----- scaled_sum: hlo (fusion=tracehlo) -----
# CHECK:      HloModule jit_scaled_sum
# CHECK:      ENTRY
# CHECK:        fusion(%{{.*}}), kind=kLoop

# --args overrides HLO_DUMP; locations are on by default.
# ARGS:      func @softmax(%0: f32[2,3]) -> (f32[2,3]) {
# ARGS-NEXT:   %1: f32[2] = reduce_max[axes=(1,)] %0  loc("{{.*}}examples/mlp.py":17)

# Without -f, every function HLO_DUMP names is dumped.
# ALL: func @scaled_sum(
# ALL: func @softmax(
# ALL: func @mlp(%0: f32[32,64], %1: f32[64,128], %2: f32[128], %3: f32[128,10], %4: f32[10]) -> (f32[32,10])
# ALL:   dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] %0, %1

# The flags hlo-opt spells the same way; the old spellings stay as aliases.
# RUN: hlo-dump %S/../../examples/mlp.py -f softmax --stage fused --no-locations --print-ir-after-all --fusion-report | FileCheck %s --check-prefix=SHARED
# RUN: hlo-dump %S/../../examples/mlp.py -f softmax --stage hlo --fusion xla | FileCheck %s --check-prefix=XLA
# SHARED: // ----- softmax: fused (cpu) -----
# SHARED: "mhlo.fusion"
# SHARED: // ----- softmax: after producer-consumer-fusion:
# SHARED: // ----- softmax: fusion decisions (cpu) -----
# SHARED-NEXT: fusion report (cpu): {{[0-9]+}} fusions
# XLA: HloModule jit_softmax
# XLA: fusion

# The fused module keeps the user's locations: the function, its arguments and its
# return carry the def line, not the MLIR parser's own ("-":line:col).
# FUSEDLOC-NOT: "-"
# FUSEDLOC:     func.func public @main(%arg0: tensor<8x4xf32> loc("{{.*}}examples/mlp.py":12:0), %arg1: tensor<4xf32> loc("{{.*}}examples/mlp.py":12:0))
# FUSEDLOC-NOT: "-"
