"""The backends the passes fuse for, by name, and check_backend.

Each is a capability.Backend: its limits, and hooks whose defaults are what XLA
does after us on any device. A backend whose XLA does more overrides hooks here;
the framework and the passes only call them, so a new target is one entry below.
"""
from __future__ import annotations

from dataclasses import dataclass

import jaxlib

from . import opinfo, small_loops
from .capability import Backend, UnsupportedFusionError, all_fusions, fusion_problem
from .cost import COST_PARAMS
from .graph import DataflowGraph
from .library import library_chains, library_reduce
from .mlir_io import parse
from .tree_reductions import order_dependent

# XLA CPU's TreeReductionRewriter window: partial reductions of this many elements
TREE_WINDOW = 32

# jaxlib 0.11's XLA CPU emits some loop fusions with its tiled emitter, which reads a
# fused iota's layout: `a + arange(3)` fused aborted the process there (seen on 0.11.2,
# "Check failed: has_layout() s32[3]" in xtile's EmitIota); 0.10.2 compiles it.
_TILED_EMITTER_READS_IOTA_LAYOUT = tuple(map(int, jaxlib.__version__.split(".")[:2])) >= (0, 11)


@dataclass(frozen=True)
class XlaCpu(Backend):
    """XLA CPU, which hands f32 reductions and the chains after them to its library
    (YNNPACK, library.py): a kernel there beats any loop fusion of ours; and adds up
    other long reductions as a tree (tree_reductions.py)."""

    def reserved_nodes(self, graph: DataflowGraph) -> dict[int, str]:
        return library_chains(graph)

    def lacks_layouts(self, block) -> bool:
        """Only where its small-while-loop pass may compile a loop whole (small_loops.py);
        its fusion emitters, everywhere else, need no layouts inside a fusion."""
        return small_loops.lacks_layouts(block)

    def tree_reduction_window(self, op) -> int | None:
        """XLA CPU's TreeReductionRewriter splits every reduce over a dimension longer
        than 32; only an order-dependent one is split here, and not a sum its library
        takes whole (measured, jaxlib 0.10.2: 33 elements are split, 32 not,
        in f16, bf16, f32 and f64; f32 and f64 sums of 4096 and more are YNNPACK's)."""
        if not order_dependent(op) or library_reduce(op):
            return None
        shape = op.operation.operands[0].type.shape
        if 0 in shape:  # nothing to add up
            return None
        if any(shape[d] > TREE_WINDOW for d in opinfo.int_array(op.attributes["dimensions"])):
            return TREE_WINDOW
        return None

    def fuse_alone(self, graph: DataflowGraph, root: int) -> str | None:
        """XLA CPU computes bf16 arithmetic in f32 (its CpuFloatSupport keeps only data
        movement in bf16): with its fusion off, a plain bf16 exp is three kernels,
        convert, exp and convert; a fusion of the exp alone is one, the converts inside
        (measured, jaxlib 0.10.2: the same bits as XLA's own fusion for 25 ops on
        subnormal, infinite, NaN and random inputs). Not in a loop XLA compiles whole,
        where a fused bf16 op converted inside its fusion aborts XLA
        (capability.region_read_problem)."""
        name = graph.name(root)
        if not graph.lacks_layouts and name in opinfo.COMPUTED_IN_F32 and any(
                opinfo.element_type(v.type) == "bf16"
                for v in (*graph.reads[root], *graph.results(root))):
            return (f"a bf16 {name} alone: XLA CPU computes it in f32, unfused as three "
                    "kernels (convert, op, convert), fused as one")
        return None

    def leave_unfused(self, graph: DataflowGraph, root: int, members: set[int]) -> str | None:
        if all(graph.name(i) == "stablehlo.constant" for i in members - {root}) and (
                library_reduce(graph.nodes[root])):
            return "a reduce alone: XLA CPU's library computes it faster than a loop fusion"
        return None


BACKENDS = {
    # logistic inside a kLoop fusion: "Unsupported elementwise operation"; a bf16
    # multi-result reduce inside one: "Check failed: has_layout()" (jaxlib 0.10.2)
    "cpu": XlaCpu("cpu", frozenset({"kLoop"}), multi_output=False, reduce_inside_loop=True,
                  max_operands=64, cost=COST_PARAMS["cpu"],
                  unfusible_ops=frozenset({"stablehlo.logistic"}),
                  ops_reading_layouts=frozenset(
                      {"stablehlo.iota"} if _TILED_EMITTER_READS_IOTA_LAYOUT else ()),
                  variadic_reduce_unfusible_types=frozenset({"bf16"}),
                  # measured: a chain of 3,300 fused elementwise ops aborts XLA CPU's
                  # loop emitter ("has_layout()" in PartitionedComputations), 3,100 not
                  max_fused_ops=1000),
    # Not measured (no GPU client here): XLA's GPU emitters take loop, input
    # (reduction) and multi-output fusions. Assumed as on CPU: the layout limits
    # (capability.py; our fusions reach XLA before its layout assignment there too),
    # XLA's import folding and reshape-mover (shared HLO passes). Nothing is left to
    # a library: XLA GPU's own library fusions (cuDNN, cuBLAS epilogues) are not
    # modelled, so no reduce chain is reserved.
    "gpu": Backend("gpu", frozenset({"kLoop", "kInput"}), multi_output=True,
                   reduce_inside_loop=False, max_operands=96, cost=COST_PARAMS["gpu"],
                   # XLA's GPU client's (getGpuChloToHighLevelMhloOptions)
                   chlo_to_mhlo_options=" ".join(f"enable-{op}=true" for op in (
                       "acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh"))),
}
_ALIASES = {"cuda": "gpu", "rocm": "gpu", "host": "cpu"}


def get_backend(name: str | Backend) -> Backend:
    """The backend of that name; a Backend itself (one not listed here) as it is."""
    if isinstance(name, Backend):
        return name
    try:
        return BACKENDS[_ALIASES.get(name, name)]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}") from None


def check_backend(module, backend: str | Backend = "cpu") -> None:
    """Raise UnsupportedFusionError for the first mhlo.fusion in `module` (an
    ir.Module or its text) that `backend` cannot compile."""
    if isinstance(module, str):
        module = parse(module)
    target = get_backend(backend)
    fusions = all_fusions(module)
    for fusion, problem in refused_fusions(fusions, target):
        raise UnsupportedFusionError(f"{fusion.location}: {problem}")
    for k, problem in target.import_problems(fusions).items():
        raise UnsupportedFusionError(f"{fusions[k].location}: {problem}")


def refused_fusions(fusions: list, backend: Backend) -> list[tuple]:
    """(fusion, why) for each of `fusions` that `backend` cannot compile, asked
    before any is changed (capability.fusion_problem; its memo holds their ops)."""
    memo: dict = {}
    return [(f, problem) for f in fusions
            if (problem := fusion_problem(f, backend, memo)) is not None]
