"""A float32 tensor times an activation of a smaller one broadcast over it, in one pass: ``out = x * f(g)``.

Squeeze-and-excitation ends so: a gate of one value per channel (``[C, 1, 1, N]``), squashed by a logistic or
hard sigmoid, scales every pixel of its channel. Run apart, the activation is a node of its own and the product
OpenVX's six-dimensional multiply loop (about 1.5 ns a value); here ``f`` runs once per gate value on
``float_activation`` (the same function, so the same bits as its own node) into a small buffer, and the product
is one loop LLVM vectorizes. A float32 product of two float32 values is correctly rounded, so it equals OpenVX's
float64 product times a scale of 1 rounded to float32, bit for bit.

Arrays are OpenVX tensors' (Fortran order: the first dim is the fastest). :func:`split` sees ``x`` as
``[outer, spread, inner]`` (the last fastest) with ``g`` as ``[outer, inner]``: the gate's dims equal to ``x``'s
first, then dims of length 1 where ``x``'s are not (spread), then equal ones again.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from ..support.vector_width import wide_vectors
from . import float_activation, float_sharing

IDENTITY = -1
"""The code of no function: ``out = x * g``."""


def split(x_shape: tuple[int, ...], g_shape: tuple[int, ...]) -> tuple[int, int, int] | None:
    """``(outer, spread, inner)`` when ``g`` broadcasts over ``x`` as the module doc says (same rank, the first
    dim fastest), else None."""
    if len(x_shape) != len(g_shape) or any(d == 0 for d in x_shape):
        return None
    runs = []  # (varies with g, extent) over the dims of length > 1, fastest first, merged
    for dx, dg in zip(x_shape, g_shape):
        if dx == 1 and dg == 1:
            continue
        if dg not in (1, dx):
            return None
        varies = dg == dx
        if runs and runs[-1][0] == varies:
            runs[-1][1] *= dx
        else:
            runs.append([varies, dx])
    kinds = [v for v, _ in runs]
    if kinds and not kinds[0]:
        kinds, runs = [True] + kinds, [[True, 1]] + runs
    if kinds not in ([], [True], [True, False], [True, False, True]):
        return None
    extents = [n for _, n in runs] + [1] * (3 - len(runs))
    inner, spread, outer = extents[0], extents[1], extents[2]
    return outer, spread, inner


@jit.jitable
def line_count(outer, spread, inner):
    """The lines of :func:`_lines` (the units its threads share): an outer index's where ``inner`` is 1, else an
    outer and a spread index's."""
    return outer if inner == 1 else outer * spread


@jit.kernel(error_model="numpy")
def _gated(x, g, out, gates, code, a, b, outer, spread, inner):
    """``out = x * f(g)`` on flat arrays: ``gates`` takes ``f(g)`` first (``code`` of ``float_activation``, or
    :data:`IDENTITY`)."""
    _gates(g, gates, code, a, b)
    _lines(x, out, gates, outer, spread, inner, 0, line_count(outer, spread, inner))


@jit.kernel(error_model="numpy")
def _gates(g, gates, code, a, b):
    """``gates = f(g)``: the calling thread's part of a call, before its lines (:func:`_lines`)."""
    if code == IDENTITY:
        for i in range(g.size):
            gates[i] = g[i]
    else:
        float_activation._rows(g, gates, code, a, b, 0.0, 0, (g.size + float_activation.BLOCK - 1)
                               // float_activation.BLOCK)


@jit.kernel
def _lines(x, out, gates, outer, spread, inner, l0, l1):
    """Lines ``[l0, l1)`` of ``out = x * gates``: a line is an outer index's ``spread`` values times its one gate
    (``inner`` 1), else ``inner`` values times the outer index's gates. Each value is one float32 product
    whichever thread computes its line: the bits do not depend on how the lines are shared."""
    wide_vectors()
    if inner == 1:
        for o in range(l0, l1):
            s = gates[o]
            xs = x[o * spread:(o + 1) * spread]
            ys = out[o * spread:(o + 1) * spread]
            for i in range(spread):
                ys[i] = xs[i] * s
        return
    for line in range(l0, l1):
        o = line // spread
        gs = gates[o * inner:(o + 1) * inner]
        at = line * inner
        xs, ys = x[at:at + inner], out[at:at + inner]
        for i in range(inner):
            ys[i] = xs[i] * gs[i]


def _flat(a: np.ndarray) -> np.ndarray | None:
    """``a`` as a 1-D view in its first-fastest element order (an OpenVX tensor's array), or None."""
    if a.flags.f_contiguous:
        return a.reshape(-1, order="F")
    if a.ndim <= 1 and a.flags.c_contiguous:
        return a.reshape(-1)
    return None


def _operands(x, g, out, function: str | None, a: float, b: float):
    if not x.dtype == g.dtype == out.dtype == np.float32:
        raise ValueError(f"x, g and out are {x.dtype}, {g.dtype} and {out.dtype}, expected float32")
    if x.shape != out.shape:
        raise ValueError(f"x has shape {x.shape} and out {out.shape}, expected one shape")
    shape = split(x.shape, g.shape)
    if shape is None:
        raise ValueError(f"a gate of shape {g.shape} does not broadcast over {x.shape} as [outer, spread, inner]")
    fx, fg, fo = _flat(x), _flat(g), _flat(out)
    if fx is None or fg is None or fo is None:
        raise ValueError("x, g and out must be contiguous in OpenVX's order (the first dim fastest)")
    if np.may_share_memory(fg, fo):
        raise ValueError("the gate overlaps the output")
    if np.may_share_memory(fx, fo) and (fx.ctypes.data != fo.ctypes.data):
        raise ValueError("x overlaps the output without being it")
    code = IDENTITY if function is None else float_activation.code_of(function)
    fa, fb = (float(np.float32(a)), float(np.float32(b)))
    return fx, fg, fo, np.empty(fg.size, np.float32), code, fa, fb, *shape


def bind(x: np.ndarray, g: np.ndarray, out: np.ndarray, function: str | None, a: float = 1.0,
         b: float = 1.0) -> Callable[[], None]:
    """A no-argument call ``out = x * function(g)`` from the arrays' current values (``function`` one of
    ``float_activation.FUNCTIONS`` with its parameters ``a``, ``b``, or None for ``g`` itself); ``out`` may be
    ``x``. ValueError names what does not fit."""
    args = _operands(x, g, out, function, a, b)
    return lambda: _gated(*args)


def native_entry(x: np.ndarray, g: np.ndarray, out: np.ndarray, function: str | None, a: float = 1.0,
                 b: float = 1.0) -> native.Entry | None:
    """:func:`bind` as a native entry (its lines shared with the gang's spinning helpers when large, the gates
    computed first on the calling thread); None when the arrays do not fit (:func:`bind` would say why)."""
    try:
        fx, fg, fo, gates, code, fa, fb, outer, spread, inner = _operands(x, g, out, function, a, b)
    except ValueError:
        return None
    n_lines = line_count(outer, spread, inner)
    task = gang.NativeTask(n_lines, fx.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = native.pack(native.as6(fx), native.as6(fg), native.as6(fo), native.as6(gates),
                              native.as6(task.counters), code, fa, fb, outer, spread, inner, n_lines, *task.words())
    return native.Entry(_entry(), words, keep + task.finish(_helper(), words))


COST_PER_VALUE = 4
"""A value's time in a convolution multiply-add's (``float_sharing.NATIVE_PARALLEL_WORK`` weighs work in the
latter): EfficientNet's gated products of 100K-450K values had run on the calling thread alone."""
_W = native.ARRAY_WORDS
_CODE, _A, _B, _OUTER, _SPREAD, _INNER, _LINES, _MAILBOX, _TASK, _CHUNKS = range(5 * _W, 5 * _W + 10)
_LINE_CHUNKS = chunk_driver(_lines)


@jit.kernel
def _prepare(block):
    _gates(native.c_array(block, _W, np.float32)[0, 0, 0, 0, 0], native.c_array(block, 3 * _W, np.float32)[0, 0, 0, 0, 0],
           block[_CODE], native.real(block, _A), native.real(block, _B))


@jit.kernel
def _block_lines(code, block, chunks, wait):
    """The lines of the call packed in ``block``: all (``chunks`` 0), or chunks claimed with the helpers."""
    args = (native.c_array(block, 0, np.float32)[0, 0, 0, 0, 0], native.c_array(block, 2 * _W, np.float32)[0, 0, 0, 0, 0],
            native.c_array(block, 3 * _W, np.float32)[0, 0, 0, 0, 0], block[_OUTER], block[_SPREAD], block[_INNER])
    if chunks == 0:
        _lines(*args, 0, block[_LINES])
    else:
        _LINE_CHUNKS(args, block[_LINES], chunks, native.c_array(block, 4 * _W, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_block_lines, _prepare, (_MAILBOX, _TASK, _CHUNKS, 4 * _W))


_entry, _helper = gang.makers(_BODIES, __name__)
"""The makers of the entry (the gates on the calling thread, then the lines, shared with the gang's spinning
helpers when large) and of a helper's part."""
