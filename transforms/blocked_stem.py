"""`blocked-stem{remarks=false}`: on `host` in NHWC, the stem convolutions up to a 16-channel
result, or a split stem's and the pooling after them, run in nChw16c, reading the input.

A CNN's first convolution reads the caller's NCHW image of 3 channels. On `host` in NHWC the
image is first moved into an NHWC buffer (a `layout.reorder`), then oneDNN's NHWC stem runs.
oneDNN's fast stem on AVX-512 (`jit:avx512_core`) reads NCHW directly, but writes only
nChw16c (into NHWC it has only its reference code): a reorder of its result to NHWC costs
more than the input's. MobileNetV2 and MNASNet go on from a 32-channel stem through a
depthwise and a 1x1 convolution to 16 channels, where nChw16c and NHWC are the same bytes:
run those in nChw16c and no reorder is left at all (`bufferize` makes the reorder between
the two a view, lowering/views.py). Measured in the whole network (docs/benchmarks.md,
"the stem and the input's reorder, measured in the network"): the head of mnasnet1_0 1.11
ms instead of 1.29, of efficientnet_b0 2.03 instead of 2.58.

The pass finds, in each function, a chain of convolutions (`nn.conv2d` or `nn.fused_conv2d`
without an addend, float32) where

    the first reads a function argument of fewer than 16 channels (the image),
    each result has a multiple of 16 channels and is read by the next one alone, or by a
        squeeze-and-excitation block: its global average pooling and the mul of the result
        by the block's one-pixel scale (EfficientNet-B0), both taken into the chain (the
        block's own convolutions, on one pixel, stay NHWC: at one pixel of whole 16-channel
        blocks nChw16c is NHWC too),
    the last result has exactly 16 channels and one reader (at most 4 convolutions),

(MobileNetV3's 16-channel stem is also read by a residual add, fused into a convolution
that writes in place over its addend: over a view it may not, so it would copy the addend
first, which cost more than the reorder saved, measured), or a split stem
(`split_stem_chain`): `split-image-conv`'s convolutions, one per image channel, each
accumulating onto the one before (its addend, once `fuse-post-ops` made the adds `sum`
post-ops), whose sum of a multiple of 16 channels one pooling alone reads that makes at most
a quarter of its elements (a ResNet's 7x7 stem and 3x3 stride-2 max pool). oneDNN's
per-channel convolutions accumulate far faster into nChw16c than into NHWC (its jit code
writing NHWC from one input channel reads and writes the whole 64-channel sum per channel),
the pooling follows them in nChw16c (`propagate-layouts`), and the one reorder left, to
NHWC, is of the pooled result. It gives each the kernel the
blocked target (`onednn-nchw16c`, kernels/targets.py) selects for it, if every one gets a
kernel writing NCHW16c; else it changes nothing. It runs after the fusions, which choose
kernels for the target the module records, and before `insert-layouts`, which then reorders
nothing but the 16-channel result (a view). It acts only where the module was dispatched
for `host` in NHWC and `host` has a blocked target (oneDNN with its avx512_core code);
anywhere else it changes nothing. A remark at the first
convolution names the chain:

    model.mlir:5:3: remark: [blocked-stem] nn.fused_conv2d: 3 convolutions from the input
    to 16 channels run in nChw16c (onednn-nchw16c): nChw16c is NHWC at 16 channels

    %y = nn.fused_conv2d %x, ... {kernel = #nn.kernel<"fused_conv2d_onednn",
        operands = ["NHWC", "OHWI16o", ""], results = ["NHWC"]>}   (x: 1x3x224x224, y: 32 channels)
  becomes
    %y = nn.fused_conv2d %x, ... {kernel = #nn.kernel<"fused_conv2d_onednn",
        operands = ["", "OHWI16o", ""], results = ["NCHW16c"]>}
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.dispatch import recorded_padding, recorded_target
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, KERNEL_ATTR, KernelAttr, kernel_of
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import (
    AvgPool2dOp,
    Conv2dOp,
    FusedConv2dOp,
    GlobalAvgPoolOp,
    MaxPool2dOp,
    MulOp,
    SliceOp,
)
from nnlayout.dialects.nn.base import shape_of
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.facts import kernel_facts
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target
from nnlayout.kernels.targets import get_target, host_blocked_target
from nnlayout.transforms.stages import require_tensor_level

_LONGEST = 4


def _convolution(op: Operation) -> bool:
    """A float32 convolution the chain may hold (one with an addend reads a second
    activation, which would need its own reorder)."""
    if not isinstance(op, Conv2dOp | FusedConv2dOp):
        return False
    if isinstance(op, FusedConv2dOp) and op.addend is not None:
        return False
    return getattr(op.operands[0].type, "element_type", None) == f32


def _squeeze_excitation(result: SSAValue) -> list[Operation] | None:
    """The global average pooling and the mul of a squeeze-and-excitation block reading
    `result` (its two readers: the pooling, and the mul by a one-pixel scale of its
    channels, which the block computes from the pooling in between), if that is what reads
    it."""
    users = [use.operation for use in result.uses]
    pools = [u for u in users if isinstance(u, GlobalAvgPoolOp)]
    muls = [u for u in users if isinstance(u, MulOp)]
    if len(users) != 2 or len(pools) != 1 or len(muls) != 1:
        return None
    mul = muls[0]
    scale = mul.operands[1] if mul.operands[0] is result else mul.operands[0]
    batch, channels = shape_of(result)[:2]
    if shape_of(scale) != (batch, channels, 1, 1) or shape_of(mul.results[0]) != shape_of(result):
        return None
    return [pools[0], mul]


def _next_in_chain(result: SSAValue) -> list[Operation] | None:
    """The ops after `result` that the chain takes: the one convolution reading it alone, or
    a squeeze-and-excitation block's pooling and mul; None where neither reads it."""
    if result.has_one_use():
        use = next(iter(result.uses))
        return [use.operation] if use.index == 0 and _convolution(use.operation) else None
    return _squeeze_excitation(result)


def stem_chain(function: func.FuncOp, block: int) -> list[Operation] | None:
    """The chain from an input image to `block` channels (module doc: 16, the blocked
    target's `BlockedOptions.block`), if any."""
    for op in function.body.walk():
        source = op.operands[0] if op.operands else None
        if not (
            _convolution(op)
            and isinstance(source, BlockArgument)
            and len(shape_of(source)) == 4
            and shape_of(source)[1] < block
        ):
            continue
        chain = [op]
        while sum(_convolution(o) for o in chain) <= _LONGEST:
            result = chain[-1].results[0]
            channels = shape_of(result)[1]
            if channels == block:
                if result.has_one_use():
                    return chain
                break
            following = _next_in_chain(result) if channels % block == 0 else None
            if following is None:
                break
            chain += following
    return None


def _image_of(value: SSAValue, block: int) -> BlockArgument | None:
    """The image (a 4-D function argument of fewer than `block` channels) `value` is a
    channel slice of, if it is one: what a split stem's convolution reads."""
    owner = value.owner
    if not isinstance(owner, SliceOp):
        return None
    source = owner.input
    if isinstance(source, BlockArgument) and len(shape_of(source)) == 4:
        return source if shape_of(source)[1] < block else None
    return None


def _accumulating(result: SSAValue, image: BlockArgument, block: int) -> FusedConv2dOp | None:
    """The convolution of another channel of `image` that accumulates onto `result` (its
    addend), if it alone reads `result`."""
    if not result.has_one_use():
        return None
    reader = next(iter(result.uses)).operation
    if not isinstance(reader, FusedConv2dOp) or reader.addend is not result:
        return None
    return reader if _image_of(reader.input, block) is image else None


def _elements(value: SSAValue) -> int:
    return math.prod(shape_of(value))


def split_stem_chain(function: func.FuncOp, block: int) -> list[Operation] | None:
    """`split-image-conv`'s convolutions over the image's channels, summed in the last one,
    whose result of a multiple of `block` channels one pooling alone reads that makes at
    most a quarter of its elements (module doc), if there are such."""
    for op in function.body.walk():
        image = _image_of(op.operands[0], block) if _convolution(op) else None
        if image is None:
            continue
        chain: list[Operation] = [op]
        while (following := _accumulating(chain[-1].results[0], image, block)) is not None:
            chain.append(following)
        result = chain[-1].results[0]
        if len(chain) < 2 or shape_of(result)[1] % block or not result.has_one_use():
            continue
        reader = next(iter(result.uses)).operation
        if _pools_blocked(reader, block) and 4 * _elements(reader.results[0]) <= _elements(result):
            return chain
    return None


def _pools_blocked(op: Operation, block: int) -> bool:
    """Whether `op` is a pooling whose kernel takes any layout and accepts nChw`block`c
    (one pinned to NHWC or to numpy's plain code would reorder the whole sum instead)."""
    kernel, attribute = kernel_facts(op), kernel_of(op)
    return (
        isinstance(op, MaxPool2dOp | AvgPool2dOp)
        and kernel is not None
        and attribute is not None
        and attribute.operands[0] == ANY_LAYOUT
        and kernel.layout_refusal(op, LayoutSpec.parse(f"NCHW{block}c")) is None
    )


def _chosen_by_dispatch(op: Operation, padding: bool) -> bool:
    """Whether `op`'s kernel is the one `host` selects for it: a kernel the user pinned (one
    select-dispatch kept) is not replaced."""
    kernel = op.attributes.get(KERNEL_ATTR)
    selection = registry().select(op, get_target("host"), padding)
    return (
        isinstance(kernel, KernelAttr)
        and selection is not None
        and selection.kernel.name == kernel.kernel_name.data
    )


def _blocked_kernels(chain: list[Operation], blocked: Target, padding: bool) -> list[KernelAttr]:
    """The kernels `blocked` selects for the chain, each writing its blocked activation
    layout (NCHW16c) from a plain or blocked source (a kernel taking its operand's layout,
    `"*"`, is given the blocked one: the
    squeeze-and-excitation mul's first operand may be its one-pixel scale, whose layout it
    would otherwise take); empty where one does not, or where an op of the chain runs a
    kernel other than the one `host` selects (pinned by the user)."""
    if not all(_chosen_by_dispatch(op, padding) for op in chain):
        return []
    layout = BlockedOptions.of(blocked).activation_layout
    chosen = []
    for op in chain:
        selection = registry().select(op, blocked, padding)
        if selection is None:
            return []
        attribute = selection.kernel.attribute(op, blocked)
        if ANY_LAYOUT in attribute.operands + attribute.results:
            attribute = attribute.with_layouts(
                [layout if x == ANY_LAYOUT else x for x in attribute.operands],
                [layout if x == ANY_LAYOUT else x for x in attribute.results],
            )
        if attribute.results != (layout,) or attribute.operands[0] not in ("", layout):
            return []
        chosen.append(attribute)
    return chosen


def _described(chain: list[Operation]) -> str:
    """What a remark calls the chain: "3 convolutions", "... and 1 squeeze-and-excitation
    pooling and mul"."""
    convolutions = sum(isinstance(op, Conv2dOp | FusedConv2dOp) for op in chain)
    blocks = sum(isinstance(op, MulOp) for op in chain)
    said = f"{convolutions} convolution{'s' if convolutions > 1 else ''}"
    if blocks:
        said += f" and {blocks} squeeze-and-excitation pooling and mul"
    return said


@dataclass(frozen=True)
class BlockedStemPass(ModulePass):
    name = "blocked-stem"

    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        if recorded_target(op) != "host":
            return
        name, _ = host_blocked_target()
        if name is None:
            return
        blocked = get_target(name)
        block = BlockedOptions.of(blocked).block
        padding = recorded_padding(op)
        for function in op.walk():
            if not isinstance(function, func.FuncOp):
                continue
            chain = stem_chain(function, block)
            said = f"from the input to {block} channels run in nChw{block}c ({name}): "
            said += f"nChw{block}c is NHWC at {block} channels"
            if chain is None and (chain := split_stem_chain(function, block)) is not None:
                said = f"summed over the image's channels run in nChw{block}c ({name}), "
                said += "and the pooling after them: NHWC is reached pooled"
            kernels = _blocked_kernels(chain, blocked, padding is not False) if chain else []
            if not chain or not kernels:
                continue
            for chained, kernel in zip(chain, kernels, strict=True):
                chained.attributes[KERNEL_ATTR] = kernel
            remarks.emit(chain[0], self.name, f"{_described(chain)} {said}", self.remarks)
