"""Build, compile and run one-operation NNAPI models through the public API."""
from __future__ import annotations

import gc
from dataclasses import dataclass

import numpy as np
import pytest

from openvx_nn import nnapi

T = nnapi.OperandType
F32T, I32T, Q8, B8, F16T = T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_BOOL8, T.TENSOR_FLOAT16
KIND = {np.dtype(np.float32): F32T, np.dtype(np.int32): I32T, np.dtype(np.uint8): Q8, np.dtype(np.bool_): B8,
        np.dtype(np.float16): F16T}


@dataclass
class Tensor:
    """A tensor operand: a model input (default) or a constant."""
    value: np.ndarray
    scale: float = 0.0
    zero_point: int = 0
    const: bool = False
    kind: int | None = None


@dataclass
class Out:
    kind: int
    dims: tuple
    scale: float = 0.0
    zero_point: int = 0


def i32(v):
    return ("i32", v)


def f32(v):
    return ("f32", v)


def boolean(v):
    return ("bool", v)


def f16(v):
    return ("f16", v)


NO_VALUE = ("none", None)


def build(op, inputs, outputs) -> tuple[nnapi.Model, list[np.ndarray], list[Out]]:
    m = nnapi.Model()
    ins, feeds = [], []
    model_inputs = []
    for spec in inputs:
        if isinstance(spec, Tensor):
            value = np.asarray(spec.value)
            kind = spec.kind or KIND[value.dtype]
            k = m.add_operand(kind, dimensions=list(value.shape), scale=spec.scale, zero_point=spec.zero_point)
            if spec.const:
                m.set_operand_value(k, value)
            else:
                model_inputs.append(k)
                feeds.append(value)
        elif spec[0] == "none":  # ("none", kind): an omitted input of that tensor type (default TENSOR_FLOAT32)
            k = m.add_operand(spec[1] or F32T, dimensions=[0])
            m.set_operand_value(k, None)
        else:
            k = m.add_operand({"i32": T.INT32, "f32": T.FLOAT32, "bool": T.BOOL, "f16": T.FLOAT16}[spec[0]])
            m.set_operand_value(k, spec[1])
        ins.append(k)
    outs = [m.add_operand(o.kind, dimensions=list(o.dims), scale=o.scale, zero_point=o.zero_point) for o in outputs]
    m.add_operation(op, inputs=ins, outputs=outs)
    m.identify_inputs_and_outputs(inputs=model_inputs, outputs=outs)
    m.finish()
    return m, feeds, outputs


DTYPE = {F32T: np.float32, I32T: np.int32, Q8: np.uint8, B8: np.bool_, F16T: np.float16,
         T.TENSOR_QUANT16_SYMM: np.int16}


def run(op, inputs, outputs) -> list[np.ndarray]:
    """Run one operation; returns its outputs."""
    m, feeds, outs = build(op, inputs, outputs)
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [True]
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    results = [np.zeros(o.dims, DTYPE[o.kind]) for o in outs]
    for k, r in enumerate(results):
        e.set_output(k, r)
    e.compute()
    c.release()
    return results


def refused(op, inputs, outputs) -> str:
    """The message of the NNAPIError a one-operation model gets at compilation (it is not supported either)."""
    m, _, _ = build(op, inputs, outputs)
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [False]
    with pytest.raises(nnapi.NNAPIError) as info:
        nnapi.Compilation(m).finish()
    return str(info.value)


def quantize(real, scale, zero_point):
    return np.clip(np.round(np.asarray(real, np.float64) / scale) + zero_point, 0, 255).astype(np.uint8)


def dequantize(q, scale, zero_point):
    return (np.asarray(q, np.float64) - zero_point) * scale


def random_q8(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def assert_close(got, want, kind):
    """float32 within 1e-5 absolute, uint8 within 1."""
    if kind == Q8:
        diff = np.abs(got.astype(np.int64) - np.asarray(want, np.int64))
        assert diff.max(initial=0) <= 1, f"max difference {diff.max()} (> 1)"
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    """float32 arrays alike bit for bit, but for NaN payloads (NaN where the other has NaN)."""
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    assert np.array_equal(a[~nan].view(np.int32), b[~nan].view(np.int32))


@pytest.fixture(autouse=True, scope="module")
def collect_garbage():
    """After each test module, collect the compilations caught in reference cycles (pytest.raises
    keeps tracebacks), so their OpenVX objects are gone before another module's tests count references
    (the tests here that count collect first)."""
    yield
    gc.collect()


def run_filter_op(op, x, in_quant, filt, scales, filt_zero, channel_dim, bias, bias_scale, scalars, out_shape,
                  out_quant):
    """One uint8 ``op`` (a convolution) on the model input ``x`` with a constant filter and bias: ``channel_dim``
    None for a TENSOR_QUANT8_ASYMM filter of scale ``scales[0]``, else a TENSOR_QUANT8_SYMM_PER_CHANNEL one with
    a scale per index of that axis. ``scalars``: (kind, value) operands after the bias, a TENSOR_INT32 given as
    an array. Runs through Model/Compilation/Execution; returns the uint8 output."""
    m = nnapi.Model()
    xk = m.add_operand(Q8, list(x.shape), scale=in_quant[0], zero_point=in_quant[1])
    if channel_dim is None:
        fk = m.add_operand(Q8, list(filt.shape), scale=float(scales[0]), zero_point=filt_zero)
    else:
        fk = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, list(filt.shape))
        m.set_operand_symm_per_channel_quant_params(fk, [float(v) for v in scales], channel_dim)
    m.set_operand_value(fk, filt)
    bk = m.add_operand(I32T, [len(bias)], scale=bias_scale)
    m.set_operand_value(bk, bias)
    ks = []
    for kind, v in scalars:
        ks.append(m.add_operand(I32T, [len(v)]) if kind == I32T else m.add_operand(kind))
        m.set_operand_value(ks[-1], v)
    out = m.add_operand(Q8, list(out_shape), scale=out_quant[0], zero_point=out_quant[1])
    m.add_operation(op, [xk, fk, bk, *ks], [out])
    m.identify_inputs_and_outputs([xk], [out])
    m.finish()
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [True]
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, x)
    got = np.zeros(out_shape, np.uint8)
    e.set_output(0, got)
    e.compute()
    c.release()
    return got


def add_i32(m, v) -> int:
    """An INT32 scalar operand of value ``v`` in model ``m``."""
    k = m.add_operand(T.INT32)
    m.set_operand_value(k, v)
    return k


def add_constant(m, value) -> int:
    """A constant TENSOR_INT32 (an int32 array) or TENSOR_FLOAT32 operand holding ``value`` in model ``m``."""
    value = np.ascontiguousarray(value)
    k = m.add_operand(I32T if value.dtype == np.int32 else F32T, list(value.shape))
    m.set_operand_value(k, value)
    return k
