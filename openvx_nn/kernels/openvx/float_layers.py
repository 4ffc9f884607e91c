"""The float32 convolution and fully connected layers of OpenVX on the front ends' float engine.

The NNAPI and CoreML float32 layers run on ``frontend.float_convolution``: an implicit GEMM over weights packed
once, on the FMA micro-kernels of ``float_microkernel``, shared with the engine's helper threads, with a native
entry a C loop calls without the GIL. The standard layers enter the same engine through the thin adapters here;
no arithmetic of their own.

Layout. An OpenVX tensor ``[W, H, C, *batch]`` (W fastest) holds the bytes of the row-major ``[N, C, H, W]`` array
(``N`` every batch dim folded). The engine reads and writes ``[N, H, W, C]``: a convolution copies its input into
that layout (``chw_layout``, one pass) and its result back (one pass) around the engine's call, in scratch
arrays allocated once at binding -- except on a side whose tensor the graph's plan laid out channels-last
(``core/rewrites``: virtual tensors between the engine's layers), where the engine reads or writes the tensor's
own bytes. A padded undilated layer's copy writes into the interior of a buffer of zeros as wide as its padding
(:meth:`Convolution.edge_border`), which the engine reads in place as its padded input (one pass, not a copy then
the engine's padded copy). The plan may also fuse an activation into the layer: its clamp runs in the engine's
epilogue, and the layer writes the activation's output; or a residual add (and the activation after it): the
epilogue adds the skip tensor's channels-last bytes after the bias, before the clamp (``core/epilogue_fusion``).
A fully connected layer needs no copy: its ``[#IFM, B]`` input is the engine's ``[B, #IFM]`` rows, its ``[#OFM, B]``
output the engine's ``[B, #OFM]``.

Geometry. Output ``(ox, oy)`` of a convolution reads input columns ``ox * stride_x - pad_x + kx`` and rows
``oy * stride_y - pad_y + ky``, zeros outside the input; the output extent is the one the graph verified (both
down-scale roundings: windows past the padded input read zeros too). Padding zeros take part in the sums, as in
the front ends' layers and other frameworks: an infinite weight on padding makes the output NaN (0 * inf; the
exact float64 route skips such taps). A dilation ``d`` (the standard's count of zeros between taps) puts tap
``kx`` at column ``ox * stride_x - pad_x + kx * (d + 1)``: the engine's dilation ``d + 1``. Taps shifted by an
origin (the sample implementation's convention) and biases per output location are not the engine's (they stay
on ``engine.correlation``'s route: :func:`convolution_fits`). A dilated layer skips the taps that read only padding
for a whole tile of outputs (``float_convolution.skipped_padding``): there an infinite weight over the padding
does not make the output NaN.

One input map. A convolution of one input map (a grayscale input's first layer, or the single-map convolutions
that express a depthwise layer in the standard, which has no groups) is a depthwise convolution: with a window
of 9 taps (3x3) or fewer than 3 it runs on the plane kernel ``frontend.chw_depthwise`` directly on OpenVX's
planar layout, no copies, vectorized along the rows instead of over output maps (the engine's lanes would hold
one map). That kernel, in its ``bias_last`` order, sums exactly as the engine does here (taps from +0.0 in the
order ``ky``, ``kx``, then the bias once), so the route changes no bit of the output (:data:`ONE_MAP_PLANES`
turns it off, for the tests that check so); other windows stay on the engine. A depthwise layer written map by
map (``core/map_groups``) whose input and output the plan laid out channels-last runs as one layer on the NHWC
depthwise kernel ``frontend.float_depthwise`` in its ``bias_last`` order (the same sums: taps inside the image from
+0.0 in the order ``ky``, ``kx``, then the bias; the padding's zero taps change nothing while the weights are
finite), or, where that kernel cannot take it (channels not whole vectors, a weight infinite or NaN, one side
planar), on the plane kernel between conversions (:meth:`Convolution.bind_maps`).

Route. Chosen once per layer when its graph is verified (``operations/openvx``): the float32 layers that fit come
here unless ``$OPENVX_NN_F32_SUMS`` is ``float64`` (:func:`chosen`), which keeps every float32 layer on
``engine.correlation``'s exact float64 sums (slower, for applications that need those bits). Integer formats never
come here.

Arithmetic. float32 products summed in float32 with fused multiply-adds, per output in the order filter row
``ky`` (outer), then ``kx``, then input channel ``c`` (inner), from +0.0; then ``+ bias`` once (no bias: nothing
added). The result is within ``K * 2**-24`` of the sum of the ``K`` products' magnitudes (plus ``|bias|``) of the
exact value -- a float32 sum, not the float64 one of ``engine.correlation``; the tests check 1e-5 of that sum. The
order and so the bits are the same on every path (Python, native, shared with helpers or not, any batch).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ..frontend import chw_depthwise, chw_layout, float_depthwise
from ..frontend import float_convolution as engine
from ..support import native

NO_ACTIVATION = 0
"""The engine's fused activation: none (NNAPI's FUSED_NONE)."""
NO_CLAMP = (-np.inf, np.inf)
"""The (low, high) of a layer with no activation fused into it."""
ONE_MAP_PLANES = True
"""Whether convolutions of one input map with a window of 9 taps or fewer than 3 run on the plane kernel (module
doc); read when a layer is planned. Off only to check that the route leaves the output's bytes unchanged."""
PLANE_TAPS = (1, 2, 9)
"""Window sizes (taps) for which ``chw_depthwise``'s ``bias_last`` sums follow the engine's order bit for bit."""
SUMS_ENV = "OPENVX_NN_F32_SUMS"
"""``float64`` keeps the float32 layers on ``engine.correlation``'s float64 sums (exact products summed in float64
in tap order, rounded once); anything else (the default) routes the layers that fit to the float engine's float32
sums (module doc)."""


def chosen() -> bool:
    """Whether float32 layers that fit take the float engine (``$OPENVX_NN_F32_SUMS``, read when a layer is
    planned)."""
    return os.environ.get(SUMS_ENV, "").strip().lower() != "float64"


def _all_float32(*arrays) -> bool:
    return all(a is None or a.dtype == np.float32 for a in arrays)


def convolution_fits(x: np.ndarray | tuple, w: np.ndarray, bias_shape: tuple | None, out_shape: tuple,
                     dilation: tuple[int, int], origin: tuple[int, int], dtype: np.dtype) -> bool:
    """Whether a convolution layer takes the float engine: float32, chosen (:func:`chosen`), taps not shifted
    by an origin (any dilation), a bias per output map or none, and something to compute."""
    x_shape = tuple(x if isinstance(x, tuple) else x.shape)
    return (np.dtype(dtype) == np.float32 and chosen() and min(dilation) >= 0 and tuple(origin) == (0, 0)
            and (bias_shape is None or tuple(bias_shape) == (w.shape[3],)) and 3 <= len(x_shape) <= 6
            and int(np.prod(x_shape)) > 0 and int(np.prod(out_shape)) > 0)


def _items(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """``[W, H, C, *batch]`` as ``(N, C, H, W)``."""
    return int(np.prod(shape[3:], dtype=np.int64)), shape[2], shape[1], shape[0]


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view (the plane kernel is compiled for read-only inputs)."""
    view = a.view()
    view.flags.writeable = False
    return view


def pixels(a: np.ndarray) -> np.ndarray:
    """The ``[N, H, W, C]`` view of the bytes of an OpenVX-order array ``a`` ``[W, H, C, *batch]`` that the plan
    laid out channels-last (a whole virtual tensor: contiguous)."""
    if not a.T.flags.c_contiguous:
        raise ValueError("a channels-last tensor must be whole and contiguous")
    n, c, h, w = _items(a.shape)
    return a.T.reshape(-1).reshape(n, h, w, c)


def _nchw(a: np.ndarray) -> np.ndarray | None:
    """The C-contiguous ``[N, C, H, W]`` view of OpenVX-order ``a``, or None when its memory is not so."""
    t = a.T
    return t.reshape(_items(a.shape)) if t.flags.c_contiguous else None


class Convolution:
    """A float32 convolution layer planned on the engine: the weights ``[kx, ky, C, K]`` packed once
    (``float_convolution.pack_conv``), the padding, stride and dilation (the standard's: zeros between taps)
    fixed; :meth:`bind` and :meth:`native` tie it to the layer's arrays."""

    def __init__(self, w: np.ndarray, pad: tuple[int, int], stride: tuple[int, int],
                 dilation: tuple[int, int] = (0, 0)):
        self.maps = w.shape[3]
        self.kernel = (w.shape[1], w.shape[0])  # (kh, kw)
        self.packed = engine.pack_conv(np.transpose(w, (3, 1, 0, 2)))  # [K, ky, kx, C]
        self.pads = (int(pad[0]), int(pad[0]), int(pad[1]), int(pad[1]))  # (left, right, top, bottom)
        self.strides = (int(stride[0]), int(stride[1]))  # (width, height)
        self.dilations = (int(dilation[0]) + 1, int(dilation[1]) + 1)  # (width, height), the engine's: 1 adjacent
        self.planes = None  # one input map: [K, ky * kx] weights for chw_depthwise (module doc)
        if ONE_MAP_PLANES and w.shape[2] == 1 and w.shape[0] * w.shape[1] in PLANE_TAPS and \
                self.dilations == (1, 1):
            self.planes = _readonly(np.ascontiguousarray(w.T.reshape(self.maps, w.shape[1] * w.shape[0]),
                                                         np.float32))
            self.geometry = (w.shape[1], w.shape[0], self.strides[1], self.strides[0], 1, 1, self.pads[2],
                             self.pads[0])  # (kh, kw, sy, sx, dy, dx, top, left)

    def _plane_args(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, out_last: bool,
                    clamp: tuple[float, float]) -> tuple | None:
        """``chw_depthwise``'s arguments on the layer's own arrays, or None when this layer is not on the plane
        route, its output is channels-last, or an array is strided or overlaps the output."""
        if self.planes is None or out_last:
            return None
        x4, out4 = _nchw(x), _nchw(out)
        if x4 is None or out4 is None or np.may_share_memory(x, out) or (
                bias is not None and (bias.dtype != np.float32 or not bias.flags.c_contiguous)):
            return None
        b = _readonly(np.zeros(self.maps, np.float32) if bias is None else bias.reshape(self.maps))
        return _readonly(x4), self.planes, b, out4, None, self.geometry, clamp, bias is not None

    def on_planes(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> bool:
        """Whether the layer runs on the plane kernel with these arrays, in OpenVX order (module doc)."""
        return self._plane_args(x, bias, out, False, NO_CLAMP) is not None

    def edge_border(self, x: np.ndarray, out: np.ndarray, layouts: tuple[bool, bool], borders=(0, 0, 0)) -> int:
        """Pixels of zeros around the channels-last copy of a planar input: the layer's padding (every window
        inside), so that the copy writes the engine's padded input in one pass (``float_convolution``'s bordered
        input, read in place); 0 for an unpadded or dilated layer, a channels-last or strided input, or with
        ``chw_layout.blocks`` off."""
        if layouts[0] or borders[0] or self.dilations != (1, 1) or _nchw(x) is None or not chw_layout.blocks():
            return 0
        _, _, h, w = _items(x.shape)
        _, _, oh, ow = _items(out.shape)
        left, _, top, _ = self.pads
        below = (oh - 1) * self.strides[1] + self.kernel[0] - top - h
        right = (ow - 1) * self.strides[0] + self.kernel[1] - left - w
        return max(left, top, below, right, 0)

    def _sides(self, x: np.ndarray, out: np.ndarray, layouts: tuple[bool, bool], borders=(0, 0, 0), edge=0):
        """(input, output) as the engine reads and writes them, ``[N, H, W, C]``: a channels-last tensor's own
        bytes viewed, else a scratch array (allocated once) that a copy fills or empties around each call (inside
        ``edge`` pixels of zeros: :meth:`edge_border`); a side with a border (``borders``) is given as its
        zero-bordered ``[N, H, W, C]`` buffer already."""
        if borders[0]:
            xn = x
        else:
            n, c, h, w = _items(x.shape)
            xn = pixels(x) if layouts[0] else np.zeros((n, h + 2 * edge, w + 2 * edge, c), np.float32) if edge \
                else np.empty((n, h, w, c), np.float32)
        if borders[1]:
            return xn, out
        _, k, oh, ow = _items(out.shape)
        yn = pixels(out) if layouts[1] else np.empty((n if not borders[0] else x.shape[0], oh, ow, k), np.float32)
        return xn, yn

    def bind(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
             layouts: tuple[bool, bool] = (False, False), clamp: tuple[float, float] | None = None,
             residual: np.ndarray | None = None, borders: tuple[int, int, int] = (0, 0, 0)) -> Callable[[], None]:
        """A no-argument call computing ``out`` from ``x`` and ``bias`` (read at each call); ``layouts`` says
        whether the input and the output hold their bytes channels-last (else OpenVX order), ``clamp`` is the
        (low, high) of an activation fused into the layer, ``residual`` a tensor of the output's shape holding
        its bytes channels-last, added after the bias and before the clamp (a residual add fused into the layer;
        the output channels-last too). ``borders`` (input, output, residual): a channels-last side the plan holds
        in a zero-bordered buffer (``core/bordered_tensors``), given as that ``[N, H + 2b, W + 2b, C]`` buffer."""
        clamp = NO_CLAMP if clamp is None else tuple(clamp)
        skip = _residual(residual, layouts, borders[2])
        planes = None if skip is not None or any(borders) else self._plane_args(x, bias, out, layouts[1], clamp)
        if planes is not None:
            return chw_depthwise.bind(*planes)
        edge = self.edge_border(x, out, layouts, borders)
        xn, yn = self._sides(x, out, layouts, borders, edge)
        conv = engine.bind_conv2d(xn, self.packed, engine.bias_or_zeros(bias, self.maps), yn, self.pads,
                                  self.strides, clamp, skip, dilations=self.dilations,
                                  borders=(edge or borders[0], *borders[1:]))
        x4 = None if layouts[0] or borders[0] else _nchw(x)
        out4 = None if layouts[1] or borders[1] else _nchw(out)
        into = chw_layout.bind(True, x4, xn, edge) if x4 is not None else None
        back = chw_layout.bind(False, yn, out4) if out4 is not None else None
        n, c, h, w = _items(x.shape) if not borders[0] else (0, 0, 0, 0)

        def call() -> None:
            if into is not None:
                into()
            elif not layouts[0]:
                xn[...] = x.T.reshape(n, c, h, w).transpose(0, 2, 3, 1)
            conv()
            if back is not None:
                back()
            elif not layouts[1]:
                out.T[...] = yn.transpose(0, 3, 1, 2).reshape(out.T.shape)
        return call

    def native(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
               layouts: tuple[bool, bool] = (False, False), clamp: tuple[float, float] | None = None,
               residual: np.ndarray | None = None, borders: tuple[int, int, int] = (0, 0, 0)) -> native.Entry | None:
        """:meth:`bind` as one native entry (copy in, the engine's layer, copy back, each where the side is in
        OpenVX order; each shared with the helpers where large enough); None when ``x`` or ``out`` is a strided
        view (the Python path copies those)."""
        clamp = NO_CLAMP if clamp is None else tuple(clamp)
        skip = _residual(residual, layouts, borders[2])
        planes = None if skip is not None or any(borders) else self._plane_args(x, bias, out, layouts[1], clamp)
        if planes is not None:
            return chw_depthwise.native_bind(*planes)
        x4 = x if borders[0] else _nchw(x)
        out4 = out if borders[1] else _nchw(out)
        if x4 is None or out4 is None or np.may_share_memory(x, out):
            return None
        edge = self.edge_border(x, out, layouts, borders)
        xn, yn = self._sides(x, out, layouts, borders, edge)
        parts = [None if layouts[0] else chw_layout.native_layout(True, x4, xn, edge),
                 engine.native_conv2d(xn, self.packed, engine.bias_or_zeros(bias, self.maps), yn, self.pads,
                                      self.strides, clamp, skip, dilations=self.dilations,
                                      borders=(edge or borders[0], *borders[1:])),
                 None if layouts[1] else chw_layout.native_layout(False, yn, out4)]
        if parts[1] is None or (parts[0] is None) != layouts[0] or (parts[2] is None) != layouts[1]:
            return None
        parts = [p for p in parts if p is not None]
        whole = native.sequence(parts)
        # the parts' own keep (their gang tasks among it) at the top, where the plan looks for lending layers
        return native.Entry(whole.address, whole.block, whole.keep + tuple(k for p in parts for k in p.keep))


    def channels_last_maps(self) -> bool:
        """Whether this layer of one input map per output map (a depthwise layer) runs on the NHWC depthwise
        kernel when both its sides are channels-last (module doc)."""
        return (self.planes is not None and float_depthwise.bias_last_fits(self.maps, 1)
                and bool(np.isfinite(self.planes).all()))

    def bind_maps(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, layouts: tuple[bool, bool],
                  clamp: tuple[float, float] | None = None) -> tuple[Callable[[], None], native.Entry | None, bool]:
        """(call, native entry, whether on the NHWC kernel) of a layer of one input map per output map (output
        map c from input map c: a depthwise layer written map by map) with a side channels-last (module doc);
        the bias is added even when None (as +0.0, the plane kernel's ``bias_last``)."""
        clamp = NO_CLAMP if clamp is None else tuple(clamp)
        b = np.zeros(self.maps, np.float32) if bias is None else np.ascontiguousarray(bias, np.float32).reshape(-1)
        if all(layouts) and self.channels_last_maps():
            wp = np.ascontiguousarray(self.planes.T.reshape(*self.kernel, self.maps))
            args = (pixels(x), wp, b, pixels(out), self.pads, self.strides, 1, NO_ACTIVATION)
            return (float_depthwise.bind_depthwise_conv2d(*args, clamp=clamp, bias_last=True),
                    float_depthwise.native_depthwise_conv2d(*args, clamp=clamp, bias_last=True), True)
        before, after = [], []  # (channels-last, planes) of the converted sides
        sides = []
        for last, a, into in ((layouts[0], x, before), (layouts[1], out, after)):
            if not last:
                sides.append(a)
                continue
            stand_in = np.zeros(a.shape, np.float32, order="F")
            into.append((pixels(a), _nchw(stand_in)))
            sides.append(stand_in)
        plane_args = self._plane_args(sides[0], bias, sides[1], False, clamp)
        call, entry = chw_depthwise.bind(*plane_args), chw_depthwise.native_bind(*plane_args)
        ins = [chw_layout.bind(False, nhwc, planes) for nhwc, planes in before]
        outs = [chw_layout.bind(True, planes, nhwc) for nhwc, planes in after]

        def run() -> None:
            for part in ins:
                part()
            call()
            for part in outs:
                part()
        parts = ([chw_layout.native_layout(False, nhwc, planes) for nhwc, planes in before] + [entry]
                 + [chw_layout.native_layout(True, planes, nhwc) for nhwc, planes in after])
        if any(part is None for part in parts):
            return run, None, False
        whole = native.sequence(parts)
        keep = whole.keep + tuple(k for p in parts for k in p.keep)
        return run, native.Entry(whole.address, whole.block, keep), False


def _residual(residual: np.ndarray | None, layouts: tuple[bool, bool], border: int = 0) -> np.ndarray | None:
    """The ``[N, H, W, C]`` view of a residual fused into a layer whose output is channels-last (a bordered one's
    buffer as given), or None."""
    if residual is None:
        return None
    if not layouts[1]:
        raise ValueError("a residual is added only to a channels-last output")
    return residual if border else pixels(residual)


class FullyConnected:
    """A float32 fully connected layer planned on the engine: weights ``[#IFM, #OFM]`` packed once
    (``float_convolution.pack_fc``, the one-row tiles for a batch of one)."""

    def __init__(self, w: np.ndarray, batch: int):
        self.maps = w.shape[1]
        self.packed = engine.pack_fc(w.T, rows=batch)

    def bind(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray, layouts: tuple[bool, bool] = (False, False),
             clamp: None = None) -> Callable[[], None]:
        """A call computing ``out [#OFM, B]`` from ``x [#IFM, B]`` (read at each call; the plan gives a fully
        connected layer no channels-last tensors and no fused activation)."""
        return engine.bind_fully_connected(x.T, self.packed, engine.bias_or_zeros(bias, self.maps), out.T,
                                           NO_ACTIVATION)

    def native(self, x: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
               layouts: tuple[bool, bool] = (False, False), clamp: None = None) -> native.Entry | None:
        """:meth:`bind` as a native entry; None unless ``x.T`` and ``out.T`` are C-contiguous and apart."""
        if np.may_share_memory(x, out):
            return None
        return engine.native_fully_connected(x.T, self.packed, engine.bias_or_zeros(bias, self.maps), out.T,
                                             NO_ACTIVATION)


def fully_connected_fits(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> bool:
    """Whether a fully connected layer takes the float engine: float32 throughout, chosen, not empty."""
    return _all_float32(x, w, bias, out) and chosen() and x.size > 0 and out.size > 0 and w.size > 0
