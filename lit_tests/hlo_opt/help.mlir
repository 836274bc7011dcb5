// hlo-opt --help lists every pass with its one-line summary and typed options; a
// malformed option names the pass, the option and what it accepts.
// RUN: hlo-opt --help | FileCheck %s
// RUN: not hlo-opt %s --pass-pipeline='fusion-merger{max-operands=two}' 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not hlo-opt %s --pass-pipeline='canonicalize{max-operands=2}' 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK:      passes (--pass-pipeline='NAME{OPTION=VALUE ...},...'; default: chlo-legalize,inline-calls,canonicalize,tree-reductions,instruction-fusion,fusion-merger,sibling-fusion,producer-consumer-fusion):
// CHECK-NEXT:   chlo-legalize              expand CHLO ops (lgamma, atan, erf_inv, ...) into StableHLO with the MLIR passes XLA's import runs{{.*}}
// CHECK-NEXT:   inline-calls        replace each func.call by a copy of its callee's body, as XLA's CallInliner does before its fusion{{.*}}
// CHECK-NEXT:   canonicalize               fold op(x, x), x / broadcast(b) to x * broadcast(1 / b), XLA's other value-changing float rewrites, convert(bool) * y to a select, empty values to constants, a dot_general of unit contractions to a multiply, unit free dimensions out of a dot_general, and erase dead code{{.*}}
// CHECK-NEXT:   tree-reductions            split a long float sum into a reduce_window of partial sums and a reduce of those{{.*}}
// CHECK-NEXT:   instruction-fusion         pull producers into their consumers{{.*}}
// CHECK-NEXT:     max-operands=<int>       the most operands + results of one fusion, at least 1 (default: the backend's)
// CHECK-NEXT:   fusion-merger              merge a loop fusion into all of its users, or into none.
// CHECK-NEXT:     max-operands=<int>
// CHECK-NEXT:   sibling-fusion             kernels that read the same operand become one kernel{{.*}}
// CHECK-NEXT:     max-operands=<int>
// CHECK-NEXT:   producer-consumer-fusion   fuse a producer into a consumer and keep the producer's value as an extra output{{.*}}
// CHECK-NEXT:     max-operands=<int>
// CHECK-EMPTY:

// TYPE: hlo-opt: error: pass 'fusion-merger': option 'max-operands' must be int >= 1, got 'two'
// NONE: hlo-opt: error: pass 'canonicalize' has no option 'max-operands'; it takes no options
