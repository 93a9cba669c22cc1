"""Writes the ONNX model lit/tools/import-transposed-volumes.mlir imports: a 3-D UNet's
upsampling as torch's exporters write ConvTranspose3d(4, 3, kernel_size=2, stride=2)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["up"], strides=[2, 2, 2])
graph = helper.make_graph(
    [node],
    "transposed_volumes",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 3, 5, 5])],
    [helper.make_tensor_value_info("up", TensorProto.FLOAT, None)],
    [
        numpy_helper.from_array(rng.standard_normal((4, 3, 2, 2, 2)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b"),
    ],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
