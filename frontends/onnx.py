"""ONNX -> `nn` dialect: one `func.func @main` whose arguments are the graph's inputs.

The importer runs onnx's checker and shape inference first, then emits, node by node, the `nn`
ops with the same semantics (a few nodes decompose: Softmax before opset 13 coerces to 2-D,
1-D Conv/pooling run as 2-D ops on a height-1 image, GlobalMaxPool is a max pool over the
whole image, Dropout is the identity it is at inference; before opset 7 a binary op's B with
`broadcast=1 axis=k` is reshaped to broadcast from A's axis k). Every result is checked
against the shape ONNX inferred, so an importer bug surfaces at import time, naming the node,
rather than as a wrong answer later (except where onnx's inference is wrong: a pooling window
that ceil_mode would start in the end padding, which ONNX drops; a ConvTranspose with
auto_pad SAME and output_padding, whose output is input * stride; and what is computed from
those outputs). ONNX value names become SSA name hints (sanitised to what MLIR accepts).

Initializers (and Constant nodes) become `nn.constant`s where a tensor is used; those with more
than `inline_limit` elements are returned in `ImportedModel.weights` and referenced as
`nn.constant external "key"`, where `key` is a file-name-safe version of the ONNX name (the
original name is kept in an `onnx.name` attribute when it differs). Integer initializers that
act as attributes (Reshape's shape) are read at import time and never become tensors, also
when an Identity passes them on.

What nn cannot express is refused with a `UserError` naming the node and the reason: other
operators, non-float32 tensors, symbolic dimensions, MaxPool's Indices and Dropout's mask
outputs where something reads them (unread, they are left out), training-mode
BatchNormalization (statistics outputs listed, read or not) and Dropout, 3-D
convolution/pooling, and attributes ONNX leaves open (a NaN Clip bound, ...).
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError, os_error_reason
from nnlayout.dialects import nn
from nnlayout.dialects.layout import verify_encoding
from nnlayout.dialects.weights import attach_weights_file
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module

#: ONNX operators (default domain) the importer translates.
SUPPORTED_OPS = frozenset(
    {
        "Conv",
        "ConvTranspose",
        "Gemm",
        "MatMul",
        "Relu",
        "LeakyRelu",
        "Sigmoid",
        "Tanh",
        "Exp",
        "Neg",
        "Abs",
        "Sqrt",
        "Clip",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Sum",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "BatchNormalization",
        "Concat",
        "Softmax",
        "Flatten",
        "Reshape",
        "Transpose",
        "Identity",
        "Constant",
        "Dropout",
        "GlobalMaxPool",
    }
)

#: Initializers with more elements than this go to the weights file.
DEFAULT_INLINE_LIMIT = 16

_UNARY: dict[str, type[nn.UnaryOp]] = {
    "Relu": nn.ReluOp,
    "Sigmoid": nn.SigmoidOp,
    "Tanh": nn.TanhOp,
    "Exp": nn.ExpOp,
    "Neg": nn.NegOp,
    "Abs": nn.AbsOp,
    "Sqrt": nn.SqrtOp,
}
_BINARY: dict[str, type[nn.BinaryOp]] = {
    "Add": nn.AddOp,
    "Sub": nn.SubOp,
    "Mul": nn.MulOp,
    "Div": nn.DivOp,
}
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_$.-]")
_INVALID_KEY_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class ImportedModel:
    """The imported module and the arrays its external constants name."""

    module: ModuleOp
    weights: dict[str, np.ndarray] = field(default_factory=dict)


def _complete_output_shapes(graph: onnx.GraphProto) -> None:
    """Gives each graph output that shape inference left without a shape the type of that
    value elsewhere: an initializer or input returned as an output, or a value listed twice
    (onnxruntime runs such models; the checker refuses an output without a shape)."""
    known = {
        vi.name: vi.type
        for vi in (*graph.input, *graph.value_info, *graph.output)
        if _has_shape(vi)
    }
    for tensor in graph.initializer:
        known.setdefault(
            tensor.name, onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        )
    for vi in graph.output:
        if _has_shape(vi):
            continue
        if vi.name not in known:
            raise UserError(
                f"graph output '{vi.name}' has no shape, and ONNX's shape "
                "inference finds none; declare it in the model"
            )
        vi.type.CopyFrom(known[vi.name])


def _has_shape(vi: onnx.ValueInfoProto) -> bool:
    return vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _printable(text: str) -> str:
    """`text` with control characters (a newline in an ONNX name) escaped, so that a message
    naming them stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


# ------------------------------------------------------------------------------ loading
# What parsing bytes that are no ONNX model raises (protobuf's decoders differ).
_NOT_A_MODEL = (DecodeError, RuntimeError, ValueError)


def load_model(path: str | Path) -> onnx.ModelProto:
    """Reads an ONNX file and its external data (only from inside the model's folder)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserError(f"cannot read '{path}': {os_error_reason(error)}") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except _NOT_A_MODEL as error:
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            f"{_one_line(str(error))}"
        ) from None
    if not model.HasField("graph") or not model.opset_import:
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            "it has no graph or no opset"
        )
    if not all(
        isinstance(text, str)
        for node in model.graph.node
        for text in (node.name, node.op_type, node.domain, *node.input, *node.output)
    ):
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            "a node has a name that is not UTF-8 text"
        )
    try:
        _load_external_data(model, path.resolve().parent)
    except UserError as error:
        raise UserError(_printable(error.message)) from None
    return model


def _tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """The tensors of the main graph that may hold data: initializers and Constant values."""
    constants = [
        a.t
        for node in model.graph.node
        if node.op_type == "Constant"
        for a in node.attribute
        if a.HasField("t")
    ]
    return [*model.graph.initializer, *constants]


def _load_external_data(model: onnx.ModelProto, folder: Path) -> None:
    """Loads external tensor data, refusing locations outside `folder`."""
    for tensor in _tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        if not location:
            raise UserError(f"initializer '{tensor.name}': its external data has no location")
        target = (folder / location).resolve()
        if (
            Path(location).is_absolute()
            or ".." in Path(location).parts
            or not target.is_relative_to(folder)
        ):
            raise UserError(
                f"initializer '{tensor.name}' refers to external data '{location}' outside "
                f"the model's folder; refusing to read it"
            )
        if not target.exists():
            raise UserError(
                f"initializer '{tensor.name}': external data file '{location}' "
                f"not found in '{folder}'"
            )
        if not target.is_file():  # a directory; a FIFO would block the read
            raise UserError(
                f"initializer '{tensor.name}': external data '{location}' in "
                f"'{folder}' is not a regular file"
            )
        try:
            onnx.external_data_helper.load_external_data_for_tensor(tensor, str(folder))
        except (OSError, ValueError) as error:
            raise UserError(
                f"initializer '{tensor.name}': cannot load external data: {_one_line(str(error))}"
            ) from None
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


# ------------------------------------------------------------------------------ naming
def sanitize_name(name: str) -> str:
    """A valid SSA name hint derived from an ONNX value name (ASCII letters, digits, `_$.-`)."""
    clean = _INVALID_NAME_CHARS.sub("_", name)
    if not clean or clean[0].isdigit():
        clean = "v" + clean
    return clean


def _safe_key(name: str, used: set[str]) -> str:
    """A file-name-safe, unique key for the weights archive."""
    base = _INVALID_KEY_CHARS.sub("_", name)[:64].strip(".") or "w"
    key, index = base, 1
    while key in used:
        index += 1
        key = f"{base}~{index}"
    used.add(key)
    return key


def _describe(node: onnx.NodeProto, index: int) -> str:
    if node.name:
        return f"node '{node.name}' ({node.op_type})"
    produced = next((o for o in node.output if o), "")
    return f"node #{index} ({node.op_type}) producing '{produced}'"


# ------------------------------------------------------------------------------ padding
def same_pads(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str,
) -> list[int]:
    """Explicit [begin..., end...] pads for auto_pad SAME_UPPER/SAME_LOWER (conv, pooling):
    the output is ceil(size / stride); SAME_UPPER puts the odd padding at the end."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        total = max(0, same_padding(size, k, s, d))
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> int:
    """The total padding SAME needs on one axis for ceil(size / stride) windows; negative
    where the windows cover less than the input (kernel extent below the stride)."""
    return (-(-size // stride) - 1) * stride + (kernel - 1) * dilation + 1 - size


def _attributes(node: onnx.NodeProto) -> dict:
    """A node's attributes by name, as Python values."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _ceil_mode_overcount(
    node: onnx.NodeProto, expected: Sequence[int], actual: Sequence[int], source: Sequence[int]
) -> bool:
    """Whether `expected` (onnx's inferred shape of a pooling node's output) is `actual`
    with one more window on some spatial axes, each a last window that ceil_mode would start
    in the end padding (of the `source` input shape): ONNX's spec, its reference evaluator
    and onnxruntime drop that window, as nn does, but onnx's shape inference (1.23 too)
    counts it."""
    attrs = _attributes(node)
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


def _auto_pad_name(attrs: dict) -> str:
    """A node's auto_pad attribute as text (NOTSET when absent)."""
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    return auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad


def _same_output_padding_overcount(
    node: onnx.NodeProto, expected: Sequence[int], actual: Sequence[int]
) -> bool:
    """Whether `expected` (onnx's inferred shape of a ConvTranspose output) is `actual` plus
    output_padding on the spatial axes, for auto_pad SAME_UPPER/SAME_LOWER without
    output_shape: the spec makes that output input * stride, as onnxruntime, onnx's reference
    evaluator and nn do, but onnx's shape inference adds output_padding."""
    attrs = _attributes(node)
    if (
        node.op_type != "ConvTranspose"
        or _auto_pad_name(attrs) not in ("SAME_UPPER", "SAME_LOWER")
        or ("output_shape" in attrs or len(expected) != len(actual))
    ):
        return False
    extra = list(attrs.get("output_padding", [0] * (len(actual) - 2)))
    return list(expected) == [*actual[:2], *(a + e for a, e in zip(actual[2:], extra, strict=True))]


# ------------------------------------------------------------------------------ importer
class _Importer:
    """Translates one graph; keeps the ONNX-name -> SSA value map and the weights."""

    def __init__(self, model: onnx.ModelProto, inline_limit: int):
        self.model = model
        self.graph = model.graph
        self.inline_limit = inline_limit
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        if self.opset > (known := onnx.defs.onnx_opset_version()):
            # Its operators may mean something else than the ones this importer knows.
            raise UserError(
                f"the model imports opset {self.opset} of the ONNX domain; the "
                f"installed onnx {onnx.__version__} knows opsets up to {known}"
            )
        self.values: dict[str, SSAValue] = {}
        self.constants: dict[str, TensorProto] = {t.name: t for t in self.graph.initializer}
        # Identity outputs of constants -> the constant's own name (_op_Identity).
        self.aliases: dict[str, str] = {}
        # Names some node or the graph reads: an optional output nothing reads is left out.
        self.read = {name for node in self.graph.node for name in node.input} | {
            vi.name for vi in self.graph.output
        }
        self.weights: dict[str, np.ndarray] = {}
        self.used_keys: set[str] = set()
        self.block = Block()
        self.inferred: dict[str, onnx.TypeProto] = {}
        # Values whose shape onnx's shape inference gets wrong, so not checked against it:
        # see _ceil_mode_overcount and _same_output_padding_overcount, and everything
        # computed from such a value.
        self.beyond_inference: set[str] = set()
        self.node = "graph"

    # -------------------------------------------------------------------- driver
    def run(self) -> ImportedModel:
        self._check_operators()
        self._check_order()
        arguments = [vi for vi in self.graph.input if vi.name not in self.constants]
        input_types = [self._input_type(vi) for vi in arguments]
        self._infer_shapes()
        for vi, arg_type in zip(arguments, input_types, strict=True):
            arg = self.block.insert_arg(arg_type, len(self.block.args))
            arg.name_hint = sanitize_name(vi.name)
            self.values[vi.name] = arg
        for index, node in enumerate(self.graph.node):
            self.node = _describe(node, index)
            self._import_node(node)
        self.node = "graph"
        results = []
        for vi in self.graph.output:
            if vi.HasField("type"):
                self._require_float_tensor(vi, "graph output")
            results.append(self._tensor(vi.name))
        self.block.add_op(func.ReturnOp(*results))
        function = func.FuncOp(
            "main",
            ([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
        )
        return ImportedModel(ModuleOp([function]), self.weights)

    def _check_operators(self) -> None:
        for index, node in enumerate(self.graph.node):
            if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED_OPS:
                domain = f" of domain '{node.domain}'" if node.domain not in ("", "ai.onnx") else ""
                raise UserError(
                    f"{_describe(node, index)}: unsupported operator "
                    f"'{node.op_type}'{domain}; nnlayout imports "
                    f"{', '.join(sorted(SUPPORTED_OPS))}"
                )

    def _check_order(self) -> None:
        """Every node input is defined before the node, as ONNX requires, and every graph
        output somewhere. The checker says so too, but only after shape inference, which a
        cycle stops: an output without a shape then fails first, as "Field 'shape' of 'type'
        is required but missing"."""
        defined = {vi.name for vi in self.graph.input} | set(self.constants) | {""}
        for index, node in enumerate(self.graph.node):
            for name in node.input:
                if name not in defined:
                    raise UserError(
                        f"{_describe(node, index)}: input '{name}' is not a graph "
                        "input, an initializer or the output of an earlier node "
                        "(undefined, or the graph has a cycle or is not sorted)"
                    )
            defined.update(node.output)
        for vi in self.graph.output:
            if vi.name not in defined or vi.name == "":
                raise UserError(f"graph output '{vi.name}' is not produced by any node")

    def _skeleton(self) -> onnx.ModelProto:
        """The model with its large float initializers turned into typed graph inputs: the
        checker and shape inference see the same graph without serialising the weights
        (which made them most of ResNet-50's import time). Their data is checked when read."""
        skeleton = onnx.ModelProto()
        skeleton.CopyFrom(self.model)
        del skeleton.graph.initializer[:]
        inputs = {vi.name for vi in skeleton.graph.input}
        for tensor in self.graph.initializer:
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
            if not _has_shape(vi):
                vi.ClearField("type")  # inference fills a missing type, not a missing shape
        return skeleton

    def _infer_shapes(self) -> None:
        try:
            inferred = onnx.shape_inference.infer_shapes(
                self._skeleton(), check_type=True, strict_mode=True
            )
            _complete_output_shapes(inferred.graph)
            onnx.checker.check_model(inferred)
        except (
            onnx.checker.ValidationError,
            onnx.shape_inference.InferenceError,
            UnicodeDecodeError,
        ) as error:
            raise UserError(f"invalid ONNX model: {_one_line(str(error))}") from None
        graph = inferred.graph
        for vi in (*graph.input, *graph.value_info, *graph.output):
            self.inferred[vi.name] = vi.type

    def _fail(self, message: str) -> UserError:
        return UserError(f"{self.node}: {message}")

    @staticmethod
    def _require_float_tensor(vi: onnx.ValueInfoProto, what: str) -> onnx.TypeProto.Tensor:
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

    def _input_type(self, vi: onnx.ValueInfoProto) -> TensorType:
        """The nn type of a graph input; refuses non-f32 and symbolic dimensions."""
        tensor = self._require_float_tensor(vi, "graph input")
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
        input_type = TensorType(f32, dims)
        try:
            verify_encoding(input_type, f"graph input '{vi.name}'")  # its size fits 64 bits
        except VerifyException as error:
            raise UserError(str(error)) from None
        return input_type

    # -------------------------------------------------------------------- values
    def _tensor(self, name: str) -> SSAValue:
        """The SSA value of an ONNX tensor, materialising constants on first use."""
        used, name = name, self.aliases.get(name, name)
        if name in self.values:
            return self.values[name]
        if name not in self.constants:
            raise self._fail(f"input '{name}' is not defined")
        proto = self.constants[name]
        passed_on = f" (passed on as '{used}' by an Identity)" if used != name else ""
        if proto.data_type != TensorProto.FLOAT:
            raise self._fail(
                f"constant '{name}'{passed_on} has element type "
                f"{TensorProto.DataType.Name(proto.data_type)}; nnlayout imports float32 "
                "tensors only"
            )
        array = self._array(proto).astype(np.float32)
        if array.size == 0:
            raise self._fail(
                f"constant '{name}'{passed_on} is empty; empty tensors are not supported"
            )
        if array.size <= self.inline_limit:
            op = nn.ConstantOp.from_array(array)
        else:
            key = _safe_key(name, self.used_keys)
            # order="C" keeps a scalar 0-d (np.ascontiguousarray stored it as [1])
            self.weights[key] = np.asarray(array, order="C")
            op = nn.ConstantOp(TensorType(f32, array.shape), external=key)
            if key != name:
                op.attributes["onnx.name"] = StringAttr(name)
        return self._define(name, op)

    def _constant_array(self, name: str, what: str) -> np.ndarray:
        """The value of an input that nn needs at compile time (a shape, a bound)."""
        if name not in self.constants:
            raise self._fail(
                f"{what} '{name}' must be a constant (an initializer or a "
                "Constant node); nnlayout needs it at compile time"
            )
        return self._array(self.constants[name])

    def _constant_scalar(self, name: str, what: str) -> float:
        """A constant input that ONNX defines as a scalar (one element, of any rank)."""
        array = self._constant_array(name, what)
        if array.size != 1:
            raise self._fail(f"{what} '{name}' must be a scalar, got shape {list(array.shape)}")
        return float(array.reshape(()))

    def _array(self, proto: TensorProto) -> np.ndarray:
        try:
            return numpy_helper.to_array(proto)
        except (ValueError, TypeError) as error:
            raise self._fail(
                f"constant '{proto.name}' is malformed (its data does not match "
                f"its shape {list(proto.dims)}): {_one_line(str(error))}"
            ) from None

    def _define(self, name: str, op: Operation) -> SSAValue:
        self.block.add_op(op)
        result = op.results[0]
        result.name_hint = sanitize_name(name)
        self.values[name] = result
        return result

    def _emit(self, op: Operation) -> SSAValue:
        """Appends an intermediate op of a decomposition (no ONNX name)."""
        self.block.add_op(op)
        return op.results[0]

    def _build(self, make: Callable[[], Operation]) -> Operation:
        """Builds an op; shape-rule violations become errors naming the node."""
        try:
            op = make()
            op.verify()  # what builders leave to the verifier, e.g. sizes beyond 64 bits
            return op
        except VerifyException as error:
            raise self._fail(_one_line(str(error).split("\n\n")[0])) from None

    def _output(self, node: onnx.NodeProto, op: Operation | SSAValue) -> None:
        """Binds the node's single output to `op`'s result, checking ONNX's inferred shape."""
        name = node.output[0]
        if isinstance(op, SSAValue):
            value = self.values[name] = op
        else:
            value = self._define(name, op)
        inferred = self.inferred.get(name)
        if inferred is None or not inferred.HasField("tensor_type"):
            return
        if inferred.tensor_type.elem_type not in (TensorProto.FLOAT, 0):
            raise self._fail(
                f"output '{name}' has element type "
                f"{TensorProto.DataType.Name(inferred.tensor_type.elem_type)}; "
                "nnlayout imports float32 tensors only"
            )
        if any(operand in self.beyond_inference for operand in node.input):
            self.beyond_inference.add(name)
            return
        dims = inferred.tensor_type.shape.dim
        if inferred.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            expected = [d.dim_value for d in dims]
            actual = list(nn.shape_of(value))
            if expected != actual:
                if _ceil_mode_overcount(
                    node, expected, actual, nn.shape_of(self._tensor(node.input[0]))
                ) or (_same_output_padding_overcount(node, expected, actual)):
                    self.beyond_inference.add(name)
                    return
                raise self._fail(
                    f"nn computes shape {actual} for output '{name}' but ONNX infers {expected}"
                )

    # -------------------------------------------------------------------- nodes
    def _import_node(self, node: onnx.NodeProto) -> None:
        attrs = _attributes(node)
        if node.op_type in _UNARY:
            self._output(node, self._build(lambda: _UNARY[node.op_type](self._in(node, 0))))
        elif node.op_type in _BINARY:
            lhs = self._in(node, 0)
            rhs = self._legacy_broadcast(node, attrs, lhs)
            self._output(node, self._build(lambda: _BINARY[node.op_type](lhs, rhs)))
        else:
            getattr(self, f"_op_{node.op_type}")(node, attrs)

    def _legacy_broadcast(self, node: onnx.NodeProto, attrs: dict, lhs: SSAValue) -> SSAValue:
        """A binary node's second operand. Before opset 7 it broadcasts only with
        `broadcast=1`, its dimensions matched to A's from `axis` on (the trailing ones
        without `axis`): it is reshaped so that numpy's trailing broadcast means the same."""
        rhs = self._in(node, 1)
        a, b = list(nn.shape_of(lhs)), list(nn.shape_of(rhs))
        if self.opset >= 7:
            return rhs
        if not attrs.get("broadcast", 0):
            if a != b:
                raise self._fail(
                    f"{node.op_type} before opset 7 without broadcast=1 needs "
                    f"operands of one shape, got {a} and {b}"
                )
            return rhs
        if "axis" not in attrs:
            return rhs
        axis = int(attrs["axis"])
        axis = axis + len(a) if axis < 0 else axis
        if not 0 <= axis <= len(a) - len(b):
            raise self._fail(
                f"broadcast axis {attrs['axis']} does not fit B of shape {b} into A of shape {a}"
            )
        aligned = [*b, *[1] * (len(a) - axis - len(b))]
        return rhs if aligned == b else self._emit(self._build(lambda: nn.ReshapeOp(rhs, aligned)))

    def _in(self, node: onnx.NodeProto, index: int) -> SSAValue:
        return self._tensor(node.input[index])

    def _optional_in(self, node: onnx.NodeProto, index: int) -> SSAValue | None:
        if len(node.input) > index and node.input[index]:
            return self._tensor(node.input[index])
        return None

    def _op_Constant(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        if "value" in attrs:
            tensor = TensorProto()
            tensor.CopyFrom(attrs["value"])  # (renamed below: leave the model as it is)
        elif "value_float" in attrs or "value_floats" in attrs:
            tensor = numpy_helper.from_array(
                np.array(attrs.get("value_float", attrs.get("value_floats")), np.float32)
            )
        elif "value_int" in attrs or "value_ints" in attrs:
            tensor = numpy_helper.from_array(
                np.array(attrs.get("value_int", attrs.get("value_ints")), np.int64)
            )
        else:
            raise self._fail(f"unsupported Constant attribute(s) {sorted(attrs)}")
        tensor.name = node.output[0]
        self.constants[node.output[0]] = tensor

    def _op_Identity(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        source = self.aliases.get(node.input[0], node.input[0])
        if source in self.constants:
            # A constant under another name (exporters pass shapes, bounds and shared
            # weights through an Identity): known at compile time to the ops that need it
            # there, and one nn.constant (one weights-file entry) as a tensor.
            self.aliases[node.output[0]] = source
            self.constants[node.output[0]] = self.constants[source]
            return
        self._output(node, self._in(node, 0))

    def _read_outputs(self, node: onnx.NodeProto) -> list[str]:
        """The node's outputs after the first that something reads."""
        return [name for name in node.output[1:] if name and name in self.read]

    def _op_Dropout(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        """Inference: the identity, as ONNX defines Dropout outside training mode."""
        if self._read_outputs(node):
            raise self._fail("Dropout's mask output is not supported")
        # Training mode: opset 12's training_mode input; before opset 7, is_test=0 (the
        # default there).
        training = (self.opset < 7 and not attrs.get("is_test", 0)) or (
            len(node.input) > 2
            and node.input[2]
            and self._constant_scalar(node.input[2], "training_mode")
        )
        if training:
            raise self._fail(
                "Dropout in training mode is not supported (nnlayout compiles for inference)"
            )
        self._output(node, self._in(node, 0))

    def _op_LeakyRelu(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        self._output(
            node,
            self._build(lambda: nn.LeakyReluOp(self._in(node, 0), float(attrs.get("alpha", 0.01)))),
        )

    def _op_Clip(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        if self.opset < 11:
            low, high = attrs.get("min"), attrs.get("max")
        else:
            low, high = (
                self._constant_scalar(node.input[i], what)
                if len(node.input) > i and node.input[i]
                else None
                for i, what in ((1, "min"), (2, "max"))
            )
        for what, bound in (("min", low), ("max", high)):
            if bound is not None and math.isnan(bound):
                raise self._fail(
                    f"Clip's {what} is NaN, which ONNX leaves open (onnxruntime "
                    "ignores such a bound, numpy and ONNX's reference evaluator "
                    "give NaN): give a number, or leave the bound out"
                )
        # ONNX: an omitted bound is the lowest or largest float (so inf becomes 3.4e38).
        largest = float(np.finfo(np.float32).max)
        low = -largest if low is None else low
        high = largest if high is None else high
        if low > high:
            low = high  # ONNX: with min > max every element becomes max
        self._output(node, self._build(lambda: nn.ClipOp(self._in(node, 0), low, high)))

    def _op_Sum(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        inputs = [self._tensor(name) for name in node.input]
        self._output(node, self._build(lambda: nn.SumOp(inputs)))

    def _op_MatMul(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        self._output(node, self._build(lambda: nn.MatmulOp(self._in(node, 0), self._in(node, 1))))

    def _op_Gemm(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        self._output(
            node,
            self._build(
                lambda: nn.GemmOp(
                    self._in(node, 0),
                    self._in(node, 1),
                    self._optional_in(node, 2),
                    trans_a=bool(attrs.get("transA", 0)),
                    trans_b=bool(attrs.get("transB", 0)),
                    alpha=float(attrs.get("alpha", 1.0)),
                    beta=float(attrs.get("beta", 1.0)),
                )
            ),
        )

    def _op_BatchNormalization(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        # Listed statistics outputs mean training mode, read or not: onnxruntime then
        # normalises with the batch's own mean and variance.
        if attrs.get("training_mode", 0) or len([o for o in node.output if o]) > 1:
            raise self._fail(
                "training-mode BatchNormalization (running statistics outputs) "
                "is not supported; export the model for inference"
            )
        if not attrs.get("spatial", 1):
            raise self._fail(
                "BatchNormalization with spatial=0 (statistics per element, "
                "before opset 9) is not supported"
            )
        operands = [self._in(node, i) for i in range(5)]
        self._output(
            node,
            self._build(
                lambda: nn.BatchNormOp(*operands, epsilon=float(attrs.get("epsilon", 1e-5)))
            ),
        )

    def _op_GlobalAveragePool(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        self._output(node, self._build(lambda: nn.GlobalAvgPoolOp(self._in(node, 0))))

    def _op_Concat(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        inputs = [self._tensor(name) for name in node.input]
        # The axis defaults to 1 before opset 4; onnx's checker requires it from then on.
        self._output(node, self._build(lambda: nn.ConcatOp(inputs, int(attrs.get("axis", 1)))))

    def _op_Flatten(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        self._output(
            node, self._build(lambda: nn.FlattenOp(self._in(node, 0), int(attrs.get("axis", 1))))
        )

    def _op_Transpose(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        x = self._in(node, 0)
        perm = attrs.get("perm", list(reversed(range(len(nn.shape_of(x))))))
        self._output(node, self._build(lambda: nn.TransposeOp(x, [int(p) for p in perm])))

    def _op_Reshape(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        x = self._in(node, 0)
        source = nn.shape_of(x)
        if self.opset >= 5:  # onnx's checker requires the input
            requested = [int(v) for v in self._constant_array(node.input[1], "shape").ravel()]
        elif "shape" in attrs:  # an attribute before opset 5, which the checker lets go
            requested = [int(v) for v in attrs["shape"]]
        else:
            raise self._fail("Reshape before opset 5 needs a 'shape' attribute")
        if attrs.get("allowzero", 0) and 0 in requested:
            raise self._fail(
                "Reshape with allowzero=1 and a 0 entry gives an empty tensor; "
                "empty tensors are not supported"
            )
        shape = [source[i] if v == 0 else v for i, v in enumerate(requested)]
        if shape.count(-1) > 1 or any(v < -1 for v in shape):
            raise self._fail(f"invalid Reshape shape {requested}")
        if -1 in shape:
            known = math.prod(v for v in shape if v != -1)
            if known == 0 or math.prod(source) % known:
                raise self._fail(f"cannot reshape {list(source)} to {requested}")
            shape[shape.index(-1)] = math.prod(source) // known
        self._output(node, self._build(lambda: nn.ReshapeOp(x, shape)))

    def _op_Softmax(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        x = self._in(node, 0)
        shape = nn.shape_of(x)
        axis = int(attrs.get("axis", -1 if self.opset >= 13 else 1))
        if self.opset >= 13:
            self._output(node, self._build(lambda: nn.SoftmaxOp(x, axis)))
            return
        # Before opset 13: softmax of the input coerced to 2-D at `axis`.
        try:
            axis = nn.normalize_axis("Softmax", axis, len(shape))
        except VerifyException as error:
            raise self._fail(str(error)) from None
        if axis == len(shape) - 1:
            self._output(node, self._build(lambda: nn.SoftmaxOp(x, -1)))
            return
        flat = self._emit(self._build(lambda: nn.FlattenOp(x, axis)))
        soft = self._emit(nn.SoftmaxOp(flat, 1))
        self._output(node, nn.ReshapeOp(soft, shape))

    # ---------------------------------------------------------- windows (conv, pooling)
    def _auto_pad(self, attrs: dict) -> str:
        """The auto_pad of a Conv, ConvTranspose or pool, one of the four ONNX defines."""
        auto_pad = _auto_pad_name(attrs)
        if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
            raise self._fail(
                f"unknown auto_pad '{auto_pad}' (NOTSET, SAME_UPPER, SAME_LOWER or VALID)"
            )
        return auto_pad

    def _window_attrs(
        self,
        attrs: dict,
        sizes: Sequence[int],
        kernel: Sequence[int],
    ) -> tuple[list[int], list[int], list[int]]:
        """strides, explicit pads ([begin..., end...]) and dilations of a Conv or pool."""
        rank = len(kernel)
        strides = list(attrs.get("strides", [1] * rank))
        dilations = list(attrs.get("dilations", [1] * rank))
        auto_pad = self._auto_pad(attrs)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pads = same_pads(sizes, kernel, strides, dilations, auto_pad)
        elif auto_pad == "VALID":
            pads = [0] * (2 * rank)
        else:
            pads = list(attrs.get("pads", [0] * (2 * rank)))
        return strides, pads, dilations

    def _spatial(self, node: onnx.NodeProto, x: SSAValue, what: str) -> int:
        """The number of spatial axes of `x` (1 or 2); refuses others."""
        rank = len(nn.shape_of(x)) - 2
        if rank not in (1, 2):
            raise self._fail(
                f"{rank}-D {what} is not supported (nn has 2-D {what}; 1-D is imported as 2-D)"
            )
        return rank

    def _as_2d(self, value: SSAValue) -> SSAValue:
        """[N, C, L] -> [N, C, 1, L], to run a 1-D window op as a 2-D one."""
        shape = nn.shape_of(value)
        return self._emit(nn.ReshapeOp(value, (*shape[:2], 1, shape[2])))

    def _finish_spatial(self, node: onnx.NodeProto, op: Operation, rank: int) -> None:
        if rank == 2:
            self._output(node, op)
        else:
            result = self._emit(op)
            shape = nn.shape_of(result)
            self._output(node, nn.ReshapeOp(result, (*shape[:2], shape[3])))

    def _kernel_of_weights(self, attrs: dict, w: SSAValue) -> tuple[int, ...]:
        """The weights' spatial shape, which a kernel_shape attribute must repeat."""
        kernel = nn.shape_of(w)[2:]
        if "kernel_shape" in attrs and list(attrs["kernel_shape"]) != list(kernel):
            raise self._fail(
                f"kernel_shape {list(attrs['kernel_shape'])} is not the weight's "
                f"spatial shape {list(kernel)}"
            )
        return kernel

    def _op_Conv(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        x, w, b = self._in(node, 0), self._in(node, 1), self._optional_in(node, 2)
        rank = self._spatial(node, x, "convolution")
        kernel = self._kernel_of_weights(attrs, w)
        strides, pads, dilations = self._window_attrs(attrs, nn.shape_of(x)[2:], kernel)
        if rank == 1:
            x, w = self._as_2d(x), self._as_2d(w)
            strides, dilations, pads = [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
        self._finish_spatial(
            node,
            self._build(
                lambda: nn.Conv2dOp(
                    x,
                    w,
                    b,
                    strides=strides,
                    pads=pads,
                    dilations=dilations,
                    groups=int(attrs.get("group", 1)),
                )
            ),
            rank,
        )

    def _op_ConvTranspose(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        x, w, b = self._in(node, 0), self._in(node, 1), self._optional_in(node, 2)
        rank = self._spatial(node, x, "transposed convolution")
        sizes, kernel = nn.shape_of(x)[2:], self._kernel_of_weights(attrs, w)
        strides = list(attrs.get("strides", [1] * rank))
        dilations = list(attrs.get("dilations", [1] * rank))
        output_padding = list(attrs.get("output_padding", [0] * rank))
        auto_pad = self._auto_pad(attrs)
        pads = (
            list(attrs.get("pads", [0] * (2 * rank))) if auto_pad == "NOTSET" else [0] * (2 * rank)
        )
        output_shape = attrs.get("output_shape")
        same = output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER")
        if same:
            output_shape = [size * stride for size, stride in zip(sizes, strides, strict=True)]
        if output_shape is not None:
            # ONNX: total padding = natural size - output_shape, split as auto_pad says
            # (the odd one at the end for SAME_UPPER); a negative total grows output_padding.
            output_shape = list(output_shape)[-rank:]
            begins, ends = [], []
            for axis in range(rank):
                natural = (
                    strides[axis] * (sizes[axis] - 1)
                    + output_padding[axis]
                    + (kernel[axis] - 1) * dilations[axis]
                    + 1
                )
                total = natural - output_shape[axis]
                if total < 0 and same:
                    # (k - 1) * d + 1 + output_padding < stride
                    raise self._fail(
                        f"auto_pad {auto_pad} with kernel extent + output_padding below stride "
                        f"{strides[axis]} on spatial axis {axis}: the ONNX spec makes the "
                        f"output input * stride ({output_shape[axis]}), onnxruntime and "
                        f"onnx's shape inference {natural}; give pads or output_shape"
                    )
                if total < 0 and -total >= strides[axis]:
                    raise self._fail(
                        f"output_shape {output_shape[axis]} on spatial axis {axis} is "
                        f"{-total} beyond the transposed convolution's size {natural}; ONNX "
                        f"allows up to stride - 1 = {strides[axis] - 1}"
                    )
                if total < 0:
                    output_padding[axis] -= total
                    total = 0
                small, large = total // 2, total - total // 2
                begins.append(small if auto_pad == "SAME_UPPER" else large)
                ends.append(large if auto_pad == "SAME_UPPER" else small)
            pads = begins + ends
        if rank == 1:
            x, w = self._as_2d(x), self._as_2d(w)
            strides, dilations = [1, *strides], [1, *dilations]
            pads, output_padding = [0, pads[0], 0, pads[1]], [0, *output_padding]
        self._finish_spatial(
            node,
            self._build(
                lambda: nn.ConvTranspose2dOp(
                    x,
                    w,
                    b,
                    strides=strides,
                    pads=pads,
                    output_padding=output_padding,
                    dilations=dilations,
                    groups=int(attrs.get("group", 1)),
                )
            ),
            rank,
        )

    def _pool(self, node: onnx.NodeProto, attrs: dict, make: Callable[..., Operation]) -> None:
        x = self._in(node, 0)
        rank = self._spatial(node, x, "pooling")
        kernel = list(attrs["kernel_shape"])
        sizes = nn.shape_of(x)[2:]
        strides, pads, dilations = self._window_attrs(attrs, sizes, kernel)
        auto_pad = self._auto_pad(attrs)
        same = auto_pad.startswith("SAME")
        for axis, (size, k, s, d) in enumerate(zip(sizes, kernel, strides, dilations, strict=True)):
            total = same_padding(size, k, s, d) if same else 0
            # ONNX leaves negative padding open. onnxruntime's AveragePool-19 crops the
            # input, at the start by total / 2 rounded toward zero (SAME_UPPER) or
            # (total + 1) / 2 (SAME_LOWER); its MaxPool and older AveragePool refuse.
            # Padding clamped to 0 crops only the end: the same windows where onnxruntime
            # crops nothing at the start.
            start = -((-total) // 2) if auto_pad == "SAME_UPPER" else -((-total - 1) // 2)
            if total < 0 and start != 0:
                raise self._fail(
                    f"auto_pad {auto_pad} on spatial axis {axis} needs padding {total} "
                    f"(kernel extent {(k - 1) * d + 1}, stride {s}): onnxruntime crops "
                    f"{-start} at the start, which nn's pooling cannot; give pads"
                )
        if rank == 1:
            x = self._as_2d(x)
            kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
            pads = [0, pads[0], 0, pads[1]]
        self._finish_spatial(
            node,
            self._build(
                lambda: make(
                    x,
                    kernel=kernel,
                    strides=strides,
                    pads=pads,
                    dilations=dilations,
                    ceil_mode=bool(attrs.get("ceil_mode", 0)) and not same,
                )
            ),
            rank,
        )

    def _op_MaxPool(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        if self._read_outputs(node):
            raise self._fail("MaxPool's Indices output is not supported")
        self._pool(node, attrs, nn.MaxPool2dOp)

    def _op_GlobalMaxPool(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        """A max pool whose window is the whole image."""
        self._pool(node, {"kernel_shape": nn.shape_of(self._in(node, 0))[2:]}, nn.MaxPool2dOp)

    def _op_AveragePool(self, node: onnx.NodeProto, attrs: dict) -> None:  # noqa: N802
        include = bool(attrs.get("count_include_pad", 0))
        self._pool(node, attrs, lambda x, **kw: nn.AvgPool2dOp(x, count_include_pad=include, **kw))


def write_imported(imported: ImportedModel, path: Path) -> None:
    """Writes the weights (if any) as `<stem>.npz` beside `path`, then the IR to `path`;
    the module's `nn.weights` attribute names the .npz relative to the .mlir."""
    if imported.weights:
        weights_file = path.with_suffix(".npz")
        try:  # what np.savez does, without its keyword arguments clashing with our keys
            with zipfile.ZipFile(weights_file, "w", allowZip64=True) as archive:
                for key, array in imported.weights.items():
                    with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, array, allow_pickle=False)
        except OSError as error:
            raise UserError(f"cannot write '{weights_file}': {os_error_reason(error)}") from None
        attach_weights_file(imported.module, weights_file.name)
    try:
        with open(path, "w", encoding="utf-8") as handle:
            print_module(imported.module, handle)
    except OSError as error:
        raise UserError(f"cannot write '{path}': {os_error_reason(error)}") from None


def import_model(
    model: onnx.ModelProto, *, inline_limit: int = DEFAULT_INLINE_LIMIT
) -> ImportedModel:
    """Translates `model` into a module with one `func.func @main`; see the module docstring."""
    try:
        imported = _Importer(model, inline_limit).run()
    except UserError as error:
        raise UserError(_printable(error.message)) from None
    try:
        imported.module.verify()
    except VerifyException as error:  # a bug in the importer, not in the model
        raise AssertionError(f"imported module does not verify: {error}") from error
    return imported


def import_to_files(onnx_path: Path) -> ModuleOp:
    """Imports `onnx_path` into `<stem>.mlir` (and `<stem>.npz`) beside it, as
    `nnlayout-import` does, and parses the .mlir back, as every tool reads it."""
    mlir_path = onnx_path.with_suffix(".mlir")
    write_imported(import_model(load_model(onnx_path)), mlir_path)
    return parse_module(make_context(), mlir_path.read_text(encoding="utf-8"), str(mlir_path))
