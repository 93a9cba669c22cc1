"""`fold-constants`: pack weights once, at compile time.

A `layout.reorder` of an `nn.constant` (a weight going into `IHW8iO8o`, a bias into `C8c`, a
CSR conversion) becomes a constant of the reordered type: the same stored value (inline or
external), materialised in the new layout when the program is loaded, so no reorder of a
constant runs per inference:

    %w = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
    %w8 = layout.reorder %w : tensor<64x3x7x7xf32>
                            -> tensor<64x3x7x7xf32, #layout.layout<"IHWO8o">>
  becomes
    %w8 = nn.constant external "conv1.weight"
              : tensor<64x3x7x7xf32, #layout.layout<"IHWO8o">>

The original constant stays while other ops still use it.

**Kernel-packed constants.** A kernel that keeps a constant operand in a format of its own,
which no layout names (`Kernel.packed_constants`: oneDNN's int8 convolution and matmul, whose
s8 weights go into a VNNI/AMX blocking followed by the compensation their attributes need),
is asked, for the op as dispatched, how many bytes that constant takes packed (the
primitive's weights descriptor for `format_tag::any` and the op's very scales, zero points
and post-ops, `dnnl_memory_desc_get_size`); the constant records it (`dialects/packing.py`),
so that `plan-memory` counts its bytes and the kernel checks the claim when it is bound:

    %w = nn.constant external "conv.weight" : tensor<64x64x3x3xi8>
  becomes
    %w = nn.constant external "conv.weight" : tensor<64x64x3x3xi8>
           {nnlayout.packed = {kernel = "qconv2d_onednn", bytes = 37632 : i64,
                               compensation = 768 : i64}}

The bytes themselves are made when the program is loaded (as for a constant in a layout):
the weights of an imported model live in its weights file, which no pass reads. An int8
weight read by a kernel that packs none (the reference kernels, where oneDNN refused) stays
plain, with a remark; so does a constant that ops of different kernels read. A constant
expression (a Gemm's transposed weights, `dialects/constant_expressions.py`) records it the
same way: it is computed at load, then packed by the kernel.

A reorder of a constant expression (`dialects/constant_expressions.py`, e.g. a weight that
`fold-batch-norm` scaled) is itself one and stays as it is: it is packed once, at load, right
after the value it reorders is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import ReorderOp
from nnlayout.dialects.nn import ConstantOp
from nnlayout.dialects.packing import PACKED_ATTR, Packed
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Kernel
from nnlayout.transforms.propagate_layouts import EraseDeadReorder
from nnlayout.transforms.stages import require_tensor_level


class FoldReorderOfConstant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        constant = op.input.owner
        if not isinstance(constant, ConstantOp):
            return
        result_type = op.output.type
        assert isinstance(result_type, TensorType)
        folded = ConstantOp(
            result_type,
            value=constant.value,
            external=None if constant.external is None else constant.external.data,
        )
        folded.output.name_hint = constant.output.name_hint
        rewriter.replace(op, folded)
        if not constant.output.uses:
            rewriter.erase(constant)


def _packer(op: Operation) -> Kernel | None:
    """The kernel `op` is dispatched to where it packs constants of its own and is one for
    `op`'s type (a hand-edited kernel of another op is refused when bound, not here)."""
    chosen = kernel_of(op)
    kernel = registry().kernels.get(chosen.kernel_name.data) if chosen else None
    if kernel is None or kernel.op is not type(op) or kernel.packed_constants is None:
        return None
    return kernel


def _claims(constant: Operation) -> set[Packed | None]:
    """What each op reading `constant` would have it packed as (None: plain)."""
    claims: set[Packed | None] = set()
    for use in constant.results[0].uses:
        kernel = _packer(use.operation)
        size = kernel.packed_constants(use.operation).get(use.index) if kernel else None  # type: ignore[misc]
        claims.add(None if size is None else Packed(kernel.name, *size))  # type: ignore[union-attr]
    return claims


def _may_pack(op: Operation, index: int) -> bool:
    """Whether some registered kernel of `op`'s type keeps its operand `index` packed."""
    return any(k.op is type(op) and index in k.packed_operands for k in registry().kernels.values())


def record_packing(module: ModuleOp) -> None:
    """Records on each constant that its readers' kernel packs how many bytes it takes
    packed (module doc); remarks on the int8 weights that stay plain."""
    known: dict[Operation, bool] = {}
    constants = [
        op
        for op in module.walk()
        if len(op.results) == 1 and op.results[0].uses and is_constant_expression(op, known)
    ]
    for constant in constants:
        if PACKED_ATTR in constant.attributes:
            continue
        claims = _claims(constant)
        if len(claims) == 1 and (claim := next(iter(claims))) is not None:
            constant.attributes[PACKED_ATTR] = claim.attribute()
            continue
        for use in constant.results[0].uses:
            reader = use.operation
            chosen = kernel_of(reader)
            if chosen is not None and _may_pack(reader, use.index):
                name = chosen.kernel_name.data
                why = (
                    "ops of different kernels read it"
                    if len(claims) > 1
                    else f"{name} packs none for this op here"
                    if _packer(reader) is not None
                    else f"{name} keeps no packed format"
                )
                remarks.emit(reader, FoldConstantsPass.name, f"weights stay plain: {why}")


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    name = "fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FoldReorderOfConstant(), EraseDeadReorder()], dce_enabled=False
            ),
        ).rewrite_module(op)
        record_packing(op)
