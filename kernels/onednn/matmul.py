"""Gemm (`nn.gemm`: op(a) @ op(b) + c) as oneDNN's matmul primitive, with c as its bias row.

A constant b read transposed is stored transposed at compile time (`_gemm_b_layout`), so that
the matmul reads rows instead of going through swapped strides.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import NOT_F32, Layouts, is_f32, is_fast, op_key, remembered
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Target, layouts_refusal

# How a gemm's constant b read transposed is stored (`_gemm_b_layout`): (N, K) as K x N.
_TRANSPOSED_MATRIX = "IO"


def _gemm_b_layout(op: nn.GemmOp) -> str:
    """Plain, but a constant b that is read transposed (trans_b: how ONNX's Gemm holds a
    dense layer's weights) is stored transposed at compile time, so that oneDNN's matmul
    reads K x N rows instead of going through swapped strides, which are slower. A b
    computed at run time keeps its strides (transposing it would cost more than the
    strides do)."""
    constant = isinstance(op.b.owner, nn.ConstantOp)
    return _TRANSPOSED_MATRIX if op.trans_b is not None and constant else PLAIN_LAYOUT


def gemm_layouts(op: nn.GemmOp, target: Target) -> Layouts:
    operands = (PLAIN_LAYOUT, _gemm_b_layout(op)) + ((PLAIN_LAYOUT,) if op.c is not None else ())
    return operands, (PLAIN_LAYOUT,)


def gemm_types_reason(op: nn.GemmOp) -> str | None:
    """`_gemm_shape_reason`; the matmul reads a, c and the result plain, and b plain or,
    read transposed, stored transposed (`_gemm_b_layout`)."""
    if (reason := _gemm_shape_reason(op)) is not None:
        return reason
    b_layouts = (PLAIN_LAYOUT,) if op.trans_b is None else (PLAIN_LAYOUT, _TRANSPOSED_MATRIX)
    return layouts_refusal(
        op,
        [(PLAIN_LAYOUT,), b_layouts, *[(PLAIN_LAYOUT,)] * (len(op.operands) - 2)],
        [(PLAIN_LAYOUT,)],
    )


def _gemm_pd(op: nn.GemmOp, b_layout: str) -> b.PrimitiveDesc:
    """oneDNN's matmul computing op(a) @ op(b) + c on the operands' arrays, b stored in
    `b_layout`: a transposed operand is read with swapped strides unless stored transposed,
    c is a bias row broadcast over M."""

    def matrix(value: SSAValue, transposed: bool, layout: str = PLAIN_LAYOUT) -> MemoryDesc:
        rows, columns = shape_of(value)
        if transposed and layout == _TRANSPOSED_MATRIX:
            return MemoryDesc.with_strides((columns, rows), (rows, 1))
        if transposed:
            return MemoryDesc.with_strides((columns, rows), (1, columns))
        return MemoryDesc.with_strides((rows, columns), (columns, 1))

    n = shape_of(op.output)[1]
    bias = None if op.c is None else MemoryDesc.with_strides((1, n), (n, 1))
    return p.matmul_pd(
        matrix(op.a, op.trans_a is not None),
        matrix(op.b, op.trans_b is not None, b_layout),
        bias,
        matrix(op.output, False),
    )


# Implementation names and scratchpad bytes of the non-convolution primitives, by what


def _gemm_choice(op: nn.GemmOp, layout: str | None = None) -> tuple[str, int]:
    """oneDNN's implementation of the gemm and its scratchpad bytes, b stored in `layout`
    (default: as the kernel asks, `_gemm_b_layout`)."""
    layout = _gemm_b_layout(op) if layout is None else layout
    return remembered((op_key(op), "matmul", layout), lambda: _gemm_pd(op, layout))


def gemm_workspace(op: nn.GemmOp, target: Target) -> int:
    """The scratchpad bytes of the matmul as it runs: on b stored as the kernel asks, or
    plain where no pass stored it so (`select-dispatch` alone; `gemm_compiled` reads the
    operand's encoding), whose swapped strides take a larger scratchpad (b repacked)."""
    return max(_gemm_choice(op, layout)[1] for layout in {_gemm_b_layout(op), PLAIN_LAYOUT})


def gemm_accepts(op: nn.GemmOp, target: Target, padding: bool) -> str | None:
    """`_gemm_shape_reason`, then a fast implementation."""
    if (reason := _gemm_shape_reason(op)) is not None:
        return reason
    implementation, _ = _gemm_choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def _gemm_shape_reason(op: nn.GemmOp) -> str | None:
    """op(a) @ op(b) + c with c a row (or absent): oneDNN's matmul adds a bias row and no
    scales are set on it."""
    if not is_f32(op):
        return NOT_F32
    if op.alpha.value.data != 1:
        return f"alpha {op.alpha.value.data} (oneDNN's matmul here computes alpha = 1 only)"
    if op.c is not None:
        n = shape_of(op.output)[1]
        if op.beta.value.data != 1:
            return f"beta {op.beta.value.data} (oneDNN's bias is added with beta = 1 only)"
        if tuple(shape_of(op.c)) not in ((n,), (1, n)):
            return (
                f"c of shape {list(shape_of(op.c))} (oneDNN's bias is one row of {n}, "
                f"broadcast over the rows)"
            )
    return None


def gemm_compiled(op: nn.GemmOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if op.c is not None else ())
    layout = encoding_name(op.b.type)  # run inside nn.compute: b is stored by now
    compiled = p.get_compiled(
        ("gemm", op_key(op), layout), lambda: _gemm_pd(op, layout), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args
