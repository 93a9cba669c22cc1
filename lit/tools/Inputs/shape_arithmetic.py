"""Writes the ONNX models of import-folding.mlir into the folder given: `shuffle.onnx`, a channel
shuffle as torch's classic exporter writes it (Shape -> Gather -> Div -> Unsqueeze -> Concat
into Reshape -> Transpose -> Reshape) with a symbolic batch axis, and `fill.onnx`, a
ConstantOfShape of 10^10 elements."""

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def ints(name: str, *values: int) -> object:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def scalar(name: str, value: int) -> object:
    return numpy_helper.from_array(np.array(value, np.int64), name)


def save(nodes: list, inputs: dict, initializers: list, path: Path) -> None:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", F, None)],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())


folder = Path(sys.argv[1])
nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Shape", ["a"], ["s"])]
for axis, name in enumerate(["n", "c", "h", "w"]):
    nodes.append(helper.make_node("Gather", ["s", f"i{axis}"], [name], axis=0))
    nodes.append(helper.make_node("Unsqueeze", [name, "zero"], [f"{name}1"]))
nodes += [
    helper.make_node("Div", ["c", "groups"], ["per_group"]),
    helper.make_node("Unsqueeze", ["per_group", "zero"], ["per_group1"]),
    helper.make_node("Concat", ["n1", "groups1", "per_group1", "h1", "w1"], ["shape5"], axis=0),
    helper.make_node("Reshape", ["a", "shape5"], ["r"]),
    helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
    helper.make_node("Concat", ["n1", "minus_one", "h1", "w1"], ["shape4"], axis=0),
    helper.make_node("Reshape", ["t", "shape4"], ["y"]),
]
constants = [scalar(f"i{axis}", axis) for axis in range(4)]
constants += [ints("zero", 0), scalar("groups", 2), ints("groups1", 2), ints("minus_one", -1)]
save(nodes, {"x": ["batch", 10, 5, 4]}, constants, folder / "shuffle.onnx")

fill = [
    helper.make_node("ConstantOfShape", ["huge"], ["c"], name="fill"),
    helper.make_node("Add", ["x", "c"], ["y"]),
]
save(fill, {"x": [1]}, [ints("huge", 10**5, 10**5)], folder / "fill.onnx")
