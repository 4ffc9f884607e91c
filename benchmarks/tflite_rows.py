"""The ``.tflite`` rows of ``bench_models.py``: MediaPipe's own models (``tools/fetch_mediapipe_models.py`` puts
them in a cache folder) through ``openvx_nn.nnapi.tflite`` -- mapped onto NNAPI as TFLite's NNAPI delegate maps
them -- against LiteRT with its defaults (XNNPACK) and 2 threads.  A row whose file is absent is skipped with a
message; a model the mapping refuses is reported as not run, with the operator that stops it.

Also, as a script:

- ``tflite_rows.py memory [KEY ...]``: what a model costs beyond the library's import, each side in a new
  process: peak RSS over 200 runs minus the RSS right after importing ``openvx_nn.nnapi`` (ours) or
  ``ai_edge_litert.interpreter`` (LiteRT);
- ``tflite_rows.py profile KEY``: where our time goes, node by node (each compiled node's native entry run
  alone, medians), summed by kind.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODELS = {
    "mediapipe-face-detection": ("face_detection_short_range.tflite", "face detection (short range)"),
    "mediapipe-face-landmark": ("face_landmark.tflite", "face landmark"),
    "mediapipe-iris-landmark": ("iris_landmark.tflite", "iris landmark"),
    "mediapipe-hand-landmark-lite": ("hand_landmark_lite.tflite", "hand landmark lite"),
    "mediapipe-hand-landmark-full": ("hand_landmark_full.tflite", "hand landmark full"),
    "mediapipe-hand-recrop": ("hand_recrop.tflite", "hand recrop"),
    "mediapipe-palm-detection-lite": ("palm_detection_lite.tflite", "palm detection lite"),
    "mediapipe-palm-detection-full": ("palm_detection_full.tflite", "palm detection full"),
    "mediapipe-pose-detection": ("pose_detection.tflite", "pose detection"),
    "mediapipe-pose-landmark-full": ("pose_landmark_full.tflite", "pose landmark full"),
    "mediapipe-face-detection-full-range": ("face_detection_full_range_sparse.tflite", "face detection (full range)"),
    "mediapipe-face-landmark-attention": ("face_landmark_with_attention.tflite", "face landmark with attention"),
    "mediapipe-selfie-segmentation": ("selfie_segmentation.tflite", "selfie segmentation"),
}
"""Row key -> (file in the models folder, title)."""


class Refused(Exception):
    """The mapping refuses the row's model (an operator NNAPI 1.2 cannot express): the row is reported, not run."""


def models_folder() -> Path:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from fetch_mediapipe_models import models_folder as folder
    finally:
        sys.path.pop(0)
    return folder()


def model_path(key: str) -> Path:
    return models_folder() / MODELS[key][0]


def macs(path: Path) -> int:
    """Multiply-adds of the model's convolutions and fully connected layers (from the file's shapes)."""
    from ai_edge_litert import schema_py_generated as s
    model = s.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    graph, total = model.subgraphs[0], 0
    for op in graph.operators:
        code = model.operatorCodes[op.opcodeIndex]
        number = max(code.builtinCode, code.deprecatedBuiltinCode)
        shapes = [graph.tensors[k].shape for k in op.inputs[:2]] + [graph.tensors[op.outputs[0]].shape]
        if number == s.BuiltinOperator.CONV_2D:
            total += int(np.prod(shapes[2])) * int(np.prod(shapes[1][1:]))
        elif number == s.BuiltinOperator.DEPTHWISE_CONV_2D:
            total += int(np.prod(shapes[2])) * int(shapes[1][1] * shapes[1][2])
        elif number == s.BuiltinOperator.FULLY_CONNECTED:
            total += int(np.prod(shapes[1])) * int(np.prod(shapes[2])) // int(shapes[1][0])
    return total


def sample_inputs(path: Path, count: int) -> list[list[np.ndarray]]:
    """``count`` sets of inputs: float32 in [-1, 1] (MediaPipe's image range), of the file's input shapes."""
    from ai_edge_litert import schema_py_generated as s
    model = s.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    graph = model.subgraphs[0]
    rng = np.random.default_rng(7)
    return [[rng.uniform(-1, 1, graph.tensors[k].shape).astype(np.float32) for k in graph.inputs]
            for _ in range(count)]


def flat(outputs) -> np.ndarray:
    """Every output of one run, raveled into one array (the rows compare one array per run)."""
    return np.concatenate([np.asarray(o, np.float64).ravel() for o in outputs])


def litert_runner(path: Path, threads: int | None = None) -> Callable:
    """LiteRT with its defaults (XNNPACK) on ``path``: a callable of the inputs returning the flat outputs."""
    from ai_edge_litert.interpreter import Interpreter

    from benchmarks import models
    interpreter = Interpreter(model_path=str(path), num_threads=models.THREADS if threads is None else threads)
    interpreter.allocate_tensors()
    ins = [d["index"] for d in interpreter.get_input_details()]
    outs = [d["index"] for d in interpreter.get_output_details()]

    def run(inputs: list[np.ndarray]) -> np.ndarray:
        for k, x in zip(ins, inputs):
            interpreter.set_tensor(k, x)
        interpreter.invoke()
        return flat(interpreter.get_tensor(k) for k in outs)
    return run


def rows(base: type) -> dict[str, Callable]:
    """The row factories, their class derived from ``model_rows.Row`` (passed in, so this module does not
    import ``model_rows``, which imports it): ``(smoke, width) -> row``, or a string saying why it is skipped."""

    class MediaPipeModel(base):
        """One MediaPipe ``.tflite`` model: ours through ``openvx_nn.nnapi.tflite``, LiteRT with XNNPACK."""

        def __init__(self, key: str, smoke: bool):
            self.path = model_path(key)
            self.name = f"MediaPipe {MODELS[key][1]} (.tflite)"
            self.macs = macs(self.path)
            self.inputs = sample_inputs(self.path, 2 if smoke else 4)
            self.front_end = "openvx_nn.nnapi"
            self.runners: list = []

        def load_ours(self):
            from openvx_nn.nnapi import tflite
            self.phases, start = {}, time.perf_counter()
            try:
                loaded = tflite.load(self.path)
            except tflite.Unsupported as err:
                raise Refused(str(err)) from None
            start = self._phase("map", start)
            runner = loaded.compile()
            self._phase("Compilation.finish", start)
            self.runners.append(runner)
            return lambda x=self.inputs[0]: flat(runner(*x))

        def load_litert(self):
            run = litert_runner(self.path)
            return lambda x=self.inputs[0]: run(x)

        def others(self) -> dict[str, Callable[[], Callable]]:
            return {"LiteRT": self.load_litert}

        def close(self) -> None:
            for runner in self.runners:
                runner.release()
            self.runners.clear()

    def factory(key: str) -> Callable:
        def make(smoke: bool, width: float):
            if not model_path(key).exists():
                return (f"{model_path(key)} is absent: python tools/fetch_mediapipe_models.py fetches MediaPipe's "
                        "models")
            try:
                import ai_edge_litert  # noqa: F401
            except ImportError:
                return "ai-edge-litert is not installed (the litert extra): it reads the file and is the baseline"
            return MediaPipeModel(key, smoke)
        return make

    return {key: factory(key) for key in MODELS}


# -- memory -------------------------------------------------------------------------------------------------------
def rss_mib() -> float:
    """This process's resident set now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_rss(side: str, path: Path, inputs: Path, runs: int = 200) -> dict:
    """In this (new) process: RSS after the side's import, and peak RSS after loading ``path`` and ``runs``
    runs (MiB). The inputs come from the ``.npz`` file ``inputs`` (made by the parent from the model file's
    shapes: reading those here would load LiteRT's schema module into our side's process)."""
    if side == "ours":
        import openvx_nn.nnapi  # noqa: F401
    else:
        import ai_edge_litert.interpreter  # noqa: F401
    after_import = rss_mib()
    with np.load(inputs) as saved:
        x = [saved[f"arr_{k}"] for k in range(len(saved.files))]
    if side == "ours":
        from openvx_nn.nnapi import tflite
        run = tflite.load(path).compile()
        for _ in range(runs):
            run(*x)
    else:
        run = litert_runner(path)
        for _ in range(runs):
            run(x)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"import": after_import, "peak": peak}


def memory_table(keys: list[str]) -> None:
    print(f"memory beyond the import (MiB): peak RSS over 200 runs - RSS after the import, new process per side; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| model | ours: peak - import | LiteRT: peak - import | ours / LiteRT |")
    print("|---|---:|---:|---:|")
    for key in keys:
        path = model_path(key)
        if not path.exists():
            print(f"| {MODELS[key][1]} | skipped: {path} is absent | | |")
            continue
        figures = {}
        with tempfile.TemporaryDirectory() as folder:
            inputs = Path(folder) / "inputs.npz"
            np.savez(inputs, *sample_inputs(path, 1)[0])
            for side in ("ours", "litert"):
                done = subprocess.run([sys.executable, __file__, "rss", side, str(path), str(inputs)],
                                      capture_output=True, text=True, check=False, timeout=3000)
                if done.returncode != 0:
                    figures[side] = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
                else:
                    figures[side] = json.loads(done.stdout.strip().splitlines()[-1])
        if any(isinstance(f, str) for f in figures.values()):
            print(f"| {MODELS[key][1]} | {figures['ours']} | {figures['litert']} | |", flush=True)
            continue
        ours, theirs = (figures[s]["peak"] - figures[s]["import"] for s in ("ours", "litert"))
        print(f"| {MODELS[key][1]} | {figures['ours']['peak']:.0f} - {figures['ours']['import']:.0f} = {ours:.0f} "
              f"| {figures['litert']['peak']:.0f} - {figures['litert']['import']:.0f} = {theirs:.0f} "
              f"| {ours / theirs:.2f} |", flush=True)


# -- profile ------------------------------------------------------------------------------------------------------
def profile(key: str, repeat: int = 200) -> None:
    """Each compiled node of the row's graph run alone (its native entry, helpers summoned first), medians;
    then the sums by kind."""
    from benchmarks.profile_nnapi import _median_us
    from openvx_nn.kernels.support import native
    from openvx_nn.nnapi import tflite
    from openvx_nn.operations.nnapi.common import summon_helpers

    def median_us(call) -> float:
        return _median_us(call, repeat)

    path = model_path(key)
    run = tflite.load(path).compile()
    x = sample_inputs(path, 1)[0]
    run(*x)
    graph = run.compilation.prepared.lowered.graph
    whole = median_us(lambda: run(*x))
    print(f"{MODELS[key][1]}: whole run {whole:.0f} us, {len(graph.plan.calls)} compiled nodes "
          f"(native plan: {graph.plan.native is not None})")
    kinds: dict[str, list[float]] = defaultdict(list)
    for call in graph.plan.calls:
        name = call.node.description.name.rsplit(".", 1)[-1]
        if call.native is None:
            kinds[name + " (no native entry)"].append(0.0)
            continue

        def node(entry=call.native) -> None:
            summon_helpers()
            native.run(entry)
        took = median_us(node)
        dims = [tuple(reversed(p.dims)) for p in call.node.params if hasattr(p, "dims")]
        print(f"  {name:28s} {took:8.1f} us  {dims[0] if dims else ''} -> {dims[-1] if dims else ''}")
        kinds[name].append(took)
    print("by kind (count, us):")
    for name, times in sorted(kinds.items(), key=lambda item: -sum(item[1])):
        print(f"  {name:28s} {len(times):4d} {sum(times):9.1f}")
    print(f"  sum of nodes {sum(sum(t) for t in kinds.values()):.0f} us")


def main(argv: list[str]) -> int:
    if argv[:1] == ["rss"]:
        print(json.dumps(measure_rss(argv[1], Path(argv[2]), Path(argv[3]))))
    elif argv[:1] == ["memory"]:
        memory_table([k for k in argv[1:]] or list(MODELS))
    elif argv[:1] == ["profile"] and len(argv) == 2:
        profile(argv[1])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
