"""``load`` and ``CoreMLModel``: a CoreML NeuralNetwork (plain, classifier or regressor)
as verified OpenVX graphs, one per set of input shapes, run by ``predict``."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import vx
from ..core import native_plan
from ..core.context import Context
from ..core.enums import Directive
from ..core.in_place import InPlace, process_fed
from ..core.tensor import assign
from ..operations.nnapi.common import Lending
from . import blob as b
from . import recurrent_loops, segments
from .builder import GraphBuilder
from .control import compile_flow, layer_kinds, needs_program
from .errors import CoreMLError
from .flexible import shape_rule
from .lowering import lower_all
from .order import layer_order
from .validation import validate

KINDS = ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor")
PROGRAM = ("the model has control flow (branch or loop) or layers whose output shape depends on data: it runs as "
           "several graphs, one per segment between such layers, not as one")


@dataclass(frozen=True)
class LayerInfo:
    """One layer as imported: its name, CoreML type and how it runs on our graph."""

    name: str
    type: str
    lowering: str


class _NoProxyNotices(logging.Filter):
    """Drops coremltools' "Failed to load _MLModelProxy" lines and its "Torch version ... has not been tested"
    notices: those are its macOS prediction libraries and its converters' dependencies, which this package never
    uses (coremltools only parses the file here)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Failed to load _ML") or "has not been tested with coremltools" in message)


_NO_PROXY_NOTICES = _NoProxyNotices()


def _parse(source) -> Any:
    logging.getLogger("coremltools").addFilter(_NO_PROXY_NOTICES)  # before coremltools' first import
    environment = dict(os.environ)
    try:
        from coremltools.proto import Model_pb2
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise CoreMLError('reading .mlmodel files needs coremltools: pip install ".[coreml]"') from err
    finally:
        _restore(environment)
    if isinstance(source, Model_pb2.Model):
        return source
    path = os.fspath(source)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise CoreMLError(f"cannot read {path}: {err.strerror}") from None
    spec = Model_pb2.Model()
    try:
        spec.ParseFromString(data)
    except Exception as err:  # noqa: BLE001 - protobuf raises its own DecodeError and others
        raise CoreMLError(f"{path} is not a valid .mlmodel (truncated or corrupt protobuf: {err})") from None
    return spec


def _restore(environment: dict[str, str]) -> None:
    """Undo what importing coremltools did to the host's environment (its TensorFlow front end sets
    ``TF_CPP_MIN_LOG_LEVEL``, which every TensorFlow the host or its children start would then obey)."""
    for name in set(os.environ) - set(environment):
        del os.environ[name]
    for name, value in environment.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def feature_shape(feature) -> tuple[int, ...]:
    """The CoreML shape an input feature declares: [C] or [C, H, W] for multi-arrays, [C, H, W] for images."""
    name = feature.name
    kind = feature.type.WhichOneof("Type")
    if kind == "multiArrayType":
        shape = tuple(int(d) for d in feature.type.multiArrayType.shape)
        if not shape:
            raise CoreMLError(f"input '{name}' declares no shape")
        return shape
    if kind == "imageType":
        image = feature.type.imageType
        channels = 1 if image.colorSpace in (10, 40) else 3  # GRAYSCALE = 10, GRAYSCALE_FLOAT16 = 40
        return channels, int(image.height), int(image.width)
    raise CoreMLError(f"input '{name}' of type {kind} is not supported (multi-arrays and images)")


class _Runs(NamedTuple):
    """What ``CoreMLModel.predict`` needs of a graph's compiled plan, found once per plan, so that a run touches few
    Python objects: the model's data has pushed them out of the caches (MobileNet v2's predict spent 117 us around
    its 1.8 ms of layers)."""

    plan: object
    lending: Lending | None  # how its native runs lend layers to the helpers (None: none to lend)
    in_place: InPlace | None  # the inputs they read in place (None: none)
    outputs: tuple[tuple[str, np.ndarray, tuple[int, ...]], ...]  # (name, its storage in CoreML order, given shape)


def _copy_in(tensor, array: np.ndarray) -> None:
    assign(tensor.array, b.to_vx(array))


class CoreMLModel:
    """A CoreML neural network running on OpenVX graphs.

    ``predict`` takes and returns dicts of NumPy arrays like coremltools'
    ``MLModel.predict``; a classifier also returns its class label and the
    probability dict. ``graph`` is the verified graph for the declared input
    shapes; ``layers`` lists how each layer was lowered.
    """

    def __init__(self, spec, declared: bool = True, nhwc: bool = True):
        """``declared``: build the graph for the declared input shapes now (a model that cannot run
        fails at load); ``build_batched`` passes False and builds only the graph it needs. ``nhwc``: run
        convolution regions on the NHWC float engines (``lowering/nhwc.py``); False keeps every layer in
        CoreML's layout."""
        self.spec = spec
        self.nhwc_route = nhwc
        kind = spec.WhichOneof("Type")
        if kind not in KINDS:
            raise CoreMLError(f"model type '{kind}' is not a neural network (expected one of {', '.join(KINDS)}, or "
                              "through load a pipeline of them)")
        validate(spec)
        self.kind = kind
        self.network = getattr(spec, kind)
        self.exact = getattr(self.network, "arrayInputShapeMapping", 0) == 1
        self.inputs = {f.name: f for f in spec.description.input}
        self.outputs = {f.name: f for f in spec.description.output}
        self.layers: list[LayerInfo] = []
        self.flow = None
        fused = recurrent_loops.fuse(self.network.layers)  # PyTorch's GRU loops as one node each
        self._layers = _Layers(self.network.layers if fused is None else fused)
        if needs_program(self._layers):
            self._start_flow()
        else:
            self.order = layer_order(self._layers.layers, list(self.inputs))
        self._graphs: dict[tuple, GraphBuilder] = {}
        self._lends: dict[int, _Runs] = {}  # id(graph) -> what its runs need, found once per plan
        self._ranks: dict[str, int] = {}  # input name -> the rank its feature declares (read from the spec once)
        self._flexible = {name: shape_rule(f) for name, f in self.inputs.items()}  # flexible shapes (flexible.py)
        # One predict at a time: a graph's tensors hold one call's inputs and outputs from the copy-in to the
        # copy-out (docs/threads.md: serialized calls served more requests a second than a graph per thread).
        self._lock = threading.RLock()
        _start_library()
        if declared and self.flow is None:  # a program's segments are built as a run reaches them
            self._build(self._declared_shapes())

    # -- shapes ----------------------------------------------------------------------------
    def _feature_shape(self, name: str) -> tuple[int, ...]:
        return feature_shape(self.inputs[name])

    def _declared_shape(self, name: str) -> tuple[int, ...]:
        shape = self._feature_shape(name)
        if self.exact:
            return shape
        return b.rank5_shape(shape, len(shape))

    def _arrays(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        arrays = {}
        for name in self.inputs:
            if name not in inputs:
                raise CoreMLError(f"input '{name}' is missing (the model takes {sorted(self.inputs)})")
            value = np.asarray(inputs[name], np.float32)
            rule = self._flexible.get(name)
            if rule is not None:
                count, check = rule
                problem = check(value.shape[-count:]) if value.ndim >= count else f"it has rank {value.ndim}"
                if problem is not None:
                    raise CoreMLError(f"input '{name}' of shape {list(value.shape)} is refused: {problem}")
            if not self.exact:
                rank = self._ranks.get(name)
                if rank is None:
                    rank = self._ranks[name] = len(self._feature_shape(name))
                value = b.rank5(value, rank)
            arrays[name] = value
        if len(inputs) != len(arrays):  # every input is there: any other name is unknown
            unknown = set(inputs) - set(self.inputs)
            raise CoreMLError(f"unknown input(s) {sorted(unknown)} (the model takes {sorted(self.inputs)})")
        return arrays

    # -- building ----------------------------------------------------------------------------
    def _build(self, shapes: Mapping[str, tuple[int, ...]]) -> GraphBuilder:
        key = tuple(sorted((n, tuple(s)) for n, s in shapes.items()))
        if key not in self._graphs:
            self._graphs[key] = self.build_graph(shapes)
        return self._graphs[key]

    def build_graph(self, shapes: Mapping[str, tuple[int, ...]],
                    finish: Callable[[GraphBuilder], None] | None = None) -> GraphBuilder:
        """A verified graph of the whole model for input ``shapes`` (CoreML order), owned by the caller;
        ``finish`` adds nodes before verification (``build_batched``'s batch-last input and output)."""
        if self.flow is not None:
            raise CoreMLError(PROGRAM)
        g = GraphBuilder(self._wanted_blobs(), self.nhwc_route)
        with g.building():
            g.inputs = {}
            for name, shape in shapes.items():
                g.inputs[name] = tensor = g.real(shape)
                g.blobs[name] = _blob(tensor, shape)
                self._preprocess(g, name, g.blobs[name])
            hows = lower_all(g, self.order, set(self._wanted_blobs()))
            infos = [LayerInfo(layer.name, layer.WhichOneof("layer") or "none", how)
                     for layer, how in zip(self.order, hows)]
            for name in self._wanted_blobs():
                if not g.known(name):
                    raise CoreMLError(f"output '{name}' is produced by no layer")
                g.blob(name)  # in CoreML's layout (a blob held only in NHWC is converted here)
            if finish is not None:
                finish(g)
            g.verify()
        if not self.layers:
            self.layers = infos
        return g

    def _preprocess(self, g: GraphBuilder, name: str, x) -> None:
        """Image preprocessing (scaler, mean image) as nodes before the first layer."""
        from .lowering.activation import affine
        for pre in getattr(self.network, "preprocessing", []):
            if pre.featureName not in ("", name) or self.inputs[name].type.WhichOneof("Type") != "imageType":
                continue
            g.layer = (f"{name} preprocessing", pre.WhichOneof("preprocessor") or "none")
            channels = x.shape[-3]
            if pre.WhichOneof("preprocessor") == "scaler":
                s = pre.scaler
                rgb = self.inputs[name].type.imageType.colorSpace == 20  # RGB = 20, BGR = 30
                biases = ([s.grayBias] if channels == 1 else
                          [s.redBias, s.greenBias, s.blueBias] if rgb else [s.blueBias, s.greenBias, s.redBias])
                scale = s.channelScale if s.channelScale else 1.0
                g.outputs.discard(name)
                affine(g, x, name, np.full(channels, scale), np.asarray(biases, np.float64))
            elif pre.WhichOneof("preprocessor") == "meanImage":
                from .lowering.arithmetic import combine
                mean = np.asarray(pre.meanImage.meanImage, np.float32)
                if mean.size != np.prod(x.shape[-3:]):
                    raise g.fail(f"meanImage holds {mean.size} values; the image {list(x.shape[-3:])} needs "
                                 f"{int(np.prod(x.shape[-3:]))}")
                mean = mean.reshape(x.shape[-3:])
                combine(g, x, _blob(g.constant(mean), mean.shape), "subtract", name)
            x = g.blobs[name]

    def _wanted_blobs(self) -> list[str]:
        if self.kind == "neuralNetworkClassifier":
            return [self._probability_blob()]
        return list(self.outputs)

    def _probability_blob(self) -> str:
        named = self.network.labelProbabilityLayerName
        if named:
            return named
        probs = self.spec.description.predictedProbabilitiesName
        produced = {o for layer in self.network.layers for o in layer.output}
        if probs in produced:
            return probs
        last = [layer for layer in self.network.layers if layer.output]  # control-flow layers have none
        if not last:
            raise CoreMLError("the classifier has no layers")
        return last[-1].output[0]

    # -- running ---------------------------------------------------------------------------------
    def _declared_shapes(self) -> dict[str, tuple[int, ...]]:
        return {name: self._declared_shape(name) for name in self.inputs}

    @property
    def graph(self):
        """The verified OpenVX graph (``openvx_nn.core.graph.Graph``) for the declared input shapes."""
        if self.flow is not None:
            raise CoreMLError(PROGRAM)
        with self._lock:
            return self._build(self._declared_shapes()).graph

    def predict(self, inputs: Mapping[str, np.ndarray], bench: bool = False) -> dict[str, Any]:
        """Run the model; returns {output name: array} (classifiers: label and probability dict). Safe to call
        from several threads at once: the calls take turns (docs/threads.md)."""
        arrays = self._arrays(inputs)
        with self._lock:
            results = self._predict(arrays, bench)
        if self.kind == "neuralNetworkClassifier":
            return self._classify(results)
        return results

    def _predict(self, arrays: dict[str, np.ndarray], bench: bool) -> dict[str, np.ndarray]:
        if self.flow is not None:
            return self._predict_flow(arrays, bench)
        g = self._build({n: a.shape for n, a in arrays.items()})
        runs = self._run(g, arrays, bench)
        results = {}
        for name, storage, shape in runs.outputs:
            array = np.empty(shape, np.float32)
            assign(array.reshape(storage.shape), storage)
            results[name] = array
        return results

    def _run(self, g: GraphBuilder, arrays: Mapping[str, np.ndarray], bench: bool,
             wanted: list[str] | None = None) -> _Runs:
        """Run ``g`` on ``arrays`` (by input name); returns where its outputs (``wanted``, else the model's) are."""
        context = Context.current()
        if bench and context is not None:
            context.directive(Directive.VX_DIRECTIVE_ENABLE_PERFORMANCE)
        graph = g.graph
        runs = self._lends.get(id(g))
        if runs is None or runs.plan is not graph.plan:  # bound anew
            runs = self._lends[id(g)] = self._runs(g, wanted)
        feeds = [(g.inputs[name], np.ascontiguousarray(array)) for name, array in arrays.items()]

        def run() -> int:
            return process_fed(graph, runs.in_place, feeds, _copy_in)
        status = run() if runs.lending is None else runs.lending.run(run)
        if status != 0:
            raise CoreMLError(f"the graph failed with status {status} (see the OpenVX log)")
        if runs.plan is not graph.plan:  # the run bound the graph anew (its first, or after a change): storage moved
            runs = self._lends[id(g)] = self._runs(g, wanted)
        return runs

    def _runs(self, g: GraphBuilder, wanted: list[str] | None = None) -> _Runs:
        """What ``predict`` needs of ``g``'s current plan: whether its native run shares layers with the helpers,
        which inputs it can read in place (core/in_place.py), and where each output is and in what shape it is
        given (``wanted``: a segment's outputs, given as held)."""
        given = wanted is not None or self.exact
        wanted = self._wanted_blobs() if wanted is None else wanted
        read = []
        for name in wanted:
            storage = g.blobs[name].tensor.array.T  # CoreML order
            read.append((name, storage, storage.shape if given else self._output_shape(name, storage.shape)))
        plan = g.graph.plan
        outputs = [g.blobs[name].tensor for name in wanted]
        return _Runs(plan, Lending.of(plan), InPlace.of(g.graph, list(g.inputs.values()), outputs), tuple(read))

    # -- control flow (control.py) ------------------------------------------------------------------------
    def _start_flow(self) -> None:
        if len(getattr(self.network, "preprocessing", [])):
            raise CoreMLError("image preprocessing in a model with control flow is not supported")
        self.flow = compile_flow(self._layers, list(self.inputs), self._wanted_blobs())
        self._how = {id(layer): how for layer, how in layer_kinds(self.flow.program)}
        self._layer_list = [layer for layer, _ in layer_kinds(self.flow.program)]
        self._list_layers()

    def _list_layers(self) -> None:
        self.layers = [LayerInfo(layer.name, layer.WhichOneof("layer") or "none",
                                 self._how[id(layer)] or "(built when a run first reaches it)")
                       for layer in self._layer_list]

    def _predict_flow(self, arrays: dict[str, np.ndarray], bench: bool) -> dict[str, np.ndarray]:
        return segments.predict(self, arrays, bench)

    def _output_shape(self, name: str, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape a RANK5 output of ``shape`` is given in, as coremltools gives it (``blob.from_rank5``)."""
        if len(shape) != 5:  # a rank-N layer's blob in a rank-5 model: given as it is
            return tuple(shape)
        declared = self.outputs.get(name)
        rank = 3
        if declared is not None and declared.type.WhichOneof("Type") == "multiArrayType":
            rank = len(declared.type.multiArrayType.shape) or 3
        return b.from_rank5(np.empty(shape, np.float32), rank).shape

    def _classify(self, results: dict[str, np.ndarray]) -> dict[str, Any]:
        probs = np.asarray(results[self._probability_blob()], np.float64).reshape(-1)
        which = self.network.WhichOneof("ClassLabels")
        labels = list(getattr(self.network, which).vector) if which else list(range(probs.size))
        if len(labels) != probs.size:
            raise CoreMLError(f"{len(labels)} class labels but {probs.size} probabilities")
        d = self.spec.description
        out = {d.predictedFeatureName or "classLabel": labels[int(np.argmax(probs))]}
        out[d.predictedProbabilitiesName or "classProbability"] = {lab: float(p) for lab, p in zip(labels, probs)}
        return out

    def _timed_graphs(self) -> list[GraphBuilder]:
        """The most recently built graph; with control flow, every segment's graph (a node's times are per run of
        its segment: per iteration in a loop)."""
        graphs = list(self._graphs.values())
        return graphs if self.flow is not None else graphs[-1:]

    def timings(self) -> list[tuple[str, str, float, float]]:
        """(layer, kernel, average ms, minimum ms) of every node of the most recently built graph (with control
        flow, of every segment's graph), from the performance counters (runs of ``predict(..., bench=True)``)."""
        return [(layer, node.description.name, node.perf.avg / 1e6, node.perf.min / 1e6)
                for g in self._timed_graphs() for layer, nodes in g.nodes.items() for node in nodes]

    def reset_timings(self) -> None:
        for g in self._timed_graphs():
            for nodes in g.nodes.values():
                for node in nodes:
                    node.perf.reset()

    def close(self) -> None:
        """Release every graph and object made for the model."""
        with self._lock:
            for g in self._graphs.values():
                g.close()
            self._graphs.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _start_library() -> None:
    """Start libopenvx.so once per process, as the NNAPI front end does: its start-up installs the C loop that
    runs a graph whose every node has a native entry (``core/native_plan.py``) without Python between nodes."""
    if native_plan.hooks is None:
        vx.vxGetStatus(vx.ffi.NULL)


@dataclass
class _Layers:
    """The network's layers as the model runs them (recognized loops replaced), where ``control`` reads a
    network's."""

    layers: list


def _blob(tensor, shape):
    from .builder import Blob
    return Blob(tensor, tuple(int(d) for d in shape))
