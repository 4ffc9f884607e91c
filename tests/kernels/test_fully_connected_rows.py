"""Integer fully connected layers of 1 to 70 rows (images) on every SIMD route of this CPU: the AMX tiles (where the
planner takes them: 32 rows and more), the VNNI kernels (``OPENVX_NN_AMX=0``), AVX-VNNI's 8 lanes and AVX2's
``vpmaddwd``; U8, S8 and Q7.8, both overflow and both rounding policies, K and N off the 16/64 grid, extreme
values. Every route must give the bits of a plain reference: exact int64 sums (NumPy integer products, no BLAS),
then the spec's one rounding and one saturation (``kernel_testing.round_exact``/``fit_exact``)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import LAYOUTS, Q78, S8, U8, assert_bits_equal, blank, fit_exact, placed, random_values, round_exact

from openvx_nn.kernels.engine import isa, microkernel
from openvx_nn.kernels.engine.correlation import Arithmetic
from openvx_nn.kernels.openvx.fully_connected import execute_fully_connected, fully_connected, prepare_fully_connected

POLICIES = [(True, True), (True, False), (False, True), (False, False)]
SIMD = [name for name in ("avx512_vnni", "avx_vnni", "avx2") if name in isa.available()]


def reference(x, w, bias, fmt, saturate, nearest_even, fpp):
    """out[i, b] = round(sum_j x[j, b] * w[j, i] / 2**fpp + bias[i]) then fitted: exact sums in int64 (|sum| <
    70 * 400 * 2**30 here), the rounding of each on a Fraction."""
    sums = x.astype(np.int64).T @ w.astype(np.int64)  # [batch, out]
    out = np.empty((w.shape[1], x.shape[1]), fmt.dtype)
    for b in range(x.shape[1]):
        for i in range(w.shape[1]):
            total = Fraction(int(sums[b, i]), 2 ** (2 * fpp))
            if bias is not None:
                total += Fraction(int(bias[i]), 2 ** fpp)
            out[i, b] = fit_exact(round_exact(total * 2 ** fpp, nearest_even), fmt, saturate)
    return out


def routes(monkeypatch, fmt, x, w, bias, saturate, nearest_even, fpp, rng, layout):
    """{route name: output} of the layer through ``fully_connected`` on each SIMD route this CPU has, and through
    a prepared route (``prepare_fully_connected``, as a graph's node runs it)."""
    found = {}
    for name in SIMD:
        for amx in (("1", "0") if name == "avx512_vnni" and isa.amx_on_cpu() else ("0",)):
            monkeypatch.setenv(isa.ENV_AMX, amx)
            isa.amx.cache_clear()
            out = blank(rng, (w.shape[1], x.shape[1]), fmt.dtype, layout)
            fully_connected(x, w, bias, out, saturate, nearest_even, fpp_x=fpp, fpp_w=fpp, fpp_b=fpp, fpp_out=fpp,
                            isa=name)
            found[f"{name} amx={amx}"] = out
    monkeypatch.delenv(isa.ENV_AMX)
    isa.amx.cache_clear()
    route = prepare_fully_connected(w, bias is not None, x.shape[1],
                                    Arithmetic(saturate, nearest_even, fpp, fpp, fpp, fpp), SIMD[0])
    out = np.zeros((w.shape[1], x.shape[1]), fmt.dtype, order="F")
    execute_fully_connected(route, x, bias, out)
    found["prepared"] = out
    return found


@pytest.mark.skipif(not SIMD, reason="no SIMD route on this CPU")
@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
def test_fully_connected_rows_on_every_route_match_the_reference(fmt, monkeypatch):
    rng = np.random.default_rng({"U8": 11, "S8": 12, "Q7.8": 13}[fmt.name])
    fpp = 8 if fmt is Q78 else 0
    # rows around the AMX tiles (16, 32), K and N off the 16/64 grid; one case past the engine's sharing threshold
    shapes = [(int(rng.integers(1, 16)), 37, 19), (32, 300, 33), (33, 257, 70), (int(rng.integers(40, 71)), 129, 17),
              (70, 1030, 45), (31, 64, 16)]
    for case, (rows, n_in, n_out) in enumerate(shapes):
        saturate, nearest_even = POLICIES[case % 4]
        x = placed(rng, random_values(rng, fmt, (n_in, rows)))
        w = placed(rng, random_values(rng, fmt, (n_in, n_out)))
        if case == 1:  # the extremes on both operands, in blocks: long runs of the largest products
            x[: n_in // 2], w[: n_in // 2] = fmt.lo, fmt.lo
            x[n_in // 2:], w[n_in // 2:, ::2] = fmt.hi, fmt.lo
        bias = placed(rng, random_values(rng, fmt, (n_out,))) if case % 2 == 0 else None
        expected = reference(x, w, bias, fmt, saturate, nearest_even, fpp)
        for name, out in routes(monkeypatch, fmt, x, w, bias, saturate, nearest_even, fpp, rng,
                                LAYOUTS[case % len(LAYOUTS)]).items():
            try:
                assert_bits_equal(out, expected)
            except AssertionError as error:
                raise AssertionError(f"{name}: {rows} rows, {n_in} -> {n_out}") from error


@pytest.mark.skipif(not isa.amx_on_cpu(), reason="this CPU has no AMX-INT8 tiles")
def test_the_tests_rows_reach_the_amx_tiles():
    # The shapes above from 32 rows run on AMX where Linux grants the tiles (else the test above checks VNNI only).
    if not isa.amx():
        pytest.skip("Linux gives no AMX tile data (or OPENVX_NN_AMX=0)")
    for rows, want in ((31, "avx512_vnni"), (32, "amx"), (70, "amx")):
        route = prepare_fully_connected(np.ones((300, 33), np.uint8), False, rows, Arithmetic(True, True),
                                        "avx512_vnni")
        assert microkernel.decode(route.simd.code)[0] == want
