"""Element-wise math as ONNX defines it and torch's exports write it: rounding (Floor, Ceil,
Round; floor division and `remainder` export as Floor), Sign, the trigonometric and
hyperbolic functions and their inverses, Softsign and CELU. One op per function, as MLIR's
`math` dialect has (`math.floor`, `math.sin`): each is an `nn.UnaryOp`, its result of its
input's type, IEEE's special values (a function outside its domain gives NaN).

    %r = nn.round %x : tensor<1x8xf32>       (half to even, as ONNX Round)
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type, FloatAttr, f32
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import Value
from nnlayout.dialects.nn.elementwise import UnaryOp


@irdl_op_definition
class FloorOp(UnaryOp):
    """The largest integer not above x (ONNX Floor; -0 stays -0)."""

    name = "nn.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """The smallest integer not below x (ONNX Ceil; -0.5 gives -0)."""

    name = "nn.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """The nearest integer, halves to even (ONNX Round: 2.5 gives 2, -0.5 gives -0)."""

    name = "nn.round"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x; NaN stays NaN (ONNX Sign)."""

    name = "nn.sign"


@irdl_op_definition
class SinOp(UnaryOp):
    name = "nn.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    name = "nn.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    name = "nn.tan"


@irdl_op_definition
class AsinOp(UnaryOp):
    """arcsin, NaN outside [-1, 1]."""

    name = "nn.asin"


@irdl_op_definition
class AcosOp(UnaryOp):
    """arccos, NaN outside [-1, 1]."""

    name = "nn.acos"


@irdl_op_definition
class AtanOp(UnaryOp):
    name = "nn.atan"


@irdl_op_definition
class SinhOp(UnaryOp):
    name = "nn.sinh"


@irdl_op_definition
class CoshOp(UnaryOp):
    name = "nn.cosh"


@irdl_op_definition
class AsinhOp(UnaryOp):
    name = "nn.asinh"


@irdl_op_definition
class AcoshOp(UnaryOp):
    """arcosh, NaN below 1."""

    name = "nn.acosh"


@irdl_op_definition
class AtanhOp(UnaryOp):
    """artanh, +-inf at +-1, NaN beyond."""

    name = "nn.atanh"


@irdl_op_definition
class SoftsignOp(UnaryOp):
    """x / (1 + |x|) (ONNX Softsign)."""

    name = "nn.softsign"


@irdl_op_definition
class CeluOp(UnaryOp):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (ONNX Celu, torch's `F.celu`)."""

    name = "nn.celu"
    alpha = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($input)"

    def __init__(self, input: Value, alpha: float = 1.0):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32)})

    def verify_(self) -> None:
        super().verify_()
        alpha = self.alpha.value.data
        if not (alpha > 0 and alpha != float("inf")):
            raise VerifyException(f"{self.name}: alpha must be positive and finite, got {alpha}")


#: The ops of this file, by ONNX operator.
MATH_OPS: dict[str, type[UnaryOp]] = {
    "Floor": FloorOp,
    "Ceil": CeilOp,
    "Round": RoundOp,
    "Sign": SignOp,
    "Sin": SinOp,
    "Cos": CosOp,
    "Tan": TanOp,
    "Asin": AsinOp,
    "Acos": AcosOp,
    "Atan": AtanOp,
    "Sinh": SinhOp,
    "Cosh": CoshOp,
    "Asinh": AsinhOp,
    "Acosh": AcoshOp,
    "Atanh": AtanhOp,
    "Softsign": SoftsignOp,
}
