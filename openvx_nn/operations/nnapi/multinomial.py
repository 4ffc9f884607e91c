"""NNAPI 1.2's RANDOM_MULTINOMIAL as an OpenVX kernel: draws of each row's softmax distribution from the
documented stream of ``kernels/frontend/sampling`` (CoreML's categorical layer runs the same function).

The two INT32 seeds make one 64-bit seed, ``(seed0 mod 2**32) * 2**32 + (seed1 mod 2**32)``: the same seeds give
the same samples, on every run and machine.
"""
from __future__ import annotations

import numpy as np

from ...kernels.frontend import sampling
from .common import F32, I32, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

F16 = np.dtype(np.float16)


def seed(seeds: np.ndarray) -> int:
    """The stream's seed of the two INT32 seeds."""
    first, second = (int(v) % 2**32 for v in np.asarray(seeds).reshape(-1)[:2])
    return first * 2**32 + second


def _infer(args: Args):
    batches, _ = rank_in(args, "input", (2,))
    dtype_in(args, "input", (F16, F32))
    require(tuple(args["seeds"].shape) == (2,), "seeds", f"seeds has shape {list(args['seeds'].shape)}, expected [2]")
    dtype_in(args, "seeds", (I32,))
    samples = int(args["samples"])
    require(samples >= 1, "samples", f"{samples} samples; at least 1 is needed")
    return {"output": ((batches, samples), I32)}


def _run(args: Args) -> None:
    """out[b, s] = the class draw ``s`` of row ``b`` picks, the row's logits' softmax its distribution."""
    sampling.categorical(args["input"], args["output"], True, 0.0, 1.0, seed(args["seeds"]))


nnapi_kernel(NNAPIKernel("random_multinomial", 74, ("input", "seeds"), ("output",), _infer, _run,
                         ints=("samples",)))
