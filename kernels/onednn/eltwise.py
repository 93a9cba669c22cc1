"""Element-wise and binary ops as oneDNN's eltwise and binary primitives: the algorithm (and
alpha, beta) with the reference kernels' semantics for each op, which ops oneDNN computes as
the reference does on finite inputs only, and which operand order its binary takes.

oneDNN's exp turns NaN into inf, so exp has no oneDNN kernel here. Its relu and clip
(max/min instructions; leaky_relu with alpha 0 is its relu) turn NaN into a bound, as does
its hardsigmoid (NaN gives 1), and its gelu_erf turns +inf into NaN (AVX-512): these run in
oneDNN on calls whose input is finite and in numpy otherwise (`bounds.py`, `calls.py`). The
others match the reference on NaN and infinities (hardswish, gelu, swish and
mish of -inf are NaN in both; pow with exponent 0.5 is sqrt in both, NaN for -inf).
oneDNN has no erf or selu eltwise.

oneDNN's parameters: hardswish and hardsigmoid compute x * max(0, min(1, alpha x + beta))
and max(0, min(1, alpha x + beta)); swish x sigmoid(alpha x); soft_relu
log(1 + exp(alpha x)) / alpha; elu alpha (exp(x) - 1) below 0; pow alpha x ** beta.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn.fused import ActivationEpilogueOp
from nnlayout.kernels.blocked import broadcast_reason, full_operand
from nnlayout.kernels.onednn import binding as b


def eltwise_params(op: Operation) -> tuple[int, float, float]:
    """The (algorithm, alpha, beta) of the oneDNN eltwise with the reference's semantics."""
    if isinstance(op, nn.LeakyReluOp):
        return b.dnnl_eltwise_relu, op.alpha.value.data, 0.0
    if isinstance(op, nn.ReluOp):
        return b.dnnl_eltwise_relu, 0.0, 0.0
    if isinstance(op, nn.ClipOp):
        return (b.dnnl_eltwise_clip_v2, *clip_range(op))
    if isinstance(op, nn.HardSigmoidOp):
        return b.dnnl_eltwise_hardsigmoid, op.alpha.value.data, op.beta.value.data
    if isinstance(op, nn.EluOp):
        return b.dnnl_eltwise_elu, op.alpha.value.data, 0.0
    if isinstance(op, nn.PowOp):
        return b.dnnl_eltwise_pow, 1.0, op.exponent.value.data
    if isinstance(op, nn.GeluOp):
        return (b.dnnl_eltwise_gelu_tanh if op.uses_tanh else b.dnnl_eltwise_gelu_erf), 0.0, 0.0
    return ELTWISE[type(op)]


def activation_eltwise(op: ActivationEpilogueOp) -> tuple[b.PostOp, ...]:
    """`op`'s activation as oneDNN's eltwise post-op (`eltwise_params`), none without one."""
    activation = op.activation_op()
    return () if activation is None else (b.PostOp.eltwise(*eltwise_params(activation)),)


def clip_range(op: nn.ClipOp) -> tuple[float, float]:
    return (
        -math.inf if op.min is None else op.min.value.data,
        math.inf if op.max is None else op.max.value.data,
    )


def finite_only(op: Operation) -> bool:
    """Whether oneDNN computes `op` as the reference does on finite inputs only (those
    `finite_arguments` names). Such an op runs in numpy on a call where one is not."""
    return bool(finite_arguments(op))


def finite_arguments(op: Operation) -> tuple[int, ...]:
    """The execution arguments of `op` that must be finite for oneDNN to compute it as the
    reference does: the source of its relu and clip (also leaky_relu with alpha 0, as relu),
    max/min in an operand order that turns NaN into a bound, and of its max pooling, which
    drops NaN and starts from the lowest float (a window of -inf gave -3.4e38); both sources
    of its binary max and min, max/min instructions that return one operand where the other
    is NaN; the slope of its prelu, src > 0 ? src : src * slope, which multiplies a zero
    source by the slope (0 * inf, 0 * NaN: NaN where the reference keeps the zero); the
    source of its hardsigmoid (NaN to 1), gelu_erf (+inf to NaN), pow with exponent 0.5 (-inf
    to NaN) and softmax and log-softmax (its exp turns NaN into inf)."""
    if (
        isinstance(
            op,
            nn.ReluOp
            | nn.ClipOp
            | nn.MaxPool2dOp
            | nn.HardSigmoidOp
            | nn.SoftmaxOp
            | nn.LogSoftmaxOp,
        )
        or (isinstance(op, nn.LeakyReluOp) and op.alpha.value.data == 0)
        or (isinstance(op, nn.PowOp) and op.exponent.value.data == 0.5)
        or (isinstance(op, nn.GeluOp) and not op.uses_tanh)
    ):
        return (b.DNNL_ARG_SRC,)
    if isinstance(op, nn.MaxOp | nn.MinOp):
        return (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1)
    if isinstance(op, nn.PReluOp):
        return (b.DNNL_ARG_WEIGHTS,)
    return ()


ELTWISE: dict[type[Operation], tuple[int, float, float]] = {
    nn.SigmoidOp: (b.dnnl_eltwise_logistic, 0.0, 0.0),
    nn.TanhOp: (b.dnnl_eltwise_tanh, 0.0, 0.0),
    nn.AbsOp: (b.dnnl_eltwise_abs, 0.0, 0.0),
    nn.SqrtOp: (b.dnnl_eltwise_sqrt, 0.0, 0.0),
    nn.NegOp: (b.dnnl_eltwise_linear, -1.0, -0.0),  # + 0.0 would turn -(+0.0) into +0.0
    nn.HardSwishOp: (b.dnnl_eltwise_hardswish, 1 / 6, 0.5),
    nn.SwishOp: (b.dnnl_eltwise_swish, 1.0, 0.0),
    nn.SoftplusOp: (b.dnnl_eltwise_soft_relu, 1.0, 0.0),
    nn.MishOp: (b.dnnl_eltwise_mish, 0.0, 0.0),
    nn.ReciprocalOp: (b.dnnl_eltwise_pow, 1.0, -1.0),
    nn.LogOp: (b.dnnl_eltwise_log, 0.0, 0.0),
    nn.RoundOp: (b.dnnl_eltwise_round, 0.0, 0.0),
}
# The unary ops oneDNN's eltwise computes: `ELTWISE`'s, and those with parameters, whose
# (algorithm, alpha, beta) `eltwise_params` computes (relu, clip and leaky_relu aside).
ELTWISE_OPS: tuple[type[Operation], ...] = (
    *ELTWISE,
    nn.HardSigmoidOp,
    nn.EluOp,
    nn.PowOp,
    nn.GeluOp,
)
BINARY: dict[type[Operation], int] = {
    nn.AddOp: b.dnnl_binary_add,
    nn.SubOp: b.dnnl_binary_sub,
    nn.MulOp: b.dnnl_binary_mul,
    nn.DivOp: b.dnnl_binary_div,
    nn.MaxOp: b.dnnl_binary_max,
    nn.MinOp: b.dnnl_binary_min,
}
# The binary ops whose operands oneDNN may take in either order.
COMMUTATIVE = (nn.AddOp, nn.MulOp, nn.MaxOp, nn.MinOp)


def binary_reason(op: Operation) -> str | None:
    """Operands that broadcast as `broadcast_reason` says, and that oneDNN's binary takes:
    only its second source broadcasts, so a broadcast first operand is swapped to second
    where the op commutes (torchvision's squeeze-and-excitation computes scale * x)."""
    if (reason := broadcast_reason(op)) is not None:
        return reason
    full = full_operand(op)
    if full is None:
        return "no operand has the result's shape (oneDNN broadcasts its second source only)"
    if full != 0 and not isinstance(op, COMMUTATIVE):
        return (
            f"operand 0 broadcasts, and oneDNN broadcasts only its second source, which "
            f"{op.name} does not let us swap"
        )
    return None


def binary_order(op: Operation) -> tuple[int, int]:
    """Which operands are oneDNN's first and second sources (see `binary_reason`): the one
    of the result's shape first."""
    return (0, 1) if full_operand(op) == 0 else (1, 0)
