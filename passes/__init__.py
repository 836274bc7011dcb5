"""tracehlo.passes: fusion passes over any StableHLO module.

Python API
    fuse(stablehlo_text, backend="cpu") -> str
        The default pipeline (chlo-legalize, inline-calls, canonicalize, tree-reductions,
        instruction-fusion, fusion-merger, sibling-fusion, producer-consumer-fusion)
        for `backend` ("cpu", "gpu", or a Backend of one's own: every `backend`
        argument takes either); returns the fused module as text with every source
        location kept, checked with check_backend so XLA can compile it (a fusion
        of ours it refuses is undone, the reason in the report as a "check-backend"
        decision; one the input came with raises UnsupportedFusionError).
    fuse_with_report(stablehlo_text, backend="cpu", pipeline=DEFAULT_PIPELINE,
                     after_pass=None, import_probe=True) -> FusionResult(text, report, xla_passes_off)
        The same, with a FusionReport: `.fusions` (FusionInfo: function, kind, ops,
        locations, bytes_saved) and `.decisions` (Decision: pass_name, fused, ops,
        reason; `.rejected` lists the refused ones). str(report) is readable text.
        `import_probe=False` skips asking XLA's import (below) for a caller that
        compiles the result and fuses again with it if XLA refuses (tracehlo.jit).
    check_backend(module_or_text, backend="cpu") -> None
        Raises UnsupportedFusionError for any mhlo.fusion the backend cannot
        compile (on CPU: kInput, multi-output other than one variadic reduce),
        before XLA sees it: XLA CPU aborts the process on some of them.
    PassManager(pipeline, backend="cpu", after_pass=None).run(module) -> FusionReport
        Runs a pipeline string such as "instruction-fusion,fusion-merger{max-operands=8}"
        on an ir.Module from parse(text); after_pass(name, module) sees each step.
        Options are typed (framework.Option); a malformed one is a ValueError.
    describe_passes() -> str
        Every pass, its one-line summary and options (`hlo-opt --help`).
    parse(text, filename="<string>") -> ir.Module; to_text(module, debug_info=False)
        ParseError carries MLIR's diagnostic as `file:line:col: error: ...`.

What reaches XLA CPU (each limit measured in a subprocess, see capability.py and
python_tests/test_passes_capability.py): single-output kLoop fusions of
elementwise ops, broadcasts and reductions, or one variadic reduce as the root;
never transpose, concatenate, reshape or what XLA turns into a reshape (they
abort it inside fusions); a fused select takes on_true from a parameter; no
arithmetic on constants (constant call arguments included) and no op(x, x) that
XLA folds (it would leave a fused parameter unread); no multi-result bf16 reduce,
and none with an unread result among three or more; no fused bf16 select; no
fused value (a bf16 parameter included) read by several ops that XLA CPU's loop
emitter would split into functions (the function result needs a layout ops inside
our fusions lack); no fusions in functions called from a loop or branch body (the
inline-calls pass first inlines every call, as XLA does, so their ops fuse in the
body). In a while loop XLA CPU compiles whole, one touching under 1 KiB an
iteration (small_loops.py), a fusion is laid out at its parameters, constants and
root only: no reduce, no broadcast widening a unit dim, and no op reading a value
computed in the fusion through a layout, in a fusion there. A module holding a
fusion of elementwise ops only is compiled without XLA's reshape-mover
(FusionResult.xla_passes_off). What XLA CPU's library (YNNPACK) computes better
than a loop fusion, f32 reduce + broadcast + elementwise chains of 4096+ elements,
is left to it (library.py).

The chlo-legalize pass first expands CHLO ops into StableHLO with the MLIR passes
XLA's import runs on them (erf stays an op of its own, mhlo.erf), so that their ops
fuse with their neighbours as under JAX's jit. The inline-calls pass then replaces each
call by its callee's body, as XLA's call inliner would (a constant argument passes through an identity call, so that XLA
folds what the callee computes from it as it would through the call). Canonicalize then folds
idempotent op(x, x), makes zero-element values constants and erases dead code, as
XLA would after us. Tree-reductions splits a long float sum into partial sums as
XLA CPU does before its fusion (a fused sum would add up in another order). Last,
each fusion is converted as XLA's import converts it
(xla_import.py): one its folders would leave with an unread parameter is undone,
and check_backend refuses it. That conversion costs about 6 ms a module and is
rarely needed; XLA's verifier refuses such a module with an error, never an abort,
so tracehlo.jit compiles first and asks the import only after a refusal. Ops the passes do not know (calls, control flow, custom calls, other dialects) are left
alone, never fused.

Backends: the framework, the passes and the pass manager ask a Backend (its limits,
and hooks for what XLA does after us: lacks_layouts, reserved_nodes, leave_unfused,
tree_reduction_window, import_problems, xla_passes_off; and chlo_to_mhlo_options) and
never which backend it is. The hooks'
defaults are XLA's on any device; XlaCpu overrides the ones for its library
kernels, its tree reductions and its small loops. A new target is a new Backend (an entry in backends.BACKENDS, or passed
as `backend`).

Modules: graph (dataflow view), opinfo (what each op is), legality (XLA's rules),
cost (bytes, flops, launches), capability (the Backend: limits, hooks, and the
per-fusion check), backends (the backends by name, check_backend), library (what
XLA CPU's library kernels take), small_loops (the loops XLA CPU compiles whole),
xla_import (what XLA's import folds in a fusion),
rewrite (groups -> mhlo.fusion), framework (pass base classes and their typed
options), one module per pass (chlo_legalize, inline_calls, canonicalize, tree_reductions and the four
fusions),
pipeline (pass manager, fuse), report, mlir_io.

The command line `hlo-opt` (tools/hlo_opt.py) is a thin layer over the same calls.
"""
from .backends import BACKENDS, check_backend
from .capability import Backend, UnsupportedFusionError
from .mlir_io import ParseError, parse, to_text
from .pipeline import (DEFAULT_PIPELINE, PASSES, FusionResult, PassManager, describe_passes,
                       fuse, fuse_with_report)
from .report import Decision, FusionInfo, FusionReport

__all__ = ["BACKENDS", "Backend", "DEFAULT_PIPELINE", "PASSES", "Decision", "FusionInfo",
           "FusionReport", "FusionResult", "ParseError", "PassManager",
           "UnsupportedFusionError", "check_backend", "describe_passes", "fuse",
           "fuse_with_report", "parse", "to_text"]
