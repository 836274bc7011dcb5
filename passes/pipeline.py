"""The pass manager: a pipeline string names passes (with options, MLIR style:
`fusion-merger{max-operands=16}`), run in order over a parsed module."""
from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from . import opinfo
from .backends import get_backend, refused_fusions
from .canonicalize import Canonicalize
from .capability import Backend, UnsupportedFusionError, all_fusions
from .chlo_legalize import ChloLegalize
from .fusion_merger import FusionMerger
from .framework import FusionPass, Pass, PassContext
from .graph import blocks, constant_arguments, functions, op_names
from .instruction_fusion import InstructionFusion
from .mlir_io import parse, to_text, verify
from .producer_consumer_fusion import ProducerConsumerFusion
from .inline_calls import InlineCalls
from .report import FusionInfo, FusionReport, short_loc
from .rewrite import unfuse
from .sibling_fusion import SiblingFusion
from .tree_reductions import TreeReductions

PASSES: dict[str, type[Pass]] = {
    cls.name: cls for cls in (ChloLegalize, InlineCalls, Canonicalize, TreeReductions,
                              InstructionFusion, FusionMerger, SiblingFusion,
                              ProducerConsumerFusion)}
DEFAULT_PIPELINE = ("chlo-legalize,inline-calls,canonicalize,tree-reductions,"
                    "instruction-fusion,fusion-merger,sibling-fusion,producer-consumer-fusion")


def parse_pipeline(pipeline: str) -> list[Pass]:
    """`a,b{opt=1 other=2},c` -> pass instances; ValueError names what is wrong."""
    pieces, depth, start = [], 0, 0
    for k, ch in enumerate(pipeline + ","):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth not in (0, 1):
            raise ValueError(f"pipeline {pipeline!r}: unbalanced '{ch}' at offset {k}")
        if ch == "," and depth == 0:
            pieces.append(pipeline[start:k].strip())
            start = k + 1
    if depth:
        raise ValueError(f"pipeline {pipeline!r}: '{{' without its '}}'")
    if pieces == [""]:
        return []
    return [_parse_pass(piece, pipeline) for piece in pieces]


def _parse_pass(piece: str, pipeline: str) -> Pass:
    name, brace, opts = piece.partition("{")
    name = name.strip()
    if not name:
        raise ValueError(f"pipeline {pipeline!r}: a pass name is missing")
    if name not in PASSES:
        raise ValueError(f"unknown pass {name!r}; passes: {', '.join(PASSES)}")
    if brace and not opts.endswith("}"):
        raise ValueError(f"pass {name!r}: text after its options: {piece!r}")
    options = {}
    for kv in opts[:-1].split() if brace else ():
        key, eq, value = kv.partition("=")
        if not eq or not value:
            raise ValueError(f"pass {name!r}: option {key!r} needs a value ({key}=...)")
        if key in options:
            raise ValueError(f"pass {name!r}: option {key!r} given twice")
        options[key] = value
    return PASSES[name](**options)


def describe_passes() -> str:
    """Every pass with its one-line summary and options, for `hlo-opt --help`."""
    lines = [f"passes (--pass-pipeline='NAME{{OPTION=VALUE ...}},...'; default: "
             f"{DEFAULT_PIPELINE}):"]
    for name, cls in PASSES.items():
        lines.append(f"  {name:26} {cls.summary()}")
        lines.extend(f"    {f'{o.name}=<{o.type.__name__}>':24} {o.help}" for o in cls.OPTIONS)
    return "\n".join(lines)


class PassManager:
    """Runs passes in order; `after_pass(name, module)` sees the IR after each, and
    then each pass's output is verified, to name the pass that broke it; else the
    pipeline's output is verified once (jaxlib verifies again when it compiles)."""

    def __init__(self, pipeline: str = DEFAULT_PIPELINE, backend: str | Backend = "cpu",
                 after_pass: Callable[[str, ir.Module], None] | None = None,
                 import_probe: bool = True):
        self.passes = parse_pipeline(pipeline)
        self.backend = get_backend(backend)
        self.after_pass = after_pass
        self.import_probe = import_probe
        # the last module run's fusions (all_fusions) once the import's are undone, for
        # the guard after the pipeline: finding them walks every op
        self.fusions: list = []

    def run(self, module: ir.Module) -> FusionReport:
        with module.context:
            names = op_names(module)
            ctx = PassContext(self.backend, FusionReport(self.backend.name),
                              constant_arguments(module, names), functions(module, names),
                              names)
        for p in self.passes:
            changed = p.run(module, ctx) is not False
            if changed and not isinstance(p, FusionPass):  # graphs it did not keep up to date
                ctx.graphs.clear()
            if changed and p.moves_calls:
                with module.context:
                    ctx.op_names = op_names(module)
                    ctx.functions = functions(module, ctx.op_names)
            if self.after_pass:
                verify(module, f"<after {p.name}>")
                self.after_pass(p.name, module)
        if not self.after_pass:
            verify(module, "<after the pipeline>")
        self.fusions = unfuse_what_import_folds(module, ctx, self.import_probe)
        # not a closure over ctx, which holds the report: a cycle kept the module (and
        # its context, constants and all) alive until the garbage collector ran
        funcs = ctx.functions
        ctx.report.fusions_from = lambda: describe_fusions(module, funcs)
        return ctx.report


def unfuse_what_import_folds(module: ir.Module, ctx: PassContext, probe: bool = True) -> list:
    """Undo the fusions the backend's import would fold into an invalid module
    (Backend.import_problems; `probe`: with the import itself asked): their ops
    run as separate kernels, and the report says why. Returns the module's
    fusions (all_fusions) left."""
    with module.context:
        fusions = all_fusions(module)
        problems = ctx.backend.import_problems(fusions, probe)
        for k, reason in problems.items():
            ctx.report.record("xla-import", False, opinfo.fusion_body(fusions[k]), reason)
            unfuse(fusions[k])
        return all_fusions(module) if problems else fusions


def unfuse_what_the_backend_refuses(module: ir.Module, backend: Backend, report: FusionReport,
                                    given_fusions: bool, fusions: list | None = None) -> list:
    """check_backend as the last guard before XLA, which aborts on some fusions it
    cannot compile. The passes' own checks should never make such a fusion, so one
    found is a bug in them (fuzz hlo-opt seed 9338: instruction fusion took in an op
    that XLA's CSE merges with a member, leaving a broadcast read by two compares);
    rather than fail a valid program, its ops run unfused, and the report says why
    (the fuzzer counts that decision as a failure). A module that came with fusions
    of its own is refused as before (UnsupportedFusionError): whose a fusion is, is
    not known. `fusions`: all_fusions(module), if known; returns those left."""
    with module.context:
        fusions = all_fusions(module) if fusions is None else fusions
        refused = refused_fusions(fusions, backend)
        if refused and given_fusions:
            fusion, problem = refused[0]
            raise UnsupportedFusionError(f"{fusion.location}: {problem}")
        for fusion, problem in refused:
            report.record("check-backend", False, opinfo.fusion_body(fusion), problem)
            unfuse(fusion)
        return all_fusions(module) if refused else fusions


def describe_fusions(module: ir.Module, funcs: list | None = None) -> list[FusionInfo]:
    """Each mhlo.fusion with its ops, locations, kind and modelled bytes saved
    (`funcs`: graph.functions(module), if known)."""
    infos = []
    with module.context:
        for name, block in blocks(module, funcs):
            for op in block.operations:
                if opinfo.name(op) != opinfo.FUSION:
                    continue
                body = opinfo.fusion_body(op)
                unfused = sum(_op_bytes(o) for o in body if opinfo.name(o) != "stablehlo.constant")
                kind = str(op.operation.attributes["fusion_kind"])
                infos.append(FusionInfo(
                    function=name,
                    kind=kind.removeprefix("#mhlo<fusion_kind ").removesuffix(">"),
                    ops=tuple(opinfo.name(o) for o in body),
                    locations=tuple(dict.fromkeys(short_loc(o) for o in body)),
                    bytes_saved=unfused - _op_bytes(op, written_only=True)))
    return infos


def _op_bytes(op, written_only: bool = False) -> int:
    """Bytes `op` would move as its own kernel: cost.group_bytes of it alone, which
    counts only the results something reads (`written_only`; XLA drops the others,
    unless they leave a multi-result op)."""
    operation = op.operation
    results = operation.results
    return (sum(opinfo.type_bytes(v.type) for v in dict.fromkeys(operation.operands))
            + sum(opinfo.type_bytes(r.type) for r in results
                  if not written_only or len(results) > 1 or opinfo.is_read(r)))


class FusionResult:
    """The fused module, its report, and the XLA passes it must be compiled without.
    The module goes to XLA as it is (runtime.compile), as JAX hands XLA its modules:
    printing it and XLA parsing the text again cost about 4 ms of a first call (train
    step). Its text, with source locations, is printed when first asked; the module
    is kept as long as the result (and its context with it: mlir_io.make_context)."""

    def __init__(self, module: ir.Module, report: FusionReport,
                 xla_passes_off: tuple[str, ...] = ()):
        self.module, self.report, self.xla_passes_off = module, report, xla_passes_off
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = to_text(self.module, debug_info=True)
        return self._text

    def __str__(self) -> str:
        return self.text


def fuse_with_report(stablehlo_text: str, backend: str | Backend = "cpu",
                     pipeline: str = DEFAULT_PIPELINE,
                     after_pass: Callable[[str, ir.Module], None] | None = None,
                     import_probe: bool = True) -> FusionResult:
    """`import_probe=False` leaves out the conversion that asks XLA's import which
    fusions its folders break (6 ms of C++ per module): XLA's verifier refuses such
    a module when it compiles it, with an error, never an abort, and the caller
    must then fuse again with the probe (tracehlo.jit does)."""
    module = parse(stablehlo_text)
    manager = PassManager(pipeline, backend, after_pass, import_probe)
    report = manager.run(module)
    fusions = unfuse_what_the_backend_refuses(module, manager.backend, report,
                                              opinfo.FUSION in stablehlo_text, manager.fusions)
    return FusionResult(module, report, manager.backend.xla_passes_off(fusions))


def fuse(stablehlo_text: str, backend: str | Backend = "cpu") -> str:
    return fuse_with_report(stablehlo_text, backend).text
