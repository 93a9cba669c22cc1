"""`blocked-stem{remarks=false}`: on `host` in NHWC, the stem convolution and the convolutions
after it, up to a 16-channel result, run in nChw16c, reading the plain input directly.

A CNN's first convolution reads the caller's NCHW image of 3 channels. On `host` in NHWC the
image is first moved into an NHWC buffer (a `layout.reorder`), then oneDNN's NHWC stem runs.
oneDNN's fast stem on AVX-512 (`jit:avx512_core`) reads NCHW directly, but writes only
nChw16c (into NHWC it has only its reference code): a reorder of its result to NHWC costs
more than the input's. MobileNetV2 and MNASNet go on from a 32-channel stem through a
depthwise and a 1x1 convolution to 16 channels, where nChw16c and NHWC are the same bytes:
run those in nChw16c and no reorder is left at all (`bufferize` makes the reorder between
the two a view, lowering/views.py). Measured in the whole network (docs/benchmarks.md,
"the stem in nChw16c"): the head of mnasnet1_0 1.14 ms instead of 1.50.

The pass finds, in each function, a chain of convolutions (`nn.conv2d` or `nn.fused_conv2d`
without an addend, float32) where

    the first reads a function argument of fewer than 16 channels (the image),
    each result has a multiple of 16 channels and is read by the next one alone,
    the last result has exactly 16 channels and one reader (at most 4 convolutions),

(MobileNetV3's 16-channel stem is also read by a residual add, fused into a convolution
that writes in place over its addend: over a view it may not, so it would copy the addend
first, which cost more than the reorder saved, measured), and gives each the kernel the
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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import BlockArgument, Operation
from xdsl.passes import ModulePass

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.dispatch import recorded_padding, recorded_target
from nnlayout.dialects.kernel_attr import KERNEL_ATTR, KernelAttr
from nnlayout.dialects.nn import Conv2dOp, FusedConv2dOp
from nnlayout.dialects.nn.base import shape_of
from nnlayout.kernels.providers import registry
from nnlayout.kernels.targets import get_target, host_blocked_target
from nnlayout.transforms.stages import require_tensor_level

_BLOCK = 16
_LONGEST = 4
_BLOCKED = "NCHW16c"


def _convolution(op: Operation) -> bool:
    """A float32 convolution the chain may hold (one with an addend reads a second
    activation, which would need its own reorder)."""
    if not isinstance(op, Conv2dOp | FusedConv2dOp):
        return False
    if isinstance(op, FusedConv2dOp) and op.addend is not None:
        return False
    return getattr(op.operands[0].type, "element_type", None) == f32


def stem_chain(function: func.FuncOp) -> list[Operation] | None:
    """The chain of convolutions from an input image to 16 channels (module doc), if any."""
    for op in function.body.walk():
        source = op.operands[0] if op.operands else None
        if not (
            _convolution(op)
            and isinstance(source, BlockArgument)
            and len(shape_of(source)) == 4
            and shape_of(source)[1] < _BLOCK
        ):
            continue
        chain = [op]
        while len(chain) <= _LONGEST:
            result = chain[-1].results[0]
            channels = shape_of(result)[1]
            if not result.has_one_use():
                break
            if channels == _BLOCK:
                return chain
            if channels % _BLOCK:
                break
            user = next(iter(result.uses))
            if user.index != 0 or not _convolution(user.operation):
                break
            chain.append(user.operation)
    return None


def _blocked_kernels(chain: list[Operation], target: str, padding: bool) -> list[KernelAttr]:
    """The kernels `target` selects for the chain, each writing NCHW16c from a plain or
    NCHW16c source; empty where one does not."""
    blocked = get_target(target)
    chosen = []
    for op in chain:
        selection = registry().select(op, blocked, padding)
        if selection is None:
            return []
        attribute = selection.kernel.attribute(op, blocked)
        if attribute.results != (_BLOCKED,) or attribute.operands[0] not in ("", _BLOCKED):
            return []
        chosen.append(attribute)
    return chosen


@dataclass(frozen=True)
class BlockedStemPass(ModulePass):
    name = "blocked-stem"

    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        if recorded_target(op) != "host":
            return
        blocked, _ = host_blocked_target()
        if blocked is None:
            return
        padding = recorded_padding(op)
        for function in op.walk():
            if not isinstance(function, func.FuncOp):
                continue
            chain = stem_chain(function)
            kernels = _blocked_kernels(chain, blocked, padding is not False) if chain else []
            if not chain or not kernels:
                continue
            for conv, kernel in zip(chain, kernels, strict=True):
                conv.attributes[KERNEL_ATTR] = kernel
            remarks.emit(
                chain[0],
                self.name,
                f"{len(chain)} convolution{'s' if len(chain) > 1 else ''} from the input to "
                f"{_BLOCK} channels run in nChw16c ({blocked}): nChw16c is NHWC at "
                f"{_BLOCK} channels",
                self.remarks,
            )
