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
