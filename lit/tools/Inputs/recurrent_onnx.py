"""Writes the ONNX model lit/tools/import-recurrent.mlir imports: a bidirectional LSTM over
6 steps of a batch of 2 with every output read (Y, Y_h, Y_c), as torch's exporters write
nn.LSTM(4, 5, bidirectional=True) with its states returned."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
node = helper.make_node(
    "LSTM", ["x", "w", "r", "b"], ["y", "h", "c"], hidden_size=5, direction="bidirectional"
)
graph = helper.make_graph(
    [node],
    "recurrent",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 2, 4])],
    [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in "yhc"],
    [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 2, name)
        for name, shape in (("w", (2, 20, 4)), ("r", (2, 20, 5)), ("b", (2, 40)))
    ],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
