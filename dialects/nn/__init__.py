"""The `nn` dialect: neural-network operators on ranked tensors, with ONNX semantics.

Every op checks its attributes and operand shapes and that its declared result type is the one
its shape rule gives. The shape rules are plain functions (`conv2d_shape`, `pool2d_shape`, ...)
so that importers and passes compute result types the same way the verifier checks them; each op
also has a builder that derives its result type from its operands.

Shapes are logical (NCHW activations, OIHW weights, as in ONNX). A tensor may carry a
`#layout.layout<...>` or `#layout.storage<...>` encoding; it changes how the value is stored,
never its logical shape, so the shape rules ignore it.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from nnlayout.dialects.compute import ComputeOp, YieldOp
from nnlayout.dialects.kernel_attr import KernelAttr
from nnlayout.dialects.nn.base import (
    NNOp,
    Shape,
    Value,
    broadcast_shapes,
    i64_array,
    ints,
    normalize_axis,
    shape_of,
    tensor_type,
    with_shape,
)
from nnlayout.dialects.nn.constant import ConstantOp
from nnlayout.dialects.nn.elementwise import (
    ACTIVATIONS,
    AbsOp,
    AddOp,
    BinaryOp,
    ClipOp,
    DivOp,
    ExpOp,
    LeakyReluOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PReluOp,
    ReluOp,
    SigmoidOp,
    SqrtOp,
    SubOp,
    SumOp,
    TanhOp,
    UnaryOp,
    verify_clip_bounds,
)
from nnlayout.dialects.nn.fused import FusedConv2dOp
from nnlayout.dialects.nn.linear import Conv2dOp, ConvTranspose2dOp, GemmOp, MatmulOp
from nnlayout.dialects.nn.normalization import BatchNormOp, SoftmaxOp
from nnlayout.dialects.nn.pooling import AvgPool2dOp, GlobalAvgPoolOp, MaxPool2dOp, Pool2dOp
from nnlayout.dialects.nn.shape_rules import (
    concat_shape,
    conv2d_shape,
    conv_transpose2d_shape,
    flatten_shape,
    gemm_shape,
    matmul_shape,
    pool2d_shape,
    transpose_shape,
)
from nnlayout.dialects.nn.shapes import ConcatOp, FlattenOp, ReshapeOp, TransposeOp

NN = Dialect(
    "nn",
    [
        Conv2dOp,
        FusedConv2dOp,
        ConvTranspose2dOp,
        MatmulOp,
        GemmOp,
        ReluOp,
        LeakyReluOp,
        SigmoidOp,
        TanhOp,
        ExpOp,
        NegOp,
        AbsOp,
        SqrtOp,
        ClipOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        MaxOp,
        MinOp,
        PReluOp,
        SumOp,
        BatchNormOp,
        MaxPool2dOp,
        AvgPool2dOp,
        GlobalAvgPoolOp,
        ConcatOp,
        SoftmaxOp,
        FlattenOp,
        ReshapeOp,
        TransposeOp,
        ConstantOp,
        ComputeOp,
        YieldOp,
    ],
    [KernelAttr],
)

__all__ = [
    "ACTIVATIONS",
    "AbsOp",
    "AddOp",
    "AvgPool2dOp",
    "BatchNormOp",
    "BinaryOp",
    "ClipOp",
    "ComputeOp",
    "ConcatOp",
    "ConstantOp",
    "Conv2dOp",
    "ConvTranspose2dOp",
    "DivOp",
    "ExpOp",
    "FlattenOp",
    "FusedConv2dOp",
    "GemmOp",
    "GlobalAvgPoolOp",
    "KernelAttr",
    "LeakyReluOp",
    "MatmulOp",
    "MaxOp",
    "MaxPool2dOp",
    "MinOp",
    "MulOp",
    "NN",
    "NNOp",
    "NegOp",
    "PReluOp",
    "Pool2dOp",
    "ReluOp",
    "ReshapeOp",
    "Shape",
    "SigmoidOp",
    "SoftmaxOp",
    "SqrtOp",
    "SubOp",
    "SumOp",
    "TanhOp",
    "TransposeOp",
    "UnaryOp",
    "Value",
    "YieldOp",
    "_check_type",
    "_check_window_attrs",
    "_require_len",
    "_require_non_negative",
    "_require_positive",
    "_require_rank",
    "_window_output",
    "broadcast_shapes",
    "concat_shape",
    "conv2d_shape",
    "conv_transpose2d_shape",
    "flatten_shape",
    "gemm_shape",
    "i64_array",
    "ints",
    "matmul_shape",
    "normalize_axis",
    "pool2d_shape",
    "shape_of",
    "tensor_type",
    "transpose_shape",
    "verify_clip_bounds",
    "with_shape",
]
