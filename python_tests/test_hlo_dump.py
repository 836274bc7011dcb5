"""hlo-dump reads every stage, and the module after each pass, from one compile."""
from tracehlo import passes
from tracehlo.tools import hlo_dump

SOURCE = """\
import tracehlo.numpy as tnp

def f(x):
    return tnp.exp(x - tnp.max(x, axis=1, keepdims=True)) * 2.0
"""


def _dump(tmp_path, capsys, monkeypatch, *flags):
    """hlo-dump's output, and how many times the pass manager ran for it."""
    path = tmp_path / "user.py"
    path.write_text(SOURCE)
    runs = []
    run = passes.PassManager.run
    monkeypatch.setattr(passes.PassManager, "run",
                        lambda self, module: runs.append(self) or run(self, module))
    assert hlo_dump.main([str(path), "--args", "f16[4,8]", *flags]) == 0
    return capsys.readouterr().out, len(runs)


def test_print_ir_after_all_comes_from_the_compile(tmp_path, capsys, monkeypatch):
    out, runs = _dump(tmp_path, capsys, monkeypatch, "--stage", "all",
                      "--print-ir-after-all", "--fusion-report")
    assert runs == 1
    titles = [line for line in out.splitlines() if line.startswith("// ----- f: after ")]
    assert [t.split()[4].rstrip(":") for t in titles] == passes.DEFAULT_PIPELINE.split(",")
    # the last pass's module is the fused stage the compile handed to XLA
    fused = out.split("// ----- f: fused (cpu) -----\n")[1].split("\n// ----- ")[0]
    assert out.split(titles[-1] + "\n")[1].split("\n// ----- ")[0] == fused


def test_fusion_for_another_backend_runs_the_passes_once_more(tmp_path, capsys, monkeypatch):
    out, runs = _dump(tmp_path, capsys, monkeypatch, "--stage", "fused", "--backend", "gpu",
                      "--print-ir-after-all", "--no-locations")
    assert runs == 2  # the compile's own (cpu), then once for gpu
    assert "fusion_kind kInput" in out.split("after producer-consumer-fusion")[1]
