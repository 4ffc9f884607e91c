"""Every CoreML kernel binds once per verification: its runner sees arrays and [static] scalar
values resolved at binding, and a scalar that is not [static] stays live."""
from __future__ import annotations

import struct

import numpy as np

import openvx_nn.operations  # noqa: F401  (registers the kernels)
from openvx_nn.core.context import Context
from openvx_nn.core.enums import Type
from openvx_nn.core.kernels import all_kernels
from openvx_nn.core.scalar import Scalar
from openvx_nn.core.signature import IN, ParamSpec
from openvx_nn.core.tensor import Tensor
from openvx_nn.operations.coreml.common import bound


def test_every_coreml_kernel_has_a_bind():
    coreml = [d for d in all_kernels() if d.name.startswith("org.openvx_nn.coreml.")]
    assert len(coreml) >= 20
    assert [d.name for d in coreml if d.bind is None] == []


def test_bound_parameters_hold_arrays_and_static_values_and_leave_live_scalars_live():
    context = Context.create()
    tensor = Tensor.create(context, 2, (3, 2), Type.VX_TYPE_FLOAT32, 0)
    static = Scalar(context, Type.VX_TYPE_FLOAT32, struct.pack("<f", 1.5))
    live = Scalar(context, Type.VX_TYPE_FLOAT32, struct.pack("<f", 2.5))
    try:
        specs = (ParamSpec("t", IN, Type.VX_TYPE_TENSOR), ParamSpec("s", IN, Type.VX_TYPE_SCALAR, static=True),
                 ParamSpec("l", IN, Type.VX_TYPE_SCALAR), ParamSpec("absent", IN, Type.VX_TYPE_TENSOR, True))
        resolved = bound([tensor, static, live, None], specs)
        assert np.shares_memory(resolved[0].array, tensor.array) and resolved[0].array.shape == (3, 2)
        assert resolved[1].value == 1.5
        assert resolved[2] is live and resolved[3] is None
    finally:
        for obj in (live, static, tensor, context):
            obj.release()
