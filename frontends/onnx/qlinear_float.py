"""Converters of onnxruntime's com.microsoft QOperator ops that `nn` has no q-op of:
QLinearAveragePool, QLinearSoftmax, QLinearLeakyRelu, QLinearSigmoid, QLinearReduceMean and
QLinearWhere, each imported as
`nn.dequantize` of its input, the float op (the default domain's converter, on the same
attributes) and `nn.quantize` of the result. That is the QDQ form of the op, which
`fold-qdq` folds into a q-op where a kernel exists and which runs in float otherwise; it
computes what onnxruntime's QLinear kernels approximate (within one quantization step).

    %y = "QLinearSigmoid"(%x, %xs, %xz, %ys, %yz)
becomes
    %f = nn.dequantize %x {scale = xs, zero_point = xz}
    %s = nn.sigmoid %f
    %y = nn.quantize %s {scale = ys, zero_point = yz}

QLinearWhere(condition, X, X_scale, X_zp, Y, Y_scale, Y_zp, Z_scale, Z_zp) dequantizes both
X and Y and selects between them with `nn.where`.

Refused (with the others of the domain nnlayout does not import): channels-last
QLinearAveragePool (nn imports NCHW data); a QLinearReduceMean without its required `axes`
and `keepdims`.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from xdsl.ir import Attribute, SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.elementwise import leaky_relu, unary
from nnlayout.frontends.onnx.normalisation import softmax
from nnlayout.frontends.onnx.pooling import average_pool
from nnlayout.frontends.onnx.quantized import _quantized_operand, _zero_point_type, read_qparams
from nnlayout.frontends.onnx.reduction import reduce
from nnlayout.frontends.onnx.state import ImportState

FloatConverter = Callable[[ImportState, onnx.NodeProto, dict], None]


def _dequantized(
    state: ImportState, node: onnx.NodeProto, index: int, what: str
) -> tuple[SSAValue, Attribute]:
    """`nn.dequantize` of the node's quantized input `index` by its scale and zero point
    (inputs `index` + 1 and + 2), emitted; and the input's element type."""
    value, value_type = _quantized_operand(state, node, index, f"input {what}")
    params = read_qparams(state, node, (index + 1, index + 2), value_type, what=what)
    return state.emit(state.build(lambda: nn.DequantizeOp(value, params))), value_type


def _through_float(
    state: ImportState, node: onnx.NodeProto, attrs: dict, op_type: str, convert: FloatConverter
) -> None:
    """node(X, X_scale, X_zp, Y_scale, Y_zp) as quantize(op_type(dequantize(X)))."""
    x, x_type = _dequantized(state, node, 0, "X")
    y_type = _zero_point_type(state, node, 4, x_type)
    y_params = read_qparams(state, node, (3, 4), y_type, what="Y")
    output = node.output[0]
    floats = state.fresh_name(f"{output}.dequantized"), state.fresh_name(f"{output}.float")
    state.values[floats[0]] = x
    float_node = onnx.helper.make_node(op_type, [floats[0]], [floats[1]], name=node.name)
    convert(state, float_node, attrs)
    result = state.values[floats[1]]
    state.output(node, state.build(lambda: nn.QuantizeOp(result, y_params)))


def qlinear_average_pool(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearAveragePool(X, x_scale, x_zp, y_scale, y_zp): AveragePool's
    attributes, NCHW."""
    if int(attrs.get("channels_last", 0)):
        raise state.fail("channels_last = 1 is not supported (nnlayout imports NCHW data)")
    pool_attrs = {k: v for k, v in attrs.items() if k != "channels_last"}
    _through_float(state, node, pool_attrs, "AveragePool", average_pool)


def qlinear_softmax(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearSoftmax(X, X_scale, X_zp, Y_scale, Y_zp): Softmax's semantics at
    the opset of the `opset` attribute (before 13: over the input coerced to 2-D at `axis`)."""
    softmax_attrs = {"axis": attrs["axis"]} if "axis" in attrs else {}
    model_opset, state.opset = state.opset, int(attrs.get("opset", 1))
    try:
        _through_float(state, node, softmax_attrs, "Softmax", softmax)
    finally:
        state.opset = model_opset


def qlinear_leaky_relu(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearLeakyRelu(X, X_scale, X_zp, Y_scale, Y_zp), `alpha`."""
    _through_float(state, node, attrs, "LeakyRelu", leaky_relu)


def qlinear_sigmoid(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearSigmoid(X, X_scale, X_zp, Y_scale, Y_zp)."""
    _through_float(state, node, attrs, "Sigmoid", unary)


def qlinear_reduce_mean(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearReduceMean(data, data_scale, data_zp, reduced_scale, reduced_zp):
    ReduceMean over the required `axes` attribute, `keepdims` (also required)."""
    for name in ("axes", "keepdims"):
        if name not in attrs:
            raise state.fail(f"the required attribute '{name}' is missing")
    if not list(attrs["axes"]):
        raise state.fail("axes = [] is not supported (name the reduced axes)")
    reduce_attrs = {"axes": list(attrs["axes"]), "keepdims": int(attrs["keepdims"])}
    _through_float(state, node, reduce_attrs, "ReduceMean", reduce)


def qlinear_where(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """com.microsoft QLinearWhere(condition, X, X_scale, X_zp, Y, Y_scale, Y_zp, Z_scale,
    Z_zp): quantize(where(condition, dequantize(X), dequantize(Y)))."""
    if len(node.input) != 9 or not all(node.input):
        raise state.fail(
            "takes 9 inputs (condition, X, X_scale, X_zero_point, Y, Y_scale, Y_zero_point, "
            f"Z_scale, Z_zero_point), got {sum(map(bool, node.input))}"
        )
    mask = state.operand(node, 0)
    x, x_type = _dequantized(state, node, 1, "X")
    y, y_type = _dequantized(state, node, 4, "Y")
    z_type = _zero_point_type(state, node, 8, x_type)
    if y_type != x_type or z_type != x_type:
        raise state.fail(
            f"X, Y and Z_zero_point have one type (onnxruntime's T), got {x_type}, "
            f"{y_type} and {z_type}"
        )
    z_params = read_qparams(state, node, (7, 8), z_type, what="Z")
    selected = state.emit(state.build(lambda: nn.WhereOp(mask, x, y)))
    state.output(node, state.build(lambda: nn.QuantizeOp(selected, z_params)))


#: com.microsoft QOperator ops imported through their float op.
CONVERTERS = {
    "QLinearAveragePool": qlinear_average_pool,
    "QLinearSoftmax": qlinear_softmax,
    "QLinearLeakyRelu": qlinear_leaky_relu,
    "QLinearSigmoid": qlinear_sigmoid,
    "QLinearReduceMean": qlinear_reduce_mean,
    "QLinearWhere": qlinear_where,
}
