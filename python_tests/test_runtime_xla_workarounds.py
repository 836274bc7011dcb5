"""Programs XLA CPU gets wrong when compiled with its own fusion off (our passes'
mode, and fusion="none"), checked against NumPy: runtime.compile_options must
steer around each one."""
import numpy as np
import pytest

import tracehlo
import tracehlo.numpy as tnp
from tracehlo import runtime
from tracehlo.passes.mlir_io import parse

TRANSPOSE_THEN_RESHAPE = """
func.func public @main(%a: tensor<2x10x{t}>) -> tensor<20x{t}> {{
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x10x{t}>) -> tensor<10x2x{t}>
  %r = stablehlo.reshape %t : (tensor<10x2x{t}>) -> tensor<20x{t}>
  return %r : tensor<20x{t}>
}}"""

ELEMENT_TYPES = {"ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "i32": np.int32,
                 "f32": np.float32, "complex<f32>": np.complex64}


@pytest.mark.parametrize("mlir_type", ELEMENT_TYPES)
@pytest.mark.parametrize("xla_fusion", [True, False])
@pytest.mark.parametrize("form", ["text", "module"])
def test_transpose_of_unsigned_or_complex_elements_keeps_its_order(mlir_type, xla_fusion,
                                                                     form):
    # XLA makes the transpose a bitcast plus a copy; for these element types no fusion
    # wraps the copy and the simplifier after layout assignment drops it. A parsed
    # module given without its source text is checked as the text it prints.
    dtype = ELEMENT_TYPES[mlir_type]
    x = (np.arange(20).reshape(2, 10) * 37 % 251).astype(dtype)
    program = TRANSPOSE_THEN_RESHAPE.format(t=mlir_type)
    if form == "module":
        program = parse(program)
    exe = runtime.compile(program, [((20,), dtype)], xla_fusion=xla_fusion)
    out = np.asarray(exe([runtime.to_device(x, exe.device)])[0])
    np.testing.assert_array_equal(out, x.T.reshape(20))


@pytest.mark.parametrize("fusion", ["tracehlo", "none", "xla"])
def test_unsigned_bits_transposed_by_a_traced_program(fusion):
    def f(bits):
        return tnp.transpose((bits >> 3) & 0xFFFF).reshape(-1).astype(tnp.uint16) | 1

    bits = (np.arange(40, dtype=np.uint32) * np.uint32(2654435761)).reshape(4, 10)
    out = tracehlo.compile(f, (bits,), fusion=fusion)(bits)
    np.testing.assert_array_equal(out, ((bits >> 3) & 0xFFFF).T.reshape(-1).astype(np.uint16) | 1)


NARROWED = "  %n = stablehlo.convert %a : (tensor<4xi32>) -> tensor<4xi8>\n"
AND_OF_IT = "  %r = stablehlo.and %n, %b : tensor<4xi8>\n"
AND_OF_BOOLS = "  %r = stablehlo.and %p, %q : tensor<4xi1>\n"


def test_xla_fusion_is_off_only_where_a_bitwise_op_may_read_a_narrowing_convert():
    """XLA CPU's own fusion crashes on an and or an or of a narrowing signed convert
    (test_passes_xla_safety runs it): compile_options switches it off for a module
    where one reads the other, or where a call, or a loop or branch that makes, reads
    or takes the convert, may bring them together once XLA inlines it, and only there."""
    hazard = runtime._narrowing_bitwise_hazard
    assert hazard(NARROWED + AND_OF_IT)
    assert not hazard(NARROWED + AND_OF_BOOLS)
    assert not hazard(AND_OF_IT.replace("%n", "%m"))
    reshaped = "  %m = stablehlo.reshape %n : (tensor<4xi8>) -> tensor<4xi8>\n"
    assert hazard(NARROWED + reshaped + AND_OF_IT.replace("%n", "%m"))
    call = "  %c = func.call @f(%n) : (tensor<4xi8>) -> tensor<4xi8>\n"
    assert hazard(NARROWED + AND_OF_BOOLS + call)
    assert hazard(NARROWED + AND_OF_BOOLS + "  %w:2 = stablehlo.while(%i = %c0, %j = %n)\n")
    # a loop that neither takes the convert nor names it inside leaves XLA's fusion on
    loop = "  %w:2 = stablehlo.while(%i = %c0, %j = %k)\n"
    assert not hazard(NARROWED + AND_OF_BOOLS + loop)
    assert hazard(NARROWED + AND_OF_BOOLS + loop + "    %x = stablehlo.add %n, %n\n")
    assert hazard(AND_OF_BOOLS + loop + "  " + NARROWED)  # made in the loop's body
    widened = NARROWED.replace("-> tensor<4xi8>", "-> tensor<4xi64>")
    assert not hazard(widened + AND_OF_IT)


def assert_fusion_xla_is_jax_jit(program):
    """program(numpy module, lax module)(a, x) under fusion="xla" makes as many kernels as
    under jax.jit, and the same bits."""
    import jax
    import jax.numpy as jnp
    a = np.arange(-3, 5, dtype=np.int32)
    x = np.linspace(-3, 3, 8).astype(np.float32)
    ours = tracehlo.compile(program(tnp, tracehlo.lax), (a, x), fusion="xla")
    theirs = jax.jit(program(jnp, jax.lax)).lower(a, x).compile()
    assert len(ours.kernels()) == len(runtime.entry_kernels(theirs.as_text()))
    for got, want in zip(ours(a, x), theirs(a, x)):
        np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8),
                                      np.atleast_1d(want).view(np.uint8))


def test_an_argmin_beside_a_narrowing_convert_keeps_xlas_fusion():
    """An argmin's reducer ands bools: any and beside any narrowing convert switched
    XLA's fusion off, so fusion="xla" compiled another program than jax.jit's, and
    an arctan rounded an ulp apart (fuzz jit --bitwise 5450)."""
    def program(np_, lax):
        return lambda a, x: (np_.arctan(x * 2.0), lax.argmin(a + 1, 0, np_.int32),
                             (a + 3).astype(np_.int8))
    assert_fusion_xla_is_jax_jit(program)


def test_a_loop_beside_a_narrowing_convert_keeps_xlas_fusion():
    """A loop that never sees the convert brings nothing together: XLA's fusion stays
    on, and fusion="xla" compiles jax.jit's program (test_numpy_conformance's composite
    program, three loops and one ravel_multi_index(dtype="int16"), made 2,491 kernels
    where jax.jit makes 445)."""
    def program(np_, lax):
        return lambda a, x: (lax.fori_loop(0, 3, lambda i, v: np_.tanh(v) * 2.0 + x, x),
                             np_.arctan(x * 2.0) + np_.exp(x), (a > 0) & (a < 4),
                             (a + 3).astype(np_.int8))
    assert_fusion_xla_is_jax_jit(program)


def test_text_that_does_not_parse_is_a_compile_error_with_mlirs_diagnostic():
    """runtime.compile parses text itself (into the shared context): a malformed program
    is still an XlaCompileError, naming the line and column, not a ParseError."""
    with pytest.raises(runtime.XlaCompileError, match=r"could not compile.*:1:\d+: error"):
        runtime.compile("module { func.func @main( }", [])
