"""What every fusion pass shares: options, the per-function loop, the context."""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from .capability import Backend
from .graph import DataflowGraph, functions
from .library import library_chains
from .report import FusionReport
from .rewrite import Group, apply, canonicalize


@dataclass
class PassContext:
    backend: Backend
    report: FusionReport
    # function name -> arguments every call passes a constant (graph.constant_arguments);
    # fusing leaves call operands as they are, so one analysis serves every pass
    constant_args: dict[str, frozenset[int]]


class FusionPass:
    """A pass plans groups on a fresh DataflowGraph and applies them; passes that enable
    further fusions by fusing (merger, sibling, multi-output) repeat until nothing
    changes."""
    name = ""
    repeat = True
    OPTIONS = {"max-operands": int}

    def __init__(self, **options):
        unknown = set(options) - set(self.OPTIONS)
        if unknown:
            raise ValueError(f"pass {self.name!r} has no option {sorted(unknown)[0]!r}; "
                             f"options: {', '.join(self.OPTIONS)}")
        try:
            self.options = {k: self.OPTIONS[k](v) for k, v in options.items()}
        except ValueError:
            raise ValueError(f"pass {self.name!r}: option values must be "
                             f"{', '.join(t.__name__ for t in self.OPTIONS.values())}: "
                             f"{options}") from None

    def max_operands(self, ctx: PassContext) -> int:
        return self.options.get("max-operands", ctx.backend.max_operands)

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        with module.context:
            for func in functions(module):
                canonicalize(func.regions[0].blocks[0])
                for _ in range(len(list(func.regions[0].blocks[0].operations))):
                    constants = ctx.constant_args[func.attributes["sym_name"].value]
                    graph = DataflowGraph(func, constants)
                    if ctx.backend.library_reductions:
                        graph.reserved = library_chains(graph)
                    fusions = apply(graph, self.plan(graph, ctx), ctx.backend)
                    self.finish(fusions)
                    if not fusions or not self.repeat:
                        break

    def plan(self, graph: DataflowGraph, ctx: PassContext) -> list[Group]:
        raise NotImplementedError

    def finish(self, fusions: list) -> None:
        """Reshape the fusions a round built; a pass whose groups need a form the
        backend accepts (one variadic reduce) overrides this."""

    def record(self, ctx: PassContext, graph: DataflowGraph, nodes, reason: str | None,
               why_fused: str = "") -> bool:
        """Record a decision on `nodes`; True when `reason` (why not) is None."""
        ctx.report.record(self.name, reason is None, [graph.nodes[i] for i in nodes],
                          reason or why_fused)
        return reason is None
