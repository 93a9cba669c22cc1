"""What the importer requires of a graph before it translates a node: values defined before
they are read, and graph inputs and outputs that are float32 tensors of static shape."""

from __future__ import annotations

import onnx
from onnx import TensorProto
from xdsl.dialects.builtin import TensorType, f32
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError
from nnlayout.dialects.layout import verify_encoding
from nnlayout.frontends.onnx.common import describe


def check_order(graph: onnx.GraphProto, constants: set[str]) -> None:
    """Every node input is defined before the node, as ONNX requires, and every graph
    output somewhere. The checker says so too, but only after shape inference, which a
    cycle stops: an output without a shape then fails first, as "Field 'shape' of 'type'
    is required but missing"."""
    defined = {vi.name for vi in graph.input} | constants | {""}
    for index, node in enumerate(graph.node):
        for name in node.input:
            if name not in defined:
                raise UserError(
                    f"{describe(node, index)}: input '{name}' is not a graph "
                    "input, an initializer or the output of an earlier node "
                    "(undefined, or the graph has a cycle or is not sorted)"
                )
        defined.update(node.output)
    for vi in graph.output:
        if vi.name not in defined or vi.name == "":
            raise UserError(f"graph output '{vi.name}' is not produced by any node")


def require_float_tensor(vi: onnx.ValueInfoProto, what: str) -> onnx.TypeProto.Tensor:
    if not vi.type.HasField("tensor_type"):
        raise UserError(f"{what} '{vi.name}' is not a tensor")
    tensor = vi.type.tensor_type
    if tensor.elem_type != TensorProto.FLOAT:
        raise UserError(
            f"{what} '{vi.name}' has element type "
            f"{TensorProto.DataType.Name(tensor.elem_type)}; nnlayout imports "
            "float32 tensors only"
        )
    return tensor


def input_type(vi: onnx.ValueInfoProto) -> TensorType:
    """The nn type of a graph input; refuses non-f32 and symbolic dimensions."""
    tensor = require_float_tensor(vi, "graph input")
    if not tensor.HasField("shape"):
        raise UserError(f"graph input '{vi.name}' has no shape; nnlayout needs static shapes")
    dims = []
    for index, dim in enumerate(tensor.shape.dim):
        if dim.HasField("dim_value") and dim.dim_value > 0:
            dims.append(dim.dim_value)
        elif dim.HasField("dim_value"):
            raise UserError(
                f"graph input '{vi.name}' has a zero-size dimension {index}; "
                "empty tensors are not supported"
            )
        else:
            symbol = f" '{dim.dim_param}'" if dim.dim_param else ""
            raise UserError(
                f"graph input '{vi.name}' has a symbolic dimension{symbol} "
                f"(axis {index}); nnlayout needs static shapes: export the "
                "model with fixed sizes"
            )
    result = TensorType(f32, dims)
    try:
        verify_encoding(result, f"graph input '{vi.name}'")  # its size fits 64 bits
    except VerifyException as error:
        raise UserError(str(error)) from None
    return result
