"""The smooth and piecewise-linear activations of modern CNNs and transformers (HardSwish,
HardSigmoid, GELU, Erf, ELU, SELU, Softplus, Mish, Swish/SiLU) and the unary math that exports
write around them (Pow with a constant exponent, Reciprocal, Log), each with ONNX's semantics.

Each is an `nn.UnaryOp`: its result has its input's type. Attributes are float32, as ONNX's
are; the defaults are ONNX's.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, FloatAttr, StringAttr, f32
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import Value
from nnlayout.dialects.nn.elementwise import UnaryOp

# ONNX Selu's defaults (float32 values of the constants of the SELU paper).
SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875
GELU_APPROXIMATIONS = ("none", "tanh")


def _finite(op_name: str, **values: FloatAttr) -> None:
    for what, attr in values.items():
        if not math.isfinite(attr.value.data):
            raise VerifyException(f"{op_name}: {what} must be finite, got {attr.value.data}")


@irdl_op_definition
class HardSigmoidOp(UnaryOp):
    """max(0, min(1, alpha * x + beta)), NaN stays NaN (ONNX HardSigmoid)."""

    name = "nn.hardsigmoid"
    alpha = prop_def(FloatAttr[Float32Type])
    beta = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `alpha` $alpha `beta` $beta attr-dict `:` type($input)"

    def __init__(self, input: Value, alpha: float = 0.2, beta: float = 0.5):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32), "beta": FloatAttr(beta, f32)})

    def verify_(self) -> None:
        super().verify_()
        _finite(self.name, alpha=self.alpha, beta=self.beta)


@irdl_op_definition
class HardSwishOp(UnaryOp):
    """x * max(0, min(1, x / 6 + 1 / 2)) (ONNX HardSwish; -inf gives NaN, -inf * 0)."""

    name = "nn.hardswish"


@irdl_op_definition
class GeluOp(UnaryOp):
    """0.5 x (1 + erf(x / sqrt 2)), or with `approximate "tanh"` 0.5 x (1 + tanh(sqrt(2 / pi)
    (x + 0.044715 x^3))) (ONNX Gelu, opset 20; -inf gives NaN, -inf * 0)."""

    name = "nn.gelu"
    approximate = opt_prop_def(StringAttr)
    assembly_format = "$input (`approximate` $approximate^)? attr-dict `:` type($input)"

    def __init__(self, input: Value, approximate: str = "none"):
        properties = {} if approximate == "none" else {"approximate": StringAttr(approximate)}
        super().__init__(input, properties)
        self.verify_()

    @property
    def uses_tanh(self) -> bool:
        return self.approximate is not None and self.approximate.data == "tanh"

    def verify_(self) -> None:
        super().verify_()
        if self.approximate is not None and self.approximate.data not in GELU_APPROXIMATIONS:
            raise VerifyException(
                f'{self.name}: approximate "{self.approximate.data}" is not one of '
                f"{', '.join(GELU_APPROXIMATIONS)}"
            )


@irdl_op_definition
class ErfOp(UnaryOp):
    """The error function (ONNX Erf)."""

    name = "nn.erf"


@irdl_op_definition
class EluOp(UnaryOp):
    """x for x >= 0, else alpha (exp(x) - 1) (ONNX Elu)."""

    name = "nn.elu"
    alpha = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `alpha` $alpha attr-dict `:` type($input)"

    def __init__(self, input: Value, alpha: float = 1.0):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32)})

    def verify_(self) -> None:
        super().verify_()
        _finite(self.name, alpha=self.alpha)


@irdl_op_definition
class SeluOp(UnaryOp):
    """gamma x for x > 0, else gamma alpha (exp(x) - 1) (ONNX Selu)."""

    name = "nn.selu"
    alpha = prop_def(FloatAttr[Float32Type])
    gamma = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `alpha` $alpha `gamma` $gamma attr-dict `:` type($input)"

    def __init__(self, input: Value, alpha: float = SELU_ALPHA, gamma: float = SELU_GAMMA):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32), "gamma": FloatAttr(gamma, f32)})

    def verify_(self) -> None:
        super().verify_()
        _finite(self.name, alpha=self.alpha, gamma=self.gamma)


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """log(1 + exp(x)), without overflow (ONNX Softplus)."""

    name = "nn.softplus"


@irdl_op_definition
class MishOp(UnaryOp):
    """x tanh(softplus(x)) (ONNX Mish; -inf gives NaN, -inf * 0)."""

    name = "nn.mish"


@irdl_op_definition
class SwishOp(UnaryOp):
    """x sigmoid(x), SiLU: what torch exports as Sigmoid then Mul, as one op (-inf gives
    NaN, -inf * 0, as that Mul does)."""

    name = "nn.swish"


@irdl_op_definition
class PowOp(UnaryOp):
    """x ** exponent, a constant (ONNX Pow with a scalar exponent; IEEE pow's special values:
    pow(NaN, 0) = 1, pow(x < 0, non-integer) = NaN)."""

    name = "nn.pow"
    exponent = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `exponent` $exponent attr-dict `:` type($input)"

    def __init__(self, input: Value, exponent: float):
        super().__init__(input, {"exponent": FloatAttr(exponent, f32)})


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """1 / x, IEEE division (ONNX Reciprocal)."""

    name = "nn.reciprocal"


@irdl_op_definition
class LogOp(UnaryOp):
    """The natural logarithm; -inf at 0, NaN below (ONNX Log)."""

    name = "nn.log"
