"""Pass work grows linearly with program size (issue 8: a 1000-op chain took 24 s,
quadratic in its length). Counted, not timed: legality queries per program."""
import subprocess
import sys

import pytest

from tracehlo import passes
from tracehlo.passes import legality


def chain(n: int) -> str:
    """n elementwise ops, each reading the one before."""
    ops = ["stablehlo.sine", "stablehlo.negate", "stablehlo.abs"]
    body = [f"  %v{k + 1} = {ops[k % 3]} %v{k} : tensor<16xf32>" for k in range(n)]
    return ("func.func public @main(%v0: tensor<16xf32>) -> tensor<16xf32> {\n"
            + "\n".join(body) + f"\n  return %v{n} : tensor<16xf32>\n}}")


def ladder(n: int) -> str:
    """x ** (2^n - 1) by repeated squaring: y = y * y, acc = acc * y, every rung
    and the accumulator read by a sort."""
    t = "tensor<16xf32>"
    body = []
    for k in range(n):
        body.append(f"  %a{k + 1} = stablehlo.multiply %a{k}, %y{k} : {t}")
        body.append(f"  %y{k + 1} = stablehlo.multiply %y{k}, %y{k} : {t}")
    operands = [f"%y{k}" for k in range(1, n + 1)] + [f"%a{n}"]
    types = ", ".join([t] * len(operands))
    args = ", ".join(f"%p{k}: tensor<f32>, %q{k}: tensor<f32>" for k in range(len(operands)))
    sort = (f'  %s:{len(operands)} = "stablehlo.sort"({", ".join(operands)}) ({{\n'
            f"  ^bb0({args}):\n"
            "    %lt = stablehlo.compare LT, %p0, %q0 : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    stablehlo.return %lt : tensor<i1>\n"
            f"  }}) {{dimension = 0 : i64}} : ({types}) -> ({types})\n")
    return (f"func.func public @main(%y0: {t}) -> {t} {{\n  %a0 = stablehlo.abs %y0 : {t}\n"
            + "\n".join(body) + "\n" + sort + f"  return %s#0 : {t}\n}}")


def calls_per_size(monkeypatch, function: str, program, sizes) -> list[int]:
    """How often legality calls `function` while the passes fuse program(n), per n."""
    calls = {"n": 0}
    original = getattr(legality, function)

    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(legality, function, counted)
    counts = []
    for n in sizes:
        calls["n"] = 0
        assert passes.fuse(program(n)).count("mhlo.fusion") >= 1
        counts.append(calls["n"])
    return counts


@pytest.mark.parametrize("program", [chain, ladder])
def test_legality_queries_grow_linearly(program, monkeypatch):
    counts = calls_per_size(monkeypatch, "node_problem", program, (50, 100, 200))
    assert counts[0] > 0
    assert counts[2] <= 2.3 * counts[1] and counts[1] <= 2.3 * counts[0], counts


def scaled_chain(n: int) -> str:
    """n links x = sin(x) * w, w an argument: every multiply reads the one before
    and the same w."""
    t = "tensor<16xf32>"
    body = []
    for k in range(n):
        body.append(f"  %s{k} = stablehlo.sine %v{k} : {t}")
        body.append(f"  %v{k + 1} = stablehlo.multiply %s{k}, %w : {t}")
    return (f"func.func public @main(%v0: {t}, %w: {t}) -> {t} {{\n" + "\n".join(body)
            + f"\n  return %v{n} : {t}\n}}")


def summed_chain(n: int) -> str:
    """chain(n), then its sum: the reduce is the fusion's root, read by nothing in it."""
    t = "tensor<16xf32>"
    body = chain(n).split("\n")[1:-2]
    return (f"func.func public @main(%v0: {t}) -> tensor<f32> {{\n" + "\n".join(body)
            + "\n  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
            + f"  %s = stablehlo.reduce(%v{n} init: %z) applies stablehlo.add across "
            + f"dimensions = [0] : ({t}, tensor<f32>) -> tensor<f32>\n"
            + "  return %s : tensor<f32>\n}")


def constant_chain(n: int) -> str:
    """n links x = sin(x) * broadcast(1.5), as tracehlo lowers `x * 1.5`: one scalar
    constant, broadcast anew in each link, and XLA's CSE makes the broadcasts one."""
    t = "tensor<16xf32>"
    body = ["  %c = stablehlo.constant dense<1.5> : tensor<f32>"]
    for k in range(n):
        body.append(f"  %s{k} = stablehlo.sine %v{k} : {t}")
        body.append(f"  %b{k} = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> {t}")
        body.append(f"  %v{k + 1} = stablehlo.multiply %s{k}, %b{k} : {t}")
    return (f"func.func public @main(%v0: {t}) -> {t} {{\n" + "\n".join(body)
            + f"\n  return %v{n} : {t}\n}}")


@pytest.mark.parametrize("program", [chain, scaled_chain, summed_chain, constant_chain])
def test_chains_need_no_whole_group_checks(program, monkeypatch):
    """The whole-group emitter check (shared_value_problem) runs only when a joining
    op could end an emitter function: read twice in the group, or made one with a
    member by XLA's CSE. A chain's ops are neither; comparing each op's CSE key with
    every key the group ever held (a link reading the previous one has the key of the
    link before it, outside values being keyed by type) ran it at each step: 1000
    ops, 25 s. Broadcasts of one constant that XLA's CSE makes one op, each read by
    an elementwise op in the root's emitter function, change no function: a
    1000-op chain of x * 1.5 checked the whole group at every broadcast (3 s)."""
    counts = calls_per_size(monkeypatch, "shared_value_problem", program, (50, 200))
    assert counts[1] == counts[0] <= 2, counts


def test_squarings_fused_whole_finish():
    """y = y * y, 40 times, all in one fusion: XLA-CSE keys of the fused ops once
    nested the operands' keys, so hashing one walked its whole expression tree
    (2^rungs: 24 rungs took 22 s, Threefry under jit never finished). Run in a
    subprocess so that a regression fails here instead of hanging the suite."""
    t = "tensor<16xf32>"
    body = [f"  %y{k + 1} = stablehlo.multiply %y{k}, %y{k} : {t}" for k in range(40)]
    text = (f"func.func public @main(%y0: {t}) -> {t} {{\n" + "\n".join(body)
            + f"\n  return %y40 : {t}\n}}")
    script = ("import sys\nfrom tracehlo import passes\n"
              "print(passes.fuse(sys.stdin.read()).count('stablehlo.multiply'))")
    done = subprocess.run([sys.executable, "-c", script], input=text, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["40"]


def test_the_merger_asks_its_cost_model_before_checking_merged_groups_whole(monkeypatch):
    """Each merge the cost model refuses (bytes that grow here) is refused without
    the legality checks that look at the merged group whole (group_problem): on the
    train step those were a third of the merger's time, for merges it then refused
    as too costly."""
    calls = {"n": 0}
    original = legality.group_problem

    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(legality, "group_problem", counted)
    users = "\n".join(
        f'  %u{k} = "mhlo.fusion"(%f, %z) ({{\n'
        "  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):\n"
        f"    %s = stablehlo.{op} %a, %b : tensor<64xf32>\n"
        "    stablehlo.return %s : tensor<64xf32>\n"
        "  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : "
        "(tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>"
        for k, op in enumerate(("add", "subtract")))
    text = (
        "func.func @main(%x: tensor<64x4xf32>, %y: tensor<64x4xf32>, %z: tensor<64xf32>)"
        " -> (tensor<64xf32>, tensor<64xf32>) {\n"
        '  %f = "mhlo.fusion"(%x, %y) ({\n'
        "  ^bb0(%a: tensor<64x4xf32>, %b: tensor<64x4xf32>):\n"
        "    %m = stablehlo.multiply %a, %b : tensor<64x4xf32>\n"
        "    %z0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %r = stablehlo.reduce(%m init: %z0) applies stablehlo.add across dimensions = [1]"
        " : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>\n"
        "    stablehlo.return %r : tensor<64xf32>\n"
        "  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : "
        "(tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64xf32>\n"
        f"{users}\n  return %u0, %u1 : tensor<64xf32>, tensor<64xf32>\n}}")
    result = passes.fuse_with_report(text, pipeline="fusion-merger")
    reasons = [d.reason for d in result.report.decisions if d.pass_name == "fusion-merger"]
    assert reasons[0] == "modelled bytes would grow from 3840 to 5120", reasons
    assert calls["n"] == 0
