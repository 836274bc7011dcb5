"""What every pass shares: declared options, the context; and the fusion passes'
per-function loop."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from . import opinfo
from .capability import Backend
from .graph import DataflowGraph, blocks
from .report import FusionReport
from .rewrite import Group, apply


@dataclass
class PassContext:
    backend: Backend
    report: FusionReport
    # function name -> arguments every call passes a constant (graph.constant_arguments);
    # fusing leaves call operands as they are, so one analysis serves every pass
    constant_args: dict[str, frozenset[int]]
    # graph.functions(module): found again only after a pass that moves_calls
    functions: list | None = None  # None: found by each pass
    # graph.op_names(module), found again with `functions`: inline-calls and
    # chlo-legalize skip a module without a call or a CHLO op (None: not known)
    op_names: frozenset[str] | None = None
    # block -> the DataflowGraph a fusion round planned on and left unchanged: the next
    # round or pass plans on it again (and on what it keeps) until a pass changes the
    # module; a fusion in one block can change another's (a value a region captures)
    graphs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Option:
    """A pass option, spelled `name=value` in a pipeline (`fusion-merger{max-operands=8}`);
    `hlo-opt --help` lists it with its help."""
    name: str
    type: type
    default: object  # None: the backend decides
    help: str
    minimum: int | None = None

    def accepts(self) -> str:
        """What a value must be, in words."""
        bound = "" if self.minimum is None else f" >= {self.minimum}"
        return f"{self.type.__name__}{bound}"

    def convert(self, pass_name: str, value):
        """`value` (a pipeline's text, or a Python value) as this option's type."""
        try:
            typed = self.type(value) if isinstance(value, str) else value
        except ValueError:
            typed = None
        if type(typed) is not self.type or (self.minimum is not None and typed < self.minimum):
            raise ValueError(f"pass {pass_name!r}: option {self.name!r} must be "
                             f"{self.accepts()}, got {value!r}")
        return typed


class Pass:
    """A named transformation of a module, as a pipeline string names it. Its
    summary for `hlo-opt --help` is the first paragraph of its module's docstring."""
    name = ""
    OPTIONS: tuple[Option, ...] = ()
    # whether it may add, erase or move a call, a function or a region holding one,
    # or add a CHLO op: the pass manager then finds the functions to fuse and the op
    # names again (graph.functions walks every op, 0.3 ms on a 116-op module)
    moves_calls = True

    def __init__(self, **options):
        declared = {o.name: o for o in self.OPTIONS}
        for key in options:
            if key not in declared:
                takes = (f"options: {', '.join(f'{o.name}={o.accepts()}' for o in self.OPTIONS)}"
                         if self.OPTIONS else "it takes no options")
                raise ValueError(f"pass {self.name!r} has no option {key!r}; {takes}")
        self.options = {k: declared[k].convert(self.name, v) for k, v in options.items()}

    def option(self, name: str):
        """The option's value: as given in the pipeline, else its default."""
        return self.options.get(name, next(o.default for o in self.OPTIONS if o.name == name))

    @classmethod
    def summary(cls) -> str:
        """One line: the module docstring's first paragraph, without its `Title:`."""
        paragraph = sys.modules[cls.__module__].__doc__.split("\n\n")[0]
        return " ".join(paragraph.split()).split(": ", 1)[-1]

    def run(self, module: ir.Module, ctx: PassContext) -> bool | None:
        """Transform `module`; False when it found nothing to change (None: it may
        have changed it), so the pass manager keeps what it knows of the module."""
        raise NotImplementedError


class FusionPass(Pass):
    """A pass plans groups on a fresh DataflowGraph and applies them; passes that enable
    further fusions by fusing (merger, sibling, multi-output) repeat until nothing
    changes."""
    moves_calls = False  # a fusion holds ops of one block; calls are never fused
    repeat = True
    OPTIONS = (Option("max-operands", int, None, "the most operands + results of one fusion, "
                      "at least 1 (default: the backend's)", minimum=1),)

    def max_operands(self, ctx: PassContext) -> int:
        return self.option("max-operands") or ctx.backend.max_operands

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        with module.context:
            for name, block in blocks(module, ctx.functions, ctx.graphs):
                # a function's own arguments may be constants at every call
                constants = (ctx.constant_args[name] if block.owner.operation.name == "func.func"
                             else frozenset())
                for _ in range(len(block.operations)):
                    graph = ctx.graphs.get(block)
                    if graph is None:
                        graph = DataflowGraph(block, constants, lacks_layouts=(
                            block.owner.operation.name in opinfo.CONTROL_FLOW
                            and ctx.backend.lacks_layouts(block)))
                        graph.reserved = ctx.backend.reserved_nodes(graph)
                    fusions = apply(graph, self.plan(graph, ctx), ctx.backend)
                    self.finish(fusions)
                    if fusions:
                        ctx.graphs.clear()
                    else:
                        ctx.graphs[block] = graph
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
        ctx.report.add(self.name, reason is None, tuple(map(graph.where, nodes)),
                       reason or why_fused)
        return reason is None
