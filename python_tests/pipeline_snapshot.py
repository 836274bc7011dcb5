"""The fusion pipeline's output for a fixed set of modules, recorded once and compared after
a change: a rewrite of the passes that should change no decision (one made for speed, say)
shows every module it changes instead. The modules are the StableHLO corpus in
../shared/stablehlo-testdata (none where it is absent) and seeded fuzz programs traced by
tracehlo (plain, as a scan's body, under grad and under vmap).

    python python_tests/pipeline_snapshot.py record before.json [--seeds 400]
    ... change the passes ...
    python python_tests/pipeline_snapshot.py compare before.json [--show 3]

About 3 minutes for the corpus and 400 seeds on a 2-core machine.
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

import fuzz

VARIANTS = ((False, None), (True, None), (False, "grad"), (False, "vmap"))


def modules(seeds: int):
    """(name, StableHLO text) of every module of the snapshot."""
    import tracehlo
    from tracehlo.lowering import lower_graph
    from tracehlo.tools.conformance import corpus_files
    for path in corpus_files():
        yield path.name, path.read_text()
    for seed in range(seeds):
        for loop, transform in VARIANTS:
            prog = fuzz.program(seed, loop=loop, transform=transform)
            f, _ = fuzz.functions(prog)
            try:
                graph = tracehlo.make_ir(f)(*[fuzz.input_value(s) for s in prog["inputs"]])
            except Exception:  # a program tracehlo refuses has no module to snapshot
                continue
            yield f"fuzz {seed} loop={loop} {transform}", lower_graph(graph, locations=True)


def pipeline_output(text: str) -> str:
    """The default pipeline's module, or the error it raised."""
    from tracehlo.passes import mlir_io, pipeline
    try:
        module = mlir_io.parse(text)
        pipeline.PassManager(import_probe=False).run(module)
        return mlir_io.to_text(module)
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("record", "compare"))
    ap.add_argument("file")
    ap.add_argument("--seeds", type=int, default=400, help="fuzz seeds (record)")
    ap.add_argument("--show", type=int, default=3, help="diffs to print (compare)")
    opts = ap.parse_args(argv)
    if opts.command == "record":
        snapshot = {name: pipeline_output(text) for name, text in modules(opts.seeds)}
        Path(opts.file).write_text(json.dumps({"seeds": opts.seeds, "outputs": snapshot}))
        print(f"{len(snapshot)} modules recorded in {opts.file}")
        return 0
    recorded = json.loads(Path(opts.file).read_text())
    before = recorded["outputs"]
    now = {name: pipeline_output(text) for name, text in modules(recorded["seeds"])}
    changed = [name for name in before if now.get(name) != before[name]]
    for name in changed[:opts.show]:
        print(f"=== {name}")
        print("\n".join(difflib.unified_diff(before[name].splitlines(),
                                             now.get(name, "").splitlines(), lineterm="", n=1)))
    missing = sorted(set(before) ^ set(now))
    print(f"{len(before)} modules: {len(changed)} changed"
          + (f", {len(missing)} in only one of the two runs" if missing else ""))
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
