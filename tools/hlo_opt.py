"""hlo-opt: run tracehlo's fusion passes on a StableHLO file, as mlir-opt does.

    hlo-opt FILE.mlir                       parse, verify, print
    hlo-opt FILE.mlir --fuse [--backend=gpu] the default pipeline for a backend
    hlo-opt FILE.mlir --pass-pipeline='instruction-fusion,fusion-merger{max-operands=8}'
    hlo-opt --help                          every pass, its summary and typed options
    options: --print-ir-after-all, --print-ir-after=NAME, --split-input-file,
             --mlir-print-debuginfo, --fusion-report, --check-backend, -o FILE;
             --print-after-all and --explain are hlo-dump's old spellings, kept;
             FILE `-` (the default) reads stdin.
Malformed input prints MLIR's diagnostic (file:line:col: error: ...) and exits 1.
"""
from __future__ import annotations

import argparse
import sys

from tracehlo import passes
from tracehlo.passes.mlir_io import ParseError, parse, to_text

SPLIT_MARKER = "// -----"


def _args(argv):
    ap = argparse.ArgumentParser(prog="hlo-opt", description=__doc__.splitlines()[0],
                                 epilog=passes.describe_passes(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default="-")
    ap.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    ap.add_argument("--pass-pipeline", default="", help="comma-separated passes (below)")
    ap.add_argument("--fuse", action="store_true", help="run the default pipeline")
    ap.add_argument("--backend", default="cpu", help="cpu or gpu (default cpu)")
    ap.add_argument("--print-ir-after-all", "--print-after-all", action="store_true",
                    dest="print_ir_after_all", help="print the module after each pass")
    ap.add_argument("--print-ir-after", action="append", default=[], metavar="NAME")
    ap.add_argument("--split-input-file", action="store_true")
    ap.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    ap.add_argument("--fusion-report", "--explain", action="store_true", dest="fusion_report",
                    help="print every fusion decision and its reason to stderr")
    ap.add_argument("--check-backend", action="store_true",
                    help="fail if a fusion cannot be compiled by --backend")
    return ap.parse_args(argv)


def _chunks(text: str, split: bool):
    """(first line number - 1, text) for each input chunk."""
    if not split:
        return [(0, text)]
    chunks, start, lines = [], 0, text.split("\n")
    current: list[str] = []
    for n, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            chunks.append((start, "\n".join(current)))
            start, current = n + 1, []
        else:
            current.append(line)
    chunks.append((start, "\n".join(current)))
    return chunks


def _shift_lines(message: str, filename: str, offset: int) -> str:
    """Diagnostics of a split chunk name lines of the whole file."""
    if not offset:
        return message
    out = []
    for line in message.split("\n"):
        if line.startswith(filename + ":"):
            row, rest = line[len(filename) + 1:].split(":", 1)
            if row.isdigit():
                line = f"{filename}:{int(row) + offset}:{rest}"
        out.append(line)
    return "\n".join(out)


def _process(text: str, args, filename: str) -> str:
    module = parse(text, filename)
    pipeline = args.pass_pipeline or (passes.DEFAULT_PIPELINE if args.fuse else "")

    def after_pass(name, mod):
        if args.print_ir_after_all or name in args.print_ir_after:
            sys.stderr.write(f"// -----// IR Dump After {name} //----- //\n")
            sys.stderr.write(to_text(mod, args.mlir_print_debuginfo))

    if pipeline:
        report = passes.PassManager(pipeline, args.backend, after_pass).run(module)
        if args.fusion_report:
            sys.stderr.write(str(report) + "\n")
    if args.fuse or args.check_backend:
        passes.check_backend(module, args.backend)
    return to_text(module, args.mlir_print_debuginfo)


def main(argv=None) -> int:
    args = _args(argv)
    filename = "<stdin>" if args.file == "-" else args.file
    try:
        passes.PassManager(args.pass_pipeline or "", args.backend)  # validate options early
        unknown = set(args.print_ir_after) - set(passes.PASSES)
        if unknown:
            raise ValueError(f"--print-ir-after: unknown pass {sorted(unknown)[0]!r}")
        text = sys.stdin.read() if args.file == "-" else open(args.file).read()
    except (OSError, ValueError) as e:
        sys.stderr.write(f"hlo-opt: error: {e}\n")
        return 1
    outputs, failed = [], False
    for offset, chunk in _chunks(text, args.split_input_file):
        try:
            outputs.append(_process(chunk, args, filename))
        except ParseError as e:
            sys.stderr.write(_shift_lines(str(e), filename, offset) + "\n")
            failed = True
        except passes.UnsupportedFusionError as e:
            sys.stderr.write(f"{filename}: error: {e}\n")
            failed = True
    result = (SPLIT_MARKER + "\n").join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(result)
        except OSError as e:
            sys.stderr.write(f"hlo-opt: error: cannot write -o {args.output}: {e.strerror}\n")
            return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
