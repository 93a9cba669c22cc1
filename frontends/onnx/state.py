"""The state of one graph's import, which every operator converter works on: the ONNX-name
-> SSA value map, the constants known at compile time, the block the ops go into and the
weights set aside for the weights file; and the ways a converter reads its operands and
binds its output (checked against the shape onnx inferred)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from xdsl.dialects.builtin import StringAttr, TensorType, f32, i1, i8, i32, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.dialects.nn.base import is_bf16_array
from nnlayout.frontends.onnx.common import one_line, safe_key, sanitize_name
from nnlayout.frontends.onnx.inference import ceil_mode_overcount, same_output_padding_overcount

#: The ONNX element types nn values may have, and theirs: float32 data, quantized data
#: (8-bit activations and weights, int32 biases; see nn's docstring), masks (bool: i1) and
#: indices (int64: a language model's token ids, which nn.gather reads).
ELEMENT_TYPES: dict[int, Attribute] = {
    TensorProto.FLOAT: f32,
    TensorProto.FLOAT16: f32,  # computed in float32: see `frontends/onnx/__init__.py`
    TensorProto.BFLOAT16: f32,  # likewise
    TensorProto.UINT8: nn.ui8,
    TensorProto.INT8: i8,
    TensorProto.INT32: i32,
    TensorProto.BOOL: i1,
    TensorProto.INT64: i64,
}
NUMPY_TYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.FLOAT16: np.float32,  # float16 weights widened exactly
    TensorProto.BFLOAT16: np.float32,  # bfloat16 ones too
    TensorProto.UINT8: np.uint8,
    TensorProto.INT8: np.int8,
    TensorProto.INT32: np.int32,
    TensorProto.BOOL: np.bool_,
    TensorProto.INT64: np.int64,
}
#: What `ELEMENT_TYPES` says, for messages.
ELEMENT_TYPES_SAID = (
    "nnlayout imports float32 tensors (float16 and bfloat16 ones computed in float32), "
    "uint8/int8 ones as quantized data, int32 ones as quantized biases or integers, bool ones "
    "as masks and int64 ones as indices"
)


class ImportState:
    """One graph's import: the ONNX-name -> SSA value map, the constants, the weights, and
    `node`, the description of the node being translated that errors begin with."""

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
        # Identity outputs of constants -> the constant's own name (see constants.identity).
        self.aliases: dict[str, str] = {}
        # Names some node or the graph reads: an optional output nothing reads is left out.
        self.read = {name for node in self.graph.node for name in node.input} | {
            vi.name for vi in self.graph.output
        }
        # Every name the graph gives a tensor: names a converter makes up avoid them.
        self.graph_names = (
            {name for node in self.graph.node for name in (*node.input, *node.output)}
            | {vi.name for vi in self.graph.input}
            | set(self.constants)
        )
        self.weights: dict[str, np.ndarray] = {}
        self.used_keys: set[str] = set()
        self.block = Block()
        self.inferred: dict[str, onnx.TypeProto] = {}
        # Values whose shape onnx's shape inference gets wrong, so not checked against it:
        # see ceil_mode_overcount and same_output_padding_overcount, and everything
        # computed from such a value.
        self.beyond_inference: set[str] = set()
        # Zero-size slices (torch.roll by 0 along an axis exports x[-0:] and x[:-0]) by name,
        # with the node that made them: a Concat leaves them out; anything else refuses.
        self.empty: dict[str, str] = {}
        self.node = "graph"

    def fail(self, message: str) -> UserError:
        return UserError(f"{self.node}: {message}")

    # -------------------------------------------------------------------- values
    def tensor(self, name: str) -> SSAValue:
        """The SSA value of an ONNX tensor, materialising constants on first use."""
        used, name = name, self.aliases.get(name, name)
        if name in self.values:
            return self.values[name]
        if name in self.empty:
            raise self.fail(
                f"'{name}' is empty ({self.empty[name]}); empty tensors are not supported "
                "but as an input of Concat, which leaves them out"
            )
        if name not in self.constants:
            raise self.fail(f"input '{name}' is not defined")
        proto = self.constants[name]
        passed_on = f" (passed on as '{used}' by an Identity)" if used != name else ""
        if proto.data_type not in ELEMENT_TYPES:
            raise self.fail(
                f"constant '{name}'{passed_on} has element type "
                f"{TensorProto.DataType.Name(proto.data_type)}; {ELEMENT_TYPES_SAID}"
            )
        array = self._array(proto).astype(NUMPY_TYPES[proto.data_type])
        if array.size == 0:
            raise self.fail(
                f"constant '{name}'{passed_on} is empty; empty tensors are not supported"
            )
        return self._define(name, self._constant_op(name, array))

    def _constant_op(self, name: str, array: np.ndarray) -> nn.ConstantOp:
        """`array` inline, or in the weights file under `name` above the inline limit."""
        if array.size <= self.inline_limit:
            return nn.ConstantOp.from_array(array)
        key = safe_key(name, self.used_keys)
        # order="C" keeps a scalar 0-d (np.ascontiguousarray stored it as [1])
        self.weights[key] = np.asarray(array, order="C")
        element_type = nn.ConstantOp.element_type_of(array.dtype)
        op = nn.ConstantOp(TensorType(element_type, array.shape), external=key)
        if key != name:
            op.attributes["onnx.name"] = StringAttr(name)
        return op

    def made_constant(self, base: str, array: np.ndarray) -> SSAValue:
        """A constant a converter makes (GatherND's flat indices), under a fresh name: inline
        or in the weights file, as initializers are."""
        return self.emit(self._constant_op(self.fresh_name(base), array))

    def is_constant(self, name: str) -> bool:
        """Whether `name` is known at compile time (an initializer, a Constant, a fold)."""
        return self.aliases.get(name, name) in self.constants

    def is_defined(self, name: str) -> bool:
        return self.is_constant(name) or name in self.values

    def operand(self, node: onnx.NodeProto, index: int) -> SSAValue:
        return self.tensor(node.input[index])

    def optional_operand(self, node: onnx.NodeProto, index: int) -> SSAValue | None:
        if len(node.input) > index and node.input[index]:
            return self.tensor(node.input[index])
        return None

    def read_outputs(self, node: onnx.NodeProto) -> list[str]:
        """The node's outputs after the first that something reads."""
        return [name for name in node.output[1:] if name and name in self.read]

    def constant_array(self, name: str, what: str) -> np.ndarray:
        """The value of an input that nn needs at compile time (a shape, a bound)."""
        if not self.is_constant(name):
            raise self.fail(
                f"{what} '{name}' must be a constant (an initializer, a Constant node, or "
                "computed from those and from shapes); nnlayout needs it at compile time, "
                "and it is computed at run time"
            )
        array = self._array(self.constants[self.aliases.get(name, name)])
        # bfloat16 (ml_dtypes', a numpy kind of its own) widened exactly: float32 to nn
        return array.astype(np.float32) if is_bf16_array(array) else array

    def constant_scalar(self, name: str, what: str) -> float:
        """A constant input that ONNX defines as a scalar (one element, of any rank)."""
        array = self.constant_array(name, what)
        if array.size != 1:
            raise self.fail(f"{what} '{name}' must be a scalar, got shape {list(array.shape)}")
        return float(array.reshape(()))

    def _array(self, proto: TensorProto) -> np.ndarray:
        try:
            return numpy_helper.to_array(proto)
        except (ValueError, TypeError) as error:
            raise self.fail(
                f"constant '{proto.name}' is malformed (its data does not match "
                f"its shape {list(proto.dims)}): {one_line(str(error))}"
            ) from None

    # -------------------------------------------------------------------- ops
    def _define(self, name: str, op: Operation) -> SSAValue:
        self.block.add_op(op)
        result = op.results[0]
        result.name_hint = sanitize_name(name)
        self.values[name] = result
        return result

    def fresh_name(self, base: str) -> str:
        """A tensor name for a value a converter makes up (a QLinear op's dequantized input):
        `base`, or `base.1`, `base.2`, ... where the graph or the import already has it, so
        that it never stands for a tensor of the graph."""
        name, count = base, 0
        while name in self.graph_names or name in self.values:
            count += 1
            name = f"{base}.{count}"
        self.graph_names.add(name)
        return name

    def emit(self, op: Operation) -> SSAValue:
        """Appends an intermediate op of a decomposition (no ONNX name)."""
        self.block.add_op(op)
        return op.results[0]

    def reshaped(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` as `shape` (itself where it has that shape already)."""
        if tuple(nn.shape_of(value)) == tuple(shape):
            return value
        return self.emit(self.build(lambda: nn.ReshapeOp(value, list(shape))))

    def build(self, make: Callable[[], Operation]) -> Operation:
        """Builds an op; shape-rule violations become errors naming the node."""
        try:
            op = make()
            op.verify()  # what builders leave to the verifier, e.g. sizes beyond 64 bits
            return op
        except VerifyException as error:
            raise self.fail(one_line(str(error).split("\n\n")[0])) from None

    def output(self, node: onnx.NodeProto, op: Operation | SSAValue, index: int = 0) -> None:
        """Binds the node's output `index` (its first by default) to `op`'s result, checking
        ONNX's inferred shape."""
        name = node.output[index]
        if isinstance(op, SSAValue):
            value = self.values[name] = op
        else:
            value = self._define(name, op)
        inferred = self.inferred.get(name)
        if inferred is None or not inferred.HasField("tensor_type"):
            return
        onnx_type = inferred.tensor_type.elem_type
        if onnx_type not in (0, *ELEMENT_TYPES):
            raise self.fail(
                f"output '{name}' has element type {TensorProto.DataType.Name(onnx_type)}; "
                f"{ELEMENT_TYPES_SAID}"
            )
        if onnx_type and ELEMENT_TYPES[onnx_type] != nn.tensor_type(value).element_type:
            raise self.fail(
                f"nn computes element type {nn.tensor_type(value).element_type} for output "
                f"'{name}' but ONNX infers {TensorProto.DataType.Name(onnx_type)}"
            )
        if any(operand in self.beyond_inference for operand in node.input):
            self.beyond_inference.add(name)
            return
        dims = inferred.tensor_type.shape.dim
        if inferred.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            expected = [d.dim_value for d in dims]
            actual = list(nn.shape_of(value))
            if expected != actual:
                if ceil_mode_overcount(
                    node, expected, actual, nn.shape_of(self.tensor(node.input[0]))
                ) or (same_output_padding_overcount(node, expected, actual)):
                    self.beyond_inference.add(name)
                    return
                raise self.fail(
                    f"nn computes shape {actual} for output '{name}' but ONNX infers {expected}"
                )
