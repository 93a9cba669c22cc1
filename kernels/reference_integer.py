"""Reference kernels of the dynamic quantization ops (`dialects/nn/integer.py`): exactly what
ONNX's reference evaluator computes.

* `nn.dynamic_scale`, `nn.dynamic_zero_point`: DynamicQuantizeLinear's y_scale and
  y_zero_point, with its f32 arithmetic: lo = min(0, min(x)), hi = max(0, max(x)),
  scale = (hi - lo) / 255 (1 / 255 when hi = lo), zero point = round_half_to_even(clamp(0 -
  lo / scale, 0, 255)).
* `nn.dynamic_range`: [lo, hi] as above (the two read from it compute what they do from x).
* `nn.dynamic_quantize`: QuantizeLinear (`quantize_array`) with the run-time scale and zero
  point.
* `nn.matmul_integer`, `nn.conv_integer`: the products of the centred integers (a - a_zp,
  b - b_zp) summed exactly (float64 matmuls: exact below 2^53) and returned as i32; the
  convolution's centred padding is 0, i.e. the padding holds x's zero point.
* `nn.cast`: integers to f32 (numpy's conversion: round to nearest even, as ONNX's Cast).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import QParams, tensor_type
from nnlayout.dialects.nn.integer import zero_point_values
from nnlayout.kernels.reference_quantized import (
    ReferenceKernels,
    centred,
    integer_conv,
    quantize_array,
)
from nnlayout.kernels.registry import BindingSession, BoundKernel

_QMIN, _QMAX = 0, 255  # DynamicQuantizeLinear quantizes to uint8


def dynamic_range_of(x: np.ndarray) -> tuple[np.float32, np.float32]:
    """DynamicQuantizeLinear's range of f32 `x`: min(0, min(x)), max(0, max(x)) (NaN where x
    holds one)."""
    return np.float32(np.minimum(0, np.min(x))), np.float32(np.maximum(0, np.max(x)))


def dynamic_qparams(x: np.ndarray) -> tuple[np.float32, np.uint8]:
    """DynamicQuantizeLinear's y_scale and y_zero_point of f32 `x`, as ONNX computes them."""
    low, high = dynamic_range_of(x)
    scale = np.float32(1.0 if high == low else (high - low)) / np.float32(_QMAX - _QMIN)
    initial = np.float32(_QMIN) - low / scale
    zero_point = np.rint(np.clip(initial, _QMIN, _QMAX))
    return np.float32(scale), np.uint8(zero_point)


def dynamic_range(op: nn.DynamicRangeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return np.array(dynamic_range_of(inputs[0]), np.float32)


def dynamic_scale(op: nn.DynamicScaleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return np.array(dynamic_qparams(inputs[0])[0], dtype=np.float32)


def dynamic_zero_point(op: nn.DynamicZeroPointOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return np.array(dynamic_qparams(inputs[0])[1], dtype=np.uint8)


def dynamic_quantize(op: nn.DynamicQuantizeOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x, scale, zero_point = inputs
    element_type = tensor_type(op.output).element_type
    params = QParams.make(np.float32(scale), int(zero_point), element_type)
    return quantize_array(x, params)


def matmul_integer(op: nn.MatmulIntegerOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    a, b, *a_zero_point = inputs
    a_centred = centred(a, a_zero_point[0] if a_zero_point else 0)
    b_centred = centred(b, zero_point_values(op, "b_zero_point"))  # per column: last axis
    return np.matmul(a_centred, b_centred).astype(np.int32)


def matmul_integer_to_float(
    op: nn.MatmulIntegerToFloatOp, inputs: Sequence[np.ndarray]
) -> np.ndarray:
    """MatMulInteger, Cast to f32, Mul by the scale, Add of the bias: the four ops'
    roundings."""
    a, b, scale, *rest = inputs
    a_zero_point = rest[:1] if op.a_zero_point is not None else []
    product = matmul_integer(op, [a, b, *a_zero_point])  # type: ignore[arg-type]
    scaled = product.astype(np.float32) * scale.astype(np.float32)
    return scaled if op.bias is None else scaled + rest[-1].astype(np.float32)


def conv_integer(op: nn.ConvIntegerOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    x, w, *x_zero_point = inputs
    w_zero_point = zero_point_values(op, "w_zero_point")
    if w_zero_point.ndim == 1:
        w_zero_point = w_zero_point.reshape(-1, 1, 1, 1)
    x_centred = centred(x, x_zero_point[0] if x_zero_point else 0)
    return integer_conv(op, x_centred, centred(w, w_zero_point)).astype(np.int32)


INTEGER_REFERENCE_KERNELS: ReferenceKernels = {
    nn.DynamicRangeOp: dynamic_range,
    nn.DynamicScaleOp: dynamic_scale,
    nn.MatmulIntegerToFloatOp: matmul_integer_to_float,
    nn.DynamicZeroPointOp: dynamic_zero_point,
    nn.DynamicQuantizeOp: dynamic_quantize,
    nn.MatmulIntegerOp: matmul_integer,
    nn.ConvIntegerOp: conv_integer,
}
"""The reference kernel of each dynamic quantization op, by op class."""


def _range_into(op: nn.DynamicRangeOp, session: BindingSession | None) -> BoundKernel:
    def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        out[...] = dynamic_range_of(inputs[0])

    return bound


def _qparam_into(index: int) -> Callable[[Any, BindingSession | None], BoundKernel]:
    """The bound kernel writing `dynamic_qparams`' value `index` (0: the scale, 1: the zero
    point) into its rank-0 result."""

    def prepare(op: Operation, session: BindingSession | None) -> BoundKernel:
        def bound(inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
            out[...] = dynamic_qparams(inputs[0])[index]

        return bound

    return prepare


PREPARED_INTEGER_KERNELS: dict[
    type[Operation], Callable[[Any, BindingSession | None], BoundKernel]
] = {
    nn.DynamicRangeOp: _range_into,
    nn.DynamicScaleOp: _qparam_into(0),
    nn.DynamicZeroPointOp: _qparam_into(1),
}
"""`prepare` for these reference kernels: each writes its result in place, without the
generic call's copy (they run before every product of a dynamically quantized model, where
that call cost more than their arithmetic on a range)."""
