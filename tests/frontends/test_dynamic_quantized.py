"""Dynamically quantized ONNX models: float32 models quantized by onnxruntime's
`quantize_dynamic` in the test (DynamicQuantizeLinear -> MatMulInteger/ConvInteger -> Cast ->
Mul -> Add), imported and run like onnxruntime on every target, padding on and off, by the
interpreter and the generated module; and the dynamic schemes the importer refuses, in one
line naming the node and what is missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.binding import available
from nnlayout.kernels.onednn.dynamic_quantize import scaled_by_own_range
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    small_cnn,
)

# Measured on every target, padding on and off, interpreter and generated module: at most
# 2.4e-7 from onnxruntime on outputs of magnitude ~1.2-1.7 (0 for the MatMul models: the same
# integer sums and f32 scale products; float rounding in the compiled float ops otherwise).
# The tolerance is relative to the output's largest magnitude.
TOLERANCE = 1e-5


def mlp() -> onnx.ModelProto:
    """MatMul on a [2, 3, 8] input (a batch of rows), Relu, Gemm with transB (a dense layer),
    seeded float32 weights."""
    rng = np.random.default_rng(0)
    weights = {
        "w1": rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
        "w2": rng.standard_normal((5, 16)).astype(np.float32) * 0.3,
        "b2": rng.standard_normal((5,)).astype(np.float32) * 0.1,
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Reshape", ["r", "shape"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 5])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()]
        + [numpy_helper.from_array(np.array([6, 16], np.int64), "shape")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def quantize_dynamically(
    model: onnx.ModelProto, folder: Path, per_channel: bool, unsigned_weights: bool
) -> onnx.ModelProto:
    """`model` quantized by onnxruntime's `quantize_dynamic` (u8 activations; s8 symmetric
    weights, or u8 asymmetric ones whose zero point is not 0)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    source, target = folder / "float.onnx", folder / "dynamic.onnx"
    onnx.save(model, source)
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process the model
    quantize_dynamic(
        str(source),
        str(target),
        per_channel=per_channel,
        weight_type=QuantType.QUInt8 if unsigned_weights else QuantType.QInt8,
        op_types_to_quantize=["Conv", "MatMul", "Gemm"],
    )
    return onnx.load(target)


CASES = {
    "cnn-s8": (small_cnn, False, False),
    "cnn-s8-per-channel": (small_cnn, True, False),
    "cnn-u8-weights": (small_cnn, False, True),
    "mlp-s8-per-channel": (mlp, True, False),
    "mlp-u8-weights": (mlp, False, True),
}


@pytest.mark.parametrize("case", CASES)
def test_dynamically_quantized_model_runs_like_onnxruntime(tmp_path: Path, case: str) -> None:
    make, per_channel, unsigned_weights = CASES[case]
    model = quantize_dynamically(make(), tmp_path, per_channel, unsigned_weights)
    operators = {node.op_type for node in model.graph.node}
    assert "DynamicQuantizeLinear" in operators and "MatMulInteger" in operators
    assert ("ConvInteger" in operators) == (make is small_cnn)
    module = check_against_onnxruntime(model, tmp_path, seed=5, tolerance=TOLERANCE)
    names = {op.name for op in module.walk()}
    assert {"nn.dynamic_quantize", "nn.matmul_integer", "nn.cast"} <= names
    assert "nn.matmul" not in names and "nn.gemm" not in names
    if unsigned_weights:  # asymmetric u8 weights: a weight zero point other than 0
        matmul = next(op for op in module.walk() if isinstance(op, nn.MatmulIntegerOp))
        assert matmul.b_zero_point is not None
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    if make is mlp:  # fuse-integer-scale: each product writes f32, scaled
        names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
        assert names.count("nn.matmul_integer_to_float") == 2, names
        assert "nn.matmul_integer" not in names and "nn.cast" not in names
    if available():  # the activations quantized by oneDNN's division
        assert chosen_kernels(compiled, nn.DynamicQuantizeOp) == {"dynamic_quantize_onednn"}
    # each quantize's scale is its own input's range, read from the same buffer unchanged
    # (the oneDNN kernel then leaves out its pass checking that x is finite)
    quantizes = [op for op in compiled.walk() if isinstance(op, nn.DynamicQuantizeOp)]
    assert quantizes and all(scaled_by_own_range(op) for op in quantizes)


def integer_model(
    nodes: list[onnx.NodeProto], constants: dict[str, np.ndarray], shape: list[int]
) -> onnx.ModelProto:
    """`nodes` after DynamicQuantizeLinear(x) -> a, sa, za of a float32 input x of `shape`,
    their last output cast to the float32 output "out"."""
    quantize = helper.make_node("DynamicQuantizeLinear", ["x"], ["a", "sa", "za"])
    cast = helper.make_node("Cast", [nodes[-1].output[0]], ["out"], to=TensorProto.FLOAT)
    graph = helper.make_graph(
        [quantize, *nodes, cast],
        "dq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


REFUSED = [
    (
        lambda: integer_model(
            [helper.make_node("MatMulInteger", ["a", "b", "zr", "zb"], ["y"], name="mm")],
            {"b": np.ones((4, 3), np.int8), "zr": np.array([1, 2], np.uint8), "zb": np.int8(0)},
            [2, 4],
        ),
        "node 'mm' (MatMulInteger): zero point of A 'zr' has 2 values: a per-row zero point is "
        "not supported",
    ),
    (
        lambda: integer_model(
            [helper.make_node("MatMulInteger", ["a", "b", "za", "za"], ["y"], name="mm")],
            {"b": np.ones((4, 3), np.uint8)},
            [2, 4],
        ),
        "node 'mm' (MatMulInteger): zero point of B 'za' must be a constant",
    ),
    (
        lambda: integer_model(
            [helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"], name="mm")],
            {"b": np.ones((4, 3), np.int8), "zb": np.zeros((4, 3), np.int8)},
            [2, 4],
        ),
        "node 'mm' (MatMulInteger): zero point of B 'zb' has shape [4, 3]; nnlayout imports one "
        "zero point or 3",
    ),
    (
        lambda: integer_model(
            [helper.make_node("ConvInteger", ["a", "w", "za"], ["y"], name="conv")],
            {"w": np.ones((2, 1, 1, 1, 1), np.uint8)},
            [1, 1, 2, 2, 2],
        ),
        "node 'conv' (ConvInteger): 3-D convolution is not supported",
    ),
]


@pytest.mark.parametrize(("make", "expected"), REFUSED)
def test_unsupported_dynamic_schemes_are_refused_in_one_line(make, expected) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError) as error:
        import_model(make())
    assert error.value.message.startswith(expected), error.value.message
    assert "\n" not in error.value.message


def test_constant_zero_zero_points_are_dropped() -> None:
    """A constant 0 zero point of A (and of B) imports as no zero point at all."""
    model = integer_model(
        [helper.make_node("MatMulInteger", ["a", "b", "z0", "zb"], ["y"])],
        {"b": np.ones((4, 3), np.int8), "z0": np.uint8(0), "zb": np.zeros(3, np.int8)},
        [2, 4],
    )
    op = next(op for op in import_model(model).module.walk() if isinstance(op, nn.MatmulIntegerOp))
    assert op.a_zero_point is None and op.b_zero_point is None
