"""The differential fuzzer (fuzz.py): its fast slice, and the machinery that makes a
failure a reproducible, minimal report instead of a dead test run.
The long mode: python python_tests/fuzz.py --kind jit --count 2000 (and --kind hlo-opt)."""
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import fuzz

pytestmark = pytest.mark.slow

# eight seeds of each kind, and the long runs' aborts, internal errors and refusals since fixed
SLICE = {"jit": [*range(1000, 1008), 647, 677, 1902],
         "hlo-opt": [*range(1000, 1008), 917, 1160, 1321, 1665, 10325]}
# Seeds that fail today, each with its class and owner, so a fix flips the mark (1003,
# a subnormal XLA flushes in jax.jit's fused kernel only, is jit-differs since ours
# equals JAX op by op)
KNOWN: dict = {}


@pytest.fixture(scope="module")
def worker():
    with fuzz.Worker(timeout=120) as w:
        yield w


@pytest.mark.parametrize("kind,seed", [
    pytest.param(k, s, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[k, s])]
                 if (k, s) in KNOWN else []) for k, seeds in SLICE.items() for s in seeds])
def test_fast_slice(worker, kind, seed):
    failures = worker.run(fuzz.program(seed), kind)
    assert [f for f in failures if f["class"] not in ("invalid", "jit-differs")] == [], \
        f"python python_tests/fuzz.py --kind {kind} --seed {seed} --shrink"


# the same seeds' programs as the bodies of scans: carried values, loop regions; and
# the loop runs' aborts since fixed (16, 43: a bf16 broadcast in a small loop body)
LOOP_SLICE = {"jit": [*range(1000, 1006), 16, 43], "hlo-opt": [*range(1000, 1006)]}
KNOWN_LOOP: dict = {}


@pytest.mark.parametrize("kind,seed", [
    pytest.param(k, s, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_LOOP[k, s])]
                 if (k, s) in KNOWN_LOOP else []) for k, seeds in LOOP_SLICE.items() for s in seeds])
def test_fast_loop_slice(worker, kind, seed):
    failures = worker.run(fuzz.program(seed, loop=True), kind)
    assert [f for f in failures if f["class"] not in ("invalid", "jit-differs")] == [], \
        f"python python_tests/fuzz.py --kind {kind} --loop --seed {seed} --shrink"


# the programs under grad and vmap (fuzz.py --transform), against jax.grad and jax.vmap:
# seeds with float inputs and outputs, and the failures since fixed (grad 69: the
# derivative of a min over no axes; grad 118: select of an int16 predicate outside 0, 1;
# grad 221: a fusion check_backend refused, of that select's derivative; vmap 3026: a
# bool over a broadcast row of zeros, 0 fused where jax.jit gives nan)
TRANSFORM_SLICE = {"grad": [0, 2, 6, 69, 118, 221], "vmap": [0, 1, 3, 4, 5, 3026]}


@pytest.mark.parametrize("transform,seed", [(t, s) for t, seeds in TRANSFORM_SLICE.items()
                                            for s in seeds])
def test_fast_transform_slice(worker, transform, seed):
    failures = worker.run(fuzz.program(seed, transform=transform), "jit")
    assert [f["class"] for f in failures[:1]] != ["invalid"], failures  # judged, not skipped
    assert [f for f in failures if f["class"] != "jit-differs"] == [], \
        f"python python_tests/fuzz.py --kind jit --transform {transform} --seed {seed} --shrink"


def test_transformed_programs_map_an_input_and_differentiate_the_float_ones():
    import jax
    for seed in range(12):
        mapped = fuzz.program(seed, transform="vmap")
        assert {k: v for k, v in mapped.items() if k not in ("inputs", "transform")} == \
            {k: v for k, v in fuzz.program(seed).items() if k != "inputs"}
        axes = [s["batch_axis"] for s in mapped["inputs"]]
        assert any(a is not None for a in axes)
        for spec in mapped["inputs"]:
            value = fuzz.input_value(spec)
            assert value.shape == fuzz.input_shape(spec)
            if spec["batch_axis"] is not None:  # three values of the input's own shape
                assert np.moveaxis(value, spec["batch_axis"], 0).shape == \
                    (fuzz.BATCH, *spec["shape"])
        assert fuzz.valid(mapped)
        avals = [jax.ShapeDtypeStruct(fuzz.input_shape(s), fuzz.Generator(0)._dtype(s["dtype"]))
                 for s in mapped["inputs"]]
        outs = jax.eval_shape(fuzz.functions(mapped)[1], *avals)
        assert all(o.shape[0] == fuzz.BATCH for o in outs)
    prog = fuzz.program(0, transform="grad")
    floats = fuzz.grad_argnums(prog)
    assert floats and all(prog["inputs"][i]["dtype"] in fuzz.FLOATS for i in floats)
    assert f"argnums=({''.join(f'{i}, ' for i in floats)})" in fuzz.source(prog)
    with pytest.raises(ValueError, match="transform 'jvp'"):
        fuzz.program(0, transform="jvp")


def test_loop_programs_carry_values_of_their_inputs_types():
    import jax
    for seed in range(12):
        straight, looped = fuzz.program(seed), fuzz.program(seed, loop=True)
        assert {k: v for k, v in looped.items() if k != "loop"} == straight
        assert looped["loop"]["length"] in (2, 3)
        _, f_jax = fuzz.functions(looped)
        avals = [jax.ShapeDtypeStruct(tuple(s["shape"]), fuzz.Generator(0)._dtype(s["dtype"]))
                 for s in looped["inputs"]]
        outs = jax.eval_shape(f_jax, *avals)  # JAX accepts every carry
        assert len(outs) == len(looped["outputs"])
        assert all(o.shape[0] == looped["loop"]["length"] for o in outs)
    assert sum(len(fuzz.program(s, loop=True)["loop"]["carry"]) for s in range(12)) >= 6


def test_programs_are_reproducible_and_cover_the_dtypes():
    programs = [fuzz.program(seed) for seed in range(12)]
    assert programs[5] == fuzz.program(5)
    assert fuzz.source(programs[5]) == fuzz.source(fuzz.program(5))
    dtypes = {s["dtype"] for p in programs for s in p["inputs"]}
    assert {"bool", "bfloat16", "float16", "uint8"} <= dtypes
    assert any(0 in s["shape"] for p in programs for s in p["inputs"])
    assert all(1 <= len(p["outputs"]) <= 20 and len(p["ops"]) <= 60 for p in programs)
    assert any("{np}" in op["code"] for op in programs[0]["ops"])


def test_special_values_reach_the_inputs():
    spec = {"shape": [64], "dtype": "bfloat16", "seed": 3, "special": True}
    x = fuzz.input_value(spec).astype(np.float32)
    assert x.dtype == np.float32 and np.isnan(x).any() and np.isinf(x).any()
    spec = {"shape": [], "dtype": "int8", "seed": 1, "special": True}
    assert fuzz.input_value(spec).shape == ()
    ints = fuzz.input_value({"shape": [200], "dtype": "int8", "seed": 1, "special": True})
    assert {-128, 127} <= set(ints.tolist())


def _array(values, dtype):
    import jax
    return jax.device_put(np.asarray(values, dtype))


def test_compare_is_exact_for_integers_and_places_nans():
    assert fuzz.compare(_array([1, 2], np.int32), _array([1, 2], np.int32)) is None
    assert fuzz.compare(_array([1, 3], np.int32), _array([1, 2], np.int32))[0] == "mismatch"
    nan = _array([np.nan, 1.0], np.float32)
    assert fuzz.compare(nan, nan) is None
    assert fuzz.compare(_array([1.0, np.nan], np.float32), nan)[0] == "mismatch"
    assert fuzz.compare(_array([np.inf], np.float32), _array([-np.inf], np.float32))
    assert fuzz.compare(_array([1.0 + 1e-6], np.float32), _array([1.0], np.float32)) is None
    half = _array([1.0], ml_dtypes.bfloat16)
    assert fuzz.compare(half, _array([1.0], np.float32))[0] == "mismatch"  # dtype


def _tiny(code):
    return {"inputs": [{"shape": [3], "dtype": "float32", "seed": 0, "special": False}],
            "ops": [{"code": code, "args": [0]}], "outputs": [1]}


def test_an_abort_or_a_hang_is_a_failure_and_the_next_program_runs():
    with fuzz.Worker(timeout=20) as w:
        ours_die = "(__import__('os').abort() if {np}.__name__ == 'tracehlo.numpy' else 0)"
        crash = w.run(_tiny(ours_die + " or {np}.sin({0})"), "jit")
        assert [(f["class"], f["stage"]) for f in crash] == [("crash", "none")]
        assert "SIGABRT" in crash[0]["detail"]
        # a program that kills jax.jit itself has no oracle: invalid, not ours to judge
        oracle_dies = w.run(_tiny("__import__('os').abort() or {np}.sin({0})"), "jit")
        assert [(f["class"], f["stage"]) for f in oracle_dies] == [("invalid", "jax")]
        w.timeout = 3
        hang = w.run(_tiny("__import__('time').sleep(60) or {np}.sin({0})"), "jit")
        assert [f["class"] for f in hang] == ["timeout"]
        w.timeout = 60
        assert w.run(_tiny("{np}.sin({0})"), "jit") == []


def test_a_value_jax_jit_folds_differently_is_jit_differs_not_a_mismatch(worker):
    """0 / 0 is nan op by op (and ours); jax.jit's XLA folds the argmax and argsort over
    a unit axis to 0 and then 0 / 0 to 0 (fuzz seed 573)."""
    prog = {"inputs": [{"shape": [1], "dtype": "uint8", "seed": 0, "special": False}],
            "ops": [{"code": "{np}.argmax({0}, axis=-1)", "args": [0]},
                    {"code": "{np}.argsort({0}, axis=-1)", "args": [0]},
                    {"code": "{np}.greater({0}, {1})", "args": [1, 0]},
                    {"code": "{0} / {1}", "args": [3, 2]}], "outputs": [4]}
    for kind in fuzz.KINDS:
        assert [f["class"] for f in worker.run(prog, kind)] == ["jit-differs"]


def test_a_program_jax_refuses_op_by_op_is_judged_against_its_unfused_module(worker):
    """JAX refuses `p ** n` op by op once it sees a negative integer n, which jax.jit
    compiles; the values of jax.jit's module with XLA's fusion off then tell whether
    XLA's fusion alone moved a value: here the sign of a NaN that signbit reads
    (hlo-opt --loop seed 321, an internal error of the harness before). Whether
    XLA's fusion moves that sign depends on the host CPU's instructions (it did on
    the Intel machines, not on an AMD EPYC), so the program is judged jit-differs or
    passes; the stand-in itself is asked directly."""
    import jax
    prog = fuzz.program(321, loop=True)
    for kind in fuzz.KINDS:
        assert {f["class"] for f in worker.run(prog, kind)} <= {"jit-differs"}
    _, f_jax = fuzz.functions(prog)
    args = [jax.device_put(fuzz.input_value(s)) for s in prog["inputs"]]
    with jax.disable_jit(), pytest.raises(TypeError, match="negative powers"):
        f_jax(*args)
    want = jax.jit(f_jax)(*args)
    unfused = fuzz.op_by_op_values(f_jax, args, want)
    assert [(u.shape, u.dtype) for u in unfused] == [(w.shape, w.dtype) for w in want]


class _FailsOnSin:
    """A stand-in worker: a program fails while it computes a sine."""

    def run(self, prog, kind):
        if any("sin" in op["code"] for op in prog["ops"]):
            return [{"class": "mismatch", "stage": "all", "detail": "{np}.sin({0}): values differ"}]
        return []


def test_shrinking_a_loop_program_keeps_its_carry_valid():
    seed = next(s for s in range(200) if any("{np}.sin(" in op["code"]
                                             for op in fuzz.program(s)["ops"])
                and fuzz.program(s, loop=True)["loop"]["carry"])
    failing = _FailsOnSin()
    key = fuzz.class_key(failing.run(fuzz.program(seed, loop=True), "jit")[0])
    small = fuzz.shrink(fuzz.program(seed, loop=True), "jit", key, failing,
                        log=lambda _: None)
    assert [op["code"] for op in small["ops"]] == ["{np}.sin({0})"] and "loop" not in small


def test_shrinking_keeps_the_failure_and_drops_everything_else():
    seed = next(s for s in range(200)
                if any("{np}.sin(" in op["code"] for op in fuzz.program(s)["ops"]))
    failing = _FailsOnSin()
    key = fuzz.class_key(failing.run(fuzz.program(seed), "jit")[0])
    small = fuzz.shrink(fuzz.program(seed), "jit", key, failing, log=lambda _: None)
    assert len(small["outputs"]) == 1 and len(small["inputs"]) == 1
    assert [op["code"] for op in small["ops"]] == ["{np}.sin({0})"]
    assert all(d <= 1 for d in small["inputs"][0]["shape"])
    script = fuzz.repro(small, "jit", key)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "JAX:" in run.stdout
