"""Converters of ONNX's quantized operators: the QDQ form's QuantizeLinear and
DequantizeLinear (to `nn.quantize`/`nn.dequantize`), and the QOperator form's QLinearConv,
QLinearMatMul and com.microsoft's QLinearAdd, QLinearMul, QLinearGlobalAveragePool and
QLinearConcat (to the q-ops of `nn`'s `quantized.py`).

Scales and zero points must be constants (they become the ops' properties): per tensor (one
element, of any rank) or per axis (a 1-D scale). Supported: 8-bit integers (uint8, int8;
int32 biases into DequantizeLinear), f32 scales. Refused in one line naming the node and what
is missing: 4-bit and 16-bit integers and float8 (their zero point's or output_dtype's type),
block-wise scales (`block_size`, a scale of rank 2 or more), a per-row `a` of QLinearMatMul,
channels-last QLinearGlobalAveragePool.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto
from xdsl.dialects.builtin import i8, i32
from xdsl.ir import Attribute, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.nn import QParams
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.frontends.onnx.windows import conv_window, finish_spatial

#: The ONNX types of quantized data nn holds (int32: DequantizeLinear's bias input only).
QUANTIZED: dict[int, Attribute] = {TensorProto.UINT8: nn.ui8, TensorProto.INT8: i8}
_WITH_BIAS: dict[int, Attribute] = {**QUANTIZED, TensorProto.INT32: i32}


def _type_name(onnx_type: int) -> str:
    return TensorProto.DataType.Name(onnx_type)


def _constant_type(state: ImportState, name: str) -> int:
    return state.constants[state.aliases.get(name, name)].data_type


def _input(node: onnx.NodeProto, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def _element_type(state: ImportState, onnx_type: int, what: str, allowed: dict) -> Attribute:
    if onnx_type not in allowed:
        kinds = ", ".join(_type_name(t) for t in allowed)
        raise state.fail(
            f"{what} is {_type_name(onnx_type)}; nnlayout imports quantization to {kinds} "
            "only (not 4-bit, 16-bit or float8 types)"
        )
    return allowed[onnx_type]


def read_qparams(
    state: ImportState,
    node: onnx.NodeProto,
    indices: tuple[int, int],
    element_type: Attribute,
    axis: int | None = None,
    what: str = "",
    same_size: bool = False,
) -> QParams:
    """The scale (input `indices[0]`) and zero point (`indices[1]`, 0 when absent) of `node`;
    per axis along `axis` where the scale has several elements (`axis` None: refused).
    `same_size`: a zero point must have as many values as the scale (QuantizeLinear and
    DequantizeLinear: ONNX requires their shapes to match, and onnxruntime refuses a scalar
    zero point to several scales); otherwise one value of either is broadcast."""
    scale_name, zp_name = _input(node, indices[0]), _input(node, indices[1])
    label = what or scale_name
    scale = state.constant_array(scale_name, f"scale of {label}")
    if scale.dtype.kind != "f":
        raise state.fail(f"scale '{scale_name}' is {scale.dtype}, not a float")
    if scale.ndim > 1:
        raise state.fail(
            f"scale '{scale_name}' has shape {list(scale.shape)}: block-wise scales are not "
            "supported (nnlayout imports per-tensor and per-axis quantization)"
        )
    zero_point = np.zeros((), np.int64)
    if zp_name:
        zero_point = state.constant_array(zp_name, f"zero point of {label}").astype(np.int64)
        if zero_point.ndim > 1:
            raise state.fail(f"zero point '{zp_name}' has shape {list(zero_point.shape)}")
    if zp_name and same_size and zero_point.size != scale.size:
        raise state.fail(
            f"zero point '{zp_name}' has shape {list(zero_point.shape)} and scale "
            f"'{scale_name}' shape {list(scale.shape)}: ONNX requires a zero point of the "
            "scale's shape"
        )
    count = max(scale.size, zero_point.size)
    if scale.size not in (1, count) or zero_point.size not in (1, count):
        raise state.fail(
            f"scale '{scale_name}' ({scale.size} values) and zero point '{zp_name}' "
            f"({zero_point.size}) of {label} do not match"
        )
    if count == 1:
        return QParams.make(scale.reshape(()), zero_point.reshape(()), element_type)
    if axis is None:
        raise state.fail(
            f"{label} has {count} scales or zero points; per-axis quantization needs an axis "
            "within the input's rank, and nnlayout imports one (per tensor) here otherwise"
        )
    scales = np.broadcast_to(scale.reshape(-1), (count,))
    return QParams.make(
        scales, np.broadcast_to(zero_point.reshape(-1), (count,)), element_type, axis
    )


def _check_block_size(state: ImportState, attrs: dict) -> None:
    if int(attrs.get("block_size", 0)) != 0:
        raise state.fail(
            f"block_size {attrs['block_size']}: block-wise quantization is not supported "
            "(nnlayout imports per-tensor and per-axis quantization)"
        )


def _axis(state: ImportState, attrs: dict, value: SSAValue) -> int | None:
    """The node's axis made non-negative; None where it is out of range, which only matters
    for per-axis parameters (`read_qparams` refuses them then): per tensor, ONNX ignores the
    axis (a 1-D bias's DequantizeLinear keeps the default axis 1)."""
    rank = len(nn.shape_of(value))
    axis = int(attrs.get("axis", 1))
    return axis % rank if -rank <= axis < rank else None


def quantize_linear(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """QuantizeLinear: x f32 -> uint8/int8, the type of the zero point (or output_dtype)."""
    _check_block_size(state, attrs)
    x = state.operand(node, 0)
    if zp := _input(node, 2):
        state.constant_array(zp, "zero point")  # refuses one computed at run time
        onnx_type = _constant_type(state, zp)
    else:
        onnx_type = int(attrs.get("output_dtype", 0)) or TensorProto.UINT8
    element_type = _element_type(state, onnx_type, "the quantized type", QUANTIZED)
    params = read_qparams(state, node, (1, 2), element_type, _axis(state, attrs, x), same_size=True)
    state.output(node, state.build(lambda: nn.QuantizeOp(x, params)))


def dequantize_linear(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """DequantizeLinear: uint8/int8/int32 (an activation, or a constant weight or bias that
    stays quantized) -> f32."""
    _check_block_size(state, attrs)
    if int(attrs.get("output_dtype", TensorProto.FLOAT)) not in (
        TensorProto.FLOAT,
        TensorProto.FLOAT16,  # computed in float32 (frontends/onnx/__init__.py)
        TensorProto.BFLOAT16,
    ):
        raise state.fail(
            f"output_dtype {_type_name(attrs['output_dtype'])}: nnlayout dequantizes to "
            "float32 (or float16 or bfloat16, computed in float32) only"
        )
    x = state.operand(node, 0)
    onnx_type = _onnx_type(nn.tensor_type(x).element_type)
    element_type = _element_type(state, onnx_type, "the input", _WITH_BIAS)
    params = read_qparams(state, node, (1, 2), element_type, _axis(state, attrs, x), same_size=True)
    state.output(node, state.build(lambda: nn.DequantizeOp(x, params)))


def _onnx_type(element_type: Attribute) -> int:
    return next((t for t, e in _WITH_BIAS.items() if e == element_type), TensorProto.FLOAT)


def _quantized_operand(
    state: ImportState, node: onnx.NodeProto, index: int, what: str
) -> tuple[SSAValue, Attribute]:
    value = state.operand(node, index)
    onnx_type = _onnx_type(nn.tensor_type(value).element_type)
    return value, _element_type(state, onnx_type, what, QUANTIZED)


def qlinear_conv(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?)."""
    x, x_type = _quantized_operand(state, node, 0, "input x")
    w, w_type = _quantized_operand(state, node, 3, "weight w")
    bias = state.optional_operand(node, 8)
    y_type = _zero_point_type(state, node, 7, x_type)
    params = (
        read_qparams(state, node, (1, 2), x_type, what="x"),
        read_qparams(state, node, (4, 5), w_type, 0, what="w"),
        read_qparams(state, node, (6, 7), y_type, what="y"),
    )
    x, w, rank, window = conv_window(state, attrs, x, w)
    op = state.build(lambda: nn.QConv2dOp(x, w, bias, params, **window))
    finish_spatial(state, node, op, rank)


def _zero_point_type(
    state: ImportState, node: onnx.NodeProto, index: int, default: Attribute
) -> Attribute:
    """The type of the zero point input `index` (the result's type), `default` without one."""
    name = _input(node, index)
    if not name or not state.is_constant(name):
        return default
    return _element_type(state, _constant_type(state, name), f"zero point '{name}'", QUANTIZED)


def qlinear_matmul(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): b per column."""
    a, a_type = _quantized_operand(state, node, 0, "input a")
    b, b_type = _quantized_operand(state, node, 3, "input b")
    y_type = _zero_point_type(state, node, 7, a_type)
    b_axis = len(nn.shape_of(b)) - 1
    params = (
        read_qparams(state, node, (1, 2), a_type, what="a"),
        read_qparams(state, node, (4, 5), b_type, b_axis, what="b"),
        read_qparams(state, node, (6, 7), y_type, what="y"),
    )
    state.output(node, state.build(lambda: nn.QMatmulOp(a, b, None, params)))


def qgemm(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale, y_zp): A @ op(B)
    + C as `nn.qmatmul` with an i32 bias (op(B) a transpose with transB, per column)."""
    if int(attrs.get("transA", 0)) or float(attrs.get("alpha", 1.0)) != 1.0:
        raise state.fail("transA = 1 or alpha != 1 is not supported (nn.qmatmul is A @ B + C)")
    if not _input(node, 7):
        raise state.fail(
            "a float output (no y_scale) is not supported; nnlayout imports a "
            "QGemm with a quantized output"
        )
    a, a_type = _quantized_operand(state, node, 0, "input A")
    b, b_type = _quantized_operand(state, node, 3, "input B")
    if int(attrs.get("transB", 0)):
        b = state.emit(state.build(lambda: nn.TransposeOp(b, (1, 0))))
    bias = state.optional_operand(node, 6)
    columns = nn.shape_of(b)[-1]
    if bias is not None and nn.shape_of(bias) != (columns,):
        if len(nn.shape_of(bias)) != 2 or nn.shape_of(bias)[0] != 1:
            raise state.fail(
                f"C of shape {list(nn.shape_of(bias))}: nnlayout imports a bias of N values"
            )
        bias = state.emit(state.build(lambda: nn.ReshapeOp(bias, (columns,))))
    y_type = _zero_point_type(state, node, 8, a_type)
    params = (
        read_qparams(state, node, (1, 2), a_type, what="A"),
        read_qparams(state, node, (4, 5), b_type, 1, what="B"),
        read_qparams(state, node, (7, 8), y_type, what="Y"),
    )
    state.output(node, state.build(lambda: nn.QMatmulOp(a, b, bias, params)))


def qlinear_binary(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearAdd/QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp)."""
    a, element_type = _quantized_operand(state, node, 0, "input A")
    b, _ = _quantized_operand(state, node, 3, "input B")
    params = (
        read_qparams(state, node, (1, 2), element_type, what="A"),
        read_qparams(state, node, (4, 5), element_type, what="B"),
        read_qparams(state, node, (6, 7), element_type, what="C"),
    )
    op_class = nn.QAddOp if node.op_type == "QLinearAdd" else nn.QMulOp
    state.output(node, state.build(lambda: op_class(a, b, params)))


def qlinear_global_average_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp), NCHW."""
    if int(attrs.get("channels_last", 0)):
        raise state.fail("channels_last = 1 is not supported (nnlayout imports NCHW data)")
    x, element_type = _quantized_operand(state, node, 0, "input X")
    params = (
        read_qparams(state, node, (1, 2), element_type, what="X"),
        read_qparams(state, node, (3, 4), element_type, what="Y"),
    )
    state.output(node, state.build(lambda: nn.QGlobalAvgPoolOp(x, params)))


def qlinear_concat(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearConcat(Y_scale, Y_zp, X1, X1_scale, X1_zp, X2, ...)."""
    if len(node.input) < 5 or (len(node.input) - 2) % 3:
        raise state.fail("needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples")
    inputs, x_params = [], []
    element_type: Attribute | None = None
    for start in range(2, len(node.input), 3):
        value, value_type = _quantized_operand(state, node, start, f"input {start // 3}")
        element_type = element_type or value_type
        inputs.append(value)
        x_params.append(read_qparams(state, node, (start + 1, start + 2), value_type))
    assert element_type is not None
    y = read_qparams(state, node, (0, 1), element_type, what="Y")
    joined = QParams.make(
        [float(p.scale) for p in x_params], [int(p.zero_point) for p in x_params], element_type
    )
    axis = int(attrs.get("axis", 1))
    state.output(node, state.build(lambda: nn.QConcatOp(inputs, axis, (joined, y))))


#: Converters of the default domain's quantized operators.
CONVERTERS = {
    "QuantizeLinear": quantize_linear,
    "DequantizeLinear": dequantize_linear,
    "QLinearConv": qlinear_conv,
    "QLinearMatMul": qlinear_matmul,
}
#: Converters of com.microsoft operators (onnxruntime's QOperator form).
MICROSOFT_CONVERTERS = {
    "QGemm": qgemm,
    "QLinearAdd": qlinear_binary,
    "QLinearMul": qlinear_binary,
    "QLinearGlobalAveragePool": qlinear_global_average_pool,
    "QLinearConcat": qlinear_concat,
}
