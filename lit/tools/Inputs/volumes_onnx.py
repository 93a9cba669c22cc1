"""Writes the ONNX model lit/tools/import-volumes.mlir imports: a video network's 3-D layers
as torch's exporters write them (Conv with a 3x3x3 kernel and depth padding, MaxPool over
1x2x2 and 2x1x1 windows)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1, 1, 1]),
    helper.make_node("MaxPool", ["conv"], ["pool"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
]
graph = helper.make_graph(
    nodes,
    "volumes",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 6, 6])],
    [helper.make_tensor_value_info("pool", TensorProto.FLOAT, None)],
    [
        numpy_helper.from_array(rng.standard_normal((5, 3, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "b"),
    ],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
