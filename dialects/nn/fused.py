"""`nn.fused_conv2d` and `nn.fused_matmul`: a convolution or a fully connected product with its
epilogue, made by `fuse-post-ops` and `fuse-matmul-post-ops`."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block
from xdsl.irdl import (
    OptionalDef,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.activations import (
    EluOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    MishOp,
    SoftplusOp,
    SwishOp,
)
from nnlayout.dialects.nn.base import NNOp, Shape, Value, shape_of
from nnlayout.dialects.nn.elementwise import (
    ClipOp,
    LeakyReluOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
    UnaryOp,
    verify_clip_bounds,
)
from nnlayout.dialects.nn.linear import CONV_WINDOW_SYNTAX, Conv2dOp, ConvWindowOp, MatmulOp
from nnlayout.dialects.nn.shape_rules import matmul_shape

# The activations an `nn.fused_conv2d` may end with, by the name it prints.
ACTIVATIONS: dict[str, type[UnaryOp]] = {
    "relu": ReluOp,
    "leaky_relu": LeakyReluOp,
    "clip": ClipOp,
    "sigmoid": SigmoidOp,
    "tanh": TanhOp,
    "hardswish": HardSwishOp,
    "hardsigmoid": HardSigmoidOp,
    "gelu": GeluOp,
    "swish": SwishOp,
    "elu": EluOp,
    "softplus": SoftplusOp,
    "mish": MishOp,
}
# The attributes of a fused activation, which the fused op carries under the same names.
ACTIVATION_ATTRIBUTES = ("alpha", "beta", "min", "max", "approximate")


# The activation and its attributes in a fused op's assembly format.
ACTIVATION_SYNTAX = (
    "(`activation` $activation^)? (`alpha` $alpha^)? (`beta` $beta^)? "
    "(`approximate` $approximate^)? (`min` $min^)? (`max` $max^)? (`nnan` $nnan^)?"
)


class ActivationEpilogueOp(NNOp):
    """An op whose result ends with an optional activation of `ACTIVATIONS`
    (`nn.fused_conv2d`, `nn.fused_matmul`): the activation's name, its attributes under the
    same names (`ACTIVATION_ATTRIBUTES`) and `nnan`, declared here once."""

    activation = opt_prop_def(StringAttr)
    alpha = opt_prop_def(FloatAttr[Float32Type])
    beta = opt_prop_def(FloatAttr[Float32Type])
    approximate = opt_prop_def(StringAttr)
    min = opt_prop_def(FloatAttr[Float32Type])
    max = opt_prop_def(FloatAttr[Float32Type])
    # Like arith's fastmath `nnan`: the program promises no NaN reaches the activation, so a
    # kernel may use an activation that would map NaN elsewhere (oneDNN's relu and clip).
    nnan = opt_prop_def(UnitAttr)

    def activation_op(self) -> UnaryOp | None:
        """The activation as a standalone op (`activation_of`)."""
        return activation_of(self)

    def activation_type(self) -> Attribute:
        """The type the activation computes on: the result's."""
        return self.results[0].type


@irdl_op_definition
class FusedConv2dOp(ConvWindowOp, ActivationEpilogueOp):
    """A convolution with its epilogue: `activation(conv2d(input, weight) + bias + addend)`,
    made by `fuse-post-ops` for kernels that apply post-ops while the result is still in
    registers (oneDNN's post-ops: `sum` for the addend, `eltwise` for the activation).

        %y = nn.fused_conv2d %x, %w, %b add %r strides [1, 1] pads [0, 0, 0, 0]
               dilations [1, 1] groups 1 activation "relu" : (...) -> tensor<...>

    Attributes as `nn.conv2d`'s; `addend` has the result's type (a residual connection);
    `activation` names an element-wise op of `ACTIVATIONS` (`relu`, `leaky_relu` with
    `alpha`, `clip` with `min`/`max`, `sigmoid`, `tanh`, `hardswish`, `hardsigmoid` with
    `alpha`/`beta`, `gelu` with `approximate`, `swish`, `elu` with `alpha`, `softplus`,
    `mish`) with that op's semantics, NaN included.
    """

    name = "nn.fused_conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    addend = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        f"$input `,` $weight `,` $bias (`add` $addend^)? {CONV_WINDOW_SYNTAX} "
        f"{ACTIVATION_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        conv: Conv2dOp | FusedConv2dOp,
        bias: Value,
        addend: Value | None = None,
        activation: UnaryOp | None = None,
        nnan: bool = False,
    ):
        """`conv` with `bias` (replacing its own), then `addend` and `activation` (whose
        attributes are taken over) applied to its result."""
        properties = {
            name: conv.properties[name] for name in ("strides", "pads", "dilations", "groups")
        }
        properties.update(activation_properties(activation, nnan))
        super().__init__(
            operands=[conv.input, conv.weight, bias, [] if addend is None else [addend]],
            result_types=[conv.output.type],
            properties=properties,
        )

    def result_shape(self) -> Shape:
        return self.window_shape(self.input, self.weight, self.bias)

    def verify_(self) -> None:
        super().verify_()
        if self.addend is not None and shape_of(self.addend) != shape_of(self.output):
            raise VerifyException(
                f"{self.name}: addend shape {list(shape_of(self.addend))} is not the result "
                f"shape {list(shape_of(self.output))}"
            )
        verify_activation(self)


def activation_of(op: ActivationEpilogueOp) -> UnaryOp | None:
    """The activation of a fused op as a standalone op (None without one), for kernels that
    implement it as that op does; it reads a block argument of its own, so that `op`'s
    result gains no use."""
    if op.activation is None:
        return None
    properties = {
        name: op.properties[name] for name in ACTIVATION_ATTRIBUTES if name in op.properties
    }
    value_type = op.activation_type()
    block = Block(arg_types=[value_type])
    return ACTIVATIONS[op.activation.data].create(
        operands=[block.args[0]], result_types=[value_type], properties=properties
    )


def activation_properties(activation: UnaryOp | None, nnan: bool) -> dict[str, Attribute]:
    """The properties a fused op carries for `activation` (its name and attributes) and
    `nnan`."""
    properties: dict[str, Attribute] = {}
    if activation is not None:
        properties["activation"] = StringAttr(activation.name.removeprefix("nn."))
        properties.update(activation.properties)
    if nnan:
        properties["nnan"] = UnitAttr()
    return properties


def verify_activation(op: ActivationEpilogueOp) -> None:
    """The activation is one of `ACTIVATIONS`, with the attributes its op has (required
    ones given) and none other, valid for that op."""
    definitions = {}
    if op.activation is not None:
        if op.activation.data not in ACTIVATIONS:
            raise VerifyException(
                f'{op.name}: unknown activation "{op.activation.data}"; expected one '
                f"of {', '.join(ACTIVATIONS)}"
            )
        definitions = ACTIVATIONS[op.activation.data].get_irdl_definition().properties
    for name in ACTIVATION_ATTRIBUTES:
        if name in op.properties and name not in definitions:
            if op.activation is None:
                raise VerifyException(f"{op.name}: '{name}' is given but there is no activation")
            raise VerifyException(
                f"{op.name}: '{name}' does not apply to activation \"{op.activation.data}\""
            )
    for name, definition in definitions.items():
        if name not in op.properties and not isinstance(definition, OptionalDef):
            raise VerifyException(f"{op.name}: activation \"{op.activation.data}\" needs '{name}'")
    activation = activation_of(op)
    if activation is not None and not isinstance(activation, ClipOp):  # bounds: below
        try:
            activation.verify_()
        except VerifyException as error:
            raise VerifyException(f"{op.name}: activation {error}") from None
    verify_clip_bounds(op.name, op.min, op.max)


@irdl_op_definition
class FusedMatmulOp(ActivationEpilogueOp):
    """A fully connected product with its epilogue: `activation(matmul(lhs, rhs) + bias)`,
    made by `fuse-matmul-post-ops` for kernels that apply the bias and activation while the
    result is still in registers (oneDNN's matmul and inner product: a bias, and an
    `eltwise` post-op).

        %y = nn.fused_matmul %x, %w bias %b activation "gelu"
               : (tensor<1x197x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>)
               -> tensor<1x197x3072xf32>

    `lhs` and `rhs` as `nn.matmul`'s, `rhs` 2-D ([K, N]); `bias` (optional) is a vector of
    N, added to every row; `activation` (optional) as `nn.fused_conv2d`'s, with that op's
    semantics, NaN included.
    """

    name = "nn.fused_matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        f"$lhs `,` $rhs (`bias` $bias^)? {ACTIVATION_SYNTAX} attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        matmul: MatmulOp,
        bias: Value | None = None,
        activation: UnaryOp | None = None,
        nnan: bool = False,
    ):
        """`matmul` with `bias` added to its rows, then `activation` (whose attributes are
        taken over) applied."""
        super().__init__(
            operands=[matmul.lhs, matmul.rhs, [] if bias is None else [bias]],
            result_types=[matmul.output.type],
            properties=activation_properties(activation, nnan),
        )

    def result_shape(self) -> Shape:
        return matmul_shape(shape_of(self.lhs), shape_of(self.rhs))

    def verify_(self) -> None:
        super().verify_()
        rhs = shape_of(self.rhs)
        if len(rhs) != 2:
            raise VerifyException(f"{self.name}: rhs must be 2-D ([K, N]), got {list(rhs)}")
        if self.bias is not None and tuple(shape_of(self.bias)) != (rhs[1],):
            raise VerifyException(
                f"{self.name}: bias must have shape [{rhs[1]}] (rhs's columns), got "
                f"{list(shape_of(self.bias))}"
            )
        verify_activation(self)
