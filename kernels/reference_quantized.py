"""Reference kernels of the quantized ops: exactly what ONNX specifies.

* `nn.quantize`: saturate(round_half_to_even(x / scale) + zero_point), x / scale in f32 (ONNX's
  reference evaluator; onnxruntime too).
* `nn.dequantize`: (x - zero_point) * scale in f32.
* `nn.qconv2d`, `nn.qmatmul`: the products of (x - x_zero_point) and (w - w_zero_point) summed
  in i32 with the bias, times x_scale * w_scale / y_scale (that multiplier in f32, the product
  in f64, as ONNX's reference evaluator), plus y_zero_point, rounded half to even, saturated,
  then clamped to [clamp_min, clamp_max]. The padding of a convolution's input holds
  x_zero_point (the quantized 0). The i32 sums are computed with float64 matmuls, exact for
  integers below 2^53: a sum of K products of at most 255 * 255 (< 2^16) fits i32 for any K
  up to 2^15, far beyond any layer's K.
* `nn.qadd`, `nn.qmul`: quantize(dequantize(a) op dequantize(b)) in f32, per com.microsoft's
  QLinearAdd/QLinearMul (onnxruntime's own kernels round the same f32 value, up to one step),
  clamped to [clamp_min, clamp_max].
* `nn.qconv2d_add`: `nn.qconv2d` into c's parameters (clamped), then `nn.qadd` of that and
  the addend, as the two ops it fuses compute them; without c, the convolution's real result
  ((sum + bias) * x_scale * w_scale) plus the dequantized addend, in f64, divided by y_scale
  and quantized once (round half to even), then clamped.
* `nn.qglobal_avg_pool`: quantize(mean(x - x_zero_point) * x_scale) (com.microsoft's
  QLinearGlobalAveragePool), the mean in f64 of exact integer sums.
* `nn.qavg_pool2d`: quantize(avg_pool2d(x - x_zero_point) * x_scale), the padding x's zero
  point (a real 0), the average in f64 of exact integer sums.
* `nn.qconcat`: each input requantized from its parameters to y's (a copy where they are
  equal), then concatenated.
* `nn.qlookup`: the table's entry for each value.
* `nn.qconv2d_to_float`: the exact sum plus the bias, times x_scale * w_scale, in f64,
  rounded to f32 once; `nn.qconv2d` and `nn.qmatmul` with an activation: their real
  result so, through the activation's float kernel, quantized (kernels/reference.py).
* `nn.qresize`: quantize(resize(dequantize(x))), the resize in f64 rounded to f32, as the
  float ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.dialects.nn.quantized import QParams, numpy_dtype
from nnlayout.kernels.reduction_reference import batch_norm
from nnlayout.kernels.reference_movement import resize
from nnlayout.kernels.reference_pooling import avg_pool2d, pad_spatial, windows


def _along(params: QParams, values: np.ndarray, rank: int) -> np.ndarray:
    """Per-axis `values` (scale or zero point) shaped to broadcast along `params.axis` of an
    array of `rank`; per-tensor values as they are."""
    if not params.per_axis:
        return values
    assert params.axis is not None
    shape = [1] * rank
    shape[params.axis % rank] = -1
    return values.reshape(shape)


def saturate(
    values: np.ndarray, zero_point: np.ndarray, params: QParams, round_first: bool = True
) -> np.ndarray:
    """round_half_to_even(values) + zero_point (QuantizeLinear), or, not `round_first`,
    round_half_to_even(values + zero_point) (QLinearConv, QLinearMatMul: an odd zero point
    moves ties the other way), saturated to `params.element_type`; NaN maps to the zero
    point."""
    dtype = numpy_dtype(params.element_type)
    info = np.iinfo(dtype)
    values = np.nan_to_num(values, nan=0.0, posinf=np.inf, neginf=-np.inf)
    rounded = np.rint(values) + zero_point if round_first else np.rint(values + zero_point)
    return np.clip(rounded, info.min, info.max).astype(dtype)


def quantize_array(x: np.ndarray, params: QParams) -> np.ndarray:
    """ONNX QuantizeLinear of f32 `x` with `params` (a scale of 0, which a run-time scale
    of an all-but-zero range can be, gives infinities and NaN, which `saturate` maps)."""
    scale = _along(params, params.scale, x.ndim)
    zero_point = _along(params, params.zero_point, x.ndim).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = x.astype(np.float32) / scale
    return saturate(quotient, zero_point, params)


def dequantize_array(x: np.ndarray, params: QParams) -> np.ndarray:
    """ONNX DequantizeLinear of integer `x` with `params`, in f32."""
    scale = _along(params, params.scale, x.ndim)
    zero_point = _along(params, params.zero_point, x.ndim).astype(np.float32)
    return ((x.astype(np.float32) - zero_point) * scale).astype(np.float32)


def table_of(
    x: QParams, y: QParams, function: Callable[[np.ndarray], np.ndarray] | None = None
) -> np.ndarray:
    """quantize(function(dequantize(v))) with y's parameters for each v of x's 8-bit type in
    order: the table of an element-wise function between a dequantize and a quantize, of a
    requantization from x's parameters to y's where `function` is None (the identity)."""
    low, high = nn.integer_range(x.element_type)
    real = dequantize_array(np.arange(low, high + 1), x)
    return quantize_array(real if function is None else function(real), y)


def quantize(op: nn.QuantizeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return quantize_array(inputs[0], op.qparams())


def dequantize(op: nn.DequantizeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return dequantize_array(inputs[0], op.qparams())


def requantize(
    accumulator: np.ndarray,
    multiplier: np.ndarray,
    y: QParams,
    clamp: tuple[int | None, int | None] = (None, None),
) -> np.ndarray:
    """An exact integer accumulator times its f32 `multiplier` (x_scale * w_scale / y_scale,
    broadcast to it), quantized with y's zero point and clamped to `clamp`."""
    product = accumulator * multiplier.astype(np.float64)
    result = saturate(product, y.zero_point.astype(np.float64), y, round_first=False)
    return clamped(result, clamp)


def clamped(result: np.ndarray, clamp: tuple[int | None, int | None]) -> np.ndarray:
    """`result` clamped to `clamp` (an unbounded side None), of its own type."""
    low, high = clamp
    if low is not None or high is not None:
        result = np.clip(result, low, high).astype(result.dtype)
    return result


def centred(x: np.ndarray, zero_point: np.ndarray | int) -> np.ndarray:
    """x - zero_point as exact float64 integers (`zero_point` broadcast to x)."""
    return x.astype(np.float64) - np.asarray(zero_point, dtype=np.float64)


def _centered(x: np.ndarray, params: QParams, rank: int) -> np.ndarray:
    """x - zero_point as exact float64 integers (the zero point along its axis)."""
    return centred(x, _along(params, params.zero_point, rank))


def integer_conv(op: nn.ConvWindowOp, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The sums of a convolution with `op`'s window of centred integers `x` and `w` (float64,
    exact), its padding 0: an im2col matmul, [N, O, OH, OW]."""
    n = x.shape[0]
    o, cg, kh, kw = w.shape
    groups = op.groups.value.data
    _, _, oh, ow = shape_of(op.results[0])
    padded = pad_spatial(x, ints(op.pads), 0.0)
    taps = windows(padded, (kh, kw), ints(op.strides), ints(op.dilations), (oh, ow))
    cols = taps.transpose(0, 1, 4, 5, 2, 3).reshape(n, groups, cg * kh * kw, oh * ow)
    weights = w.reshape(groups, o // groups, cg * kh * kw)
    return np.matmul(weights, cols).reshape(n, o, oh, ow)


def qconv2d(op: nn.QConv2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """QLinearConv: `integer_conv` of the centred integers (padding holds x's zero point, so
    the centred padding is 0), the bias (i32, or f32 in the same units) added, then
    `requantize`."""
    return _qconv(op, inputs, "y")


def qconv2d_add(op: nn.QConv2dAddOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The unfused sequence: `qconv2d` into c's parameters, then `qadd` of it and the
    addend (each rounded as ONNX and onnxruntime round them); without c, one rounding of the
    real sum."""
    *conv_inputs, addend = inputs
    r, y = op.qparams("r"), op.qparams("y")
    if op.rounds_once:
        accumulator, x_w_scale = _conv_sum(op, conv_inputs)
        real = accumulator * x_w_scale.astype(np.float64)
        total = real + centred(addend, r.zero_point) * np.float64(r.scale)
        result = saturate(total / np.float64(y.scale), y.zero_point.astype(np.float64), y)
        return clamped(result, op.clamp)
    c = _qconv(op, conv_inputs, "c")
    total = dequantize_array(c, op.qparams("c")) + dequantize_array(addend, r)
    return quantize_array(total, y)


def qconv2d_to_float(
    op: nn.QConv2dToFloatOp | nn.QConv2dOp, inputs: Sequence[np.ndarray]
) -> np.ndarray:
    """The convolution's real result: (sum + bias) * x_scale * w_scale in f64, to f32 (an
    activation not applied)."""
    accumulator, x_w_scale = _conv_sum(op, inputs)
    return (accumulator * x_w_scale.astype(np.float64)).astype(np.float32)


def _conv_sum(
    op: nn.QConv2dOp | nn.QConv2dAddOp | nn.QConv2dToFloatOp, inputs: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The exact sum of `op`'s convolution plus its bias (f64), and x_scale * w_scale (f32,
    per output channel shaped to broadcast along the sum's dimension 1)."""
    x, w, *bias = inputs
    xp, wp = op.qparams("x"), op.qparams("w")
    accumulator = integer_conv(op, _centered(x, xp, 4), _centered(w, wp, 4))
    if bias:
        accumulator += bias[0].astype(np.float64).reshape(1, -1, 1, 1)
    w_scale = wp.scale.reshape(1, -1, 1, 1) if wp.per_axis else wp.scale
    return accumulator, (xp.scale * w_scale).astype(np.float32)


def _qconv(
    op: nn.QConv2dOp | nn.QConv2dAddOp, inputs: Sequence[np.ndarray], result: str
) -> np.ndarray:
    """`qconv2d` of `op`'s convolution, quantized with the parameters `result` names."""
    accumulator, x_w_scale = _conv_sum(op, inputs)
    yp = op.qparams(result)
    multiplier = (x_w_scale / yp.scale).astype(np.float32)  # as onnxruntime: f32, in order
    return requantize(accumulator, multiplier, yp, op.clamp)


def qmatmul(op: nn.QMatmulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """QLinearMatMul (numpy.matmul shapes) plus an optional bias per column (i32, or f32 in
    the accumulator's units)."""
    accumulator, a_b_scale = _matmul_sum(op, inputs)
    yp = op.qparams("y")
    multiplier = (a_b_scale / yp.scale).astype(np.float32)
    return requantize(accumulator, multiplier, yp, op.clamp)


def qmatmul_real(op: nn.QMatmulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The product's real result: (sum + bias) * a_scale * b_scale in f64, to f32."""
    accumulator, a_b_scale = _matmul_sum(op, inputs)
    return (accumulator * a_b_scale.astype(np.float64)).astype(np.float32)


def _matmul_sum(op: nn.QMatmulOp, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The exact sum of `op`'s product plus its bias (f64), and a_scale * b_scale (f32, per
    column where b's scale is)."""
    a, b, *bias = inputs
    ap, bp = op.qparams("a"), op.qparams("b")
    accumulator = np.matmul(_centered(a, ap, a.ndim), _centered(b, bp, b.ndim))
    if bias:
        accumulator = accumulator + bias[0].astype(np.float64)
    return accumulator, (ap.scale * bp.scale).astype(np.float32)


def _qbinary(op: nn.QBinaryOp, inputs: Sequence[np.ndarray], multiply: bool) -> np.ndarray:
    a = dequantize_array(inputs[0], op.qparams("a"))
    b = dequantize_array(inputs[1], op.qparams("b"))
    result = quantize_array(a * b if multiply else a + b, op.qparams("y"))
    return clamped(result, op.clamp)


def qadd(op: nn.QAddOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return _qbinary(op, inputs, multiply=False)


def qmul(op: nn.QMulOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return _qbinary(op, inputs, multiply=True)


def qbatch_norm(op: nn.QBatchNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """quantize(batch_norm(dequantize(x))): the three reference kernels' roundings."""
    x, *vectors = inputs
    real = dequantize_array(x, op.qparams("x"))
    return quantize_array(batch_norm(op, [real, *vectors]), op.qparams("y"))


def qglobal_avg_pool(op: nn.QGlobalAvgPoolOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x = inputs[0]
    xp, yp = op.qparams("x"), op.qparams("y")
    axes = tuple(range(2, x.ndim))
    mean = _centered(x, xp, x.ndim).mean(axis=axes, keepdims=True)
    multiplier = (xp.scale / yp.scale).astype(np.float32)
    return requantize(mean, multiplier, yp)


def qavg_pool2d(op: nn.QAvgPool2dOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """`nn.avg_pool2d`'s reference on the centred integers (padding 0: x's zero point), in
    float64, times x_scale / y_scale (f32), quantized as `qglobal_avg_pool`."""
    xp, yp = op.qparams("x"), op.qparams("y")
    mean = avg_pool2d(op, [_centered(inputs[0], xp, 4)])  # type: ignore[arg-type]
    return requantize(mean, (xp.scale / yp.scale).astype(np.float32), yp)


def qconcat(op: nn.QConcatOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    y = op.qparams("y")
    parts = []
    for x, params in zip(inputs, op.input_qparams(), strict=True):
        if params.same_as(y):
            parts.append(x)
        else:
            parts.append(quantize_array(dequantize_array(x, params), y))
    return np.concatenate(parts, axis=op.normalized_axis)


def qresize(op: nn.QResizeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """quantize(resize(dequantize(x))) as the float ops compute it: the dequantize and the
    quantize in f32, `nn.resize`'s interpolation in f64, rounded to f32."""
    real = dequantize_array(inputs[0], op.qparams("x"))
    return quantize_array(resize(op, [real]), op.qparams("y"))


def qlookup(op: nn.QLookupOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    low = nn.integer_range(op.input.type.element_type)[0]  # type: ignore[attr-defined]
    return op.values()[inputs[0].astype(np.intp) - low]


ReferenceKernels = dict[type[Operation], Callable[[Any, Sequence[np.ndarray]], np.ndarray]]
"""Reference kernels by op class: each computes an op's result from its inputs."""

QUANTIZED_REFERENCE_KERNELS: ReferenceKernels = {
    nn.QuantizeOp: quantize,
    nn.DequantizeOp: dequantize,
    nn.QConv2dAddOp: qconv2d_add,
    nn.QAddOp: qadd,
    nn.QMulOp: qmul,
    nn.QBatchNormOp: qbatch_norm,
    nn.QGlobalAvgPoolOp: qglobal_avg_pool,
    nn.QAvgPool2dOp: qavg_pool2d,
    nn.QConcatOp: qconcat,
    nn.QLookupOp: qlookup,
    nn.QResizeOp: qresize,
}
"""The reference kernel of each quantized op, by op class (`nn.qconv2d`'s, `nn.qmatmul`'s
and `nn.qconv2d_to_float`'s, whose activation runs a float op's kernel, are
kernels/reference.py's, on `qconv2d`, `qconv2d_to_float`, `qmatmul` and `qmatmul_real`)."""
