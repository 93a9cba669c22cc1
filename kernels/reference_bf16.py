"""bf16 in the reference kernels: computed in float32, rounded to bf16 once, at the op's output.

numpy has no bf16; nn's bf16 values are arrays of ml_dtypes' bfloat16 (`nn.numpy_dtype`).
Its ufuncs would round after every elementary step (a convolution's every partial sum), which
is not what a bf16 kernel does: oneDNN's bf16 convolutions, matrix products, pooling and
element-wise primitives read bf16 operands, compute and accumulate in f32 and round their
result to bf16 (to nearest even) once. So the oracle does that: `rounded_per_op(kernel)`
runs the float32 reference kernel on the bf16 operands widened to f32 (exact) and rounds its
result to bf16 (ml_dtypes' cast: round to nearest even). An op whose operands are all f32 is
untouched, so the wrapper costs one dtype check on the f32 path.

`nn.cast` (f32 <-> bf16, the conversions `convert-to-bf16` puts at the boundaries of the bf16
region) has its reference kernel here too: a cast on the physical array, which is the same on
logical and blocked data (padding lanes hold 0, and 0 casts to 0).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import numpy_dtype
from nnlayout.dialects.nn.base import bf16_dtype, is_bf16_array

Kernel = Callable[[Operation, Sequence[Any]], Any]


def _widened(value: Any) -> Any:
    return value.astype(np.float32) if is_bf16_array(value) else value


def rounded_per_op(kernel: Kernel) -> Kernel:
    """`kernel` (a float32 reference kernel) made to compute bf16 ops as bf16 kernels do:
    operands widened to f32, the result rounded to bf16 when the op's result is bf16."""

    @functools.wraps(kernel)
    def on_bf16(op: Operation, inputs: Sequence[Any]) -> Any:
        if not any(is_bf16_array(v) for v in inputs):
            return kernel(op, inputs)
        result = kernel(op, [_widened(v) for v in inputs])
        wanted = numpy_dtype(getattr(op.results[0].type, "element_type", None))
        return result.astype(wanted) if wanted == bf16_dtype() else result

    return on_bf16


def cast(op: nn.CastOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The input converted to the result's element type (f32 -> bf16 rounds to nearest even;
    bf16 -> f32 is exact)."""
    dtype = numpy_dtype(op.output.type.element_type)
    assert dtype is not None
    return np.asarray(inputs[0]).astype(dtype)
