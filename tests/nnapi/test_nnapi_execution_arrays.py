"""``Execution.compute`` of arrays of the operands' dtypes and shapes skips the HAL request (no pools to read and
check: ``PreparedModel.execute_arrays``) and gives the request path's bits; any other execution takes the checked
request path, errors included."""
import numpy as np
import pytest
from nnapi_harness import F32T, Out, Tensor, build, collect_garbage, i32  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.nnapi import builder as nnapi_builder

OP, ES = nnapi.OperationType, nnapi.ErrorStatus


def _conv(rng):
    """A compiled CONV_2D (SAME, ReLU) with a model input and a model output, and its input."""
    x = rng.standard_normal((1, 5, 6, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    m, _, _ = build(OP.CONV_2D, [Tensor(x), Tensor(w, const=True), Tensor(b, const=True), i32(1), i32(1), i32(1),
                                 i32(1), i32(1), i32(1), i32(1)], [Out(F32T, (1, 5, 6, 4))])
    c = nnapi.Compilation(m)
    c.finish()
    return c, x


def _compute(c, x, out) -> None:
    e = nnapi.Execution(c)
    e.set_input(0, x)
    e.set_output(0, out)
    e.compute()


class _NoRequests:
    """``hal.Request`` refused while in use: proves that an execution took the array path."""

    def __init__(self, monkeypatch):
        self.made = 0
        real = nnapi_builder.hal.Request

        def counted(*args, **kwargs):
            self.made += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(nnapi_builder.hal, "Request", counted)


def test_arrays_of_the_operands_shapes_skip_the_request_and_give_its_bits(monkeypatch):
    rng = np.random.default_rng(5)
    c, x = _conv(rng)
    requests = _NoRequests(monkeypatch)
    for _ in range(3):
        x[...] = rng.standard_normal(x.shape)
        fast, checked = np.zeros((1, 5, 6, 4), np.float32), np.zeros((1, 5, 6, 4), np.float32)
        _compute(c, x, fast)
        assert requests.made == 0
        _compute(c, x.reshape(-1), checked)  # the same bytes in another shape: the checked request path
        assert requests.made == 1
        requests.made = 0
        assert np.array_equal(fast, checked) and (fast >= 0).all() and fast.any()


def test_other_arrays_take_the_checked_path_and_its_errors(monkeypatch):
    c, x = _conv(np.random.default_rng(6))
    requests = _NoRequests(monkeypatch)
    big = np.zeros((1, 5, 6, 5), np.float32)  # more bytes than the output needs: the request path accepts it
    _compute(c, x, big)
    assert requests.made == 1 and big.reshape(-1)[:120].any() and not big.reshape(-1)[120:].any()
    with pytest.raises(nnapi.NNAPIError) as err:
        _compute(c, x, np.zeros((1, 5, 6, 3), np.float32))  # too small
    assert err.value.status == ES.OUTPUT_INSUFFICIENT_SIZE and requests.made == 2
    with pytest.raises(nnapi.NNAPIError, match="bytes"):
        _compute(c, x[..., :2].copy(), np.zeros((1, 5, 6, 4), np.float32))  # an input of the wrong size
    e = nnapi.Execution(c)
    e.set_input(0, x)
    e.set_output(0, np.zeros((1, 5, 6, 4), np.float32))
    c.release()
    with pytest.raises(nnapi.NNAPIError, match="released"):
        e.compute()
