"""lax.conv_general_dilated against jax.lax's: values (1-D to 3-D, layouts, strides,
padding kinds, dilations, feature and batch groups, several dtypes), derivatives of both
operands, vmap over either or both, our fusion passes and hlo-opt around it, and JAX's
errors at the user's line. Each family of cases compiles once on each side."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tracehlo
import tracehlo.lax as tlax
import tracehlo.numpy as tnp
from tracehlo.tools import hlo_opt

RNG = np.random.default_rng(0)

# name: (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CASES = {
    "1d same stride": ((2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding="SAME")),
    "2d valid": ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(1, 2), padding="VALID")),
    "2d nhwc dilated": ((2, 7, 6, 3), (3, 2, 3, 4), dict(
        window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2),
        rhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d feature groups": ((2, 4, 6, 5), (6, 2, 3, 3), dict(
        window_strides=(1, 2), padding="SAME_LOWER", feature_group_count=2)),
    "2d batch groups": ((4, 3, 6, 5), (4, 3, 2, 2), dict(
        window_strides=(1, 1), padding=((1, 0), (0, 1)), batch_group_count=2)),
    "2d mixed layout": ((5, 2, 3, 6), (2, 3, 4, 3), dict(
        window_strides=(1, 2), padding="SAME", dimension_numbers=("HNCW", "HIOW", "WNHC"))),
    "2d dimension numbers": ((2, 6, 5, 3), (3, 4, 2, 3), dict(
        window_strides=(2, 1), padding="VALID", rhs_dilation=(1, 2),
        dimension_numbers=((0, 3, 1, 2), (1, 0, 2, 3), (0, 3, 1, 2)))),
    "3d": ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(
        window_strides=(1, 2, 1), padding="SAME", rhs_dilation=(1, 1, 2))),
    "negative padding": ((2, 3, 8), (2, 3, 3), dict(
        window_strides=(1,), padding=((-1, 2),), lhs_dilation=(2,))),
    "no spatial axes": ((3, 4), (5, 4), dict(window_strides=(), padding=())),
}


def _kwargs(lax, kw):
    """Numeric dimension numbers are ConvDimensionNumbers on each side."""
    dn = kw.get("dimension_numbers")
    if dn is not None and not isinstance(dn[0], str):
        kw = dict(kw, dimension_numbers=lax.ConvDimensionNumbers(*dn))
    return kw


def _conv(lax, name):
    kw = _kwargs(lax, CASES[name][2])
    return lambda a, b: lax.conv_general_dilated(a, b, **kw)


def _operands(dtype, names=CASES):
    out = {}
    for name in names:
        lhs, rhs, _ = CASES[name]
        a, b = RNG.uniform(-1, 1, lhs), RNG.uniform(-1, 1, rhs)
        if np.dtype(dtype).kind == "c":
            a, b = a + 1j * RNG.uniform(-1, 1, lhs), b - 1j * RNG.uniform(-1, 1, rhs)
        elif np.dtype(dtype).kind == "i":
            a, b = np.round(a * 4), np.round(b * 4)
        out[name] = (a.astype(dtype), b.astype(dtype))
    return out


def _close(got, want, rtol=1e-5, atol=1e-5):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (g.shape, g.dtype, w.shape, w.dtype)
        wide = np.complex128 if g.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(np.asarray(g).astype(wide), np.asarray(w).astype(wide),
                                   rtol=rtol, atol=atol)


def _on_both(program, *args, rtol=1e-5, atol=1e-5):
    """program(lax, M, np) under tracehlo.jit and under jax.jit, compared."""
    got = tracehlo.jit(program(tlax, tracehlo, tnp))(*args)
    want = jax.jit(program(jax.lax, jax, jnp))(*args)
    _close(got, want, rtol, atol)
    return got


TOLERANCE = {"float32": 1e-5, "bfloat16": 3e-2, "complex64": 1e-5, "int32": 0}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
def test_values(dtype):
    data = _operands(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    program = lambda lax, M, np_: lambda d: {k: _conv(lax, k)(*d[k]) for k in d}
    tol = TOLERANCE[dtype]
    _on_both(program, data, rtol=tol, atol=tol)


def test_wrappers_and_preferred_element_type():
    a, b = RNG.uniform(-1, 1, (2, 3, 7, 6)).astype(np.float32), \
        RNG.uniform(-1, 1, (4, 3, 3, 2)).astype(np.float32)
    ints = RNG.integers(-100, 100, (2, 3, 5)).astype(np.int8), \
        RNG.integers(-100, 100, (2, 3, 2)).astype(np.int8)

    def program(lax, M, np_):
        return lambda a, b, i, j: (
            lax.conv(a, b, (2, 1), "SAME"),
            lax.conv_with_general_padding(a, b, (1, 1), ((2, 0), (1, 1)), (2, 1), (1, 2)),
            lax.conv_general_dilated(i, j, (1,), "VALID", preferred_element_type=np_.int32),
            lax.conv_general_dilated(a, b, (1, 1), "VALID", precision="highest",
                                     preferred_element_type=np_.float32))
    _on_both(program, a, b, *ints)
    # JAX's own ConvDimensionNumbers is accepted as ours
    dn = jax.lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 3, 2))
    _close(tlax.conv_general_dilated(a, b, (1, 1), "VALID", dimension_numbers=dn),
           jax.lax.conv_general_dilated(a, b, (1, 1), "VALID", dimension_numbers=dn))


GRAD_CASES = [n for n in CASES if n != "no spatial axes"]


def test_grad_of_both_operands():
    data = _operands(np.float32, GRAD_CASES)
    # a cotangent that differs per output element
    weights = {k: RNG.uniform(-1, 1, jax.eval_shape(_conv(jax.lax, k), *v).shape)
                  .astype(np.float32) for k, v in data.items()}

    def program(lax, M, np_):
        def grads(d, w):
            return {k: M.grad(lambda a, b, k=k: np_.sum(_conv(lax, k)(a, b) * w[k]),
                              argnums=(0, 1))(*d[k]) for k in d}
        return grads
    _on_both(program, data, weights, rtol=1e-4, atol=1e-4)


def test_grad_eagerly_of_one_operand_and_second_order():
    a, b = _operands(np.float32, ["2d nhwc dilated"])["2d nhwc dilated"]

    def results(M, lax, np_):
        loss = lambda a, b: np_.sum(np_.tanh(_conv(lax, "2d nhwc dilated")(a, b)))
        # the weights only (no backward convolution for a), and a Hessian-vector
        # product: the transposes differentiated again
        return (M.grad(loss, argnums=1)(a, b),
                M.jvp(lambda b: M.grad(loss, argnums=(0, 1))(a, b), (b,), (b,))[1])
    _close(results(tracehlo, tlax, tnp), results(jax, jax.lax, jnp), rtol=1e-4, atol=1e-4)


def test_jvp():
    names = ["2d nhwc dilated", "2d feature groups", "2d batch groups", "3d"]
    data, tangents = _operands(np.float32, names), _operands(np.float32, names)

    def program(lax, M, np_):
        def jvps(d, t):
            both = {k: M.jvp(_conv(lax, k), d[k], t[k]) for k in d}
            lhs_only = {k + " lhs": M.jvp(lambda a, k=k: _conv(lax, k)(a, d[k][1]),
                                          (d[k][0],), (t[k][0],)) for k in d}
            return {**both, **lhs_only}
        return jvps
    _on_both(program, data, tangents)


VMAP_CASES = {  # name: (case, in_axes)
    "lhs": ("2d nhwc dilated", (0, None)),
    "lhs axis 2": ("1d same stride", (2, None)),
    "lhs, batch groups": ("2d batch groups", (1, None)),
    "rhs": ("2d valid", (None, 0)),
    "rhs axis 3, groups": ("2d feature groups", (None, 3)),
    "rhs, batch groups": ("2d batch groups", (None, 0)),
    "both": ("2d mixed layout", (0, 1)),
    "both, groups": ("2d feature groups", (2, 0)),
    "both, batch groups": ("2d batch groups", (0, 0)),
    "both, no spatial axes": ("no spatial axes", (1, 0)),
}


def test_vmap():
    data = {}
    for key, (name, axes) in VMAP_CASES.items():
        ops = _operands(np.float32, [name])[name]
        data[key] = tuple(x if a is None else np.stack([x * (k + 1) for k in range(3)], a)
                          for x, a in zip(ops, axes))

    def program(lax, M, np_):
        return lambda d: {k: M.vmap(_conv(lax, VMAP_CASES[k][0]),
                                    in_axes=VMAP_CASES[k][1])(*d[k]) for k in d}
    _on_both(program, data)


def test_fusion_passes_and_hlo_opt_take_a_convolution(tmp_path):
    x = RNG.uniform(-1, 1, (2, 8, 8, 3)).astype(np.float32)
    w = RNG.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32)
    bias = np.linspace(-1, 1, 4, dtype=np.float32)

    def model(lax, np_):
        def loss(x, w, bias):
            y = lax.conv_general_dilated(np_.tanh(x) * 2, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return np_.sum(np_.maximum(y + bias, 0.0) ** 2)
        return loss

    for fn, jax_fn in [(model(tlax, tnp), model(jax.lax, jnp)),
                       (tracehlo.grad(model(tlax, tnp), argnums=(0, 1)),
                        jax.grad(model(jax.lax, jnp), argnums=(0, 1)))]:
        compiled = tracehlo.compile(fn, (x, w, bias))  # our fusion passes (the default)
        assert "stablehlo.convolution" in compiled.fused
        assert "mhlo.fusion" in compiled.fused
        assert any(k.startswith("convolution") for k in compiled.kernels())
        _close(compiled(x, w, bias), jax_fn(x, w, bias), rtol=1e-4, atol=1e-3)
        graph = tracehlo.verify(tracehlo.make_ir(fn)(x, w, bias))
        assert str(tracehlo.parse_ir(str(graph))) == str(graph)
    # hlo-opt fuses around ours and JAX's convolutions, for a backend that compiles them
    ours = tmp_path / "ours.mlir"
    ours.write_text(compiled.stablehlo)
    theirs = tmp_path / "jax.mlir"
    theirs.write_text(jax.jit(jax_fn).lower(x, w, bias).as_text())
    for path in (ours, theirs):
        out = tmp_path / (path.stem + ".fused.mlir")
        assert hlo_opt.main([str(path), "--fuse", "--check-backend", "-o", str(out)]) == 0
        assert "stablehlo.convolution" in out.read_text()


def test_complex_lowers_as_three_real_convolutions_on_cpu():
    a, b = _operands(np.complex64, ["1d same stride"])["1d same stride"]
    text = tracehlo.compile(_conv(tlax, "1d same stride"), (a, b)).stablehlo
    assert text.count("stablehlo.convolution") == 3 and "complex<f32>>) -> tensor" in text


F, G = np.ones((2, 3, 5), np.float32), np.ones((4, 3, 2), np.float32)
ERRORS = [  # (lhs, rhs, args, kwargs, exception, message)
    (F, np.ones((4, 3, 2, 2), np.float32), ((1,), "VALID"), {}, TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 3 and 4"),
    (F, np.ones((4, 2, 2), np.float32), ((1,), "VALID"), {}, ValueError,
     r"lhs feature dimension size divided by feature_group_count must equal the rhs input "
     r"feature dimension size, but 3 // 1 != 2"),
    (F, G, ((1,), "VALID"), dict(feature_group_count=2), ValueError,
     "feature_group_count must divide lhs feature dimension size, but 2 does not divide 3"),
    (np.ones((6, 3, 5), np.float32), G, ((1,), "VALID"), dict(batch_group_count=3), ValueError,
     "rhs output feature dimension size must be a multiple of batch_group_count"),
    (F, G.astype(np.float16), ((1,), "VALID"), {}, TypeError,
     "requires arguments to have the same dtypes, got float32, float16"),
    (F, G, ((1, 1), "VALID"), {}, ValueError,
     "window and window_strides must have the same number of dimensions, but got 1 and 2"),
    (F, G, ((1,), "VALID"), dict(dimension_numbers=("NCH", "OIW", "NCH")), TypeError,
     "must each have the same set of spatial characters"),
    (F, G, ((1,), "VALID"), dict(dimension_numbers=("NCW", "OIW")), TypeError,
     "dimension_numbers list/tuple must be length 3, got 2"),
    (F, G, ((1,), "VALID"), dict(dimension_numbers=("NNW", "OIW", "NCW")), TypeError,
     r"dimension_numbers\[0\] must contain the characters 'N' and 'C' exactly once"),
    (F, G, ((1,), ((1,),)), {}, ValueError,
     "padding argument to conv_general_dilated should be a string or a sequence of"),
    (F, G, ((1,), "SAME"), dict(lhs_dilation=(2,)), ValueError,
     "String padding is not implemented for transposed convolution"),
    (F, G, ((1,), "FULL"), {}, RuntimeError, "Unrecognized padding type"),
    (F, G, ((1,), ((-4, -3),)), {}, ValueError,
     "Negative padding is larger than the size of the corresponding dimension"),
]


@pytest.mark.parametrize("lhs,rhs,args,kwargs,exc,message", ERRORS,
                         ids=[re.sub(r"\W+", "_", e[-1][:40]) for e in ERRORS])
def test_errors_are_jaxs_at_the_users_line(lhs, rhs, args, kwargs, exc, message):
    with pytest.raises(exc, match=message):
        jax.lax.conv_general_dilated(lhs, rhs, *args, **kwargs)
    with pytest.raises(exc, match=r"test_conv\.py:\d+: .*" + message):
        tlax.conv_general_dilated(lhs, rhs, *args, **kwargs)


def test_error_under_jit_names_the_users_line():
    with pytest.raises(ValueError, match=r"test_conv\.py:\d+: conv_general_dilated lhs "
                                         r"feature dimension size"):
        tracehlo.jit(lambda a, b: tlax.conv_general_dilated(a, b, (1,), "VALID"))(
            F, np.ones((4, 2, 2), np.float32))


@pytest.mark.parametrize("kwargs,message", [
    (dict(feature_group_count=2.0), "feature_group_count must be an integer, got 2.0"),
    (dict(batch_group_count="2"), "batch_group_count must be an integer, got '2'"),
    (dict(lhs_dilation=(1.5,)), r"lhs_dilation must be a sequence of integers, got \(1\.5,\)"),
    (dict(window_strides=1), "window_strides must be a sequence of integers, got 1")])
def test_non_integer_arguments_name_the_users_line_once(kwargs, message):
    """Where JAX fails by accident (NotImplementedError for a float group count, a
    comparison of str and int), ours names the argument."""
    args = {"window_strides": (1,), "padding": "VALID", **kwargs}
    with pytest.raises(TypeError, match=r"^[^:]*test_conv\.py:\d+: conv_general_dilated "
                                        + message):
        tlax.conv_general_dilated(F, np.ones((4, 3, 2), np.float32), **args)


# (lhs, rhs, strides, padding, rhs_dilation, dimension_numbers, transpose_kernel)
TRANSPOSES = [((2, 5, 3), (3, 3, 4), (2,), "SAME", None, None, False),
              ((2, 5, 3), (3, 4, 3), (2,), "VALID", None, None, True),
              ((1, 6, 5, 2), (3, 2, 3, 2), (2, 1), "SAME", (1, 2), None, True),
              ((1, 6, 5, 2), (3, 2, 2, 3), (3, 2), "VALID", None, None, False),
              ((1, 6, 5, 2), (3, 2, 2, 3), (2, 2), ((1, 2), (0, 1)), None, None, False),
              ((2, 3, 6, 5), (3, 4, 2, 2), (2, 1), "SAME", None, ("NCHW", "OIHW", "NCHW"),
               True)]


def test_conv_transpose_is_jaxs():
    """Channels-last defaults, SAME/VALID/explicit padding, dilation, a flipped kernel;
    values eagerly and under jit, and the gradient of a loss through it."""
    rng = np.random.default_rng(3)
    for shapes_and_args in TRANSPOSES:
        sl, sr, *args = shapes_and_args
        x, w = (rng.normal(size=s).astype(np.float32) for s in (sl, sr))

        def f(M, x, w, args=args):
            strides, padding, dilation, dnums, flip = args
            return M.lax.conv_transpose(x, w, strides, padding, rhs_dilation=dilation,
                                        dimension_numbers=dnums, transpose_kernel=flip)
        want = f(jax, x, w)
        np.testing.assert_allclose(f(tracehlo, x, w), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(tracehlo.jit(lambda x, w: f(tracehlo, x, w))(x, w), want,
                                   rtol=1e-5, atol=1e-5)
    loss = lambda M, np_: lambda x, w: np_.sum(f(M, x, w) ** 2)
    for got, want in zip(tracehlo.jit(tracehlo.grad(loss(tracehlo, tnp), (0, 1)))(x, w),
                         jax.grad(loss(jax, jnp), (0, 1))(x, w), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"test_conv\.py:\d+: Padding mode must be `SAME` "
                                         r"or `VALID`\."):
        tlax.conv_transpose(x, w, (2, 1), "SAME_LOWER")
