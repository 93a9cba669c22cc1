"""Evaluating at import what is known at compile time: a node whose inputs are all constants
(initializers, Constant nodes, results of nodes folded before it) runs in onnx's own reference
implementation of its operator (`onnx.reference`, at the model's opset) and its outputs become
constants (`ImportState.constants`), exactly as if the model had stored them (where that
reference is wrong, `CORRECTED` replaces it: GatherElements). `Shape` and `Size`
read only their input's shape, which is static in nn, so they fold whatever their input is.

This is what leaves only tensor computation of the exporters' shape arithmetic (Shape ->
Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape -> Expand -> Where, ...), and what
imports weights that a model computes (opset-9 models' ConstantOfShape). It is generic over
operators; what is never folded, and why:

* random operators (`RANDOM`): a result fixed at import would be one draw, not the operator;
* operators on sequences or optionals, and those with subgraphs (If, Loop, Scan): a one-node
  evaluation cannot give their values (a subgraph reads the enclosing scope);
* operators of other domains, and those onnx's reference evaluator lacks;
* Constant, Identity, Dropout and DequantizeLinear, which their converters handle (Identity
  keeps a shared weight one constant; Dropout is random in training mode; a dequantized
  weight stays quantized for `fold-qdq`);
* a node whose result would exceed `limits.FOLDED_CONSTANT_BYTES`, as onnx's shape inference
  sizes it from the constant inputs: a hostile ConstantOfShape or Range is refused, naming the
  node, before anything is allocated; and one of the operators whose result's size their
  input values set (`SIZED_BY_VALUES`) where that inference cannot size it. Such a node is
  translated instead where it has a converter. Every folded result is checked again once
  computed.

`unfoldable_reason` tells, from which values are known, why a node cannot fold; the operator
check (`operators.check_operators`) uses it to refuse a node without a converter only when it
cannot fold, saying why.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Container

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun, RuntimeContextError
from onnx.reference.ops import load_op

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import one_line
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.limits import FOLDED_CONSTANT_BYTES, human_bytes

#: Operators whose result is random.
RANDOM = frozenset(
    {
        "Bernoulli",
        "Multinomial",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
    }
)
#: Operators that take or give sequences or optionals.
SEQUENCES = frozenset(
    {
        "ConcatFromSequence",
        "Optional",
        "OptionalGetElement",
        "OptionalHasElement",
        "SequenceAt",
        "SequenceConstruct",
        "SequenceEmpty",
        "SequenceErase",
        "SequenceInsert",
        "SequenceLength",
        "SequenceMap",
        "SplitToSequence",
    }
)
#: Operators their converters handle, constant inputs or not (see the module docstring).
#: A DequantizeLinear of a constant (a quantized weight or bias) stays an integer constant
#: and an nn.dequantize, so that `fold-qdq` can hand the integers to a quantized op.
CONVERTED = frozenset({"Constant", "DequantizeLinear", "Dropout", "Identity"})
#: Operators that read only the shape of their (first) input, static in nn.
SHAPE_READERS = frozenset({"Shape", "Size"})
#: Operators whose result's size is set by the values of their inputs: they fold only where
#: onnx's shape inference sizes their result first. Any other operator whose result it cannot
#: size (an old opset's Cast, whose `to` is a string) has a result no larger than its inputs
#: allow, and is checked once computed.
SIZED_BY_VALUES = frozenset(
    {
        *("BlackmanWindow", "CenterCropPad", "Col2Im", "ConstantOfShape", "DFT", "Expand"),
        *("EyeLike", "HammingWindow", "HannWindow", "ImageDecoder", "MaxUnpool"),
        *("MelWeightMatrix", "OneHot", "Pad", "Range", "Resize", "STFT"),
        *("TfIdfVectorizer", "Tile", "Upsample"),
    }
)
#: Constant inputs up to this many elements are given to onnx's shape inference as data.
_INFERENCE_DATA_LIMIT = 4096


class GatherElements(OpRun):
    """GatherElements by numpy's `take_along_axis`, in place of onnx's reference (1.23),
    which gives a wrong shape past 32 positions on the axis (transformers' BERT, ALBERT and
    ELECTRA called without token type ids gather 32 or more of them from a 512-long buffer)
    and wraps an index out of range around the axis instead of refusing it."""

    op_domain = ""

    def _run(self, data: np.ndarray, indices: np.ndarray, axis: int = 0) -> tuple[np.ndarray]:
        axis = axis + data.ndim if axis < 0 else axis
        if indices.ndim != data.ndim or not 0 <= axis < data.ndim:
            raise ValueError(f"indices of rank {indices.ndim}, data {data.shape}, axis {axis}")
        if any(
            i > d
            for k, (i, d) in enumerate(zip(indices.shape, data.shape, strict=True))
            if k != axis
        ):
            raise ValueError(f"indices {indices.shape} are larger than data {data.shape}")
        size = data.shape[axis]
        if indices.size and (indices.min() < -size or indices.max() >= size):
            raise ValueError(f"an index is out of range for axis {axis} of size {size}")
        window = tuple(
            slice(None) if k == axis else slice(0, i) for k, i in enumerate(indices.shape)
        )
        positions = np.where(indices < 0, indices + size, indices).astype(np.intp)
        return (np.take_along_axis(data[window], positions, axis),)


#: Our own implementations of the operators where onnx's reference is wrong.
CORRECTED = (GatherElements,)


@functools.cache
def reference_has(op_type: str, opset: int) -> bool:
    """Whether onnx's reference evaluator implements `op_type` at `opset`."""
    try:
        load_op("", op_type, opset, evaluator_cls=ReferenceEvaluator)
    except RuntimeContextError:  # a function of its inputs' types: built when it runs
        return True
    except (NotImplementedError, RuntimeError, onnx.defs.SchemaError):
        return False
    return True


def unfoldable_reason(
    node: onnx.NodeProto, known: Container[str], defined: Container[str], opset: int
) -> str | None:
    """Why `node` cannot fold, when `known` are the names of the constants and `defined`
    those of every value so far (a Shape reads any of them); None when it can."""
    op = node.op_type
    if node.domain not in ("", "ai.onnx"):
        return f"operators of domain '{node.domain}' are not folded"
    if op in RANDOM:
        return "its result is random"
    if op in SEQUENCES:
        return "it works on sequences or optionals"
    if any(
        a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute
    ):
        return "it has subgraphs"
    if op in CONVERTED:
        return "its converter handles it"
    if not reference_has(op, opset):
        return "onnx's reference evaluator does not implement it"
    needs_values = node.input[1:] if op in SHAPE_READERS else node.input
    if op in SHAPE_READERS and node.input[0] not in defined:
        return f"its input '{node.input[0]}' is not defined"
    for name in needs_values:
        if name and name not in known:
            return f"its input '{name}' is computed at run time"
    return None


def fold(state: ImportState, node: onnx.NodeProto, has_converter: bool) -> bool:
    """Evaluates `node` into constants if it can fold; False when it cannot (or onnx cannot
    size its result beforehand and the node has a converter): then it is translated."""
    if unfoldable_reason(node, _Names(state.is_constant), _Names(state.is_defined), state.opset):
        return False
    feeds = {name: _value(state, name) for name in dict.fromkeys(node.input) if name}
    types = {name: _type_of(state, name, array) for name, array in feeds.items()}
    # What data-dependent inference reads (a shape, a count) is small; weights are not read.
    data = {
        name: state.constants[state.aliases.get(name, name)]
        for name, array in feeds.items()
        if array.size <= _INFERENCE_DATA_LIMIT and state.is_constant(name)
    }
    sizes = _inferred_sizes(state, node, types, data)
    if sizes is None and node.op_type in SIZED_BY_VALUES:
        if has_converter:
            return False
        raise state.fail(
            "cannot fold it at import: onnx's shape inference does not tell the size of "
            "its result before it is computed"
        )
    for name, nbytes in (sizes or {}).items():
        _check_size(state, name, nbytes)
    for name, array in zip(node.output, _evaluate(state, node, feeds, types), strict=True):
        if name:
            _check_size(state, name, array.nbytes)
            try:
                state.constants[name] = numpy_helper.from_array(array, name)
            except (TypeError, ValueError, KeyError) as error:
                raise state.fail(
                    f"cannot fold it at import: its output '{name}' is of a type the importer "
                    f"cannot hold ({array.dtype}): {one_line(str(error))}"
                ) from None
    return True


class _Names:
    """The names a predicate accepts, as a container."""

    def __init__(self, accepts: Callable[[str], bool]):
        self.accepts = accepts

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.accepts(name)


def _value(state: ImportState, name: str) -> np.ndarray:
    if state.is_constant(name):
        return state.constant_array(name, "input")
    # The input of a Shape or Size: a zero-stride array of the nn value's static shape.
    return np.broadcast_to(np.float32(0), nn.shape_of(state.tensor(name)))


def _type_of(state: ImportState, name: str, array: np.ndarray) -> onnx.TypeProto:
    """The ONNX type of an input: a constant's own (numpy has no dtype for some, such as
    4-bit integers), else float32, nn's one element type, of the value's shape."""
    if state.is_constant(name):
        proto = state.constants[state.aliases.get(name, name)]
        return onnx.helper.make_tensor_type_proto(proto.data_type, list(proto.dims))
    return onnx.helper.make_tensor_type_proto(TensorProto.FLOAT, list(array.shape))


def _inferred_sizes(
    state: ImportState,
    node: onnx.NodeProto,
    types: dict[str, onnx.TypeProto],
    data: dict[str, TensorProto],
) -> dict[str, int] | None:
    """The bytes of each output, as onnx's shape inference sizes them from the constant
    inputs, or None if it leaves a dimension or an element type open."""
    try:
        schema = onnx.defs.get_schema(node.op_type, state.opset, "")
        outputs = onnx.shape_inference.infer_node_outputs(
            schema,
            node,
            types,
            data,
            opset_imports=[onnx.helper.make_opsetid("", state.opset)],
        )
    except (
        onnx.shape_inference.InferenceError,
        onnx.defs.SchemaError,
        RuntimeError,
        TypeError,
        ValueError,
    ) as error:
        raise state.fail(f"invalid node: {one_line(str(error))}") from None
    sizes = {}
    for name in filter(None, node.output):
        tensor = outputs[name].tensor_type if name in outputs else None
        if tensor is None or not tensor.elem_type or not tensor.HasField("shape"):
            return None
        dims = tensor.shape.dim
        if not all(d.HasField("dim_value") for d in dims):
            return None
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).itemsize
        sizes[name] = math.prod(max(d.dim_value, 0) for d in dims) * itemsize
    return sizes


def _check_size(state: ImportState, name: str, nbytes: int) -> None:
    if nbytes > FOLDED_CONSTANT_BYTES:
        raise state.fail(
            f"folding it at import would make output '{name}' a constant of {nbytes:,} bytes "
            f"({human_bytes(nbytes)}), more than the {human_bytes(FOLDED_CONSTANT_BYTES)} "
            "a folded constant may take"
        )


def _evaluate(
    state: ImportState,
    node: onnx.NodeProto,
    feeds: dict[str, np.ndarray],
    types: dict[str, onnx.TypeProto],
) -> list[np.ndarray]:
    """The node's outputs (one per output, "" ones included), by onnx's reference."""
    graph = onnx.helper.make_graph(
        [node],
        "fold",
        [onnx.helper.make_value_info(name, t) for name, t in types.items()],
        [onnx.ValueInfoProto(name=name) for name in node.output if name],
    )
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            evaluator = ReferenceEvaluator(graph, opsets={"": state.opset}, new_ops=list(CORRECTED))
            results = evaluator.run([name for name in node.output if name], feeds)
    except Exception as error:  # the reference's own errors on bad inputs, of any kind
        raise state.fail(
            f"cannot fold it at import: onnx's reference evaluator fails: "
            f"{one_line(str(error)) or type(error).__name__}"
        ) from None
    arrays = iter(results)
    outputs = []
    for name in node.output:
        value = next(arrays) if name else np.zeros(0)
        if not isinstance(value, np.ndarray | np.generic):
            raise state.fail("cannot fold it at import: its result is not a tensor")
        outputs.append(np.asarray(value))
    return outputs
