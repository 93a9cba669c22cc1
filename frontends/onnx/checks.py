"""What the importer requires of a graph before it translates a node: values defined before
they are read, and graph inputs and outputs that are float32, uint8 or int8 tensors (the
integer ones: quantized data, e.g. a QOperator model's already quantized input) of static
shape, where the caller's `input_shapes` fix what the model leaves symbolic (a batch
axis)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral

import onnx
from onnx import TensorProto
from xdsl.dialects.builtin import TensorType, bf16, f16, f32, i1, i8, i32, i64
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError
from nnlayout.dialects.layout import verify_encoding
from nnlayout.dialects.nn import ui8
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


#: The float types a model may keep at its inputs and outputs, computed in float32 between
#: them (`frontends/onnx/__init__.py`).
NARROW_FLOATS = {TensorProto.FLOAT16: f16, TensorProto.BFLOAT16: bf16}
#: The element types of graph inputs and outputs nnlayout imports.
GRAPH_ELEMENT_TYPES = {
    TensorProto.FLOAT: f32,
    **NARROW_FLOATS,
    TensorProto.UINT8: ui8,
    TensorProto.INT8: i8,
    TensorProto.BOOL: i1,
    TensorProto.INT64: i64,
    TensorProto.INT32: i32,
}


def require_graph_tensor(vi: onnx.ValueInfoProto, what: str) -> onnx.TypeProto.Tensor:
    if not vi.type.HasField("tensor_type"):
        raise UserError(f"{what} '{vi.name}' is not a tensor")
    tensor = vi.type.tensor_type
    if tensor.elem_type not in GRAPH_ELEMENT_TYPES:
        raise UserError(
            f"{what} '{vi.name}' has element type "
            f"{TensorProto.DataType.Name(tensor.elem_type)}; nnlayout imports "
            "float32, float16 and bfloat16, uint8 and int8 tensors, bool masks and int64 and int32 "
            "indices only"
        )
    return tensor


def check_input_shapes(
    input_shapes: Mapping[str, Sequence[int]], inputs: Sequence[onnx.ValueInfoProto]
) -> None:
    """Each shape the caller gives names a graph input (not an initializer) and has positive
    sizes; how it fits the model's own dimensions is `input_type`'s check."""
    names = [vi.name for vi in inputs]
    for name, dims in input_shapes.items():
        if name not in names:
            raise UserError(
                f"an input shape is given for '{name}', which is not an input of the model "
                f"(its inputs: {', '.join(repr(n) for n in names) or 'none'})"
            )
        if isinstance(dims, str | bytes) or not all(
            isinstance(d, Integral) and not isinstance(d, bool) and d > 0 for d in dims
        ):
            raise UserError(
                f"the input shape given for '{name}' is {dims!r}; it must be a list of "
                "positive integers"
            )


def _example(dims: Sequence[onnx.TensorShapeProto.Dimension]) -> str:
    """An --input-shape value for `dims`, 1 where they are symbolic."""
    return "x".join(str(d.dim_value) if d.HasField("dim_value") else "1" for d in dims)


def input_type(vi: onnx.ValueInfoProto, fixed: Sequence[int] | None = None) -> TensorType:
    """The nn type of a graph input, with the sizes `fixed` gives (if any) where the model's
    are symbolic or unknown; refuses element types other than f32, u8 and i8, symbolic
    dimensions left open and sizes that `fixed` contradicts."""
    tensor = require_graph_tensor(vi, "graph input")
    if not tensor.HasField("shape") and fixed is None:
        raise UserError(
            f"graph input '{vi.name}' has no shape; nnlayout needs static shapes: give it "
            f"one with --input-shape {vi.name}=AxBx... (input_shapes= in import_model)"
        )
    declared = list(tensor.shape.dim)
    if fixed is not None and tensor.HasField("shape") and len(fixed) != len(declared):
        raise UserError(
            f"the input shape given for '{vi.name}' has rank {len(fixed)}, but the model's "
            f"input has rank {len(declared)}"
        )
    dims = [int(d) for d in fixed] if fixed is not None else []
    for index, dim in enumerate(declared):
        if dim.HasField("dim_value") and dim.dim_value == 0 and fixed is None:
            raise UserError(
                f"graph input '{vi.name}' has a zero-size dimension {index}; "
                "empty tensors are not supported"
            )
        if dim.HasField("dim_value") and fixed is not None and dim.dim_value != dims[index]:
            raise UserError(
                f"the input shape given for '{vi.name}' has size {dims[index]} on axis "
                f"{index}, but the model's input has size {dim.dim_value} there"
            )
        if dim.HasField("dim_value") and fixed is None:
            dims.append(dim.dim_value)
        elif fixed is None:
            symbol = f" '{dim.dim_param}'" if dim.dim_param else ""
            batch = "--batch N (for the first axis of every input) or " if index == 0 else ""
            raise UserError(
                f"graph input '{vi.name}' has a symbolic dimension{symbol} "
                f"(axis {index}); nnlayout needs static shapes: give its sizes with "
                f"{batch}--input-shape (e.g. {vi.name}={_example(declared)}; input_shapes= in "
                "import_model), or export the model with fixed sizes"
            )
    result = TensorType(GRAPH_ELEMENT_TYPES[tensor.elem_type], dims)
    try:
        verify_encoding(result, f"graph input '{vi.name}'")  # its size fits 64 bits
    except VerifyException as error:
        raise UserError(str(error)) from None
    return result
