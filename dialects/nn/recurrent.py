"""Recurrent layers over a whole sequence: `nn.lstm`, `nn.gru`, `nn.rnn` (ONNX's LSTM, GRU and
RNN; torch's `nn.LSTM`, `nn.GRU`, `nn.RNN`). One op per layer, not its steps unrolled: a kernel
then runs the whole sequence in one call (oneDNN's RNN primitive), where a step of small ops
costs about their calls.

Operands, as ONNX stores them: `x` [steps, batch, input]; `w` [directions, gates x hidden,
input] and `r` [directions, gates x hidden, hidden] (gates in ONNX's order: LSTM i, o, f, c;
GRU z, r, h; RNN one); `b` [directions, 2 x gates x hidden] (W's biases, then R's); the
initial hidden state `h0` [directions, batch, hidden] and, for `nn.lstm`, cell state `c0`.
Attributes: `direction` forward, reverse or bidirectional (two directions, forward first);
`clip`, where given, bounds every gate's input to [-clip, clip] (ONNX's); `nn.gru`'s
`linear_before_reset` (torch's GRU sets it); `nn.rnn`'s `activation`, tanh or relu.

The result is every step's hidden state, [steps, batch, directions, hidden]: batch before
directions, as a kernel writes both directions of a step side by side (ONNX's Y is its
transpose [steps, directions, batch, hidden]). The last hidden state is a slice of it;
`nn.lstm`'s `last_cell` makes the result the last cell state [directions, batch, hidden]
instead (ONNX's Y_c), which no slice of the hidden states gives.

    %y = nn.lstm %x, %w, %r, %b, %h0, %c0 direction "forward" : (tensor<10x1x32xf32>,
         tensor<1x256x32xf32>, tensor<1x256x64xf32>, tensor<1x512xf32>, tensor<1x1x64xf32>,
         tensor<1x1x64xf32>) -> tensor<10x1x1x64xf32>
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, FloatAttr, StringAttr, TensorType, UnitAttr, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import NNOp, Shape, Value, shape_of, tensor_type

DIRECTIONS = ("forward", "reverse", "bidirectional")
ACTIVATIONS = ("tanh", "relu")


class RecurrentOp(NNOp):
    """What `nn.lstm`, `nn.gru` and `nn.rnn` share: operands, direction, clip, shape rule."""

    GATES: ClassVar[int]

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    h0 = operand_def(TensorType)
    output = result_def(TensorType)
    direction = prop_def(StringAttr)
    clip = opt_prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())

    def __init__(
        self,
        operands: list[Value],
        direction: str,
        clip: float | None,
        extra: dict[str, Attribute],
        result: TensorType | None = None,
    ):
        properties: dict[str, Attribute] = {"direction": StringAttr(direction), **extra}
        if clip is not None:
            properties["clip"] = FloatAttr(clip, f32)
        x, _, r, *_ = operands
        steps, batch, _ = shape_of(x)
        directions = 2 if direction == "bidirectional" else 1
        element = tensor_type(x).element_type
        shape = [steps, batch, directions, shape_of(r)[-1]]
        super().__init__(
            operands=operands,
            result_types=[result or TensorType(element, shape)],
            properties=properties,
        )
        self.verify_()

    @property
    def directions(self) -> int:
        return 2 if self.direction.data == "bidirectional" else 1

    @property
    def hidden(self) -> int:
        return shape_of(self.r)[-1]

    @property
    def clip_value(self) -> float | None:
        return None if self.clip is None else self.clip.value.data

    def states(self) -> list[SSAValue]:
        """The initial states: h0 (and nn.lstm's c0)."""
        return [self.h0]

    def sequence_shape(self) -> Shape:
        """[steps, batch, directions, hidden], after checking every operand's shape."""
        if self.direction.data not in DIRECTIONS:
            raise VerifyException(
                f"{self.name}: direction '{self.direction.data}' is not one of {list(DIRECTIONS)}"
            )
        if (clip := self.clip_value) is not None and not clip > 0:
            raise VerifyException(f"{self.name}: clip must be positive, got {clip}")
        x = shape_of(self.x)
        if len(x) != 3:
            raise VerifyException(f"{self.name}: x must be [steps, batch, input], got {list(x)}")
        steps, batch, size = x
        d, h, rows = self.directions, self.hidden, self.GATES * self.hidden
        expected = {"w": [d, rows, size], "r": [d, rows, h], "b": [d, 2 * rows]}
        for name, value in (("w", self.w), ("r", self.r), ("b", self.b)):
            if list(shape_of(value)) != expected[name]:
                raise VerifyException(
                    f"{self.name}: {name} must be {expected[name]} ({self.GATES} gates of hidden "
                    f"size {h}, {d} direction(s), input {size}), got {list(shape_of(value))}"
                )
        for index, value in enumerate(self.states()):
            if list(shape_of(value)) != [d, batch, h]:
                raise VerifyException(
                    f"{self.name}: initial state {index} must be [{d}, {batch}, {h}] "
                    f"([directions, batch, hidden]), got {list(shape_of(value))}"
                )
        return [steps, batch, d, h]

    def result_shape(self) -> Shape:
        return self.sequence_shape()


_FORMAT = (
    "$x `,` $w `,` $r `,` $b `,` $h0{} `direction` $direction (`clip` $clip^)?{} attr-dict "
    "`:` functional-type(operands, results)"
)


@irdl_op_definition
class LstmOp(RecurrentOp):
    """ONNX's LSTM without peepholes or coupled gates: i, f, o = sigmoid, c~ = tanh of
    x W^T + h R^T + biases; c = f c + i c~; h = o tanh(c)."""

    name = "nn.lstm"
    GATES: ClassVar[int] = 4
    # All six again, in order: xDSL lists a subclass's operands before its base's.
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    h0 = operand_def(TensorType)
    c0 = operand_def(TensorType)
    last_cell = opt_prop_def(UnitAttr)
    assembly_format = _FORMAT.format(" `,` $c0", " (`last_cell` $last_cell^)?")

    def __init__(
        self,
        operands: list[Value],
        direction: str = "forward",
        clip: float | None = None,
        last_cell: bool = False,
    ):
        """`operands`: x, w, r, b, h0, c0."""
        extra: dict[str, Attribute] = {"last_cell": UnitAttr()} if last_cell else {}
        result = None
        if last_cell:
            result = TensorType(tensor_type(operands[0]).element_type, shape_of(operands[4]))
        super().__init__(operands, direction, clip, extra, result)

    def states(self) -> list[SSAValue]:
        return [self.h0, self.c0]

    def result_shape(self) -> Shape:
        steps, batch, directions, hidden = self.sequence_shape()
        return [directions, batch, hidden] if self.last_cell else [steps, batch, directions, hidden]


@irdl_op_definition
class GruOp(RecurrentOp):
    """ONNX's GRU: z, r = sigmoid, h~ = tanh(x W_h^T + (r h) R_h^T + biases), or with
    `linear_before_reset` tanh(x W_h^T + r (h R_h^T + R_bh) + W_bh); h = (1 - z) h~ + z h."""

    name = "nn.gru"
    GATES: ClassVar[int] = 3
    linear_before_reset = opt_prop_def(UnitAttr)
    assembly_format = _FORMAT.format("", " (`linear_before_reset` $linear_before_reset^)?")

    def __init__(
        self,
        operands: list[Value],
        direction: str = "forward",
        clip: float | None = None,
        linear_before_reset: bool = False,
    ):
        """`operands`: x, w, r, b, h0."""
        extra: dict[str, Attribute] = (
            {"linear_before_reset": UnitAttr()} if linear_before_reset else {}
        )
        super().__init__(operands, direction, clip, extra)


@irdl_op_definition
class RnnOp(RecurrentOp):
    """ONNX's RNN: h = activation(x W^T + h R^T + W_b + R_b), tanh or relu."""

    name = "nn.rnn"
    GATES: ClassVar[int] = 1
    activation = prop_def(StringAttr)
    assembly_format = _FORMAT.format("", " `activation` $activation")

    def __init__(
        self,
        operands: list[Value],
        direction: str = "forward",
        clip: float | None = None,
        activation: str = "tanh",
    ):
        """`operands`: x, w, r, b, h0."""
        super().__init__(operands, direction, clip, {"activation": StringAttr(activation)})

    def result_shape(self) -> Shape:
        if self.activation.data not in ACTIVATIONS:
            raise VerifyException(
                f"{self.name}: activation '{self.activation.data}' is not one of "
                f"{list(ACTIVATIONS)}"
            )
        return self.sequence_shape()
