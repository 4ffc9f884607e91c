"""TRANSPOSE_CONV_2D in float32 on the float engine's phase route (``kernels/frontend/transposed_phases``, the
route of vxDeconvolutionLayer), against a plain NumPy scatter written from the Android 10 ``NeuralNetworks.h``:
randomized shapes, strides (often larger than the kernel, so that some output phases hold the bias alone),
explicit paddings up to past the kernel (phases whose windows start inside the input), implicit padding with output
shapes smaller and larger than the natural one, both layouts, every fused activation, a filter written between
executions."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F32T, Out, Tensor, boolean, i32, run

from openvx_nn import nnapi
from openvx_nn.kernels.frontend import grouped_convolution, transposed_phases

OP = nnapi.OperationType
CLAMP = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}  # NONE, RELU, RELU1, RELU6
SAME, VALID = 1, 2


def scatter_reference(x, filt, bias, top, left, strides, out_hw, activation):
    """The header's transposed convolution, float64: every input value x[b, iy, ix, c] adds
    x * filter[o, ky, kx, c] to output (iy * stride_h - top + ky, ix * stride_w - left + kx) of channel o when that
    position lies inside the output; each output starts at bias[o]; the fused activation clamps the result."""
    sw, sh = strides
    n, h, w, c = x.shape
    o, kh, kw, _ = filt.shape
    out = np.empty((n, out_hw[0], out_hw[1], o))
    for b in range(n):
        for oc in range(o):
            out[b, :, :, oc] = float(bias[oc])
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ky in range(kh):
                    for kx in range(kw):
                        y, xx = iy * sh - top + ky, ix * sw - left + kx
                        if not (0 <= y < out_hw[0] and 0 <= xx < out_hw[1]):
                            continue
                        for oc in range(o):
                            for ch in range(c):
                                out[b, y, xx, oc] += float(x[b, iy, ix, ch]) * float(filt[oc, ky, kx, ch])
    low, high = CLAMP[activation]
    return np.minimum(np.maximum(out, low), high)


def _layout(a, nchw):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if nchw else a


def _close(got, want, nchw):
    np.testing.assert_allclose(got, _layout(want, nchw), rtol=1e-5, atol=1e-5)


def _case(rng):
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7))
    c, o = int(rng.integers(1, 20)), int(rng.integers(1, 20))
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sh, sw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    filt = rng.standard_normal((o, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    return x, filt, bias, (sw, sh)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_explicit_padding_any_size(seed, nchw):
    """Paddings of 0 to kernel + 2 on each side (past the kernel: a phase's window starts inside the input)."""
    rng = np.random.default_rng(400 + seed)
    for _ in range(20):
        x, filt, bias, (sw, sh) = _case(rng)
        _, h, w, _ = x.shape
        _, kh, kw, _ = filt.shape
        left, right, top, bottom = (int(rng.integers(0, k + 3)) for k in (kw, kw, kh, kh))
        out_hw = ((h - 1) * sh + kh - top - bottom, (w - 1) * sw + kw - left - right)
        if min(out_hw) >= 1:
            break
    else:
        pytest.skip("no output left by the drawn paddings")
    act = int(rng.integers(0, 4))
    want = scatter_reference(x, filt, bias, top, left, (sw, sh), out_hw, act)
    got, = run(OP.TRANSPOSE_CONV_2D, [Tensor(_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True)]
               + [i32(v) for v in (left, right, top, bottom, sw, sh, act)] + [boolean(nchw)],
               [Out(F32T, _layout(want, nchw).shape)])
    _close(got, want, nchw)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_implicit_padding_with_any_output_shape(seed, nchw):
    """SAME: the overhang of the natural extent over the requested one, the smaller half first; VALID: none.
    Requested outputs from half the natural extent to three more than it (positions no tap reaches: the bias)."""
    rng = np.random.default_rng(500 + seed)
    x, filt, bias, (sw, sh) = _case(rng)
    _, h, w, _ = x.shape
    _, kh, kw, _ = filt.shape
    full = ((h - 1) * sh + kh, (w - 1) * sw + kw)
    out_hw = tuple(int(rng.integers(max(1, f // 2), f + 4)) for f in full)
    scheme, act = (SAME, VALID)[seed % 2], int(rng.integers(0, 4))
    top, left = (max(f - size, 0) // 2 if scheme == SAME else 0 for f, size in zip(full, out_hw))
    want = scatter_reference(x, filt, bias, top, left, (sw, sh), out_hw, act)
    shape = _layout(want, nchw).shape
    got, = run(OP.TRANSPOSE_CONV_2D, [Tensor(_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True),
                                      Tensor(np.asarray(shape, np.int32), const=True), i32(scheme), i32(sw), i32(sh),
                                      i32(act), boolean(nchw)], [Out(F32T, shape)])
    _close(got, want, nchw)


def test_runs_on_the_phase_route_and_sees_a_written_filter(monkeypatch):
    """No float32 TRANSPOSE_CONV_2D reaches the grouped kernel; a filter given as a model input is split into its
    phases again when the next execution writes new values."""
    def refuse(*args, **kwargs):
        raise AssertionError("TRANSPOSE_CONV_2D reached grouped_convolution")
    monkeypatch.setattr(grouped_convolution, "prepare", refuse)
    plans = []
    real = transposed_phases.TransposedPhases.__init__

    def counted(self, *args, **kwargs):
        plans.append(args)
        real(self, *args, **kwargs)
    monkeypatch.setattr(transposed_phases.TransposedPhases, "__init__", counted)
    rng = np.random.default_rng(7)
    x, bias = rng.standard_normal((1, 5, 4, 3)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    for _ in range(2):
        filt = rng.standard_normal((6, 3, 2, 3)).astype(np.float32)
        want = scatter_reference(x, filt, bias, 1, 0, (2, 3), (12, 7), 0)
        got, = run(OP.TRANSPOSE_CONV_2D, [Tensor(x), Tensor(filt), Tensor(bias, const=True)]
                   + [i32(v) for v in (0, 1, 1, 2, 2, 3, 0)] + [boolean(False)], [Out(F32T, (1, 12, 7, 6))])
        _close(got, want, False)
    assert plans


@pytest.mark.parametrize("seed", range(40))
def test_the_phase_plan_alone_matches_the_scatter(seed):
    """``TransposedPhases`` bound directly, both output layouts, wide channel counts (several engine blocks)."""
    rng = np.random.default_rng(600 + seed)
    x, filt, bias, (sw, sh) = _case(rng)
    if seed % 3 == 0:
        filt = rng.standard_normal((int(rng.integers(17, 70)), *filt.shape[1:])).astype(np.float32)
        bias = rng.standard_normal(filt.shape[0]).astype(np.float32)
    n, h, w, _ = x.shape
    o, kh, kw, _ = filt.shape
    top, left = int(rng.integers(0, kh + 3)), int(rng.integers(0, kw + 3))
    out_hw = (int(rng.integers(1, (h - 1) * sh + kh + 4)), int(rng.integers(1, (w - 1) * sw + kw + 4)))
    act = int(rng.integers(0, 4))
    want = scatter_reference(x, filt, bias, top, left, (sw, sh), out_hw, act)
    plan = transposed_phases.TransposedPhases(filt, (top, left), (sh, sw), (h, w), out_hw)
    for channels_last in (True, False):
        out = np.full((n, *out_hw, o) if channels_last else (n, o, *out_hw), np.nan, np.float32)
        plan.bind(x, bias, out, channels_last, CLAMP[act])()
        _close(out, want, not channels_last)
