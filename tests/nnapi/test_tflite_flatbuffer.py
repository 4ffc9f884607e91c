"""Our ``.tflite`` reader against files LiteRT's own schema module writes: every field of every options table of
the union set to random values and read back, tensors with their quantization and data, custom operators; the
schema tables against the installed schema; damaged files refused with NNAPIError, never another exception."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert")

from benchmarks.tflite_models import Writer
from openvx_nn.nnapi import NNAPIError
from openvx_nn.nnapi.tflite import flatbuffer
from openvx_nn.nnapi.tflite.schema_tables import BUILTIN_OPTIONS, TABLES

ROOT = Path(__file__).resolve().parents[2]
_RANGES = {"b": (-128, 127), "B": (0, 255), "h": (-2**15, 2**15 - 1), "H": (0, 2**16 - 1), "i": (-2**31, 2**31 - 1),
           "I": (0, 2**32 - 1), "q": (-2**63, 2**63 - 1), "Q": (0, 2**63)}


def test_the_schema_tables_are_what_the_installed_schema_gives():
    spec = importlib.util.spec_from_file_location("make_tflite_tables", ROOT / "tools" / "make_tflite_tables.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    from ai_edge_litert import schema_py_generated
    assert tool.tables(schema_py_generated) == tool.TARGET.read_text()


def _random(rng, kind: str):
    if kind == "?":
        return bool(rng.integers(2))
    if kind in _RANGES:
        low, high = _RANGES[kind]
        return int(rng.integers(low, high, endpoint=True, dtype=np.int64 if kind != "Q" else np.uint64))
    if kind == "f":
        return float(np.float32(rng.standard_normal() * 100))
    if kind == "d":
        return float(rng.standard_normal() * 1e6)
    if kind == "s":
        return "".join(rng.choice(list("abcxyz_0123"), int(rng.integers(0, 12))))
    return None  # a table or a union: left out


def test_every_options_field_of_every_union_member_reads_back_as_written():
    rng = np.random.default_rng(11)
    w = Writer()
    x = w.tensor((1, 4), w.s.TensorType.FLOAT32)
    expected = []
    for code, name in BUILTIN_OPTIONS.items():
        for _ in range(2):  # once with every field, once with each left out at random (its default read back)
            options = getattr(w.s, name + "T")()
            wanted = {}
            for field, _, kind, default in TABLES[name]:
                assert hasattr(options, field), (name, field)  # the table's names are the schema's
                if kind.startswith("[") and kind[1:] in "?bBhHiIqQfd":
                    value = [_random(rng, kind[1:]) for _ in range(int(rng.integers(0, 5)))]
                elif kind == "[s":
                    value = [_random(rng, "s") for _ in range(int(rng.integers(0, 3)))]
                else:
                    value = _random(rng, kind)
                if value is None or rng.random() < 0.3:
                    wanted[field] = default if not (kind.startswith(("[", "s", "t:")) or kind == "u") else None
                    continue
                setattr(options, field, value)
                wanted[field] = value
            w.operator(0, [x], x, code, options)
            expected.append((name, wanted))
    read = flatbuffer.read(w.serialize([x], [x], "options"))
    assert len(read.operators) == len(expected)
    for op, (name, wanted) in zip(read.operators, expected):
        got = vars(op.options) if op.options is not None else {}
        for field, value in wanted.items():
            found = got.get(field)
            if isinstance(value, list):
                if field in got and found is not None and value and isinstance(value[0], str):
                    assert [v.decode() for v in found] == value, (name, field)
                else:
                    assert found is not None and list(found) == value, (name, field, found, value)
            elif isinstance(value, str):
                assert found == value.encode(), (name, field)
            else:  # floats too: written as float32 values, read back exactly
                assert found == value, (name, field, found, value)


def test_tensors_quantization_constants_and_custom_operators_read_as_written():
    rng = np.random.default_rng(12)
    w = Writer()
    t = w.s.TensorType
    x = w.tensor((1, 3, 3, 2), t.FLOAT32)
    half = rng.standard_normal((4, 3, 3, 2)).astype(np.float16)
    h = w.tensor(half.shape, t.FLOAT16, half)
    codes = rng.integers(-128, 128, (4, 1, 1, 2)).astype(np.int8)
    scales, zeros = rng.uniform(0.01, 1, 4), [0, 0, 0, 0]
    q = w.tensor(codes.shape, t.INT8, codes, scales=scales, zero_points=zeros, axis=0)
    out = w.tensor((1, 3, 3, 4), t.FLOAT32)
    w.operator("MyCustomThing", [x, h, q], out)
    w.operator(0, [out, out], out)  # ADD, no options
    read = flatbuffer.read(w.serialize([x], [out], "tensors"))
    assert [t.shape for t in read.tensors] == [(1, 3, 3, 2), half.shape, codes.shape, (1, 3, 3, 4)]
    assert [t.type for t in read.tensors] == ["FLOAT32", "FLOAT16", "INT8", "FLOAT32"]
    assert [t.name for t in read.tensors] == ["t0", "t1", "t2", "t3"]
    assert np.array_equal(read.tensors[1].data, half) and np.array_equal(read.tensors[2].data, codes)
    assert read.tensors[0].data is None and read.tensors[0].scales is None
    assert np.allclose(read.tensors[2].scales, scales.astype(np.float32)) and list(read.tensors[2].zero_points) == zeros
    assert read.tensors[2].axis == 0 and read.tensors[2].per_channel
    assert [op.name for op in read.operators] == ["CUSTOM:MyCustomThing", "ADD"]
    assert read.operators[0].inputs == [0, 1, 2] and read.operators[1].options is None
    assert read.inputs == [0] and read.outputs == [3]


def test_damaged_files_are_refused_with_an_nnapi_error():
    w = Writer()
    t = w.s.TensorType
    x = w.tensor((1, 4), t.FLOAT32)
    c = w.tensor((1, 4), t.FLOAT32, np.arange(4, dtype=np.float32))
    out = w.tensor((1, 4), t.FLOAT32)
    options = w.s.AddOptionsT()
    w.operator(0, [x, c], out, w.s.BuiltinOptions.AddOptions, options)
    model = w.serialize([x], [out], "small")
    rng = np.random.default_rng(13)
    for cut in (8, 16, len(model) // 3, len(model) - 4):
        with pytest.raises(NNAPIError):
            flatbuffer.read(model[:cut])
    for _ in range(300):
        damaged = bytearray(model)
        for at in rng.integers(8, len(model), int(rng.integers(1, 4))):
            damaged[at] = int(rng.integers(256))
        try:
            flatbuffer.read(bytes(damaged))
        except NNAPIError:
            pass  # refused: anything but another exception (or a hang) is fine


def test_mediapipe_files_read_as_litert_schema_reads_them():
    """Google's own files, where fetched (``python tools/fetch_mediapipe_models.py``): every tensor, operator and
    options field as LiteRT's schema module unpacks them."""
    from ai_edge_litert import schema_py_generated as s

    from benchmarks.tflite_rows import models_folder
    files = sorted(models_folder().glob("*.tflite")) if models_folder().is_dir() else []
    if not files:
        pytest.skip("no MediaPipe files fetched")
    for path in files:
        content = path.read_bytes()
        ours, theirs = flatbuffer.read(content), s.ModelT.InitFromPackedBuf(bytearray(content), 0)
        graph = theirs.subgraphs[0]
        assert [t.shape for t in ours.tensors] == [tuple(t.shape if t.shape is not None else ()) for t in graph.tensors]
        assert [t.name for t in ours.tensors] == [t.name.decode() for t in graph.tensors]
        for mine, op in zip(ours.operators, graph.operators, strict=True):
            assert (mine.inputs, mine.outputs) == (list(op.inputs), list(op.outputs)), path.name
            assert (mine.options is None) == (op.builtinOptions is None), (path.name, mine.name)
            for field, value in (vars(op.builtinOptions) if op.builtinOptions is not None else {}).items():
                if isinstance(value, (int, float, bool, bytes)):
                    assert getattr(mine.options, field) == value, (path.name, mine.name, field)
                elif isinstance(value, np.ndarray):
                    assert np.array_equal(getattr(mine.options, field), value), (path.name, mine.name, field)
