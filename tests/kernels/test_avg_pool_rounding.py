"""The reference AveragePool rounds as ONNX's reference evaluator: each window's counted values
summed in row-major order, then divided by their number. Between QuantizeLinear and
DequantizeLinear an average of four quantized values often lands on a half step, where a
different summation order rounds to the other neighbour: the tie model checks every target
bit for bit against the evaluator (ref differed by one step on such ties before), and so
does a 3x3 average, which fold-qdq makes an `nn.qavg_pool2d` of the integers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_to_files
from nnlayout.tests.helpers import everywhere
from nnlayout.tests.kernels.test_reference_kernels import (
    POOL_CASES,
    pool_attributes,
    random,
    run_kernel,
)

#: AveragePool's attributes and the output's height and width on a 32 x 32 image.
TIE_WINDOWS = {
    "2x2-stride2": ({"kernel_shape": [2, 2], "strides": [2, 2]}, 16),
    "3x3-pads-counted": ({"kernel_shape": [3, 3], "pads": [1] * 4, "count_include_pad": 1}, 32),
}


def tie_model(window: dict | None = None, size: int = 16) -> onnx.ModelProto:
    """Q -> DQ -> AveragePool (2x2 stride 2 by default) -> Q -> DQ, one scale and zero point
    (the acceptance tester's t_avgpool_tie.onnx)."""
    s = numpy_helper.from_array(np.float32(0.0137), "s")
    z = numpy_helper.from_array(np.uint8(3), "z")
    pool = window or TIE_WINDOWS["2x2-stride2"][0]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["a"]),
        helper.make_node("DequantizeLinear", ["a", "s", "z"], ["b"]),
        helper.make_node("AveragePool", ["b"], ["c"], **pool),
        helper.make_node("QuantizeLinear", ["c", "s", "z"], ["d"]),
        helper.make_node("DequantizeLinear", ["d", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, size, size])],
        [s, z],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.mark.parametrize(("window", "size"), TIE_WINDOWS.values(), ids=TIE_WINDOWS.keys())
def test_quantized_average_ties_round_as_the_evaluator(
    tmp_path: Path, window: dict, size: int
) -> None:
    """Every target, padding on and off, interpreter and generated module (`everywhere`).
    The 2x2 average stays float (fold-qdq: its half steps round by the f32 ops' order); the
    3x3 one, divided by 9, never lands near a half step and becomes `nn.qavg_pool2d`,
    whose integer average gives the evaluator's bytes."""
    model = tie_model(window, size)
    path = tmp_path / "tie.onnx"
    path.write_bytes(model.SerializeToString())
    module = import_to_files(path)
    x = np.random.default_rng(0).uniform(-0.5, 3.0, (1, 16, 32, 32)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    pooled = "nn.qavg_pool2d" if window["kernel_shape"] == [3, 3] else "nn.avg_pool2d"
    for target, padding, compiled, (got,) in everywhere(module, [x]):
        assert pooled in {op.name for op in compiled.walk()}, target
        assert np.array_equal(got, want), (target, padding, float(np.abs(got - want).max()))


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize(("xs", "kernel", "strides", "pads", "dilations", "ceil_mode"), POOL_CASES)
def test_avg_pool2d_bit_exact_with_the_evaluator(
    xs: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dilations: tuple[int, int],
    ceil_mode: bool,
    count_include_pad: bool,
) -> None:
    """Every window shape the kernel tests use (borders, dilations, ceil_mode overhang)."""
    x = random(*xs) * 3.0
    ours = run_kernel(
        lambda v: nn.AvgPool2dOp(
            v,
            kernel=kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
        ),
        x,
    )
    node = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        count_include_pad=int(count_include_pad),
        **pool_attributes(kernel, strides, pads, dilations, ceil_mode),
    )
    graph = helper.make_graph(
        [node],
        "p",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert np.array_equal(ours, want), float(np.abs(ours - want).max())
