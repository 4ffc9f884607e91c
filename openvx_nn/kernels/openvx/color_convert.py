"""Color conversion between the interleaved 8-bit formats (RGB <-> RGBX).

Images arrive as ``(height, width, channels)`` uint8 arrays. RGB to RGBX copies the three color
channels and sets X to 255 (opaque, as the Khronos sample does); RGBX to RGB drops X. A copy is
all the arithmetic there is, so NumPy's vectorized assignment is the kernel.
"""
from __future__ import annotations

import numpy as np

OPAQUE = 255


def convert_channels(src: np.ndarray, dst: np.ndarray) -> None:
    """Write ``src`` (3 or 4 channels) into ``dst`` (4 or 3 channels) of the same height and width."""
    if src.shape[:2] != dst.shape[:2] or src.dtype != np.uint8 or dst.dtype != np.uint8:
        raise ValueError(f"color conversion needs uint8 images of one size, got {src.shape} {src.dtype} "
                         f"and {dst.shape} {dst.dtype}")
    channels = (src.shape[2], dst.shape[2])
    if channels == (3, 4):
        dst[:, :, :3] = src
        dst[:, :, 3] = OPAQUE
    elif channels == (4, 3):
        dst[...] = src[:, :, :3]
    else:
        raise ValueError(f"no color conversion from {channels[0]} to {channels[1]} channels")
