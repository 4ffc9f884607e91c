"""Convolution, deconvolution and fully connected run in a native plan (C, no GIL), bit-identical to
the per-call Python route (``correlation.execute``, the kernels' own dispatchers), over randomized shapes,
strides, paddings, dilations, formats, both policies, with and without bias; and the engine's bound entry
(``engine/prepared.py``) equals ``correlation.execute`` on every route this CPU has."""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model as _model
from native_testing import native_run as _native_run
from native_testing import values as _values

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.kernels.engine import correlation, isa, prepared
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.deconvolution import deconvolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected
from openvx_nn.kernels.support import native
from openvx_nn.operations.geometry import output_size

# (dtype, fixed point positions x, w, b, out): U8, S8, Q7.8 and other int16 formats, F32
FORMATS = [(np.uint8, (0, 0, 0, 0)), (np.int8, (0, 0, 0, 0)), (np.int16, (8, 8, 8, 8)), (np.int16, (3, 7, 12, 5)),
           (np.float32, (0, 0, 0, 0))]
POLICIES = [("saturate", "nearest_even"), ("wrap", "to_zero")]

pytestmark = pytest.mark.usefixtures("one_simd_tile")  # one SIMD entry per format, not one per random shape


def _policies(overflow, rounding):
    return overflow == "saturate", rounding == "nearest_even"


@pytest.mark.parametrize("dtype, fpp", FORMATS)
def test_native_convolution_is_bit_identical_to_the_python_route(dtype, fpp):
    rng = np.random.default_rng(2500 + fpp[1])
    for case in range(6):
        overflow, rounding = POLICIES[case % 2]
        channels, maps = int(rng.integers(1, 9)), int(rng.integers(1, 11))
        kx, ky = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        pad, dil, stride = tuple(rng.integers(0, 2, 2)), tuple(rng.integers(0, 2, 2)), tuple(rng.integers(1, 3, 2))
        batch = (int(rng.integers(1, 3)),) if case % 3 == 2 else ()
        shape = (int(rng.integers(4, 11)), int(rng.integers(4, 11)), channels) + batch
        size = tuple(output_size(shape[a], int(pad[a]), (kx, ky)[a] + ((kx, ky)[a] - 1) * int(dil[a]), int(stride[a]),
                                 False) for a in (0, 1))
        out_shape = size + (maps,) + batch
        bias_shape = [None, (maps,), size + (maps,)][case % 3]
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp[0])
            w = _values(rng, (kx, ky, channels, maps), dtype, small=True)
            b = None if bias_shape is None else _values(rng, bias_shape, dtype)
            out = g.convolution(x, ctx.tensor(w, fixed_point_position=fpp[1]),
                                None if b is None else ctx.tensor(b, fixed_point_position=fpp[2]),
                                out=ctx.tensor(shape=out_shape, dtype=dtype, fixed_point_position=fpp[3]),
                                padding=tuple(int(p) for p in pad), dilation=tuple(int(d) for d in dil),
                                overflow=overflow, rounding=rounding)
            ours = _native_run(g, out)
            state = _model(g.handle).order[0].state
            expected = np.zeros(out_shape, dtype, order="F")
            convolution(x.numpy(), w, b, expected, *state["pad"], *state["stride"], *state["dilation"],
                        *_policies(overflow, rounding), fpp_x=fpp[0], fpp_w=fpp[1], fpp_b=fpp[2], fpp_out=fpp[3])
            assert ours.tobytes() == expected.tobytes(), (case, shape, (kx, ky), pad, dil, stride, bias_shape)


@pytest.mark.parametrize("dtype, fpp", FORMATS)
def test_native_deconvolution_is_bit_identical_to_the_python_route(dtype, fpp, monkeypatch):
    # float32 on the correlation route here (the float engine's route: test_standard_float_deconvolution)
    monkeypatch.setenv("OPENVX_NN_F32_SUMS", "float64")
    rng = np.random.default_rng(2501 + fpp[1])
    for case in range(4):
        overflow, rounding = POLICIES[case % 2]
        channels, maps = int(rng.integers(1, 6)), int(rng.integers(1, 7))
        kx, ky = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        a = (int(rng.integers(0, 2)), int(rng.integers(0, 2)))
        pad = (int(rng.integers(0, max(1, min(kx, 2)))), int(rng.integers(0, max(1, min(ky, 2)))))
        shape = (int(rng.integers(2, 7)), int(rng.integers(2, 7)), channels)
        size = tuple((shape[i] - 1) * (a[i] + 1) - 2 * pad[i] + (kx, ky)[i] + a[i] for i in (0, 1))
        bias_shape = [None, (maps,), size + (maps,)][case % 3]
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp[0])
            w = _values(rng, (kx, ky, channels, maps), dtype, small=True)
            b = None if bias_shape is None else _values(rng, bias_shape, dtype)
            out = g.deconvolution(x, ctx.tensor(w, fixed_point_position=fpp[1]),
                                  None if b is None else ctx.tensor(b, fixed_point_position=fpp[2]),
                                  out=ctx.tensor(shape=size + (maps,), dtype=dtype, fixed_point_position=fpp[3]),
                                  padding=pad, a=a, overflow=overflow, rounding=rounding)
            ours = _native_run(g, out)
            state = _model(g.handle).order[0].state
            expected = np.zeros(size + (maps,), dtype, order="F")
            deconvolution(x.numpy(), w, b, expected, *state["pad"], *state["upscale"], *state["a"],
                          *_policies(overflow, rounding), fpp_x=fpp[0], fpp_w=fpp[1], fpp_b=fpp[2], fpp_out=fpp[3],
                          **state["bound"])
            assert ours.tobytes() == expected.tobytes(), (case, shape, (kx, ky), pad, a, bias_shape)


@pytest.mark.parametrize("dtype, fpp", FORMATS)
def test_native_fully_connected_is_bit_identical_to_the_python_route(dtype, fpp):
    rng = np.random.default_rng(2502 + fpp[1])
    for case in range(4):
        overflow, rounding = POLICIES[case % 2]
        n_in, n_out, batch = int(rng.integers(1, 40)), int(rng.integers(1, 20)), int(rng.integers(1, 4))
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, (n_in, batch), dtype), fixed_point_position=fpp[0])
            w = _values(rng, (n_in, n_out), dtype, small=True)
            b = None if case % 2 else _values(rng, (n_out,), dtype)
            out = g.fully_connected(x, ctx.tensor(w, fixed_point_position=fpp[1]),
                                    None if b is None else ctx.tensor(b, fixed_point_position=fpp[2]),
                                    out=ctx.tensor(shape=(n_out, batch), dtype=dtype, fixed_point_position=fpp[3]),
                                    overflow=overflow, rounding=rounding)
            ours = _native_run(g, out)
            expected = np.zeros((n_out, batch), dtype, order="F")
            fully_connected(x.numpy(), w, b, expected, *_policies(overflow, rounding), fpp_x=fpp[0], fpp_w=fpp[1],
                            fpp_b=fpp[2], fpp_out=fpp[3])
            assert ours.tobytes() == expected.tobytes(), (case, n_in, n_out, batch)


def _bound_equals_execute(route, x, bias, out_shape, dtype, order="F"):
    expected = np.zeros(out_shape, dtype, order=order)
    correlation.execute(route, x, bias, expected)
    ours = np.zeros(out_shape, dtype, order=order)
    bound = prepared.bind(route, x, bias, ours)
    assert native.run(bound.entry) == 0
    return ours.tobytes() == expected.tobytes()


ROUTES = [(m, i) for m, i in (("simd", isa.selected()), ("direct", None)) if m != "simd" or i != "generic"]


@pytest.mark.parametrize("method, chosen", ROUTES)
def test_the_bound_entry_equals_execute_on_every_route_here(method, chosen):
    rng = np.random.default_rng(2503)
    for dtype, fpp in FORMATS[:4]:
        for case in range(3):
            x = _values(rng, (int(rng.integers(3, 9)), int(rng.integers(3, 9)), int(rng.integers(1, 7)), 2), dtype)
            w = _values(rng, (3, 2, x.shape[2], int(rng.integers(1, 12))), dtype, small=True)
            window = correlation.convolution_window(1, 0, 1 + case % 2, 1, case % 2, 0)
            out_shape = ((x.shape[0] + 2 - (1 + 2 * (case % 2))) // (1 + case % 2) + 1, x.shape[1] - 1, w.shape[3], 2)
            arithmetic = correlation.Arithmetic(case != 1, case != 2, *fpp)
            bias = [None, _values(rng, (w.shape[3],), dtype), _values(rng, out_shape[:3], dtype)][case]
            route = correlation.prepare(w, bias is not None, x.shape, out_shape, window, arithmetic, method, chosen)
            assert route.engine == method
            # a C-ordered output: the simd route fills a Fortran-ordered scratch and copies it back
            assert _bound_equals_execute(route, x, bias, out_shape, dtype, order="FC"[case % 2]), (dtype, case)


@pytest.mark.skipif(isa.selected() == "generic", reason="no SIMD route on this CPU")
def test_an_int16_input_that_allows_no_int32_block_takes_the_int64_loops_in_the_bound_entry_too():
    # -32768 * -32768 * 2 products per step overflow int32: simd.correlate declines and execute runs the loops
    rng = np.random.default_rng(2504)
    x = np.full((5, 4, 3), -32768, np.int16)
    x[1, 1, 0] = 7
    w = np.full((2, 2, 3, 4), -32768, np.int16)
    w[0, 0, 0, 1] = 3
    bias = _values(rng, (4,), np.int16)
    for saturate, nearest in ((True, True), (False, False)):
        arithmetic = correlation.Arithmetic(saturate, nearest, 0, 0, 0, 20)
        window = correlation.convolution_window(0, 0, 1, 1, 0, 0)
        route = correlation.prepare(w, True, x.shape, (4, 3, 4), window, arithmetic, "simd", isa.selected())
        assert _bound_equals_execute(route, x, bias, (4, 3, 4), np.int16)


def test_a_gemm_route_or_an_overlapping_output_has_no_bound_entry():
    w = np.ones((1, 1, 2, 2), np.int16)
    window = correlation.convolution_window(0, 0, 1, 1, 0, 0)
    route = correlation.prepare(w, False, (4, 4, 2), (4, 4, 2), window, correlation.Arithmetic(True, True), "gemm")
    assert prepared.bind(route, np.ones((4, 4, 2), np.int16), None, np.zeros((4, 4, 2), np.int16)) is None
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(np.ones((4, 4, 2), np.int16))
        g.convolution(x, ctx.tensor(np.ones((1, 1, 2, 2), np.int16)), out=x)  # in place: the input is copied per run
        g.process()
        assert _model(g.handle).plan.native is None
        assert x.numpy().tolist() == np.full((4, 4, 2), 2).tolist()


def test_the_vx_small_cnn_benchmark_graph_runs_natively():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.vx_models import VXGraph, sample_images, small_cnn
    net = small_cnn(size=8)
    graph = VXGraph(net)
    try:
        image = sample_images(net, 1)[0]
        model = _model(graph.graph)
        context = _model(graph.context)
        context.performance_enabled = True  # the Python path: every node's own runner, no native plan
        python = graph.run(image).copy()
        assert model.plan.native is None
        context.performance_enabled = False
        graph.run(image)  # binds and publishes the native plan
        runs = model.native_runs
        assert np.array_equal(graph.run(image), python)
        assert model.native_runs == runs + 1, "the small CNN did not take the native path"
    finally:
        graph.release()


@pytest.mark.skipif(isa.threads() < 2 or isa.selected() == "generic", reason="one thread, or no SIMD route here")
@pytest.mark.parametrize("dtype, fpp", FORMATS[:4])
def test_a_large_layer_run_from_c_shares_its_units_with_the_plans_helper_threads(dtype, fpp):
    # vxProcessGraph from C wakes the plan's helper threads (csrc/plan_helpers.c), which join the layer's
    # chunks through the gang's mailbox: every run's output must equal the reference whoever computed what.
    import time

    from openvx_nn.kernels.engine import gang
    rng = np.random.default_rng(2505 + fpp[1])
    for case, (overflow, rounding) in enumerate(POLICIES):
        shape, w_shape = (24 + case, 20, 8), (3, 3, 8, 24)
        assert (shape[0] - 2) * (shape[1] - 2) * np.prod(w_shape) >= prepared.NATIVE_SHARE_WORK
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp[0])
            w = _values(rng, w_shape, dtype, small=True)
            b = _values(rng, (w_shape[3],), dtype)
            out = g.convolution(x, ctx.tensor(w, fixed_point_position=fpp[1]), ctx.tensor(b, fixed_point_position=fpp[2]),
                                out=ctx.tensor(shape=(shape[0] - 2, shape[1] - 2, w_shape[3]), dtype=dtype,
                                               fixed_point_position=fpp[3]), overflow=overflow, rounding=rounding)
            expected = np.zeros(out.numpy().shape, dtype, order="F")
            convolution(x.numpy(), w, b, expected, 0, 0, 1, 1, 0, 0, *_policies(overflow, rounding), fpp_x=fpp[0],
                        fpp_w=fpp[1], fpp_b=fpp[2], fpp_out=fpp[3])
            assert _native_run(g, out).tobytes() == expected.tobytes()
            joins, runs, deadline = gang.native_joins(), 0, time.monotonic() + 60  # which runs it joins: the OS's say
            while runs < 10 or (gang.native_joins() == joins and time.monotonic() < deadline):
                out.write(np.zeros_like(expected))
                assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
                assert out.numpy().tobytes() == expected.tobytes(), (case, runs)
                runs += 1
            assert gang.native_joins() > joins, "no helper joined a native run"
