"""Reference kernels of the activations (`dialects/nn/activations.py`, and sigmoid, which
swish is made of) and of the element-wise math (`dialects/nn/math.py`): ONNX's formulas on
logical arrays, in the input's float dtype, NaN and infinities as those formulas give them
(x * 0 for x = -inf is NaN: hardswish, gelu, swish and mish of -inf are NaN, as in the
graphs torch exports for them). The interpreter runs kernels under
`np.errstate(all="ignore")`, so overflow to inf is silent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import scipy.special
from xdsl.ir import Operation

from nnlayout.dialects import nn

Kernel = Callable[[Operation, Sequence[np.ndarray]], np.ndarray]


def _f(value: float, like: np.ndarray) -> np.generic:
    return like.dtype.type(value)


def sigmoid(op: nn.SigmoidOp | None, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """1 / (1 + exp(-x)), written with exp(-|x|) so that nothing overflows."""
    x = inputs[0]
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """max(0, min(1, alpha x + beta)); NaN propagates (numpy's maximum and minimum)."""
    return np.minimum(np.maximum(_f(alpha, x) * x + _f(beta, x), _f(0, x)), _f(1, x))


def hardsigmoid(op: nn.HardSigmoidOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return _hard_sigmoid(inputs[0], op.alpha.value.data, op.beta.value.data)


def hardswish(op: nn.HardSwishOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x * hardsigmoid(x) with alpha 1/6, beta 1/2 (ONNX HardSwish)."""
    x = inputs[0]
    return x * _hard_sigmoid(x, 1 / 6, 0.5)


def gelu(op: nn.GeluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation (ONNX Gelu)."""
    x = inputs[0]
    if op.uses_tanh:
        inner = _f(math.sqrt(2 / math.pi), x) * (x + _f(0.044715, x) * x * x * x)
        return _f(0.5, x) * x * (_f(1, x) + np.tanh(inner))
    return _f(0.5, x) * x * (_f(1, x) + scipy.special.erf(x / _f(math.sqrt(2), x)))


def erf(op: nn.ErfOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return scipy.special.erf(inputs[0])


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    """x for x >= 0, else alpha (exp(x) - 1), as expm1 (exact near 0); NaN stays NaN."""
    return np.where(x >= 0, x, _f(alpha, x) * np.expm1(x))


def elu(op: nn.EluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return _elu(inputs[0], op.alpha.value.data)


def selu(op: nn.SeluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """gamma elu(x, alpha) (ONNX Selu: x > 0 or not; at 0 both give 0)."""
    x = inputs[0]
    return _f(op.gamma.value.data, x) * _elu(x, op.alpha.value.data)


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) as log(exp(0) + exp(x)), which does not overflow."""
    return np.logaddexp(_f(0, x), x)


def softplus(op: nn.SoftplusOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return _softplus(inputs[0])


def mish(op: nn.MishOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    return x * np.tanh(_softplus(x))


def swish(op: nn.SwishOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x * sigmoid(x), the same numbers as the Sigmoid and Mul it replaces."""
    x = inputs[0]
    return x * sigmoid(None, [x])


def power(op: nn.PowOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """IEEE pow, as onnxruntime's std::pow: numpy computes x ** 0.5 as sqrt(x), which gives
    NaN for -inf and -0 for -0 where pow gives inf and +0."""
    x = inputs[0]
    exponent = op.exponent.value.data
    if exponent != 0.5:
        return np.power(x, _f(exponent, x))
    return np.where(x == -np.inf, _f(np.inf, x), np.sqrt(x) + _f(0, x))


def reciprocal(op: nn.ReciprocalOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    return np.divide(_f(1, x), x)


def log(op: nn.LogOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return np.log(inputs[0])


def celu(op: nn.CeluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)), expm1 for exactness near 0."""
    x = inputs[0]
    alpha = _f(op.alpha.value.data, x)
    return np.maximum(x, _f(0, x)) + np.minimum(_f(0, x), alpha * np.expm1(x / alpha))


def softsign(op: nn.SoftsignOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    return x / (_f(1, x) + np.abs(x))


def _sign(x: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 (+0 for both zeros, as onnxruntime gives it); NaN stays NaN."""
    return np.sign(x) + _f(0, x)


# ONNX's element-wise math as numpy's ufuncs, which give IEEE's special values.
_MATH: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    nn.FloorOp: np.floor,
    nn.CeilOp: np.ceil,
    nn.RoundOp: np.rint,  # half to even
    nn.SignOp: _sign,
    nn.SinOp: np.sin,
    nn.CosOp: np.cos,
    nn.TanOp: np.tan,
    nn.AsinOp: np.arcsin,
    nn.AcosOp: np.arccos,
    nn.AtanOp: np.arctan,
    nn.SinhOp: np.sinh,
    nn.CoshOp: np.cosh,
    nn.AsinhOp: np.arcsinh,
    nn.AcoshOp: np.arccosh,
    nn.AtanhOp: np.arctanh,
}


def _math(function: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    return lambda op, inputs: function(inputs[0])


ACTIVATION_KERNELS: dict[type[Operation], Kernel] = {
    **{op_type: _math(function) for op_type, function in _MATH.items()},
    nn.CeluOp: celu,
    nn.SoftsignOp: softsign,
    nn.HardSigmoidOp: hardsigmoid,
    nn.HardSwishOp: hardswish,
    nn.GeluOp: gelu,
    nn.ErfOp: erf,
    nn.EluOp: elu,
    nn.SeluOp: selu,
    nn.SoftplusOp: softplus,
    nn.MishOp: mish,
    nn.SwishOp: swish,
    nn.PowOp: power,
    nn.ReciprocalOp: reciprocal,
    nn.LogOp: log,
}


def maps_zero_to_zero(op: Operation) -> bool:
    """Whether f(0) == 0 for one of `ACTIVATION_KERNELS`' ops, so that zero padding lanes
    stay zero: not for softplus (log 2), reciprocal (inf), log (-inf), cos and cosh (1),
    acos (pi / 2), acosh (NaN), hardsigmoid unless its beta is at most 0, pow unless its
    exponent is above 0 (0 ** 0 = 1)."""
    if isinstance(op, nn.HardSigmoidOp):
        return op.beta.value.data <= 0
    if isinstance(op, nn.PowOp):
        return op.exponent.value.data > 0
    return not isinstance(
        op,
        nn.SoftplusOp | nn.ReciprocalOp | nn.LogOp | nn.CosOp | nn.CoshOp | nn.AcosOp | nn.AcoshOp,
    )
