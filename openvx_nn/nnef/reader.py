"""Reading an NNEF folder with Khronos's parser (the ``nnef`` package, the ``[nnef]`` extra): ``graph.nnef``,
one ``.dat`` file per variable, an optional ``graph.quant``; shapes inferred at once, every problem an
``NNEFError`` naming the file."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .errors import NNEFError

DTYPES = {"scalar": np.float32, "integer": np.int32, "logical": np.bool_}
"""NNEF's tensor types and the NumPy types of their values (``.dat`` payloads, inputs, outputs)."""


def _parser():
    try:
        import nnef
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise NNEFError('reading NNEF models needs the nnef parser: pip install ".[nnef]"') from err
    return nnef


def read(path, shapes: dict[str, list[int]] | None = None) -> object:
    """The parsed ``nnef.Graph`` of folder ``path``, variables loaded, shapes inferred (``shapes``: input
    shapes other than the declared ones, by name)."""
    nnef = _parser()
    folder = Path(os.fspath(path))
    if not folder.is_dir():
        where = folder if folder.exists() else f"{folder}"
        raise NNEFError("not a folder (an NNEF model is a folder holding graph.nnef and its .dat files)"
                        if folder.exists() else "no such folder", where=str(where))
    text = folder / "graph.nnef"
    if not text.is_file():
        raise NNEFError("missing file (the folder must hold the graph's text)", where=str(text))
    _check_variables(nnef, folder, text)
    try:
        graph = nnef.load_graph(str(folder))
    except nnef.Error as err:
        raise NNEFError(_explained(_first_line(err)), where=str(_blamed(folder, err))) from None
    except (OSError, ValueError, EOFError) as err:
        raise NNEFError(f"cannot read a variable: {err}", where=str(folder)) from None
    try:
        nnef.infer_shapes(graph, external_shapes=dict(shapes or {}))
    except nnef.Error as err:
        raise NNEFError(f"shapes do not agree: {_first_line(err)}", where=str(text)) from None
    return graph


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _explained(message: str) -> str:
    """The parser's message, with what a use before definition means: each tensor is defined once, before its
    uses, so a graph whose operations feed each other in a cycle cannot be written."""
    if "undeclared identifier" in message:
        return message + " (a tensor used before it is defined: operations that feed each other in a cycle?)"
    return message


def _blamed(folder: Path, err: Exception) -> Path:
    """The file a parser error is about: a ``.dat`` or ``graph.quant`` it names, else ``graph.nnef``."""
    text = str(err)
    for name in ("graph.quant",):
        if name in text:
            return folder / name
    return folder / "graph.nnef"


def _check_variables(nnef, folder: Path, text: Path) -> None:
    """Every variable's ``.dat`` file is there and holds the declared shape (the parser's own messages do not
    name the file)."""
    try:
        source = nnef.parse_file(str(text))
    except nnef.Error as err:
        raise NNEFError(_explained(_first_line(err)), where=str(text)) from None
    for op in source.operations:
        if op.name != "variable":
            continue
        label = op.attribs.get("label")
        shape = [int(d) for d in op.attribs.get("shape", [])]
        dat = folder / f"{label}.dat"
        if not dat.is_file():
            raise NNEFError(f"missing file for variable '{label}' of shape {shape}", where=str(dat))
        try:
            with open(dat, "rb") as f:
                array = nnef.read_tensor(f)
        except Exception as err:  # noqa: BLE001 - the reader raises ValueError, struct.error, EOFError...
            raise NNEFError(f"not a valid NNEF tensor file: {err}", where=str(dat)) from None
        if list(array.shape) != shape:
            raise NNEFError(f"holds shape {list(array.shape)}, the graph declares variable '{label}' of shape "
                            f"{shape}", where=str(dat))
