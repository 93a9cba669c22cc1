"""Reference numpy kernels for the `nn` dialect: the semantic oracle of the compiler.

One plain function per op, `kernel(op, inputs) -> ndarray`: it reads the op's attributes and
declared result shape from `op` and computes on *logical* arrays (NCHW activations, OIHW
weights, no layout, no padding lanes). These kernels favour obvious correctness over speed, but
are vectorised (windows via `sliding_window_view`, convolutions as one matmul) so that whole
networks run in seconds. They never write into their inputs; a result may share memory with an
input (reshape, flatten) since run-time values are immutable. Results have the inputs' float
dtype (float32 for float32 models).

`nn.constant` has no kernel here: its value is data (inline or in the weights file), which the
interpreter materialises once per module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FloatAttr, f32
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.dialects.nn.fused import ActivationEpilogueOp
from nnlayout.kernels.activations import ACTIVATION_KERNELS, sigmoid
from nnlayout.kernels.reduction_reference import batch_norm, cumsum, layer_norm, lrn, reduce
from nnlayout.kernels.reference_bf16 import cast, rounded_per_op
from nnlayout.kernels.reference_integer import INTEGER_REFERENCE_KERNELS, PREPARED_INTEGER_KERNELS
from nnlayout.kernels.reference_logical import LOGICAL_REFERENCE_KERNELS, PREPARED_LOGICAL_KERNELS
from nnlayout.kernels.reference_movement import (
    channel_shuffle,
    expand,
    gather,
    gather_into,
    pad,
    resize,
    scatter,
    scatter_into,
    slice_,
)
from nnlayout.kernels.reference_pooling import (
    avg_pool2d,
    max_pool2d,
    max_pool2d_indices,
    pad_spatial,
    windows,
)
from nnlayout.kernels.reference_quantized import (
    QUANTIZED_REFERENCE_KERNELS,
    clamped,
    qconv2d_to_float,
    qmatmul_real,
    quantize_array,
)
from nnlayout.kernels.reference_quantized import qconv2d as requantized_qconv2d
from nnlayout.kernels.reference_quantized import qmatmul as requantized_qmatmul
from nnlayout.kernels.reference_recurrent import recurrent
from nnlayout.kernels.reference_sampling import grid_sample
from nnlayout.kernels.reference_selection import arg_extremum, topk
from nnlayout.kernels.registry import BindingSession, BoundKernel

Kernel = Callable[[Operation, Sequence[np.ndarray]], np.ndarray]


def _scalar(attr: FloatAttr, like: np.ndarray) -> np.generic:
    """A float attribute as a scalar of `like`'s dtype (so float32 stays float32)."""
    return like.dtype.type(attr.value.data)


# ------------------------------------------------------------------- convolutions
#: At most this many input channels is an image (gray, RGB, RGBA) rather than a layer's output.
IMAGE_CHANNELS = 4


def summed_per_channel(
    channels: int, product: Callable[[slice], np.ndarray], taps: int
) -> np.ndarray:
    """An image convolution's reduction over (channel, kH, kW) as one product per input
    channel (`product` of that channel's `taps` = kH*kW rows of the reduction), added: each
    channel's sum starts from zero, as onnxruntime's NCHWc stem does. The first layer's
    rounding is the one the rest of a network amplifies most (fcn_resnet50: with the stem
    summed in one sequence of 147 terms, ours was 1.4x farther from a float64 evaluation than
    onnxruntime; see docs/benchmarks.md, "fcn_resnet50 against float64")."""
    total = product(slice(0, taps))
    for c in range(1, channels):
        total += product(slice(c * taps, (c + 1) * taps))
    return total


def conv2d(op: nn.Conv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """ONNX Conv: im2col over the zero-padded input, then one (grouped) matmul; an image's
    (at most `IMAGE_CHANNELS` input channels, ungrouped) as one matmul per input channel,
    added (`summed_per_channel`)."""
    x, w, *bias = inputs
    n = x.shape[0]
    o, cg, kh, kw = w.shape
    groups = op.groups.value.data
    _, _, oh, ow = shape_of(op.output)
    taps = windows(
        pad_spatial(x, ints(op.pads), 0.0),
        (kh, kw),
        ints(op.strides),
        ints(op.dilations),
        (oh, ow),
    )
    # [N, C, OH, OW, kH, kW] -> [N, G, (C/G)*kH*kW, OH*OW]: the reduction axes match w's order.
    cols = taps.transpose(0, 1, 4, 5, 2, 3).reshape(n, groups, cg * kh * kw, oh * ow)
    matrix = w.reshape(groups, o // groups, cg * kh * kw)
    if groups == 1 and cg <= IMAGE_CHANNELS:
        out = summed_per_channel(cg, lambda k: np.matmul(matrix[:, :, k], cols[:, :, k]), kh * kw)
    else:
        out = np.matmul(matrix, cols)
    out = out.reshape(n, o, oh, ow)
    if bias:
        out += bias[0].reshape(1, o, 1, 1)
    return out


def conv_transpose2d(op: nn.ConvTranspose2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """ONNX ConvTranspose: each input pixel scatters weight * value into the full output
    (one matmul for all kernel positions, then a strided add per position); pads then crop
    the full output and output_padding extends its end."""
    x, w, *bias = inputs
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    groups = op.groups.value.data
    (sh, sw), (dh, dw) = ints(op.strides), ints(op.dilations)
    top, left, _, _ = ints(op.pads)
    out_pad_h, out_pad_w = ints(op.output_padding)
    _, o, oh, ow = shape_of(op.output)
    cg = c // groups
    # [G, Og*kH*kW, C/G] @ [N, G, C/G, H*W] -> [N, G, Og*kH*kW, H*W]; channel o = g*Og + oc.
    weights = w.reshape(groups, cg, og * kh * kw).transpose(0, 2, 1)
    cols = np.matmul(weights, x.reshape(n, groups, cg, h * wd))
    cols = cols.reshape(n, o, kh, kw, h, wd)
    full_h = (h - 1) * sh + (kh - 1) * dh + 1 + out_pad_h
    full_w = (wd - 1) * sw + (kw - 1) * dw + 1 + out_pad_w
    full = np.zeros((n, o, full_h, full_w), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[
                :,
                :,
                i * dh : i * dh + (h - 1) * sh + 1 : sh,
                j * dw : j * dw + (wd - 1) * sw + 1 : sw,
            ] += cols[:, :, i, j]
    out = np.ascontiguousarray(full[:, :, top : top + oh, left : left + ow])
    if bias:
        out += bias[0].reshape(1, o, 1, 1)
    return out


# ---------------------------------------------------------------- linear algebra
def matmul(op: nn.MatmulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """numpy's matmul: batched, with broadcasting."""
    return np.matmul(inputs[0], inputs[1])


def gemm(op: nn.GemmOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """alpha * op(a) @ op(b) + beta * c, with c broadcast to [M, N]."""
    a, b, *c = inputs
    a = a.T if op.trans_a is not None else a
    b = b.T if op.trans_b is not None else b
    out = np.matmul(a, b) * _scalar(op.alpha, a)
    # With beta = 0, C is not added (onnxruntime and onnx's reference evaluator do the same):
    # 0 * inf in C would make the result NaN.
    if c and op.beta.value.data != 0:
        out += _scalar(op.beta, a) * c[0]
    return out


# ----------------------------------------------------------------- element-wise
def _unary(function: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    def kernel(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
        return function(inputs[0])

    return kernel


def _binary(function: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Kernel:
    def kernel(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
        return function(inputs[0], inputs[1])

    return kernel


def leaky_relu(op: nn.LeakyReluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x where x >= 0, else alpha * x (NaN stays NaN)."""
    x = inputs[0]
    return np.where(x >= 0, x, _scalar(op.alpha, x) * x)


def clip(op: nn.ClipOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """max(x, min), then min(., max), each bound only if given; NaN propagates."""
    x = inputs[0]
    if op.min is not None:
        x = np.maximum(x, _scalar(op.min, x))
    if op.max is not None:
        x = np.minimum(x, _scalar(op.max, x))
    return x


def prelu(op: nn.PReluOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x where x >= 0, else slope * x, the slope broadcast to x (NaN in x stays NaN, as in
    onnxruntime and ONNX's reference evaluator; a NaN slope reaches only negative x)."""
    x, slope = inputs
    return np.where(x < 0, x * slope, x).astype(x.dtype, copy=False)


def sum_(op: nn.SumOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """ONNX Sum: the broadcast sum of all inputs."""
    return functools.reduce(np.add, inputs[1:], inputs[0])


def global_avg_pool(op: nn.GlobalAvgPoolOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Mean over the spatial axes, accumulated in float64 (large images sum many values)."""
    x = inputs[0]
    return x.mean(axis=tuple(range(2, x.ndim)), keepdims=True, dtype=np.float64).astype(x.dtype)


# ---------------------------------------------------------------- data movement
def concat(op: nn.ConcatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The inputs joined along the op's axis."""
    return np.concatenate(inputs, axis=op.normalized_axis)


def softmax(op: nn.SoftmaxOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """exp(x - max) / sum, along one axis; subtracting the max avoids overflow."""
    x = inputs[0]
    axis = op.normalized_axis
    exps = np.exp(x - x.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)


def log_softmax(op: nn.LogSoftmaxOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """x - max - log(sum(exp(x - max))), along one axis, as onnxruntime computes it."""
    x = inputs[0]
    axis = op.normalized_axis
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def reshape(op: nn.FlattenOp | nn.ReshapeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Flatten and reshape: row-major reshape to the declared result shape."""
    return inputs[0].reshape(shape_of(op.output))


def transpose(op: nn.TransposeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The axes permuted by `perm`, copied into a row-major array."""
    # order="C", not np.ascontiguousarray: that makes a 0-d array 1-d (Transpose of a scalar)
    return np.asarray(inputs[0].transpose(ints(op.perm)), order="C")


def fused_conv2d(op: nn.FusedConv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The convolution, plus the addend, then the activation op's own reference kernel."""
    x, w, bias, *addend = inputs
    result = conv2d(op, [x, w, bias])  # type: ignore[arg-type]  (same attributes)
    if addend:
        result = result + addend[0]
    return _activated(op, result)


def fused_matmul(op: nn.FusedMatmulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The unfused sequence: the product, plus the bias (broadcast along the last axis, as
    the `nn.add` it replaces did), then the activation op's own reference kernel."""
    lhs, rhs, *bias = inputs
    result = np.matmul(lhs, rhs)
    if bias:
        result = result + bias[0]
    return _activated(op, result)


def qconv2d(op: nn.QConv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """QLinearConv (reference_quantized.qconv2d); with an activation, the convolution's real
    result in f32 through the activation op's own reference kernel, quantized once, then
    clamped."""
    if op.activation is None:
        return requantized_qconv2d(op, inputs)
    return _quantized(op, _activated(op, qconv2d_to_float(op, inputs)))


def real_qconv2d(op: nn.QConv2dToFloatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The convolution's real result in f32 (reference_quantized.qconv2d_to_float), then its
    activation's float reference kernel."""
    return _activated(op, qconv2d_to_float(op, inputs))


def qmatmul(op: nn.QMatmulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """QLinearMatMul (reference_quantized.qmatmul); with an activation, as `qconv2d`."""
    if op.activation is None:
        return requantized_qmatmul(op, inputs)
    return _quantized(op, _activated(op, qmatmul_real(op, inputs)))


def _activated(op: ActivationEpilogueOp, result: np.ndarray) -> np.ndarray:
    """`result` through `op`'s activation (its float op's own reference kernel), as it is
    without one."""
    activation = op.activation_op()
    if activation is None:
        return result
    return REFERENCE_KERNELS[type(activation)](activation, [result])


def _quantized(op: nn.QConv2dOp | nn.QMatmulOp, real: np.ndarray) -> np.ndarray:
    """`real` quantized with `op`'s y parameters, clamped to its clamp."""
    return clamped(quantize_array(real, op.qparams("y")), op.clamp)


_FLOAT_KERNELS: dict[type[Operation], Kernel] = {
    nn.Conv2dOp: conv2d,
    nn.FusedConv2dOp: fused_conv2d,
    nn.FusedMatmulOp: fused_matmul,
    nn.ConvTranspose2dOp: conv_transpose2d,
    nn.MatmulOp: matmul,
    nn.GemmOp: gemm,
    nn.ReluOp: _unary(lambda x: np.maximum(x, x.dtype.type(0))),
    nn.LeakyReluOp: leaky_relu,
    nn.SigmoidOp: sigmoid,
    nn.TanhOp: _unary(np.tanh),
    nn.ExpOp: _unary(np.exp),
    nn.NegOp: _unary(np.negative),
    nn.AbsOp: _unary(np.abs),
    nn.SqrtOp: _unary(np.sqrt),
    nn.ClipOp: clip,
    **ACTIVATION_KERNELS,
    nn.AddOp: _binary(np.add),
    nn.SubOp: _binary(np.subtract),
    nn.MulOp: _binary(np.multiply),
    nn.DivOp: _binary(np.divide),
    nn.MaxOp: _binary(np.maximum),
    nn.MinOp: _binary(np.minimum),
    nn.PReluOp: prelu,
    nn.SumOp: sum_,
    nn.BatchNormOp: batch_norm,
    nn.MaxPool2dOp: max_pool2d,
    nn.MaxPool2dIndicesOp: max_pool2d_indices,
    nn.LstmOp: recurrent,
    nn.GruOp: recurrent,
    nn.RnnOp: recurrent,
    nn.AvgPool2dOp: avg_pool2d,
    nn.GlobalAvgPoolOp: global_avg_pool,
    nn.ConcatOp: concat,
    nn.SoftmaxOp: softmax,
    nn.LogSoftmaxOp: log_softmax,
    nn.FlattenOp: reshape,
    nn.ReshapeOp: reshape,
    nn.TransposeOp: transpose,
    nn.ReduceOp: reduce,
    nn.LayerNormOp: layer_norm,
    nn.LrnOp: lrn,
    nn.CumSumOp: cumsum,
    nn.SliceOp: slice_,
    nn.PadOp: pad,
    nn.ResizeOp: resize,
    nn.GridSampleOp: grid_sample,
    nn.ArgMaxOp: arg_extremum,
    nn.ArgMinOp: arg_extremum,
    nn.TopKOp: topk,
    nn.ChannelShuffleOp: channel_shuffle,
    nn.ExpandOp: expand,
    nn.GatherOp: gather,
    nn.ScatterOp: scatter,
}
REFERENCE_KERNELS: dict[type[Operation], Kernel] = {
    **{op: rounded_per_op(kernel) for op, kernel in _FLOAT_KERNELS.items()},
    nn.CastOp: cast,
    **QUANTIZED_REFERENCE_KERNELS,
    nn.QConv2dOp: qconv2d,
    nn.QMatmulOp: qmatmul,
    nn.QConv2dToFloatOp: real_qconv2d,
    **INTEGER_REFERENCE_KERNELS,
    **LOGICAL_REFERENCE_KERNELS,
}
"""Every nn op except nn.constant, by op class (bf16 ops: `reference_bf16.py`)."""


# ------------------------------------------------------------------ prepared
# Reference kernels bound to one op, for ops whose operands and result are plain (physical
# arrays are the logical ones): the attributes are read once, and the result is written into
# the destination by the same numpy operations as the kernel above (the very bits), instead of
# re-reading the op through xDSL and allocating the result on every call, which costs more
# than the math of a small softmax or a flatten.
def _reshape_into(op: nn.FlattenOp | nn.ReshapeOp, session: BindingSession | None) -> BoundKernel:
    shape = shape_of(op.output)

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        np.copyto(out, inputs[0].reshape(shape))

    return bound


def _softmax_into(op: nn.SoftmaxOp, session: BindingSession | None) -> BoundKernel:
    axis = op.normalized_axis
    if op.output.type.element_type != f32:  # bf16: computed in f32, rounded once
        kernel = REFERENCE_KERNELS[nn.SoftmaxOp]
        return lambda inputs, out: np.copyto(out, kernel(op, inputs))

    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        x = inputs[0]  # the ufuncs' reductions are what x.max and x.sum call, less a layer
        np.subtract(x, np.maximum.reduce(x, axis, keepdims=True), out=out)
        np.exp(out, out=out)
        np.divide(out, np.add.reduce(out, axis, keepdims=True), out=out)

    return bound


PREPARED_REFERENCE_KERNELS: dict[
    type[Operation], Callable[[Any, BindingSession | None], BoundKernel]
] = {
    nn.FlattenOp: _reshape_into,
    nn.ReshapeOp: _reshape_into,
    nn.SoftmaxOp: _softmax_into,
    nn.GatherOp: gather_into,
    nn.ScatterOp: scatter_into,
    **PREPARED_LOGICAL_KERNELS,
    **PREPARED_INTEGER_KERNELS,
}
"""`prepare` for the reference kernel of these op classes, on plain operands and result."""
