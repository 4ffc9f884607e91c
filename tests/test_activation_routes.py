"""The float32 activations of every front end reach the one float32 activation kernel (``float_activation``):
the OpenVX activation layer, NNAPI's LOGISTIC and TANH, CoreML's pointwise functions. A recorder wraps the kernel's
bound and native entries and lists the functions the graphs asked it for; the results stay within its ulps of a
float64 reference."""
from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import assert_float32_ulps

from openvx_nn.kernels.frontend import float_activation as fa


def _sigmoid(v):
    return np.where(v >= 0, 1 / (1 + np.exp(-np.abs(v))), np.exp(-np.abs(v)) / (1 + np.exp(-np.abs(v))))


REFERENCES = {"logistic": _sigmoid, "tanh": np.tanh,
              "softrelu": lambda v: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))}
KERNEL_NAMES = {"logistic": "logistic", "tanh": "tanh", "softrelu": "softplus"}


@pytest.mark.parametrize("function", ["logistic", "tanh", "softrelu"])
def test_the_openvx_activation_layer_of_float32_runs_on_the_kernel(asked, function):
    from openvx_nn.api import Context
    x = (np.random.default_rng(3).standard_normal((6, 5, 4)) * 5).astype(np.float32)
    with Context() as context:
        tx = context.tensor(x)
        out = context.tensor(shape=x.shape, dtype=np.float32)
        with context.graph() as g:
            g.activation(tx, function, 1.0, 1.0, out)
            g.process()
            g.process()
        got = out.numpy()
    assert ("bind", KERNEL_NAMES[function]) in asked or ("native", KERNEL_NAMES[function]) in asked
    assert_float32_ulps(got, REFERENCES[function](x.astype(np.float64)).astype(np.float32), fa.ULPS["logistic"])


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_nnapi_logistic_and_tanh_of_float32_run_on_the_kernel(asked, op):
    from openvx_nn import nnapi
    x = (np.random.default_rng(4).standard_normal((2, 7, 9)) * 5).astype(np.float32)
    model = nnapi.Model()
    a, b = (model.add_operand(nnapi.OperandType.TENSOR_FLOAT32, dimensions=list(x.shape)) for _ in range(2))
    model.add_operation(getattr(nnapi.OperationType, op), inputs=[a], outputs=[b])
    model.identify_inputs_and_outputs(inputs=[a], outputs=[b])
    model.finish()
    compilation = nnapi.Compilation(model)
    compilation.finish()
    got = np.zeros_like(x)
    for _ in range(2):  # the first run binds the graph, the second runs its native plan
        execution = nnapi.Execution(compilation)
        execution.set_input(0, x)
        execution.set_output(0, got)
        execution.compute()
    compilation.release()
    function = op.lower()
    assert any(name == function for _, name in asked)
    assert_float32_ulps(got, REFERENCES[function](x.astype(np.float64)).astype(np.float32), fa.ULPS[function])
