"""Converters of ONNX's dynamic quantization operators, as onnxruntime's `quantize_dynamic`
writes them: DynamicQuantizeLinear (to `nn.dynamic_scale`, `nn.dynamic_zero_point` and
`nn.dynamic_quantize`, one per output), MatMulInteger (`nn.matmul_integer`) and ConvInteger
(`nn.conv_integer`, 2-D; 1-D as 2-D); the Cast to float32 that follows them is `cast` of
`reshapes.py` (`nn.cast`).

The activation's zero point (A's, x's) may be computed at run time (DynamicQuantizeLinear's);
it is a scalar (one element). The weight's (B's, w's) must be a constant: a scalar, or one per
column of B / output channel of w. Refused in one line naming the node and what is missing:
a per-row zero point of A, a weight zero point computed at run time, types other than
uint8/int8 (and float32 into DynamicQuantizeLinear).
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.frontends.onnx.windows import conv_window, finish_spatial


def dynamic_quantize_linear(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """DynamicQuantizeLinear(x) -> y, y_scale, y_zero_point: three ops of one result each."""
    x = state.operand(node, 0)
    if nn.tensor_type(x).element_type != f32:
        raise state.fail(
            f"input x is {nn.tensor_type(x).element_type}; nnlayout quantizes float32 "
            "tensors dynamically"
        )
    scale = state.build(lambda: nn.DynamicScaleOp(x))
    zero_point = state.build(lambda: nn.DynamicZeroPointOp(x))
    for index, op in ((1, scale), (2, zero_point)):
        if len(node.output) > index and node.output[index]:
            state.output(node, op, index)
        else:
            state.emit(op)
    quantize = state.build(lambda: nn.DynamicQuantizeOp(x, scale.results[0], zero_point.results[0]))
    state.output(node, quantize)


def _integer_operand(state: ImportState, node: onnx.NodeProto, index: int, what: str) -> SSAValue:
    value = state.operand(node, index)
    element_type = nn.tensor_type(value).element_type
    if element_type not in nn.QUANTIZED_TYPES:
        raise state.fail(f"{what} is {element_type}; {node.op_type} takes uint8 or int8 data")
    return value


def _activation_zero_point(
    state: ImportState, node: onnx.NodeProto, index: int, what: str
) -> SSAValue | None:
    """The activation's zero point input `index` as a rank-0 operand (None when absent or a
    constant 0); refuses one of several elements (per row)."""
    name = node.input[index] if len(node.input) > index else ""
    if not name:
        return None
    if state.is_constant(name) and not np.any(state.constant_array(name, what)):
        return None
    value = state.operand(node, index)
    size = int(np.prod(nn.shape_of(value)))
    if size != 1:
        raise state.fail(
            f"{what} '{name}' has {size} values: a per-row zero point is not supported "
            "(nnlayout imports one zero point for the activation)"
        )
    if nn.shape_of(value) == ():
        return value
    return state.emit(nn.ReshapeOp(value, ()))


def _weight_zero_point(
    state: ImportState, node: onnx.NodeProto, index: int, what: str, columns: int
) -> np.ndarray | None:
    """The weight's constant zero point input `index`: one value, or `columns` (per column
    or output channel); None when absent."""
    name = node.input[index] if len(node.input) > index else ""
    if not name:
        return None
    values = state.constant_array(name, what).astype(np.int64)
    if values.size == 1:
        return values.reshape(())
    if values.ndim != 1 or values.size != columns:
        raise state.fail(
            f"{what} '{name}' has shape {list(values.shape)}; nnlayout imports one zero point "
            f"or {columns} (one per output column or channel)"
        )
    return values


def matmul_integer(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32."""
    a = _integer_operand(state, node, 0, "input A")
    b = _integer_operand(state, node, 1, "input B")
    a_zero_point = _activation_zero_point(state, node, 2, "zero point of A")
    b_zero_point = _weight_zero_point(state, node, 3, "zero point of B", nn.shape_of(b)[-1])
    state.output(node, state.build(lambda: nn.MatmulIntegerOp(a, b, a_zero_point, b_zero_point)))


def conv_integer(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32, 2-D (1-D as 2-D)."""
    x = _integer_operand(state, node, 0, "input x")
    w = _integer_operand(state, node, 1, "weight w")
    x_zero_point = _activation_zero_point(state, node, 2, "zero point of x")
    w_zero_point = _weight_zero_point(state, node, 3, "zero point of w", nn.shape_of(w)[0])
    x, w, rank, window = conv_window(state, attrs, x, w)
    op = state.build(lambda: nn.ConvIntegerOp(x, w, x_zero_point, w_zero_point, **window))
    finish_spatial(state, node, op, rank)


#: Converters of the default domain's dynamic quantization operators.
CONVERTERS = {
    "DynamicQuantizeLinear": dynamic_quantize_linear,
    "MatMulInteger": matmul_integer,
    "ConvInteger": conv_integer,
}
