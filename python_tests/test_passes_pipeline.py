"""Pipeline strings: every malformed one is a ValueError naming what is wrong."""
import pytest

from tracehlo import passes


@pytest.mark.parametrize("pipeline, message", [
    ("fusion-merger{max-operands=2", "'{' without its '}'"),
    ("fusion-merger{max-operands}", "option 'max-operands' needs a value"),
    ("fusion-merger{max-operands=}", "option 'max-operands' needs a value"),
    ("fusion-merger,,sibling-fusion", "a pass name is missing"),
    ("fusion-merger{max-operands=2}}", "unbalanced '}'"),
    ("fusion-merger{max-operands=2}x", "text after its options"),
    ("fusion-merger{max-operands=two}",
     "pass 'fusion-merger': option 'max-operands' must be int >= 1, got 'two'"),
    ("sibling-fusion{max-operands=2.5}", "option 'max-operands' must be int >= 1, got '2.5'"),
    ("fusion-merger{max-operands=0}", "option 'max-operands' must be int >= 1, got '0'"),
    ("fusion-merger{max-operands=2 max-operands=3}", "option 'max-operands' given twice"),
    ("fusion-merger{max-ops=2}",
     "pass 'fusion-merger' has no option 'max-ops'; options: max-operands=int >= 1"),
    ("canonicalize{max-operands=2}",
     "pass 'canonicalize' has no option 'max-operands'; it takes no options"),
    ("fusion-mergr", "unknown pass 'fusion-mergr'"),
])
def test_malformed_pipelines_are_errors(pipeline, message):
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        passes.PassManager(pipeline)


def test_well_formed_pipelines():
    manager = passes.PassManager(" instruction-fusion , fusion-merger{max-operands=4} ")
    assert [p.name for p in manager.passes] == ["instruction-fusion", "fusion-merger"]
    assert manager.passes[1].options == {"max-operands": 4}
    assert manager.passes[1].max_operands(None) == 4
    assert manager.passes[0].option("max-operands") is None  # the backend decides
    assert passes.PassManager("").passes == []


def test_options_from_python_are_type_checked():
    merger = passes.PASSES["fusion-merger"]
    assert merger(**{"max-operands": 8}).options == {"max-operands": 8}
    for wrong in (True, 8.0, None):
        with pytest.raises(ValueError, match=f"must be int >= 1, got {wrong!r}"):
            merger(**{"max-operands": wrong})


def test_default_pipeline_inlines_calls_and_canonicalizes_before_fusing():
    assert passes.DEFAULT_PIPELINE.split(",") == [
        "chlo-legalize", "inline-calls", "canonicalize", "tree-reductions", "instruction-fusion",
        "fusion-merger", "sibling-fusion", "producer-consumer-fusion"]
    seen = []
    passes.PassManager(after_pass=lambda name, module: seen.append(
        (name, passes.to_text(module)))).run(passes.parse(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %m = stablehlo.maximum %x, %x : tensor<4xf32>\n"
        "  %e = stablehlo.exponential %m : tensor<4xf32>\n"
        "  %n = stablehlo.negate %e : tensor<4xf32>\n"
        "  return %n : tensor<4xf32>\n}"))
    assert [name for name, _ in seen] == passes.DEFAULT_PIPELINE.split(",")
    after = dict(seen)
    assert "maximum" not in after["canonicalize"] and "mhlo.fusion" not in after["canonicalize"]
    assert after["tree-reductions"] == after["canonicalize"]  # no long sum to split
    assert "mhlo.fusion" in after["instruction-fusion"]


def test_every_pass_has_a_summary_and_documented_options():
    text = passes.describe_passes()
    for name, cls in passes.PASSES.items():
        line = next(l for l in text.splitlines() if l.split()[:1] == [name])
        assert len(line.split(None, 1)[1]) > 20, line  # a real sentence, one line
        for option in cls.OPTIONS:
            assert f"{option.name}=<{option.type.__name__}>" in text
