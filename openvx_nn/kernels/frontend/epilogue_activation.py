"""The activation a float32 convolution's epilogue applies to the values it has just stored (still in L1).

The float engine's tiles add the bias (and a residual) and clamp in registers; an activation that is no clamp --
a PRELU with an alpha per output channel, or one of ``float_activation``'s functions (swish, hard swish, logistic,
hard sigmoid...) -- is applied here, once per output value, right after the tile's pixels are stored for the channels of its panel. Each value goes
through the very scalar function the activation's own node runs (``float_activation``'s, and PRELU's expression
of ``float_elementwise``), in the same float32 steps, so the bytes are those of the nodes run apart.

An epilogue is (code, alpha, a, b): ``code`` :data:`NONE`, :data:`PRELU` (``x if x >= 0 else alpha[c] * x``) or a
``float_activation`` code with its parameters ``a``, ``b``; ``alpha`` holds one float32 per output channel (a
scalar alpha repeated; unused but for PRELU).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit
from ..support.vector_width import wide_vectors
from . import float_activation as fa

NONE, PRELU = -1, -2
"""Codes besides ``float_activation``'s: no activation, PRELU by a per-channel alpha."""
NO_ALPHA = np.zeros(1, np.float32)
CODES = (fa.LOGISTIC, fa.SWISH, fa.HARD_SIGMOID, fa.HARD_SWISH, fa.TANH, fa.SOFTPLUS)
"""The ``float_activation`` functions an epilogue computes."""


@jit.inlined
def clamped_value(value, low, high, clamped):
    """``value`` clamped to ``[low, high]`` as the float engine's tiles clamp (``float_microkernel``): NaN passes
    the comparisons, and is stored as the canonical NaN where the clamp is finite (``clamped``)."""
    if value < low:  # noqa: PLR1730 (comparisons: NaN passes through)
        value = low
    if value > high:  # noqa: PLR1730
        value = high
    if clamped and np.isnan(value):
        value = np.float32(np.nan)
    return value


LANES = 16
"""float32 values :func:`_prelu_lanes` takes at once (one AVX-512 vector, two AVX2 ones)."""


def _prelu_intrinsic(lanes: int):
    """An intrinsic ``(values, alphas)``: the ``lanes`` float32 at address ``values`` through PRELU in place, by
    the alphas at ``alphas``: ``x`` where ``x >= 0`` (an ordered compare: a NaN takes ``alpha * x``), else
    ``alpha * x`` -- ``prelu32``'s float32 steps, lane by lane."""
    kind = ir.VectorType(ir.FloatType(), lanes) if lanes > 1 else ir.FloatType()
    zero = ir.Constant(kind, [0.0] * lanes if lanes > 1 else 0.0)

    @intrinsic
    def prelu(typingctx, values, alphas):
        if not (isinstance(values, types.Integer) and isinstance(alphas, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            at = builder.inttoptr(args[0], kind.as_pointer())
            x = builder.load(at, align=4)
            a = builder.load(builder.inttoptr(args[1], kind.as_pointer()), align=4)
            keep = builder.fcmp_ordered(">=", x, zero)
            builder.store(builder.select(keep, x, builder.fmul(a, x)), at, align=4)
            return context.get_dummy_value()
        return types.void(types.int64, types.int64), codegen
    return prelu


_prelu_lanes, _prelu_one = _prelu_intrinsic(LANES), _prelu_intrinsic(1)
"""A panel's run of 16-48 channels is too short for the loop vectorizer's steps (4 x 16 lanes), which had left
such spans scalar: 0.5 ns a value against 0.05 stepping 16 lanes (:func:`prelu_span`), one thread."""


@jit.jitable
def _in_place(v, code, a, b):
    """``v`` (a contiguous float32 vector) through ``float_activation``'s function ``code``, in place: one loop per
    code with the kernel's own scalar function (the bytes of its pass). One array read and written at the same
    index vectorizes, where the kernel's loop over an input and an output that may overlap would not; called on
    the tile's values, it costs no call, no copy and no scalar tail beyond the loop's own."""
    wide_vectors()
    af, bf = np.float32(a), np.float32(b)
    if code == fa.LOGISTIC:
        for i in range(v.size):
            v[i] = fa.logistic32(v[i])
    elif code == fa.SWISH:
        for i in range(v.size):
            v[i] = fa.swish32(v[i])
    elif code == fa.HARD_SIGMOID:
        for i in range(v.size):
            v[i] = np.float32(fa.hard_sigmoid64(v[i], a, b))
    elif code == fa.HARD_SWISH:
        if fa.single_precision_hard_swish(a, b):
            for i in range(v.size):
                v[i] = fa.hard_swish32(v[i], af, bf)
        else:
            for i in range(v.size):
                v[i] = np.float32(fa.hard_swish64(v[i], a, b))
    elif code == fa.SOFTPLUS:
        for i in range(v.size):
            v[i] = fa.softplus32(v[i])
    elif a == 1.0 and b == 1.0:  # TANH
        for i in range(v.size):
            v[i] = fa.tanh32(v[i])
    else:
        for i in range(v.size):
            v[i] = af * fa.tanh32(bf * v[i])


@jit.jitable
def prelu_span(out_at, alpha_at, units, p0, n_rows, c0, c1):
    """PRELU in place over channels ``[c0, c1)`` of pixels ``[p0, p0 + n_rows)`` of the float32 ``[pixels,
    units]`` values at address ``out_at``, by the ``units`` alphas at ``alpha_at``: :data:`LANES` channels at a
    time, the last few one by one. Addresses, not arrays: inlined in a tile loop, it takes no reference counts
    (some 40 ns a call with four arrays, as much as the PRELU of 300 values)."""
    width = c1 - c0
    vectors = width - width % LANES
    for r in range(p0, p0 + n_rows):
        row_at = out_at + 4 * (r * units + c0)
        for j in range(0, vectors, LANES):
            _prelu_lanes(row_at + 4 * j, alpha_at + 4 * (c0 + j))
        for j in range(vectors, width):
            _prelu_one(row_at + 4 * j, alpha_at + 4 * (c0 + j))


@jit.kernel(error_model="numpy")
def activate_span(of, flat, p0, n_rows, c0, c1, code, alpha, a, b):
    """``of[p0:p0 + n_rows, c0:c1]`` (a [pixels, channels] view, ``flat`` its 1-D view: no reshape per tile)
    through the epilogue, in place. PRELU steps 16 lanes at a time (:func:`prelu_span`, which a tile loop calls
    itself); a function of ``float_activation`` runs over one contiguous run when the span is whole rows, else row
    by row."""
    if code == NONE or n_rows <= 0:
        return
    units = of.shape[1]
    if code == PRELU:
        prelu_span(flat.ctypes.data, alpha.ctypes.data, units, p0, n_rows, c0, c1)
        return
    whole = c0 == 0 and c1 == units
    if whole:
        _in_place(flat[p0 * units:(p0 + n_rows) * units], code, a, b)
        return
    for r in range(p0, p0 + n_rows):
        _in_place(of[r, c0:c1], code, a, b)


def epilogue_of(function: str | None, units: int, alpha: np.ndarray | None = None, a: float = 1.0,
                b: float = 1.0) -> tuple[int, np.ndarray, float, float]:
    """(code, alpha per channel, a, b) of an epilogue: ``function`` None (no activation), ``"prelu"`` with
    ``alpha`` (one value, or one per channel of the ``units``), or a :data:`CODES` function of ``float_activation``."""
    if function is None:
        return NONE, NO_ALPHA, 1.0, 1.0
    if function == "prelu":
        values = np.ascontiguousarray(np.asarray(alpha, np.float32).reshape(-1))
        if values.size not in (1, units):
            raise ValueError(f"a PRELU epilogue takes one alpha or one per channel ({units}), not {values.size}")
        return PRELU, np.ascontiguousarray(np.broadcast_to(values, (units,))), 1.0, 1.0
    code = fa.code_of(function)
    if code not in CODES:
        raise ValueError(f"float32 activation {function!r} is not one an epilogue computes")
    return code, NO_ALPHA, float(np.float32(a)), float(np.float32(b))


def checked_epilogue(epilogue: tuple | None, units: int) -> tuple[int, np.ndarray, float, float]:
    """``epilogue`` (:func:`epilogue_of`'s, None: none) checked for a layer of ``units`` output channels."""
    if epilogue is None:
        return epilogue_of(None, units)
    code, alpha, a, b = epilogue
    if code == PRELU and (alpha.dtype != np.float32 or not alpha.flags.c_contiguous or alpha.shape != (units,)):
        raise ValueError(f"a PRELU epilogue's alpha is float32, contiguous, one per channel ({units})")
    if code != NONE and code != PRELU and code not in CODES:
        raise ValueError(f"activation code {code} is not one an epilogue computes")
    return int(code), alpha, float(a), float(b)
