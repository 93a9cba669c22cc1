"""onnx's checker and shape inference, run on a model before it is imported, and the two
places where that inference is known to be wrong (so the importer does not hold nn's shapes
against it there); and the bfloat16 model at an older opset, converted first."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import google.protobuf.message
import onnx
from onnx import TensorProto, version_converter

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx.common import attributes, auto_pad_name, one_line


def infer_shapes(
    model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]
) -> dict[str, onnx.TypeProto]:
    """The type onnx infers for each value of `model`'s graph, after checking the model, with
    the graph inputs of the shapes given (the importer's, symbolic sizes fixed). Data
    propagation carries the values of shape computations (Shape -> Gather -> Concat) into
    the shapes they make (a Reshape's), so those are checked against nn's too."""
    try:
        inferred = onnx.shape_inference.infer_shapes(
            _skeleton(model, input_shapes), check_type=True, strict_mode=True, data_prop=True
        )
        _complete_output_shapes(inferred.graph)
        onnx.checker.check_model(inferred)
    except (
        onnx.checker.ValidationError,
        onnx.shape_inference.InferenceError,
        UnicodeDecodeError,
    ) as error:
        raise UserError(
            f"invalid ONNX model: {one_line(str(error))}{_hint(model, error)}"
        ) from None
    graph = inferred.graph
    return {vi.name: vi.type for vi in (*graph.input, *graph.value_info, *graph.output)}


#: The opset from which ONNX's operators (Conv, pooling, ...) take bfloat16 tensors.
BFLOAT16_OPSET = 22
#: The opsets from which a bfloat16 model is converted to BFLOAT16_OPSET: from 13 on the
#: converter keeps every operator's meaning (below, it makes opset 10's linear Resize and
#: Upsample half_pixel, which they were not).
CONVERTED_OPSETS = (13, BFLOAT16_OPSET)


def with_bfloat16_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` converted to opset BFLOAT16_OPSET by onnx's version converter where it types
    values as bfloat16 at an older opset (torch's exporters write `model.to(torch.bfloat16)`
    at their default opsets, 17 to 20, whose Conv, pooling and activations have no
    bfloat16, so such a model does not check as written; from opset 22 on they take it, with
    the same meaning), from opset 13 on (CONVERTED_OPSETS). The model as it is otherwise, or
    where the converter fails or its result does not check: the checker then refuses the
    model as written, naming the opset to export at (`_hint`). Errors found later in a
    converted model name its nodes, which the converter may have renumbered (it adds
    Constant nodes)."""
    opset = _default_opset(model)
    if not CONVERTED_OPSETS[0] <= opset < BFLOAT16_OPSET or not _uses_bfloat16(model.graph):
        return model
    try:
        converted = version_converter.convert_version(model, BFLOAT16_OPSET)
        onnx.checker.check_model(converted)
    except (  # a model the converter cannot read or convert: the checker says what is wrong
        version_converter.ConvertError,
        onnx.shape_inference.InferenceError,
        onnx.checker.ValidationError,
        google.protobuf.message.Error,  # over 2 GB
        RuntimeError,
        ValueError,
    ):
        return model
    return converted


def _default_opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _uses_bfloat16(graph: onnx.GraphProto) -> bool:
    """Whether `graph` types a value, an initializer, a constant or a Cast's result as
    bfloat16."""
    values = (*graph.input, *graph.output, *graph.value_info)
    if any(v.type.tensor_type.elem_type == TensorProto.BFLOAT16 for v in values):
        return True
    if any(t.data_type == TensorProto.BFLOAT16 for t in graph.initializer):
        return True
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name == "to" and attribute.i == TensorProto.BFLOAT16:
                return True
            if attribute.HasField("t") and attribute.t.data_type == TensorProto.BFLOAT16:
                return True
    return False


def _hint(model: onnx.ModelProto, error: Exception) -> str:
    """What fixes a bfloat16 model exported at an opset whose operator lacks bfloat16 but
    has it from BFLOAT16_OPSET on (torch's exporters default to opsets 17 to 20), else
    nothing."""
    found = re.search(r"op_type:(\w+)", str(error))
    opset = _default_opset(model)
    if "unsupported type: tensor(bfloat16)" not in str(error) or found is None:
        return ""
    if opset >= BFLOAT16_OPSET or not _takes_bfloat16(found[1], BFLOAT16_OPSET):
        return ""
    return (
        f"; {found[1]} takes bfloat16 from opset {BFLOAT16_OPSET} (the model's is {opset}): "
        f"export it with torch.onnx.export(..., opset_version={BFLOAT16_OPSET})"
    )


def _takes_bfloat16(op_type: str, opset: int) -> bool:
    """Whether ONNX's `op_type` at `opset` types any input as bfloat16."""
    try:
        schema = onnx.defs.get_schema(op_type, opset)
    except onnx.defs.SchemaError:
        return False
    return any("tensor(bfloat16)" in c.allowed_type_strs for c in schema.type_constraints)


def _skeleton(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]) -> onnx.ModelProto:
    """The model with its large float initializers turned into typed graph inputs (the
    checker and shape inference see the same graph without serialising the weights; their
    data is checked when read), and its inputs of the shapes given."""
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    del skeleton.graph.initializer[:]
    for vi in skeleton.graph.input:
        if vi.name in input_shapes and vi.type.HasField("tensor_type"):
            shape = vi.type.tensor_type.shape
            shape.ClearField("dim")
            for size in input_shapes[vi.name]:
                shape.dim.add().dim_value = size
    inputs = {vi.name for vi in skeleton.graph.input}
    for tensor in model.graph.initializer:
        if tensor.data_type == TensorProto.FLOAT and math.prod(tensor.dims) > 16:
            if tensor.name not in inputs:  # (before IR version 4 they are inputs too)
                skeleton.graph.input.append(
                    onnx.helper.make_tensor_value_info(
                        tensor.name, tensor.data_type, list(tensor.dims)
                    )
                )
        else:
            skeleton.graph.initializer.append(tensor)
    for vi in skeleton.graph.output:
        if not has_shape(vi):
            vi.ClearField("type")  # inference fills a missing type, not a missing shape
    return skeleton


def _complete_output_shapes(graph: onnx.GraphProto) -> None:
    """Gives each graph output that shape inference left without a shape the type of that
    value elsewhere: an initializer or input returned as an output, or a value listed twice
    (onnxruntime runs such models; the checker refuses an output without a shape)."""
    known = {
        vi.name: vi.type for vi in (*graph.input, *graph.value_info, *graph.output) if has_shape(vi)
    }
    for tensor in graph.initializer:
        known.setdefault(
            tensor.name, onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        )
    for vi in graph.output:
        if has_shape(vi):
            continue
        if vi.name not in known:
            raise UserError(
                f"graph output '{vi.name}' has no shape, and ONNX's shape "
                "inference finds none; declare it in the model"
            )
        vi.type.CopyFrom(known[vi.name])


def has_shape(vi: onnx.ValueInfoProto) -> bool:
    return vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")


def ceil_mode_overcount(
    node: onnx.NodeProto, expected: Sequence[int], actual: Sequence[int], source: Sequence[int]
) -> bool:
    """Whether `expected` (onnx's inferred shape of a pooling node's output) is `actual`
    with one more window on some spatial axes, each a last window that ceil_mode would start
    in the end padding (of the `source` input shape): ONNX's spec, its reference evaluator
    and onnxruntime drop that window, as nn does, but onnx's shape inference (1.23 too)
    counts it."""
    attrs = attributes(node)
    if (
        node.op_type not in ("MaxPool", "AveragePool")
        or not attrs.get("ceil_mode")
        or (len(expected) != len(actual) or expected[:2] != actual[:2])
    ):
        return False
    spatial = len(source) - 2
    strides = list(attrs.get("strides", [1] * spatial))
    begins = list(attrs.get("pads", [0] * 2 * spatial))[:spatial]
    return all(
        e == a or (e == a + 1 and a * stride >= size + begin)
        for e, a, stride, size, begin in zip(
            expected[2:], actual[2:], strides, source[2:], begins, strict=True
        )
    )


def same_output_padding_overcount(
    node: onnx.NodeProto, expected: Sequence[int], actual: Sequence[int]
) -> bool:
    """Whether `expected` (onnx's inferred shape of a ConvTranspose output) is `actual` plus
    output_padding on the spatial axes, for auto_pad SAME_UPPER/SAME_LOWER without
    output_shape: the spec makes that output input * stride, as onnxruntime, onnx's reference
    evaluator and nn do, but onnx's shape inference adds output_padding."""
    attrs = attributes(node)
    if (
        node.op_type != "ConvTranspose"
        or auto_pad_name(attrs) not in ("SAME_UPPER", "SAME_LOWER")
        or ("output_shape" in attrs or len(expected) != len(actual))
    ):
        return False
    extra = list(attrs.get("output_padding", [0] * (len(actual) - 2)))
    return list(expected) == [*actual[:2], *(a + e for a, e in zip(actual[2:], extra, strict=True))]
