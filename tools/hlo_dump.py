"""hlo-dump: show what a Python function becomes, stage by stage.

    hlo-dump FILE.py [-f NAME] [--args SPEC ...] [--stage ir|stablehlo|fused|hlo|all]
                     [--no-locations] [--print-ir-after-all] [--fusion-report]
                     [--fusion tracehlo|xla|none] [--backend cpu|gpu]

Stages: `ir` is our IR; `stablehlo` the lowered module; `fused` that module after
our fusion passes; `hlo` XLA's optimized HLO, i.e. the kernels that run (built
with --fusion, default tracehlo). --print-ir-after-all prints the module after
each fusion pass with a one-line summary; --fusion-report prints every fusion
decision and its reason (old spellings: --print-after-all, --explain). All stages,
and the modules after each pass, come from one tracehlo.compile (the passes run
again only for a --backend the compile did not fuse for).

Example arguments come from --args (`f32[8,4]`, `i32[]`, `bool[3]`, ...) or from
the file itself: a module-level dict

    HLO_DUMP = {"softmax": ["f32[8,16]"], "mlp": ["f32[32,64]", "f32[64,10]"]}

names the functions to dump and their argument types. Without -f, every function
in HLO_DUMP is dumped. Errors in the file (a missing name, a syntax error, a
tracing error) are reported at the file's own line, without our traceback.
"""
from __future__ import annotations

import argparse
import functools
import os
import re
import runpy
import sys
import traceback

STAGES = ("ir", "stablehlo", "fused", "hlo")
_SPEC = re.compile(r"^\s*([a-z]+\d*)\[([^\]]*)\]\s*$")
_INT64_MAX = 2**63 - 1


class UsageError(Exception):
    """A problem to report in one line and exit non-zero."""


class ExampleArg:
    """An example argument's type. Tracing and compiling read only shape and dtype,
    so a spec costs nothing however large (no zero array is allocated)."""

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype = shape, dtype


def parse_spec(spec) -> ExampleArg:
    """'f32[8,4]' -> ExampleArg((8, 4), float32)."""
    import math

    from tracehlo import dtypes
    usage = "expected DTYPE[DIMS] like f32[8,4] or i32[]"
    m = _SPEC.match(spec) if isinstance(spec, str) else None
    if not m:
        raise UsageError(f"bad argument spec {spec!r}: {usage}")
    if m.group(1) not in dtypes.FROM_SHORT_NAME:
        names = ", ".join(sorted(dtypes.FROM_SHORT_NAME))
        raise UsageError(f"bad argument spec {spec!r}: unknown dtype {m.group(1)!r} "
                         f"(dtypes: {names})")
    text = m.group(2).replace(" ", "")
    words = text.split(",") if text else []
    if not all(w.isdigit() for w in words):
        raise UsageError(f"bad argument spec {spec!r}: dimensions must be non-negative "
                         f"integers separated by commas; {usage}")
    dims = tuple(int(w) for w in words)
    if math.prod(dims) > _INT64_MAX or any(d > _INT64_MAX for d in dims):
        raise UsageError(f"bad argument spec {spec!r}: more elements than int64 can count "
                         f"(at most {_INT64_MAX})")
    return ExampleArg(dims, dtypes.FROM_SHORT_NAME[m.group(1)])


def _user_frame_message(exc: BaseException, path: str) -> str:
    """`file:line: Type: message` at the innermost frame in the user's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) == path]
    text = f"{type(exc).__name__}: {exc}"
    if frames and not str(exc).startswith(path):
        f = frames[-1]
        return f"{f.filename}:{f.lineno}: {text}\n    {f.line}"
    return text


def load_module(path: str) -> dict:
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    try:
        return runpy.run_path(path, run_name="__hlo_dump__")
    except SyntaxError as e:
        raise UsageError(f"{e.filename}:{e.lineno}: SyntaxError: {e.msg}\n    "
                         f"{(e.text or '').rstrip()}") from None
    except Exception as e:  # the user's module failed while loading
        raise UsageError(_user_frame_message(e, path)) from None


def select_functions(namespace: dict, name: str | None, arg_specs, path):
    """[(name, fn, [example arrays])] to dump."""
    declared = namespace.get("HLO_DUMP", {})
    bad = not isinstance(declared, dict) or next(
        (f"{k!r}: {v!r}" for k, v in declared.items()
         if not isinstance(v, (list, tuple)) or not all(isinstance(s, str) for s in v)), None)
    if bad:
        where = "" if bad is True else f" (got {bad})"
        raise UsageError(f"{path}: HLO_DUMP must be a dict of function name -> list of "
                         f"argument specs like ['f32[8,4]', 'i32[]']{where}")
    functions = {k: v for k, v in namespace.items()
                 if callable(v) and getattr(v, "__module__", None) == "__hlo_dump__"}
    functions.update({k: namespace[k] for k in declared if k in namespace})
    if name is None:
        if arg_specs is not None and len(functions) == 1:
            name = next(iter(functions))
        elif declared:
            return [select_functions(namespace, n, arg_specs, path)[0] for n in declared]
        else:
            raise UsageError(f"{path}: say which function to dump with -f NAME (functions: "
                             f"{', '.join(sorted(functions)) or 'none'}), or declare HLO_DUMP")
    fn = namespace.get(name)
    if fn is None or not callable(fn):
        known = ", ".join(sorted(functions)) or "none"
        raise UsageError(f"{path}: no function named {name!r} (functions: {known})")
    specs = arg_specs if arg_specs is not None else declared.get(name)
    if specs is None:
        raise UsageError(f"{path}: no example arguments for {name!r}: pass --args "
                         f"'f32[8,4]' ... or add it to HLO_DUMP")
    return [(name, fn, [parse_spec(s) for s in specs])]


def dump(name, fn, args, opts, path) -> str:
    """Every stage from one Compiled (our IR alone needs no compile): the text printed
    is the text that was compiled."""
    import tracehlo
    from tracehlo import passes, runtime
    stages = STAGES if opts.stage == "all" else (opts.stage,)
    locations = not opts.no_locations
    after_passes = []  # (pass name, module text) from the compile's own pass manager

    def after_pass(pass_name, module):
        after_passes.append((pass_name, passes.to_text(module, debug_info=locations)))

    watch = after_pass if opts.print_ir_after_all else None
    try:
        if stages == ("ir",) and not (opts.print_ir_after_all or opts.fusion_report):
            graph, compiled = tracehlo.make_ir(fn)(*args), None
        else:
            compiled = tracehlo.compile(fn, tuple(args), fusion=opts.fusion, after_pass=watch)
            graph = compiled.ir
    except tracehlo.TracehloError as e:
        raise UsageError(f"{e}") from None
    except (runtime.XlaCompileError, passes.UnsupportedFusionError) as e:
        raise UsageError(f"{name}: {e}") from None  # XLA or a backend check refused it
    except Exception as e:
        raise UsageError(_user_frame_message(e, path)) from None
    out = []

    def section(title, text):
        out.append(f"// ----- {name}: {title} -----")
        out.append(text.rstrip())

    def strip_locations(text):
        return text if locations else passes.to_text(passes.parse(text), debug_info=False)

    @functools.cache
    def fusion():
        """(fused text, report) for --backend: the compile's own unless it fused for
        another backend or not at all (--fusion xla|none)."""
        if compiled.fused is not None and runtime.fusion_backend() == opts.backend:
            return compiled.fused, compiled.fusion_report()
        after_passes.clear()
        result = passes.fuse_with_report(compiled.stablehlo, opts.backend, after_pass=watch)
        return result.text, result.report

    for stage in stages:
        if stage == "ir":
            section(stage, graph.to_text(locations=locations))
        elif stage == "stablehlo":
            section(stage, strip_locations(compiled.stablehlo))
        elif stage == "fused":
            section(f"fused ({opts.backend})", strip_locations(fusion()[0]))
        elif stage == "hlo":
            section(f"hlo (fusion={compiled.fusion})", compiled.hlo)
    if opts.print_ir_after_all:
        report = fusion()[1]
        before = compiled.stablehlo.count('"mhlo.fusion"')
        for pass_name, text in after_passes:
            decisions = [d for d in report.decisions if d.pass_name == pass_name]
            fused = sum(d.fused for d in decisions)
            count = text.count('"mhlo.fusion"')
            section(f"after {pass_name}: {count} fusions (was {before}), {fused} candidates "
                    f"fused, {len(decisions) - fused} rejected", text)
            before = count
    if opts.fusion_report:
        section(f"fusion decisions ({opts.backend})", str(fusion()[1]))
    if len(out) == 2 and not (opts.print_ir_after_all or opts.fusion_report):
        out.pop(0)  # a single stage needs no header
    return "\n".join(out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hlo-dump", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="a Python file defining the function")
    parser.add_argument("-f", "--function", help="the function to dump")
    parser.add_argument("--args", nargs="+", metavar="SPEC",
                        help="example argument types, like f32[8,4] i32[]")
    parser.add_argument("--stage", choices=STAGES + ("all",), default="ir",
                        help="which stage to print (default: ir)")
    parser.add_argument("--no-locations", action="store_true",
                        help="leave out Python source locations")
    parser.add_argument("--print-ir-after-all", "--print-after-all", action="store_true",
                        dest="print_ir_after_all",
                        help="print the module after each fusion pass, with a summary")
    parser.add_argument("--fusion-report", "--explain", action="store_true",
                        dest="fusion_report",
                        help="print every fusion decision, fused or not, with its reason")
    parser.add_argument("--fusion", choices=("tracehlo", "xla", "none"), default="tracehlo",
                        help="who chooses the kernels for --stage hlo (default: tracehlo)")
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu",
                        help="the backend whose fusion capabilities apply (default: cpu)")
    return parser


def main(argv=None) -> int:
    opts = build_parser().parse_args(argv)
    path = os.path.abspath(opts.file)
    try:
        namespace = load_module(path)
        targets = select_functions(namespace, opts.function, opts.args, path)
        texts = [dump(name, fn, args, opts, path) for name, fn, args in targets]
    except UsageError as e:
        print(f"hlo-dump: error: {e}", file=sys.stderr)
        return 1
    print("\n\n".join(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
