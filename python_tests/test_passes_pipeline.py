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
    ("fusion-merger{max-operands=two}", "option values must be int"),
    ("fusion-merger{max-ops=2}", "has no option 'max-ops'"),
    ("fusion-mergr", "unknown pass 'fusion-mergr'"),
])
def test_malformed_pipelines_are_errors(pipeline, message):
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        passes.PassManager(pipeline)


def test_well_formed_pipelines():
    manager = passes.PassManager(" instruction-fusion , fusion-merger{max-operands=4} ")
    assert [p.name for p in manager.passes] == ["instruction-fusion", "fusion-merger"]
    assert manager.passes[1].options == {"max-operands": 4}
    assert passes.PassManager("").passes == []
