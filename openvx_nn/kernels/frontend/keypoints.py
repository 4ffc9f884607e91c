"""The keypoint of each heatmap: its largest value refined by a quadratic (Taylor) fit over the 3 x 3 values
around it, mapped into its box (NNAPI's HEATMAP_MAX_KEYPOINT).

With ``g`` the 3 x 3 grid around the first largest value (row-major order; past an edge the grid mirrors, index -1
reading 1 and ``size`` reading ``size - 2``), the gradient ``b = -[(g[1,2] - g[1,0]) / 2, (g[2,1] - g[0,1]) / 2]`` and
the Hessian ``A`` of the central differences give the offset ``d = A^-1 b`` (zero when ``|det A|`` is below
``1e-5 + 1e-5 |A00 A11|``), scaled down to at most 1.5 in each direction; the score is
``g[1,1] - b.d + d.A.d / 2``, the keypoint ``box start + box size / size * (index + d + 0.5)``. Float64.
"""
from __future__ import annotations

import numpy as np

from ..support.jit import kernel

TOLERANCE = 1e-5


@kernel
def _mirror(i, size):
    return 1 if i < 0 else (size - 2 if i >= size else i)


@kernel
def _keypoints(heatmaps, boxes, scores, points):
    n_boxes, size, _, n_keypoints = heatmaps.shape
    grid = np.empty((3, 3))
    for r in range(n_boxes):
        scale_w = (boxes[r, 2] - boxes[r, 0]) / size
        scale_h = (boxes[r, 3] - boxes[r, 1]) / size
        for k in range(n_keypoints):
            best, at = heatmaps[r, 0, 0, k], 0
            for i in range(size * size):
                v = heatmaps[r, i // size, i % size, k]
                if v > best:
                    best, at = v, i
            row, col = at // size, at % size
            for dy in range(3):
                for dx in range(3):
                    grid[dy, dx] = heatmaps[r, _mirror(row + dy - 1, size), _mirror(col + dx - 1, size), k]
            b0, b1 = -(grid[1, 2] - grid[1, 0]) / 2.0, -(grid[2, 1] - grid[0, 1]) / 2.0
            a00 = grid[1, 0] - 2.0 * grid[1, 1] + grid[1, 2]
            a01 = (grid[2, 2] - grid[2, 0] - grid[0, 2] + grid[0, 0]) / 4.0
            a11 = grid[0, 1] - 2.0 * grid[1, 1] + grid[2, 1]
            det = a00 * a11 - a01 * a01
            d0 = d1 = 0.0
            if abs(det) >= TOLERANCE + abs(a00 * a11) * TOLERANCE:
                d0 = (a11 * b0 - a01 * b1) / det
                d1 = (a00 * b1 - a01 * b0) / det
                largest = max(abs(d0), abs(d1))
                if largest > 1.5:
                    d0, d1 = d0 * 1.5 / largest, d1 * 1.5 / largest
            scores[r, k] = (grid[1, 1] - b0 * d0 - b1 * d1
                            + ((a00 * d0 + a01 * d1) * d0 + (a01 * d0 + a11 * d1) * d1) / 2.0)
            points[r, k, 0] = boxes[r, 0] + scale_w * (col + d0 + 0.5)
            points[r, k, 1] = boxes[r, 1] + scale_h * (row + d1 + 0.5)


def max_keypoints(heatmaps: np.ndarray, boxes: np.ndarray, scores: np.ndarray, points: np.ndarray) -> None:
    """``scores[r, k]`` and ``points[r, k] = [x, y]`` of keypoint ``k`` of box ``r`` (heatmaps
    ``[boxes, size, size, keypoints]``, boxes ``[x1, y1, x2, y2]``; float64 outputs)."""
    _keypoints(np.ascontiguousarray(heatmaps, np.float64), np.ascontiguousarray(boxes, np.float64), scores, points)
