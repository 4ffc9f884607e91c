"""CoreML's NonMaximumSuppression layer as one kernel (``kernels/frontend/suppression.py``): boxes ``[B, N, 4]``
and scores ``[B, N, C]`` in, the kept boxes, their scores and indices (each padded to the declared ``M`` rows) and
their number per batch item out."""
from __future__ import annotations

import math

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.suppression import suppress
from .common import F32, INT32, declared_output, describe, float_input, output, scalar, tensor


def _validate(v: Validation) -> None:
    boxes, scores = float_input(v, 0), float_input(v, 1)
    b, n = tuple(reversed(boxes.dims))[:2] if boxes.rank == 3 else (0, 0)
    v.require(boxes.rank == 3 and boxes.dims[0] == 4, 0, Status.VX_ERROR_INVALID_DIMENSION,
              f"boxes must be [B, N, 4], got {list(reversed(boxes.dims))}")
    v.require(scores.rank == 3 and scores.dims[1:] == (n, b), 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"scores must be [{b}, {n}, C], got {list(reversed(scores.dims))}")
    for index in (2, 3):
        value = v.scalar(index)
        v.require(math.isfinite(value), index, Status.VX_ERROR_INVALID_VALUE, f"threshold {value} is not finite")
    kept = declared_output(v, 7)
    v.require(len(kept) == 2 and kept[1] == b and kept[0] >= 1, 7, Status.VX_ERROR_INVALID_DIMENSION,
              f"indices must be [{b}, M], M at least 1, got {list(reversed(kept))}")
    m = kept[0]
    for index, dims in ((5, (4, m, b)), (6, (scores.dims[0], m, b)), (8, (b,))):
        got = declared_output(v, index)
        v.require(got == dims, index, Status.VX_ERROR_INVALID_DIMENSION,
                  f"output must be {list(reversed(dims))}, got {list(reversed(got))}")


def _run(p, state) -> None:
    suppress(p[0].array.T, p[1].array.T, p[5].array.T, p[6].array.T, p[7].array.T, p[8].array, p[2].value,
             p[3].value, bool(p[4].value))


describe(92, "non_max_suppression", (tensor("boxes"), tensor("scores"), scalar("iou_threshold", F32),
                                     scalar("score_threshold", F32), scalar("per_class", INT32), output("boxes"),
                                     output("scores"), output("indices"), output("count")), _validate, _run)
