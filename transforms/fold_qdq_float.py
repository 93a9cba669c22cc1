"""The products `fold-qdq` folds whose result stays float (transforms/fold_qdq.py's
`FoldFloatProduct`, after its quantize-rooted folds): a matmul of a dequantized activation
and dequantized constant weights (or their transpose, a Linear as the dynamo exporter
writes it) that no quantize takes becomes `nn.matmul_integer_to_float`, the integer product
scaled to f32 once (onnxruntime's QDQ transformer makes such a DQ -> MatMul a
MatMulIntegerToFloat). torch's x86 quantizer (torchao's X86InductorQuantizer) quantizes a
Linear's inputs only: its output goes on in float (to a GELU, a residual add), and ran in
f32 on dequantized weights. Likewise a convolution of a dequantized activation and
dequantized constant weights whose result stays float (the x86 quantizer's, before a SiLU,
a hardswish or a LayerNorm) becomes `nn.qconv2d_to_float`: the exact sum plus the bias,
scaled to f32 once (oneDNN's int8 convolution writing f32), with the activation that is
its result's only user (EfficientNet's SiLU whose float result its SE gate multiplies).

    %a = nn.dequantize %aq {x_scale = dense<0.03>, x_zero_point = dense<129> : tensor<ui8>}
    %w = nn.dequantize %wq {axis = 0, x_scale = dense<[...]> : tensor<Nxf32>, ...i8}
    %t = nn.transpose %w perm [1, 0]
    %m = nn.matmul %a, %t : (tensor<1x197x768xf32>, tensor<768xNxf32>) -> tensor<1x197xNxf32>
  becomes
    %t = nn.transpose %wq perm [1, 0]                       (integers, computed at load)
    %s = nn.constant dense<[0.03 * w_scale[n] ...]> : tensor<Nxf32>
    %z = nn.constant dense<129> : tensor<ui8>
    %m = nn.matmul_integer_to_float %aq, %t scale %s zero_point %z {b_zero_point = ...}

The product is exact in i32 and scaled by a_scale * w_scale in one f32 multiplication, where
the float ops rounded each dequantized value and each partial sum in f32: the same real
value up to f32 rounding (about 1e-6 relative). a is quantized per tensor, the weights per
tensor or per column (their zero points a constant property; oneDNN's kernel takes one per
tensor, else the reference kernel runs).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.transforms.fold_qdq_products import (
    NoFold,
    dequantized,
    fold_conv,
    transposed_weights,
)


def _constant(element_type: object, values: np.ndarray) -> nn.ConstantOp:
    values = np.asarray(values)
    kind = TensorType(element_type, values.shape)  # type: ignore[arg-type]
    return nn.ConstantOp(
        kind, value=DenseIntOrFPElementsAttr.from_list(kind, values.reshape(-1).tolist())
    )


def integer_product(op: nn.MatmulOp) -> list[Operation]:
    """The ops computing `op` as `nn.matmul_integer_to_float` (NoFold: why not)."""
    b_value, transposed = op.rhs, False
    if (weights := transposed_weights(op.rhs)) is not None:
        b_value, transposed = weights, True
    a, a_params = dequantized(op.lhs, "operand a")
    b_rank = len(nn.shape_of(b_value))
    if b_rank != 2:
        raise NoFold("b is not 2-D")
    b, b_params = dequantized(b_value, "operand b", 0 if transposed else 1)
    if not is_constant(b):
        raise NoFold("b is not a constant")
    columns = nn.shape_of(b)[0 if transposed else 1]
    scale = np.float32(a_params.scale) * np.asarray(b_params.scale, np.float32)
    made: list[Operation] = [scales := _constant(f32, scale.astype(np.float32))]
    made.append(zero_point := _constant(a_params.element_type, a_params.zero_point))
    if transposed:
        made.append(flip := nn.TransposeOp(b, (1, 0)))
        b = flip.output
    b_zero_point = np.broadcast_to(b_params.zero_point, (columns,) if b_params.per_axis else ())
    made.append(
        nn.MatmulIntegerToFloatOp(a, b, scales.output, zero_point.output, b_zero_point.copy())
    )
    return made


def integer_convolution(op: nn.Conv2dOp, activation: nn.UnaryOp | None) -> list[Operation]:
    """The ops computing `op`, then `activation` (its only user, or None), as
    `nn.qconv2d_to_float` (NoFold: why not): its bias made as `nn.qconv2d`'s is
    (`fold_conv`)."""
    if not is_constant(op.weight):
        raise NoFold("the weight is not a constant")
    y = nn.QParams.make(1.0, 0)  # unused: the result is real
    *made, conv = fold_conv(op, y, None)
    assert isinstance(conv, nn.QConv2dOp)
    real = nn.QConv2dToFloatOp(conv, activation)
    conv.erase()  # only described the convolution: never inserted
    return [*made, real]
