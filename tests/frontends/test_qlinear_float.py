"""com.microsoft QLinearAveragePool, QLinearSoftmax, QLinearLeakyRelu, QLinearSigmoid and
QLinearReduceMean (the QOperator ops `quantize_static` writes that `nn` has no q-op of),
imported as dequantize -> float op -> quantize: within one quantization step of onnxruntime
on every target, and the ops of the domain still refused in one line naming the node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import (
    check_against_onnxruntime,
    output_step,
    quantize_with_onnxruntime,
)

X_SCALE, Y_SCALE = 0.05, 0.02


def as_qdq(model: onnx.ModelProto, float_op: str) -> onnx.ModelProto:
    """`model` with its com.microsoft node 'op' replaced by DequantizeLinear -> `float_op` (on
    the same attributes) -> QuantizeLinear: the op's definition, for the ops onnxruntime has
    no CPU kernel of (QLinearReduceMean)."""
    reference = onnx.ModelProto()
    reference.CopyFrom(model)
    nodes = list(reference.graph.node)
    index = next(i for i, n in enumerate(nodes) if n.name == "op")
    node = nodes[index]
    q, xs, xz, ys, yz = node.input
    replacement = [
        helper.make_node("DequantizeLinear", [q, xs, xz], ["op.x"]),
        helper.make_node(float_op, ["op.x"], ["op.y"]),
        helper.make_node("QuantizeLinear", ["op.y", ys, yz], list(node.output)),
    ]
    replacement[1].attribute.extend(node.attribute)
    del reference.graph.node[:]
    reference.graph.node.extend(nodes[:index] + replacement + nodes[index + 1 :])
    del reference.opset_import[:]
    reference.opset_import.append(helper.make_opsetid("", 17))
    return reference


def qlinear_model(
    op_type: str,
    zp_type: type = np.uint8,
    model_opset: int = 21,
    out_shape: tuple[int, ...] = (1, 4, 5, 6),
    **attrs: object,
) -> onnx.ModelProto:
    """x f32 [1, 4, 5, 6] -> QuantizeLinear -> `op_type` -> DequantizeLinear -> y f32."""
    x_zp, y_zp = (
        zp_type(128 if zp_type is np.uint8 else 3),
        zp_type(40 if zp_type is np.uint8 else -20),
    )
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q"]),
        helper.make_node(
            op_type,
            ["q", "xs", "xz", "ys", "yz"],
            ["p"],
            name="op",
            domain="com.microsoft",
            **attrs,
        ),
        helper.make_node("DequantizeLinear", ["p", "ys", "yz"], ["y"]),
    ]
    constants = {"xs": np.float32(X_SCALE), "xz": x_zp, "ys": np.float32(Y_SCALE), "yz": y_zp}
    graph = helper.make_graph(
        nodes,
        "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    opsets = [helper.make_opsetid("", model_opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


CASES = {
    "avgpool": ("QLinearAveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "avgpool_strided": (
        "QLinearAveragePool",
        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 1], "count_include_pad": 1},
    ),
    "softmax13": ("QLinearSoftmax", {"axis": -1, "opset": 13}),
    "softmax11": ("QLinearSoftmax", {"axis": 1, "opset": 11}),
    "leaky_relu": ("QLinearLeakyRelu", {"alpha": 0.1}),
    "sigmoid": ("QLinearSigmoid", {}),
    "reduce_mean_channels": ("QLinearReduceMean", {"axes": [1], "keepdims": 1}),
    "reduce_mean_hw": ("QLinearReduceMean", {"axes": [2, 3], "keepdims": 0}),
    "reduce_mean_last": ("QLinearReduceMean", {"axes": [-1], "keepdims": 0}),
}
OUT_SHAPES = {
    "avgpool_strided": (1, 4, 3, 4),
    "reduce_mean_channels": (1, 1, 5, 6),
    "reduce_mean_hw": (1, 4),
    "reduce_mean_last": (1, 4, 5),
}
FLOAT_OP = {
    "QLinearAveragePool": nn.AvgPool2dOp,
    "QLinearSoftmax": nn.SoftmaxOp,
    "QLinearLeakyRelu": nn.LeakyReluOp,
    "QLinearSigmoid": nn.SigmoidOp,
    "QLinearReduceMean": (nn.ReduceOp, nn.GlobalAvgPoolOp),
}


@pytest.mark.parametrize("zp_type", [np.uint8, np.int8], ids=["u8", "s8"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_qlinear_op_runs_like_onnxruntime(tmp_path: Path, case: str, zp_type: type) -> None:
    op_type, attrs = CASES[case]
    out_shape = OUT_SHAPES.get(case, (1, 4, 5, 6))
    model = qlinear_model(op_type, zp_type, out_shape=out_shape, **attrs)
    # onnxruntime has no CPU kernel of QLinearReduceMean: it runs the op's QDQ definition.
    reference = as_qdq(model, "ReduceMean") if op_type == "QLinearReduceMean" else None
    module = check_against_onnxruntime(model, tmp_path, seed=5, step=Y_SCALE, reference=reference)
    ops = [op for op in module.walk() if not isinstance(op, nn.ConstantOp)]
    names = [op.name for op in ops]
    assert names.count("nn.quantize") == 2 and names.count("nn.dequantize") == 2
    assert any(isinstance(op, FLOAT_OP[op_type]) for op in ops)


def test_qlinear_softmax_before_opset_13_coerces_to_2d() -> None:
    """opset 11's Softmax over axis 1 is a softmax of the input flattened at axis 1."""
    module = import_model(qlinear_model("QLinearSoftmax", axis=1, opset=11)).module
    assert any(isinstance(op, nn.FlattenOp) for op in module.walk())


@pytest.mark.parametrize(
    ("op_type", "attrs", "expected"),
    [
        (
            "QLinearAveragePool",
            {"kernel_shape": [2, 2], "channels_last": 1},
            "node 'op' (QLinearAveragePool): channels_last = 1 is not supported",
        ),
        (
            "QLinearLookup",
            {},
            "node 'op' (QLinearLookup): unsupported operator 'QLinearLookup' of domain "
            "'com.microsoft'",
        ),
        (
            "QLinearWhere",
            {},
            "node 'op' (QLinearWhere): takes 9 inputs (condition, X, X_scale, X_zero_point, Y, "
            "Y_scale, Y_zero_point, Z_scale, Z_zero_point), got 5",
        ),
        (
            "QLinearReduceMean",
            {"axes": [1]},
            "node 'op' (QLinearReduceMean): the required attribute 'keepdims' is missing",
        ),
    ],
)
def test_refused_in_one_line(op_type: str, attrs: dict, expected: str) -> None:
    with pytest.raises(UserError) as error:
        import_model(qlinear_model(op_type, **attrs))
    assert error.value.message.startswith(expected), error.value.message
    assert "\n" not in error.value.message


def float_cnn() -> onnx.ModelProto:
    """Conv -> LeakyRelu -> AveragePool -> Sigmoid -> Conv -> GlobalAveragePool -> Flatten ->
    Softmax: quantize_static writes QLinearLeakyRelu, QLinearAveragePool, QLinearSigmoid and
    QLinearSoftmax for it in the QOperator form."""
    rng = np.random.default_rng(7)
    weights = {
        "w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
        "b1": rng.standard_normal(8).astype(np.float32) * 0.1,
        "w2": rng.standard_normal((6, 8, 1, 1)).astype(np.float32) * 0.5,
        "b2": rng.standard_normal(6).astype(np.float32) * 0.1,
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c1"], ["l1"], alpha=0.1),
        helper.make_node("AveragePool", ["l1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Sigmoid", ["p1"], ["s1"]),
        helper.make_node("Conv", ["s1", "w2", "b2"], ["c2"]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Softmax", ["f"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_quantize_static_qoperator_model(tmp_path: Path) -> None:
    model = quantize_with_onnxruntime(float_cnn(), tmp_path, qoperator=True)
    written = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert set(FLOAT_OP) - {"QLinearReduceMean"} <= written, written
    check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))


@pytest.mark.parametrize("zp_type", [np.uint8, np.int8], ids=["u8", "s8"])
def test_quantized_graph_input_and_output(tmp_path: Path, zp_type: type) -> None:
    """A QOperator graph whose input is already quantized and whose output stays quantized
    (u8 or i8 at both ends): imported, planned and run with 1-byte arguments and results,
    exactly as onnxruntime (one step) on every target."""
    onnx_type = TensorProto.UINT8 if zp_type is np.uint8 else TensorProto.INT8
    model = qlinear_model("QLinearSigmoid", zp_type)
    graph = model.graph
    del graph.node[0], graph.node[-1]  # the QuantizeLinear and DequantizeLinear
    graph.node[0].input[0] = "x"
    graph.node[0].output[0] = "y"
    graph.input[0].type.tensor_type.elem_type = onnx_type
    graph.output[0].type.tensor_type.elem_type = onnx_type
    module = check_against_onnxruntime(model, tmp_path, seed=5, step=1)
    function = next(op for op in module.walk() if op.name == "func.func")
    dtype = np.dtype(zp_type)
    assert [str(t.element_type) for t in function.function_type.inputs] == [
        "ui8" if dtype == np.uint8 else "i8"
    ]
    assert function.function_type.outputs.data[0].element_type == (
        function.function_type.inputs.data[0].element_type
    )


def test_graph_output_of_another_type_refused() -> None:
    """An output declared uint8 that the graph computes in float32 (shape inference's check):
    one line naming the node."""
    model = qlinear_model("QLinearSigmoid")
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    with pytest.raises(UserError) as error:
        import_model(model)
    assert error.value.message == (
        "node #2 (DequantizeLinear) producing 'y': nn computes element type f32 for output "
        "'y' but ONNX infers UINT8"
    )
