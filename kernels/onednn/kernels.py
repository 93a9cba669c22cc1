"""The `onednn` kernel family's descriptors, as a table: convolution (also fused with its add
and activation as post-ops: `nn.fused_conv2d`), transposed convolution, gemm and matmul
(oneDNN's inner product and matmul, also with a bias and activation: `nn.fused_matmul`),
softmax, pooling, element-wise, binary, batch norm and concat ops in their operand's
layout, reductions, layer normalization and LRN, and transposes (reorders), as oneDNN
primitives called through ctypes on numpy arrays (float32 ops), and the quantized
nn.qconv2d and nn.qmatmul (int8: quantized_kernels.py), nn.qadd and integer max pooling
(quantized_eltwise.py), and nn.matmul_integer and nn.conv_integer
(dynamic quantization: integer_matmul.py, integer_conv.py).

Each row names a kernel, its op and the `Rules` of its primitive family (the modules of this
package: convolution.py, deconvolution.py, matmul.py, softmax.py, any_layout.py,
reduction.py, transpose.py); every kernel runs through `prepared.run` and is prepared by
`prepared.Prepared`, but the slice's (slicing.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.blocked import full_operand
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.any_layout import (
    any_accepts,
    any_accepts_layout,
    any_layouts,
    any_types_reason,
    any_workspace,
)
from nnlayout.kernels.onednn.bf16 import cast_kernel
from nnlayout.kernels.onednn.common import CHOICES, Layouts, unblocked_refusal
from nnlayout.kernels.onednn.convolution import (
    addend_types_reason,
    conv_accepts,
    conv_choice,
    conv_layouts,
    conv_workspace,
)
from nnlayout.kernels.onednn.deconvolution import (
    deconv_accepts,
    deconv_choice,
    deconv_layouts,
    deconv_types_reason,
    deconv_workspace,
)
from nnlayout.kernels.onednn.dynamic_quantize import dynamic_quantize_kernels
from nnlayout.kernels.onednn.eltwise import BINARY, ELTWISE_OPS
from nnlayout.kernels.onednn.integer_conv import integer_conv_kernel
from nnlayout.kernels.onednn.integer_matmul import integer_kernels, integer_matmul_choice
from nnlayout.kernels.onednn.matmul import (
    FC_LAYOUTS,
    gemm_accepts,
    gemm_layouts,
    gemm_types_reason,
    gemm_workspace,
)
from nnlayout.kernels.onednn.movement import (
    shuffle_accepts,
    shuffle_layouts,
    shuffle_reorder_accepts,
    shuffle_reorder_workspace,
    shuffle_types_reason,
    shuffle_workspace,
    strided_reorder_layouts,
    strided_reorder_types_reason,
)
from nnlayout.kernels.onednn.prepared import Prepared, implementation, run
from nnlayout.kernels.onednn.quantized_batch_norm import quantized_batch_norm_kernels
from nnlayout.kernels.onednn.quantized_concat import qconcat_kernels
from nnlayout.kernels.onednn.quantized_eltwise import int8_eltwise_kernels
from nnlayout.kernels.onednn.quantized_gate import qmul_gate_kernels
from nnlayout.kernels.onednn.quantized_kernels import (
    qconv_choice,
    qmatmul_choice,
    quantized_kernels,
)
from nnlayout.kernels.onednn.quantized_lookup import qlookup_kernels
from nnlayout.kernels.onednn.quantized_mul import qmul_zero_points_kernels
from nnlayout.kernels.onednn.quantized_products import qmatmul_runtime_b_kernels, runtime_b_pd
from nnlayout.kernels.onednn.quantized_reorder import quantized_reorder_kernels
from nnlayout.kernels.onednn.recurrent import recurrent_kernels
from nnlayout.kernels.onednn.reduction import (
    reduction_accepts,
    reduction_accepts_layout,
    reduction_layouts,
    reduction_types_reason,
    reduction_workspace,
)
from nnlayout.kernels.onednn.reshape import (
    RESHAPE_OPS,
    reshape_accepts,
    reshape_layouts,
    reshape_types_reason,
    reshape_workspace,
)
from nnlayout.kernels.onednn.slicing import (
    PreparedSlice,
    slice_accepts,
    slice_implementation,
    slice_run,
    slice_workspace,
)
from nnlayout.kernels.onednn.softmax import (
    softmax_accepts,
    softmax_layouts,
    softmax_types_reason,
    softmax_workspace,
)
from nnlayout.kernels.onednn.transpose import (
    transpose_accepts,
    transpose_layouts,
    transpose_types_reason,
    transpose_workspace,
)
from nnlayout.kernels.registry import Kernel, Target

FAMILY = "onednn"


@dataclass(frozen=True)
class Rules:
    """What the kernels of one primitive family answer dispatch, insert-layouts and the
    planner with (the `Kernel` fields of the same names)."""

    accepts: Callable[[Operation, Target, bool], str | None]
    layouts: Callable[[Operation, Target], Layouts]
    workspace: Callable[[Operation, Target], int]
    accepts_types: Callable[[Operation], str | None] | None = None
    accepts_layout: Callable[[Operation, LayoutSpec], str | None] | None = None
    post_ops: bool = False
    # Whether some ops of the family compute in bf16 (`accepts` says which, and where).
    bf16: bool = False
    orders_result: bool = False


CONVOLUTION = Rules(conv_accepts, conv_layouts, conv_workspace, post_ops=True, bf16=True)
# The addend is the destination's starting contents, in the result's layout.
CONVOLUTION_WITH_ADDEND = replace(CONVOLUTION, accepts_types=addend_types_reason)
TRANSPOSED_CONVOLUTION = Rules(
    deconv_accepts, deconv_layouts, deconv_workspace, deconv_types_reason
)
# A matmul's bias and activation are its primitive's bias and eltwise post-op
# (`fuse-matmul-post-ops` asks the family for `nn.fused_matmul`).
MATMUL = Rules(
    gemm_accepts, gemm_layouts, gemm_workspace, gemm_types_reason, post_ops=True, bf16=True
)
SOFTMAX = Rules(softmax_accepts, softmax_layouts, softmax_workspace, softmax_types_reason)
IN_OPERAND_LAYOUT = Rules(
    any_accepts, any_layouts, any_workspace, any_types_reason, any_accepts_layout, bf16=True
)
REDUCTION = Rules(
    reduction_accepts,
    reduction_layouts,
    reduction_workspace,
    reduction_types_reason,
    reduction_accepts_layout,
)
SHUFFLE = Rules(shuffle_accepts, shuffle_layouts, shuffle_workspace, shuffle_types_reason)
SHUFFLE_REORDER = Rules(
    shuffle_reorder_accepts,
    strided_reorder_layouts,
    shuffle_reorder_workspace,
    strided_reorder_types_reason,
    unblocked_refusal,
)
TRANSPOSE = Rules(
    transpose_accepts,
    transpose_layouts,
    transpose_workspace,
    transpose_types_reason,
    unblocked_refusal,
    orders_result=True,
)
RESHAPE = Rules(
    reshape_accepts, reshape_layouts, reshape_workspace, reshape_types_reason, unblocked_refusal
)


def _every(op: Operation) -> bool:
    return True


def _without_addend(op: Operation) -> bool:
    return isinstance(op, nn.FusedConv2dOp) and op.addend is None


def _with_addend(op: Operation) -> bool:
    return isinstance(op, nn.FusedConv2dOp) and op.addend is not None


class Row(NamedTuple):
    """One kernel: its name, op and rules, which ops of that kind it applies to, and the
    operand its result may overwrite (`in_place_of`: per op)."""

    name: str
    op: type[Operation]
    rules: Rules
    applies: Callable[[Operation], bool] = _every
    in_place: int | None = None
    in_place_of: Callable[[Operation], int | None] | None = None
    integer_data: bool = False  # it also moves u8/s8 data (its rules say where)


def _name(op_type: type[Operation]) -> str:
    return op_type.name.removeprefix("nn.") + "_onednn"


TABLE: tuple[Row, ...] = (
    Row("conv2d_onednn", nn.Conv2dOp, CONVOLUTION),
    Row("conv_transpose2d_onednn", nn.ConvTranspose2dOp, TRANSPOSED_CONVOLUTION),
    Row("gemm_onednn", nn.GemmOp, MATMUL),
    Row("matmul_onednn", nn.MatmulOp, MATMUL),
    Row("fused_matmul_onednn", nn.FusedMatmulOp, MATMUL),
    Row("softmax_onednn", nn.SoftmaxOp, SOFTMAX),
    Row("log_softmax_onednn", nn.LogSoftmaxOp, SOFTMAX),
    Row("fused_conv2d_onednn", nn.FusedConv2dOp, CONVOLUTION, _without_addend),
    # With an addend, oneDNN accumulates into it: in place when the planner can.
    Row("fused_conv2d_sum_onednn", nn.FusedConv2dOp, CONVOLUTION_WITH_ADDEND, _with_addend, 3),
    *(
        Row(_name(op_type), op_type, IN_OPERAND_LAYOUT)
        for op_type in (nn.MaxPool2dOp, nn.AvgPool2dOp, nn.GlobalAvgPoolOp, nn.ConcatOp)
    ),
    Row("resize_onednn", nn.ResizeOp, IN_OPERAND_LAYOUT),
    Row("channel_shuffle_onednn", nn.ChannelShuffleOp, SHUFFLE),
    Row("channel_shuffle_reorder_onednn", nn.ChannelShuffleOp, SHUFFLE_REORDER, integer_data=True),
    Row("transpose_onednn", nn.TransposeOp, TRANSPOSE, integer_data=True),
    *(Row(_name(op_type), op_type, RESHAPE) for op_type in RESHAPE_OPS),
    *(
        Row(_name(op_type), op_type, IN_OPERAND_LAYOUT, in_place=0)
        for op_type in (nn.BatchNormOp, *ELTWISE_OPS, nn.ReluOp, nn.ClipOp, nn.LeakyReluOp)
    ),
    # A broadcasting binary op may write over the operand of the result's shape only.
    *(
        Row(_name(op_type), op_type, IN_OPERAND_LAYOUT, in_place=0, in_place_of=full_operand)
        for op_type in (*BINARY, nn.PReluOp)
    ),
    *(
        Row(_name(op_type), op_type, REDUCTION)
        for op_type in (nn.ReduceOp, nn.LayerNormOp, nn.LrnOp)
    ),
)


def _table_kernel(row: Row) -> Kernel:
    """The descriptor of one row of `TABLE`."""
    return Kernel(
        row.name,
        row.op,
        FAMILY,
        run,
        applies=row.applies,
        accepts=row.rules.accepts,
        layouts=row.rules.layouts,
        accepts_layout=row.rules.accepts_layout,
        accepts_types=row.rules.accepts_types,
        in_place=row.in_place,
        in_place_of=row.in_place_of,
        integer_data=row.integer_data,
        workspace=row.rules.workspace,
        reads_halo=False,
        writes_strided=False,
        post_ops=row.rules.post_ops,
        bf16_data=row.rules.bf16,
        orders_result=row.rules.orders_result,
        prepare=Prepared,
        implementation_of=implementation,
    )


def kernels() -> list[Kernel]:
    """The oneDNN family's descriptors: one per row of `TABLE`, the slice's (slicing.py points
    oneDNN at the window), and those of the modules with their own. oneDNN pads inside its
    primitives (no copy to save); its fast code wants dense buffers: no halos, no strides."""
    return (
        [_table_kernel(row) for row in TABLE]
        + [
            Kernel(
                "slice_onednn",
                nn.SliceOp,
                FAMILY,
                slice_run,
                accepts=slice_accepts,
                layouts=strided_reorder_layouts,
                accepts_layout=unblocked_refusal,
                accepts_types=strided_reorder_types_reason,
                workspace=slice_workspace,
                reads_halo=False,
                writes_strided=False,
                prepare=PreparedSlice,
                implementation_of=slice_implementation,
            )
        ]
        + recurrent_kernels(FAMILY)
        + [cast_kernel(FAMILY)]
        + quantized_kernels(FAMILY)
        + qmatmul_runtime_b_kernels(FAMILY)
        + int8_eltwise_kernels(FAMILY)
        + qmul_gate_kernels(FAMILY)
        + qmul_zero_points_kernels(FAMILY)
        + qlookup_kernels(FAMILY)
        + quantized_reorder_kernels(FAMILY)
        + quantized_batch_norm_kernels(FAMILY)
        + qconcat_kernels(FAMILY)
        + integer_kernels(FAMILY)
        + dynamic_quantize_kernels(FAMILY)
        + [integer_conv_kernel(FAMILY)]
    )


def forget_choices() -> None:
    """Forgets oneDNN's choices and the primitives created in this process, as a new process
    would start (they depend on its thread count, which may have changed)."""
    conv_choice.cache_clear()
    qconv_choice.cache_clear()
    qmatmul_choice.cache_clear()
    runtime_b_pd.cache_clear()
    integer_matmul_choice.cache_clear()
    deconv_choice.cache_clear()
    CHOICES.clear()
    FC_LAYOUTS.clear()
    p.clear_cache()
