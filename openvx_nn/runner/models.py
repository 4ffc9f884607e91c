"""The models ``openvx-nn run`` knows: built-in ones by name, files by suffix through front ends.

A model is a picklable recipe (it travels to Dask workers): ``build(ctx, batch)`` makes the network,
``prepare`` turns the input file's values into the input tensor's, ``finish`` turns output tensor
values into what is written.  Front ends that read model files plug in through :func:`register_loader`;
CoreML (``.mlmodel``) and NNAPI (``.nnapi``) files and NNEF folders are dispatched to ``openvx_nn.coreml``,
``openvx_nn.nnapi`` and ``openvx_nn.nnef``, which must provide
``build_batched(ctx, path, batch) -> (graph, input, output)`` and may provide ``run_options(path) -> dict`` of :class:`Model` fields (``item_shape``, ``finish``,
``describes``).  A front end's ``ValueError`` (a bad model file) becomes a :class:`ModelError`.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..api import Context, quantize
from ..demo.model import VARIANTS
from ..demo.model import build as build_digits
from ..errors import Error


class ModelError(Error, ValueError):
    """A model that cannot be found, loaded or run; the message says which and why."""


@dataclass(frozen=True)
class Model:
    """A network ``run`` can map over a dataset (every field picklable)."""

    name: str
    build: Callable            # build(ctx, batch) -> (graph, input, output)
    prepare: Callable[[np.ndarray], np.ndarray]
    finish: Callable[[np.ndarray], np.ndarray]
    item_shape: tuple[int, ...] | None = None   # one input item (batch axis excluded), when fixed
    describes: str = "outputs"                   # what ``finish`` gives, for messages

    def build_for(self, batch: int) -> Callable:
        """``build(ctx)`` for batches of ``batch`` items, the form ``map_batches`` takes."""
        return partial(self.build, batch=batch)


def unchanged(values: np.ndarray) -> np.ndarray:
    return values


def labels(probabilities: np.ndarray) -> np.ndarray:
    """Class index of each item: the arg-max over the first (class) axis."""
    return probabilities.argmax(axis=0).astype(np.int64)


def finite_then_quantized(values: np.ndarray, dtype: np.dtype, fpp: int) -> np.ndarray:
    """``quantize``, refusing NaN and infinity: a fixed-point model has no value for them, and a label
    computed from a saturated or undefined input would look like a real answer."""
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ModelError(f"--input holds {int(bad.sum())} NaN or infinite value(s) (the first in item "
                         f"{int(where[-1])} of this batch, at {tuple(int(i) for i in where[:-1])}); a quantized "
                         f"model cannot take them: clean the data or use a float variant (--variant f32)")
    return quantize(values, dtype, fpp)


def digits(variant: str = "q78") -> Model:
    """The shipped digits CNN: images [8, 8, 1, N] in [0, 1] in, labels [N] out."""
    if variant not in VARIANTS:
        raise ModelError(f"variant {variant!r} is not one of {', '.join(map(repr, VARIANTS))}")
    v = VARIANTS[variant]
    return Model(f"digits ({v.name})", partial(build_digits, variant=variant),
                 partial(finite_then_quantized, dtype=v.dtype, fpp=v.fpp) if np.dtype(v.dtype).kind in "iu"
                 else partial(quantize, dtype=v.dtype, fpp=v.fpp), labels, (8, 8, 1), "labels")


BUILT_IN: dict[str, Callable[..., Model]] = {"digits": digits}


def build_from_file(module: str, path: str, ctx: Context, batch: int):
    """Build the network of a model file through a front end module's ``build_batched``."""
    builder = getattr(_front_end(module, path), "build_batched", None)
    if builder is None:
        raise ModelError(f"{path}: {module} has no build_batched(ctx, path, batch) for the run command yet")
    with _model_errors(path):
        return builder(ctx, path, batch)


@contextmanager
def _model_errors(path: str) -> Iterator[None]:
    try:
        yield
    except ModelError:
        raise
    except ValueError as error:
        message = str(error)
        raise ModelError(message if path in message else f"{path}: {message}") from error


def _front_end(module: str, path: str):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ModelError(f"{path}: this kind of model needs {module}, which cannot be imported here "
                         f"({error})") from error


def front_end_loader(module: str) -> Callable[[Path], Model]:
    """A loader for files a front end module reads: fails at once (not on a worker) if it is absent."""
    def load(path: Path) -> Model:
        options = getattr(_front_end(module, str(path)), "run_options", None)
        fields = {}
        if options is not None:
            with _model_errors(str(path)):
                fields = options(str(path))
        fields = {"prepare": unchanged, "finish": unchanged, **fields}
        return Model(path.name, partial(build_from_file, module, str(path)), **fields)
    return load


LOADERS: dict[str, Callable[[Path], Model]] = {
    ".mlmodel": front_end_loader("openvx_nn.coreml"),
    ".nnapi": front_end_loader("openvx_nn.nnapi"),
}


NNEF_FOLDERS = front_end_loader("openvx_nn.nnef")
"""The loader of NNEF folders (``graph.nnef`` and its ``.dat`` files)."""


def register_loader(suffix: str, loader: Callable[[Path], Model]) -> None:
    """Make ``run --model FILE`` with this suffix use ``loader(path) -> Model``."""
    LOADERS[suffix.lower()] = loader


def resolve(spec: str, variant: str = "q78") -> Model:
    """The model a ``--model`` argument names: a built-in name or a model file."""
    if spec in BUILT_IN:
        return BUILT_IN[spec](variant)
    path = Path(spec)
    if path.is_dir() and (path / "graph.nnef").is_file():  # an NNEF model is a folder
        return NNEF_FOLDERS(path.resolve())
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        kinds = ", ".join(f"{suffix} files" for suffix in LOADERS)
        raise ModelError(f"--model {spec!r} is neither a built-in model ({', '.join(BUILT_IN)}) nor one of {kinds} "
                         "nor an NNEF folder (holding graph.nnef)")
    if not path.is_file():
        raise ModelError(f"--model {spec!r}: no such file")
    return loader(path.resolve())
