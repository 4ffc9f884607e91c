"""Every NN layer through the Pythonic API equals the plain reference, in
several formats, with virtual intermediate tensors where the API infers them."""
from __future__ import annotations

import numpy as np
import pytest
from api_testing import leak_checked_context
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import F32, Q78, S8, U8, assert_float32_means, assert_float32_sums, random_values
from layer_references import fully_connected_ref, pooling_ref, roi_pooling_ref
from nonlinear_reference import assert_softmax, reference_activation, reference_lrn, reference_softmax

FORMATS = [Q78, S8, U8, F32]

pytestmark = pytest.mark.usefixtures("one_simd_tile")  # one SIMD entry per format, not one per layer shape


@pytest.fixture
def context():
    yield from leak_checked_context()


def _small(values: np.ndarray, fmt, shift: int) -> np.ndarray:
    """Weights shrunk so that sums stay in range (integers) ."""
    return values if fmt.is_float else (values // (1 << shift)).astype(fmt.dtype)


def _run(ctx, build, out_shape, fmt, out_fpp=None):
    out = ctx.tensor(shape=out_shape, dtype=fmt.dtype, fixed_point_position=fmt.fpp if out_fpp is None else out_fpp)
    with ctx.graph() as g:
        build(g, out)
        g.process()
    return out.numpy()


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_convolution_with_padding_dilation_and_inferred_stride_matches_the_reference(context, fmt):
    rng = np.random.default_rng(1)
    x = random_values(rng, fmt, (9, 8, 2, 2))
    w = _small(random_values(rng, fmt, (3, 3, 2, 3)), fmt, 4)
    b = random_values(rng, fmt, (3,))
    tx, tw, tb = (context.tensor(a, fixed_point_position=fmt.fpp) for a in (x, w, b))
    got = _run(context, lambda g, out: g.convolution(tx, tw, tb, out, padding=(1, 0), dilation=(0, 1)),
               (5, 4, 3, 2), fmt)
    want = reference_convolution(x, w, b, (5, 4, 3, 2), (1, 0), (2, 1), (0, 1), fmt, (fmt.fpp,) * 4)
    if fmt.is_float:  # dilated float32 layers run on the float engine's float32 sums
        magnitude = reference_convolution(np.abs(x), np.abs(w), np.abs(b), (5, 4, 3, 2), (1, 0), (2, 1), (0, 1), fmt,
                                          (fmt.fpp,) * 4)
        assert_float32_sums(got, want, magnitude)
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_deconvolution_matches_the_reference(context, fmt):
    rng = np.random.default_rng(2)
    x = random_values(rng, fmt, (4, 3, 2))
    w = _small(random_values(rng, fmt, (3, 3, 2, 2)), fmt, 4)
    tx, tw = context.tensor(x, fixed_point_position=fmt.fpp), context.tensor(w, fixed_point_position=fmt.fpp)
    with context.graph() as g:
        y = g.deconvolution(tx, tw, padding=(1, 1), a=(1, 0))
        assert y.shape == (8, 3, 2)   # upscale a + 1 = (2, 1)
    got = _run(context, lambda g, out: g.deconvolution(tx, tw, None, out, padding=(1, 1), a=(1, 0)), (8, 5, 2), fmt)
    want = reference_deconvolution(x, w, None, (1, 1), (2, 2), (1, 0), fmt, (fmt.fpp,) * 4)
    # upscale x: (4-1)*u - 2 + 3 + 1 = 8 -> u = 2; y: (3-1)*u - 2 + 3 + 0 = 5 -> u = 2
    if fmt.is_float:  # float32 deconvolution runs on the float engine's float32 sums
        magnitude = reference_deconvolution(np.abs(x), np.abs(w), None, (1, 1), (2, 2), (1, 0), fmt, (fmt.fpp,) * 4)
        assert_float32_sums(got, want, magnitude)
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_fully_connected_on_a_3d_batched_input_matches_the_reference(context, fmt):
    rng = np.random.default_rng(3)
    x = random_values(rng, fmt, (2, 3, 2, 4))
    w = _small(random_values(rng, fmt, (12, 5)), fmt, 4)
    b = random_values(rng, fmt, (5,))
    tx, tw, tb = (context.tensor(a, fixed_point_position=fmt.fpp) for a in (x, w, b))
    got = _run(context, lambda g, out: g.fully_connected(tx, tw, tb, out, rounding="to_zero"), (5, 4), fmt)
    flat = x.reshape((12, 4), order="F")
    want = fully_connected_ref(flat, w, b, fmt, True, False, *(fmt.fpp,) * 4)
    if fmt.is_float:  # the float engine's float32 sums
        magnitude = fully_connected_ref(np.abs(flat), np.abs(w), np.abs(b), fmt, True, False, *(fmt.fpp,) * 4)
        assert_float32_sums(got, want, magnitude)
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_with_stride_two_matches_the_reference(context, fmt, kind):
    rng = np.random.default_rng(4)
    x = random_values(rng, fmt, (7, 6, 3))
    tx = context.tensor(x, fixed_point_position=fmt.fpp)
    with context.graph() as g:
        assert g.pooling(tx, kind=kind, size=3, padding=1, stride=2).shape == (4, 3, 3)
    got = _run(context, lambda g, out: g.pooling(tx, out, kind=kind, size=3, padding=1), (4, 3, 3), fmt)
    want = pooling_ref(x, (4, 3, 3), fmt, kind == "max", 3, 3, 1, 1, 2, 2)
    if fmt.is_float and kind == "avg":  # float32 sums
        assert_float32_means(got, want, pooling_ref(np.abs(x), (4, 3, 3), fmt, False, 3, 3, 1, 1, 2, 2), 9)
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_softmax_with_its_own_output_format_matches_the_reference(context, fmt):
    rng = np.random.default_rng(5)
    x = random_values(rng, fmt, (2, 2, 5, 2))
    out_fmt = fmt if fmt.is_float or fmt.dtype != np.int16 else type(fmt)("Q0.15", np.int16, 15)
    tx = context.tensor(x, fixed_point_position=fmt.fpp)
    got = _run(context, lambda g, out: g.softmax(tx, out), x.shape, fmt, out_fmt.fpp)
    assert_softmax(got, reference_softmax(x, 2, fmt, out_fmt))


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("kind", ["same_map", "across_maps"])
def test_local_response_normalization_matches_the_reference(context, fmt, kind):
    rng = np.random.default_rng(6)
    x = random_values(rng, fmt, (4, 3, 5))
    tx = context.tensor(x, fixed_point_position=fmt.fpp)
    a, be, bi = (float(np.float32(v)) for v in (0.5, 0.75, 2.0))
    got = _run(context, lambda g, out: g.local_response_normalization(tx, out, kind=kind, size=3, alpha=a,
                                                                      beta=be, bias=bi), x.shape, fmt)
    assert np.array_equal(got, reference_lrn(x, kind == "across_maps", 3, a, be, bi, fmt, fmt))


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("function", ["logistic", "tanh", "relu", "brelu", "softrelu", "abs", "square", "sqrt",
                                      "linear"])
def test_every_activation_function_matches_the_reference(context, fmt, function):
    rng = np.random.default_rng(7)
    x = random_values(rng, fmt, (3, 4, 2))
    tx = context.tensor(x, fixed_point_position=fmt.fpp)
    a, b = float(np.float32(1.5)), float(np.float32(0.5))
    got = _run(context, lambda g, out: g.activation(tx, function, a, b, out), x.shape, fmt)
    want = reference_activation(x, function, a, b, fmt, fmt)
    if fmt.is_float:
        assert np.allclose(got, want, rtol=1e-6, equal_nan=True)
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_roi_pooling_matches_the_reference(context, fmt):
    rng = np.random.default_rng(8)
    x = random_values(rng, fmt, (8, 7, 2))
    rois = np.array([[0, 0, 7, 6], [2, 1, 5, 4], [3, 3, 3, 3]], np.int16).T  # [4, #rois]
    tx, tr = context.tensor(x, fixed_point_position=fmt.fpp), context.tensor(rois)
    with context.graph() as g:
        assert g.roi_pooling(tx, tr, pooled_size=(2, 3)).shape == (2, 3, 2, 3)
    got = _run(context, lambda g, out: g.roi_pooling(tx, tr, out=out), (2, 3, 2, 3), fmt)
    assert np.array_equal(got, roi_pooling_ref(x, rois, (2, 3, 2, 3), fmt))


def test_a_chain_of_virtual_tensors_equals_the_chain_of_references(context):
    rng = np.random.default_rng(9)
    x = random_values(rng, Q78, (12, 12, 2))
    cw = (random_values(rng, Q78, (3, 3, 2, 4)) // 16).astype(np.int16)
    cb = random_values(rng, Q78, (4,))
    fw = (random_values(rng, Q78, (144, 10)) // 64).astype(np.int16)
    fb = random_values(rng, Q78, (10,))
    t = {k: context.tensor(v, fixed_point_position=8) for k, v in {"x": x, "cw": cw, "cb": cb, "fw": fw, "fb": fb}.items()}
    out = context.tensor(shape=(10,), dtype=np.int16, fixed_point_position=8)
    with context.graph() as g:
        h = g.max_pool(g.relu(g.convolution(t["x"], t["cw"], t["cb"], padding=1)))
        assert h.virtual and h.shape == (6, 6, 4) and h.dtype == np.int16 and h.fixed_point_position == 8
        fc = g.fully_connected(h, t["fw"], t["fb"])
        assert fc.shape == (10,)
        g.softmax(fc, out)
        g.process()
    conv = reference_convolution(x, cw, cb, (12, 12, 4), (1, 1), (1, 1), (0, 0), Q78, (8,) * 4)
    pooled = pooling_ref(reference_activation(conv, "relu", 0, 0, Q78, Q78), (6, 6, 4), Q78, True, 2, 2, 0, 0, 2, 2)
    fc_ref = fully_connected_ref(pooled.reshape((144, 1), order="F"), fw, fb, Q78, True, True, 8, 8, 8, 8)
    assert np.array_equal(out.numpy(), reference_softmax(fc_ref.reshape(10), 0, Q78, Q78))
