"""The activation format `host` runs a module in: NHWC (oneDNN's choice) or nChw16c, by a
rule measured on torchvision's CNNs (docs/benchmarks.md, "the activation format per
network"). `select-dispatch{activation-format=auto}` (the default) asks it, for `host` only.

On `host` (oneDNN, AVX-512) a channel concat of convolution outputs is a copy in NHWC (oneDNN
writes no fast convolution into a strided channel slice), but in place in nChw16c at batch 1,
where a slot of whole 16-channel blocks is one dense run; a grouped convolution whose groups
are whole blocks runs faster blocked too. Depthwise convolutions, channel shuffles and
channel slices (mobilenet, shufflenet) and the non-square kernels of inception_v3 run slower
blocked. So the rule picks nChw16c where

    some channel concat joins convolution outputs (directly or through one activation) of
        whole 16-channel blocks, at batch 1 (where it goes in place),
    or some such concat of whole blocks at batch 1 takes another's result (a chain: DenseNet's
        block once nest-concats has nested it, where in NHWC every concat copies the block),
    or some grouped convolution has groups of a multiple of 16 channels,
    and no convolution is depthwise, grouped in other widths, non-square, bf16 or quantized,
    and no channel shuffle or channel slice of a computed activation is present,

and NHWC otherwise. Measured: squeezenet1_1 and regnet_x_400mf faster blocked (chosen),
resnet18 and inception_v3 faster or even in NHWC (kept), googlenet (chosen) and mobilenet_v2
(kept) even; densenet121 with its concats nested faster blocked (chosen; its flat concats,
each joining the pooled block input, were faster in NHWC: docs/benchmarks.md). The choice is a
remark at the op that decided it, e.g.

    model.mlir:9:3: remark: [select-dispatch] nn.concat: activation format nChw16c for
    target host (onednn-nchw16c): a channel concat of convolution outputs goes in place ...

and the module records the target it was dispatched for (`nnlayout.target =
"onednn-nchw16c"`), which the passes after select-dispatch read. `activation-format=nhwc` or
`nchw16c` forces either; a target other than `host` is taken as given.
"""

from __future__ import annotations

from typing import TypeGuard

from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.utils.exceptions import PassFailedException

from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.nn import ChannelShuffleOp, ConcatOp, Conv2dOp, SliceOp
from nnlayout.dialects.nn.base import shape_of
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.targets import HOST_BLOCKED, TARGETS, host_blocked_target

FORMATS = ("auto", "nhwc", "nchw16c")
# The channel block of the blocked target the rule picks (16: nChw16c).
_BLOCK = BlockedOptions.of(TARGETS[HOST_BLOCKED]).block
# Ops whose presence the rule has not measured blocked: quantized and integer convolutions.
_UNMEASURED = ("nn.qconv2d", "nn.qconv2d_add", "nn.conv_integer", "nn.conv_transpose2d")


def _computed_channel_slice(op: SliceOp) -> bool:
    """Whether `op` slices channels of an activation computed by the program: not of an
    input (split-image-conv's slices of the image, read plain by the stem) nor of a
    constant expression (its slices of the stem's weight, packed at load)."""
    source = op.operands[0]
    if shape_of(op.output)[1:2] == shape_of(source)[1:2] or not isinstance(source, OpResult):
        return False
    return not is_constant(source)


def _from_convolution(value: SSAValue) -> bool:
    """Whether `value` is a convolution's result, or that of one element-wise op (an
    activation: one operand, of the result's shape) on one."""
    if not isinstance(value, OpResult):
        return False
    owner = value.op
    if isinstance(owner, Conv2dOp):
        return True
    if len(owner.operands) != 1 or shape_of(owner.operands[0]) != shape_of(value):
        return False
    source = owner.operands[0]
    return isinstance(source, OpResult) and isinstance(source.op, Conv2dOp)


def _against(op: Operation) -> str | None:
    """Why `op` runs slower in nChw16c (None if it does not)."""
    if op.name in _UNMEASURED:
        return f"{op.name} is not measured blocked"
    if isinstance(op, ChannelShuffleOp):
        return "a channel shuffle"
    if isinstance(op, SliceOp) and _computed_channel_slice(op):
        return "a channel slice"
    if isinstance(op, Conv2dOp):
        groups = op.properties["groups"].value.data  # type: ignore[union-attr]
        channels = shape_of(op.operands[0])[1]
        kernel = shape_of(op.operands[1])[2:]
        if getattr(op.operands[0].type, "element_type", None) != f32:
            return "a convolution not in float32 (bf16: not measured blocked)"
        if groups > 1 and groups == channels:
            return "a depthwise convolution"
        if groups > 1 and (channels // groups) % _BLOCK:
            return f"a grouped convolution of {channels // groups} channels a group"
        if kernel[0] != kernel[1]:
            return f"a non-square {kernel[0]}x{kernel[1]} convolution"
    return None


def _in_place_concat(op: Operation) -> TypeGuard[ConcatOp]:
    """Whether `op` is a channel concat of whole 16-channel blocks at batch 1 (in place in
    nChw16c)."""
    return (
        isinstance(op, ConcatOp)
        and len(shape_of(op.output)) == 4
        and shape_of(op.output)[0] == 1
        and op.normalized_axis == 1
        and all(shape_of(v)[1] % _BLOCK == 0 for v in op.inputs)
    )


def _for(op: Operation) -> str | None:
    """Why `op` runs faster in nChw16c (None if it does not)."""
    if _in_place_concat(op):
        if all(_from_convolution(v) for v in op.inputs):
            return "a channel concat of convolution outputs goes in place"
        if any(isinstance(v, OpResult) and _in_place_concat(v.op) for v in op.inputs):
            return "a chain of channel concats (a dense block, nest-concats) goes in place"
    if isinstance(op, Conv2dOp):
        groups = op.properties["groups"].value.data  # type: ignore[union-attr]
        channels = shape_of(op.operands[0])[1]
        if groups > 1 and groups != channels and (channels // groups) % _BLOCK == 0:
            return f"a grouped convolution of {channels // groups} channels a group runs blocked"
    return None


def blocked_reason(module: ModuleOp) -> tuple[Operation, str] | None:
    """The op and reason for which the rule picks nChw16c for `module`; None for NHWC."""
    found: tuple[Operation, str] | None = None
    for op in module.walk():
        if _against(op) is not None:
            return None
        if found is None and (reason := _for(op)) is not None:
            found = (op, reason)
    return found


def dispatch_target(
    module: ModuleOp, target: str, activation_format: str
) -> tuple[str, tuple[Operation, str] | None]:
    """The target select-dispatch selects `module`'s kernels for, given the pipeline's target
    and activation format; with the op and reason to remark on when `host` was changed."""
    if activation_format not in FORMATS:
        raise PassFailedException(
            f"activation-format={activation_format}: expected one of {', '.join(FORMATS)}"
        )
    if target != "host" or activation_format == "nhwc":
        return target, None
    blocked, why_not = host_blocked_target()
    if activation_format == "nchw16c":
        if blocked is None:
            raise PassFailedException(f"activation-format=nchw16c: {why_not}")
        return blocked, None
    reason = blocked_reason(module) if blocked is not None else None
    if blocked is None or reason is None:
        return target, None
    return blocked, (
        reason[0],
        f"activation format nChw16c for target host ({blocked}): "
        f"{reason[1]}, and no op of the module runs slower blocked",
    )
