"""Helpers of the native-plan tests: the model object behind a handle, random tensor values, and runs that
must take the native path (``csrc/plan.c`` counts them in the graph's cells)."""
from __future__ import annotations

import numpy as np

from openvx_nn import vx
from openvx_nn.core import reference


def model(handle):
    """The object model's reference behind a C handle (or an API object's ``handle``)."""
    return reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)


def values(rng, shape, dtype, small=False):
    """Random values over the whole range of ``dtype`` (``small``: -4..4, for weights); float32: N(0, 4)."""
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 4).astype(dtype)
    info = np.iinfo(dtype)
    if small:
        return rng.integers(max(info.min, -4), 5, size=shape).astype(dtype)
    return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)


def native_run(g, out) -> np.ndarray:
    """``out`` after one vxProcessGraph that must take the native plan (a first run binds and publishes it)."""
    g.process()
    assert model(g.handle).plan.native is not None, "the graph has no native plan"
    out.write(np.zeros_like(out.numpy()))  # the native run must write every element again
    runs = model(g.handle).native_runs
    assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
    assert model(g.handle).native_runs == runs + 1, "vxProcessGraph did not take the native path"
    return out.numpy()


def python_run(ctx, g, tensors) -> list[np.ndarray]:
    """Copies of ``tensors`` after one run on the Python path (performance timing on: no native plan, each node's
    own runner). Timing is switched off again whatever happens: the process has one live context, which a front
    end's model may keep alive for the next test, and a context left timing gives no graph a native plan."""
    context = model(ctx.handle)
    context.performance_enabled = True
    try:
        g.process()
        assert model(g.handle).plan.native is None
        return [t.numpy().copy() for t in tensors]
    finally:
        context.performance_enabled = False


def python_then_native(ctx, g, out):
    """``out`` after a run on the Python path (:func:`python_run`) and after a run of the native plan through
    vxProcessGraph, which must have been taken."""
    (python,) = python_run(ctx, g, [out])
    return python, native_run(g, out)
