"""Bad input to the API and to both command lines: a one-line error naming the problem
(and, for traced code, the user's line), a non-zero exit without a traceback from a
CLI, and nothing valid refused."""
import subprocess
import sys

import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo.tools import hlo_dump, hlo_opt

MODULE = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n" \
         "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"


@pytest.fixture
def user_file(tmp_path):
    def write(text):
        path = tmp_path / "user.py"
        path.write_text(text)
        return str(path)
    return write


def _one_line_error(capsys, main, argv, prog):
    """Run a CLI's main in-process: a non-zero status and one error line, no traceback
    (an exception escaping main would be one)."""
    try:
        status = main(argv)
    except SystemExit as e:  # argparse: usage line, then the error line
        status = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert status not in (0, None), err
    assert err and err[-1].startswith(f"{prog}: error: "), err
    return err[-1]


# ---------------------------------------------------------------- hlo-dump

@pytest.mark.parametrize("spec,problem", [
    ("f32[,,]", "dimensions must be non-negative integers"),
    ("f32[2,-1]", "dimensions must be non-negative integers"),
    ("f32[3", "expected DTYPE[DIMS]"),
    ("f32", "expected DTYPE[DIMS]"),
    ("q9[3]", "unknown dtype 'q9'"),
    ("f32[99999999999999999999]", "more elements than int64 can count"),
    ("f32[4294967296,4294967296]", "more elements than int64 can count"),
])
def test_hlo_dump_bad_argument_spec(capsys, user_file, spec, problem):
    path = user_file("def f(x):\n    return x + 1\n")
    line = _one_line_error(capsys, hlo_dump.main, [path, "--args", spec], "hlo-dump")
    assert f"bad argument spec {spec!r}" in line and problem in line


@pytest.mark.parametrize("declared,problem", [
    ("{'f': [4, 4]}", "(got 'f': [4, 4])"),
    ("{'f': 'f32[3]'}", "(got 'f': 'f32[3]')"),
    ("['f32[3]']", "HLO_DUMP must be a dict"),
])
def test_hlo_dump_bad_declaration(capsys, user_file, declared, problem):
    path = user_file(f"HLO_DUMP = {declared}\ndef f(x):\n    return x\n")
    line = _one_line_error(capsys, hlo_dump.main, [path], "hlo-dump")
    assert "HLO_DUMP must be a dict of function name -> list of argument specs" in line
    assert problem in line


def test_hlo_dump_other_errors(capsys, user_file):
    path = user_file("def f(x, y):\n    return x + y\n")
    line = _one_line_error(capsys, hlo_dump.main, [path, "--args", "f32[3]"], "hlo-dump")
    assert "f() missing 1 required positional argument: 'y'" in line
    line = _one_line_error(capsys, hlo_dump.main, [path, "-f", "g", "--args", "f32[3]"],
                           "hlo-dump")
    assert "no function named 'g'" in line
    line = _one_line_error(capsys, hlo_dump.main, [path, "--stage", "nope"], "hlo-dump")
    assert "argument --stage: invalid choice: 'nope'" in line


def test_hlo_dump_takes_any_size_without_allocating(capsys, user_file):
    """Only the type of an example argument is needed: 4 TiB is fine to trace."""
    path = user_file("def f(x):\n    return x + 1\n")
    for spec in ("f32[1099511627776]", "i32[]", "f32[0,3]", "bool[ 2 , 3 ]"):
        assert hlo_dump.main([path, "--args", spec, "--stage", "stablehlo"]) == 0
    out = capsys.readouterr().out
    assert "tensor<1099511627776xf32>" in out and "tensor<0x3xf32>" in out
    assert "tensor<2x3xi1>" in out


def test_cli_error_exits_non_zero_without_traceback(tmp_path):
    """The real processes, once each: exit status and stderr as a user sees them."""
    for tool, args in (("hlo_dump", [str(tmp_path / "missing.py")]),
                       ("hlo_opt", ["-", "-o", str(tmp_path / "no" / "dir" / "out.mlir")])):
        run = subprocess.run([sys.executable, "-m", f"tracehlo.tools.{tool}", *args],
                             input=MODULE, capture_output=True, text=True)
        assert run.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


# ---------------------------------------------------------------- hlo-opt

def _hlo_opt(capsys, monkeypatch, argv, text=MODULE):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    return _one_line_error(capsys, hlo_opt.main, argv, "hlo-opt")


def test_hlo_opt_unwritable_output(capsys, monkeypatch, tmp_path):
    line = _hlo_opt(capsys, monkeypatch, ["-", "-o", str(tmp_path / "no" / "out.mlir")])
    assert "cannot write -o" in line and "No such file or directory" in line


@pytest.mark.parametrize("pipeline,problem", [
    ("nope", "unknown pass 'nope'"),
    ("fusion-merger{bogus=1}", "has no option 'bogus'"),
    ("fusion-merger{max-operands=x}", "must be int"),
])
def test_hlo_opt_bad_pipeline(capsys, monkeypatch, pipeline, problem):
    line = _hlo_opt(capsys, monkeypatch, ["-", f"--pass-pipeline={pipeline}"])
    assert problem in line


@pytest.mark.parametrize("pipeline", ["fusion-merger{max-operands=2", "fusion-merger{max-operands}",
                                      "fusion-merger,,sibling-fusion"])
def test_hlo_opt_malformed_pipeline(capsys, monkeypatch, pipeline):
    line = _hlo_opt(capsys, monkeypatch, ["-", f"--pass-pipeline={pipeline}"])
    assert "fusion-merger" in line


def test_hlo_opt_missing_file_and_bad_module(capsys, monkeypatch, tmp_path):
    line = _hlo_opt(capsys, monkeypatch, [str(tmp_path / "missing.mlir")])
    assert "No such file or directory" in line
    try:
        import io
        monkeypatch.setattr(sys, "stdin", io.StringIO("func.func @main( {"))
        assert hlo_opt.main(["-"]) == 1
    finally:
        err = capsys.readouterr().err
    assert "<stdin>:1:" in err and "error:" in err and "Traceback" not in err
    line = _hlo_opt(capsys, monkeypatch, ["-", "--print-ir-after=nope"])
    assert "unknown pass 'nope'" in line


# ---------------------------------------------------------------- the Python API

def test_api_bad_arguments_name_the_problem():
    with pytest.raises(ValueError, match="fusion must be one of"):
        tracehlo.jit(lambda x: x, fusion="fast")
    with pytest.raises(TypeError, match="object is not a valid argument"):
        tracehlo.jit(lambda x: x)(object())
    compiled = tracehlo.compile(lambda x: x * 2, (np.ones(3, np.float32),))
    with pytest.raises(TypeError, match="argument x has shape f32\\[4\\].*compiled for f32\\[3\\]"):
        compiled(np.ones(4, np.float32))


def test_api_accepts_what_jax_accepts():
    """Size-0 arrays, Python scalars and NumPy scalars are arguments like any other."""
    out = tracehlo.jit(lambda x, s, t: x * s + t)(np.ones((0, 3), np.float32), 2.0, np.int8(1))
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_verify_of_text_says_it_takes_a_graph():
    with pytest.raises(TypeError, match="Graph"):
        tracehlo.verify("func @f() -> () {\n  return\n}\n")


def test_parse_ir_refuses_dims_above_int64():
    text = tracehlo.make_ir(lambda x: x + 1)(np.ones(3, np.float32)).to_text()
    with pytest.raises(tracehlo.ir_parser.IRParseError, match="int64"):
        tracehlo.parse_ir(text.replace("f32[3]", "f32[99999999999999999999]"))


def test_big_endian_arrays_are_converted():
    """(JAX 0.10 itself refuses them; the native-order copy is the oracle.)"""
    x = np.arange(3, dtype=">f4")
    np.testing.assert_array_equal(tracehlo.jit(lambda a: a + 1)(x), np.arange(3) + 1)
    np.testing.assert_allclose(tnp.sin(x), np.sin(np.arange(3, dtype=np.float32)), rtol=1e-6)


def test_item_assignment_points_to_at_set():
    def f(x):
        x[0] = 1
        return x
    with pytest.raises(TypeError, match=r"test_bad_inputs.py:\d+: .*x\.at\[.*\]\.set"):
        tracehlo.jit(f)(np.ones(3, np.float32))


def test_shape_beyond_int64_names_the_size():
    def f(a):
        return tnp.zeros((2**62, 4)) + a[0]
    with pytest.raises(ValueError, match=r"test_bad_inputs.py:\d+: .*(int64|too large|too many)"):
        tracehlo.make_ir(f)(np.ones((3, 4), np.float32))
