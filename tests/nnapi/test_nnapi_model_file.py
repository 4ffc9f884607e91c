"""The ``.nnapi`` file (round trip, clear errors for bad files) and ``openvx-nn run --model x.nnapi``:
outputs equal ``Execution.compute`` item by item, here and on two Dask workers."""
from __future__ import annotations

import json
import zipfile
import zlib

import numpy as np
import pytest

from openvx_nn import nnapi
from openvx_nn.cli import main
from openvx_nn.nnapi.batched import rebatch

T = nnapi.OperandType
ITEMS = 10   # with --batch 4: two full batches and one of 2


def _scalars(m: nnapi.Model, values) -> list[int]:
    ks = [m.add_operand(T.INT32) for _ in values]
    for k, v in zip(ks, values):
        m.set_operand_value(k, v)
    return ks


def quantized_cnn(rng) -> nnapi.Model:
    """[1, 6, 6, 2] uint8 → CONV_2D (SAME, RELU) → MAX_POOL_2D 2x2 → [1, 3, 3, 8]; the weights (> 128 bytes)
    go to a pool, the bias and scalars to operandValues."""
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 6, 6, 2], scale=0.5, zero_point=3)
    w = m.add_operand(T.TENSOR_QUANT8_ASYMM, [8, 3, 3, 2], scale=0.25, zero_point=128)
    b = m.add_operand(T.TENSOR_INT32, [8], scale=0.125)
    m.set_operand_value(w, rng.integers(0, 256, (8, 3, 3, 2)).astype(np.uint8))
    m.set_operand_value(b, rng.integers(-60, 60, 8).astype(np.int32))
    h = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 6, 6, 8], scale=1.0, zero_point=0)
    m.add_operation(nnapi.OperationType.CONV_2D, [x, w, b] + _scalars(m, (1, 1, 1, 1)), [h])
    y = m.add_operand(T.TENSOR_QUANT8_ASYMM, [1, 3, 3, 8], scale=1.0, zero_point=0)
    m.add_operation(nnapi.OperationType.MAX_POOL_2D, [h] + _scalars(m, (2, 2, 2, 2, 2, 0)), [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


def float_classifier(rng) -> nnapi.Model:
    """[1, 4, 4, 2] float → RESHAPE [-1, 32] → FULLY_CONNECTED (5 units) → SOFTMAX → [1, 5]."""
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, 4, 4, 2])
    shape = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(shape, np.array([-1, 32], np.int32))
    flat = m.add_operand(T.TENSOR_FLOAT32, [1, 32])
    m.add_operation(nnapi.OperationType.RESHAPE, [x, shape], [flat])
    w = m.add_operand(T.TENSOR_FLOAT32, [5, 32])
    b = m.add_operand(T.TENSOR_FLOAT32, [5])
    m.set_operand_value(w, rng.standard_normal((5, 32)).astype(np.float32))
    m.set_operand_value(b, rng.standard_normal(5).astype(np.float32))
    logits = m.add_operand(T.TENSOR_FLOAT32, [1, 5])
    m.add_operation(nnapi.OperationType.FULLY_CONNECTED, [flat, w, b] + _scalars(m, (0,)), [logits])
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, np.float32(1.0))
    y = m.add_operand(T.TENSOR_FLOAT32, [1, 5])
    m.add_operation(nnapi.OperationType.SOFTMAX, [logits, beta], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


def computed(m: nnapi.Model, items: np.ndarray) -> np.ndarray:
    """``Execution.compute`` item by item (NNAPI shape, N = 1), stacked on a last axis in OpenVX order."""
    c = nnapi.Compilation(m)
    c.finish()
    shape = m.to_hal().operands[m.to_hal().outputIndexes[0]].dimensions
    dtype = np.uint8 if m.to_hal().operands[m.to_hal().outputIndexes[0]].type == T.TENSOR_QUANT8_ASYMM else np.float32
    outs = []
    for item in items:
        e = nnapi.Execution(c)
        e.set_input(0, item[None])
        out = np.zeros(shape, dtype)
        e.set_output(0, out)
        e.compute()
        outs.append(out[0].T)
    c.release()
    return np.stack(outs, axis=-1)


@pytest.fixture
def rng(request) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def test_the_file_holds_the_same_model(tmp_path, rng):
    m = quantized_cnn(rng)
    m.save(tmp_path / "cnn.nnapi")
    loaded = nnapi.hal.load_model(tmp_path / "cnn.nnapi")
    assert loaded == m.to_hal()
    assert len(loaded.pools) == 1 and loaded.operandValues   # both kinds of constant survived
    with zipfile.ZipFile(tmp_path / "cnn.nnapi") as z:   # no pickle: plain .npy members
        assert sorted(z.namelist()) == ["model.json.npy", "operandValues.npy", "pool0.npy"]
        description = json.loads(np.load(z.open("model.json.npy")).tobytes())
    assert description["operations"][0]["type"] == "CONV_2D" and description["inputIndexes"] == [0]


@pytest.mark.parametrize("build, dtype", [(quantized_cnn, np.uint8), (float_classifier, np.float32)])
def test_run_writes_what_execution_computes(tmp_path, rng, capsys, build, dtype):
    m = build(rng)
    m.save(tmp_path / "model.nnapi")
    shape = m.to_hal().operands[m.to_hal().inputIndexes[0]].dimensions[1:]
    items = (rng.integers(0, 256, (ITEMS, *shape)) if dtype == np.uint8 else
             rng.standard_normal((ITEMS, *shape))).astype(dtype)
    np.save(tmp_path / "x.npy", np.ascontiguousarray(items.T))    # OpenVX order: [C, W, H, N]
    assert main(["run", "--model", str(tmp_path / "model.nnapi"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--batch", "4"]) == 0
    out = np.load(tmp_path / "y.npy")
    want = computed(m, items)
    assert out.dtype == want.dtype and out.shape == want.shape
    if dtype == np.uint8:
        np.testing.assert_array_equal(out, want)
    else:
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)
    assert f"{ITEMS}/{ITEMS} images" in capsys.readouterr().err


def test_run_on_two_workers_writes_the_same(tmp_path, rng):
    pytest.importorskip("distributed", reason="the dask extra (pip install .[dask]) is not installed")
    m = quantized_cnn(rng)
    m.save(tmp_path / "cnn.nnapi")
    items = rng.integers(0, 256, (ITEMS, 6, 6, 2)).astype(np.uint8)
    np.save(tmp_path / "x.npy", np.ascontiguousarray(items.T))
    assert main(["run", "--model", str(tmp_path / "cnn.nnapi"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--batch", "4", "--workers", "2"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), computed(m, items))


def test_rebatch_sets_the_input_batch_and_frees_computed_first_dims(rng):
    hal = float_classifier(rng).to_hal()
    batched = rebatch(hal, 3)
    dims = [o.dimensions for o in batched.operands]
    assert dims[0] == [3, 4, 4, 2] and dims[hal.outputIndexes[0]] == [0, 5]
    assert dims[1] == [2] and hal.operands[0].dimensions == [1, 4, 4, 2]   # constants and the original kept
    assert rebatch(hal, 1) is hal


def _write(path, members: dict) -> None:
    with open(path, "wb") as f:
        np.savez(f, **members)


def _json(description) -> np.ndarray:
    return np.frombuffer(json.dumps(description).encode(), np.uint8)


def _broken(tmp_path, rng, change) -> str:
    """The quantized CNN's file with ``change(description)`` applied to its model.json."""
    m = quantized_cnn(rng)
    m.save(tmp_path / "good.nnapi")
    with np.load(tmp_path / "good.nnapi") as archive:
        members = {name: archive[name] for name in archive.files}
    description = json.loads(members["model.json"].tobytes())
    change(description)
    members["model.json"] = _json(description)
    _write(tmp_path / "bad.nnapi", members)
    return str(tmp_path / "bad.nnapi")


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(version=2), r"format version 2; this reads version 1"),
    (lambda d: d.update(format="other"), r"does not describe an openvx-nn.nnapi model"),
    (lambda d: d["operations"][0].update(type="CONV_3D"), r"operation 0: type 'CONV_3D' is not an OperationType"),
    (lambda d: d["operands"][0].update(lifetime=7), r"operand 0: lifetime 7 is not an OperandLifeTime"),
    (lambda d: d["operands"][0].pop("dimensions"), r"model.json is malformed \(KeyError: 'dimensions'\)"),
    (lambda d: d.update(outputIndexes=[99]), r"model output 99 is not an operand index"),
    (lambda d: d.update(pools=2), r"pool 1 is missing"),
])
def test_a_bad_model_json_is_named(tmp_path, rng, change, message):
    with pytest.raises(nnapi.NNAPIError, match=message):
        nnapi.hal.load_model(_broken(tmp_path, rng, change))


def test_files_that_are_no_model_are_named(tmp_path):
    (tmp_path / "text.nnapi").write_text("hello")
    with pytest.raises(nnapi.NNAPIError, match=r"text.nnapi is not a .nnapi model file \(a NumPy .npz archive\)"):
        nnapi.hal.load_model(tmp_path / "text.nnapi")
    _write(tmp_path / "empty.nnapi", {"other": np.zeros(1)})
    with pytest.raises(nnapi.NNAPIError, match=r"empty.nnapi is not a .nnapi model file: it lacks model.json"):
        nnapi.hal.load_model(tmp_path / "empty.nnapi")
    _write(tmp_path / "junk.nnapi", {"model.json": np.frombuffer(b"{oops", np.uint8), "operandValues": np.zeros(0)})
    with pytest.raises(nnapi.NNAPIError, match=r"model.json is not valid JSON"):
        nnapi.hal.load_model(tmp_path / "junk.nnapi")
    with pytest.raises(nnapi.NNAPIError, match=r"missing.nnapi: cannot read"):
        nnapi.hal.load_model(tmp_path / "missing.nnapi")


def test_run_names_a_bad_file_and_a_model_it_cannot_batch(tmp_path, rng, capsys):
    np.save(tmp_path / "x.npy", np.zeros((2, 6, 6, 3), np.uint8))
    (tmp_path / "text.nnapi").write_text("hello")
    m = nnapi.Model()
    a, b = (m.add_operand(T.TENSOR_FLOAT32, [1, 2]) for _ in range(2))
    y = m.add_operand(T.TENSOR_FLOAT32, [1, 2])
    m.add_operation(nnapi.OperationType.ADD, [a, b] + _scalars(m, (0,)), [y])
    m.identify_inputs_and_outputs([a, b], [y])
    m.finish()
    m.save(tmp_path / "two.nnapi")
    for model, message in (("text.nnapi", "text.nnapi is not a .nnapi model file"),
                           ("two.nnapi", "two.nnapi has 2 inputs; a batched run feeds exactly one")):
        assert main(["run", "--model", str(tmp_path / model), "--input", str(tmp_path / "x.npy"),
                     "--output", str(tmp_path / "y.npy")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("openvx-nn run: error: ") and message in err, err
    assert not (tmp_path / "y.npy").exists()
