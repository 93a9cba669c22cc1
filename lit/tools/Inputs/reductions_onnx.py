"""Writes the ONNX model lit/tools/import-reductions.mlir imports: torch's exporters' global
pools written as reductions (dynamo, opset 18: axes as an input), a channel mean, LRN and
LayerNormalization with its statistics read."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("ReduceMean", ["x", "hw"], ["mean_hw"], keepdims=0),
    helper.make_node("ReduceMax", ["x", "hw"], ["max_hw"], keepdims=1),
    helper.make_node("ReduceMean", ["x", "c"], ["mean_c"], keepdims=1),
    helper.make_node("ReduceSum", ["x"], ["sum_all"], keepdims=0),
    helper.make_node("LRN", ["x"], ["lrn"], size=3),
    helper.make_node("LayerNormalization", ["x", "scale"], ["norm", "mean", "inv"], axis=-1),
]
graph = helper.make_graph(
    nodes,
    "reductions",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 4, 4])],
    [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
        for name in ("mean_hw", "max_hw", "mean_c", "sum_all", "lrn", "norm", "inv")
    ],
    [
        numpy_helper.from_array(np.array([-1, -2], np.int64), "hw"),
        numpy_helper.from_array(np.array([1], np.int64), "c"),
        numpy_helper.from_array(np.ones(4, np.float32), "scale"),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
model = onnx.shape_inference.infer_shapes(model)
onnx.save(model, sys.argv[1])
