"""Kernel descriptions: everything about a kernel, written once.

A ``KernelDescription`` holds the standard name and enum, the ordered
parameter signature, the validator (checks inputs and infers outputs at verify
time) and the executor (runs the numeric kernel).  Typed node constructors,
generic nodes, ``vxu`` calls and the Python API are all built from it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from .enums import Direction, ParameterState, Type

IN = Direction.VX_INPUT
OUT = Direction.VX_OUTPUT


@dataclass(frozen=True)
class ParamSpec:
    """One kernel parameter.

    ``vx_type`` is the object type (VX_TYPE_TENSOR, VX_TYPE_SCALAR, VX_TYPE_LUT);
    for scalars ``scalar_type`` is the data type the value must have (an enum
    or size passed to a typed constructor becomes a scalar of that type).
    ``static`` marks the seed's [static] parameters: read at verify.
    """

    name: str
    direction: int
    vx_type: int
    optional: bool = False
    scalar_type: int = Type.VX_TYPE_INVALID
    static: bool = False

    @property
    def state(self) -> int:
        return (ParameterState.VX_PARAMETER_STATE_OPTIONAL if self.optional
                else ParameterState.VX_PARAMETER_STATE_REQUIRED)


@dataclass(frozen=True)
class KernelDescription:
    name: str
    enum: int
    library: int
    params: tuple[ParamSpec, ...]
    validate: Callable[..., None]  # (validation.Validation) -> None
    execute: Callable[[list, dict], None]  # (parameter objects, state the validator derived)
    # For each C argument of the typed constructor, the kernel parameter it sets
    # (None: identity order).  vxTensorTransposeNode(graph, in, out, d1, d2)
    # feeds parameters (0, 3, 1, 2).
    constructor_order: tuple[int, ...] | None = None
    doc: str = field(default="", compare=False)
    # Optional: (parameter objects, state) -> a no-argument runner with everything
    # a call needs already resolved (arrays, compiled kernels, tables).  Called
    # after verification and again whenever some tensor's storage changes; it
    # must read per call whatever the application may change between runs
    # (non-[static] scalars).  Without it, each run calls ``execute``.
    bind: Callable[[list, dict], Callable[[], None]] | None = field(default=None, compare=False)
    # Optional: (parameter objects, state) -> the call as a native entry (``kernels.support.native.Entry``:
    # a C function's address, its packed argument block, what both point into), or None when this node
    # cannot run natively.  Bound beside ``bind`` and under the same rule; whatever the application may
    # change between runs is either read through the block's pointers or guarded (``core/cells.py``).
    native: Callable[[list, dict], object] | None = field(default=None, compare=False)
    # Optional, for the plan's rewrites at verify (``core/rewrites.py``): (parameter objects, state) ->
    # {tensor parameter index: ``rewrites.TAKES_CHANNELS_LAST`` or ``rewrites.ANY_SAME``} (a parameter left
    # out takes OpenVX's planar order only).
    layouts: Callable[[list, dict], dict[int, str]] | None = field(default=None, compare=False)
    # Optional: (parameter objects, state) -> the (low, high) clamp this node computes, if it is one (an
    # activation another node's epilogue can do), else None.
    epilogue: Callable[[list, dict], tuple[float, float] | None] | None = field(default=None, compare=False)
    # Optional: (parameter objects, state) -> the index of the output this node can write through a clamp
    # epilogue (then ``state[rewrites.EPILOGUE]`` names the activation), or None.
    takes_epilogue: Callable[[list, dict], int | None] | None = field(default=None, compare=False)
    # Optional (``core/gated_products.py``): (parameter objects, state) -> the float32 function this node computes
    # now from its input 0 into its one output, as ``kernels/frontend/float_activation``'s (name, a, b), so that
    # the node reading that output may compute it in its own pass; else None.
    gate_function: Callable[[list, dict], tuple[str, float, float] | None] | None = field(default=None, compare=False)
    # Optional: (parameter objects, state) -> the input indices at which this node can take a gate computed in its
    # own pass (then ``state[gated_products.GATE]`` names the activation and the index), or ().
    takes_gate: Callable[[list, dict], tuple[int, ...]] | None = field(default=None, compare=False)
    # Optional (``core/activation_epilogue.py``): (parameter objects, state) -> (the index of the float32 output a
    # convolution can write through an activation epilogue, whether it can add a residual before it) (then
    # ``state[activation_epilogue.CHAIN]`` names the chain), or None; an activation's (function, alpha tensor or None, a, b) an epilogue computes, or None; and
    # whether an add is a residual sum such an epilogue can compute (float32, no broadcast): the clamp it applies
    # after the sum (NNAPI's code, 0 none), or None.
    takes_activation: Callable[[list, dict], tuple[int, bool] | None] | None = field(default=None, compare=False)
    activation_epilogue: Callable[[list, dict], tuple | None] | None = field(default=None, compare=False)
    residual_sum: Callable[[list, dict], int | None] | None = field(default=None, compare=False)
    # Optional (``core/channel_chains.py``): (parameter objects, state) -> (step name: "mul", "add" or "prelu", the
    # data input's index, the index of the input holding one float32 value per channel, the output's index) when
    # this node is such an element-wise step now, else None.
    channel_step: Callable[[list, dict], tuple[str, int, int, int] | None] | None = field(default=None, compare=False)
    # Optional (``core/map_groups.py``): (parameter objects, state) -> a hashable key of the geometry when this
    # node computes one map of a depthwise layer written map by map, else None; and (the members' parameter
    # lists in map order, the state of the first in execution order, whose call it is) -> (runner, native
    # entry) computing every map in one call, or None.
    # Optional (``core/bordered_tensors.py``): (parameter objects, state) -> (the padding with which this node can
    # read its input #0 from a zero-bordered buffer, or None; whether it can write its output, or a fused chain's,
    # into one[, the index of a residual input it can read from one, whether its tensors are NHWC by definition]),
    # or None (``bordered_tensors.Takes``).
    takes_borders: Callable[[list, dict], tuple | None] | None = field(default=None, compare=False)
    takes_maps: Callable[[list, dict], object] | None = field(default=None, compare=False)
    bind_maps: Callable[[list, dict], tuple | None] | None = field(default=None, compare=False)
    # Optional: called with a node of this kernel when the node is destroyed (a user
    # kernel's deinit and its local data).
    release_node: Callable[[object], None] | None = field(default=None, compare=False)
    # The user kernel (core.user_kernel.UserKernel) this description was made from; None if built in.
    user: object = field(default=None, compare=False)

    @cached_property
    def plain_inputs(self) -> tuple[bool, ...]:
        """Per parameter: an input whose type is neither a tensor nor an image nor any reference (a scalar,
        LUT, array...).  Verify orders nodes by tensors and images; these it passes over unless written."""
        indexed = (Type.VX_TYPE_TENSOR, Type.VX_TYPE_IMAGE, Type.VX_TYPE_REFERENCE)
        return tuple(p.direction == IN and p.vx_type not in indexed for p in self.params)

    def param_index(self, argument: int) -> int:
        return self.constructor_order[argument] if self.constructor_order else argument
