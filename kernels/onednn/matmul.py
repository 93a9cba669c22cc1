"""Matrix products (`nn.gemm`: op(a) @ op(b) + c, and `nn.matmul`: numpy's batched,
broadcasting matmul) as oneDNN's inner product and matmul primitives.

A product whose right operand is a 2-D constant is a fully connected layer (a dense layer's
Gemm, a transformer's Linear on [B, T, C]: rows are every axis of the left operand but its
last): it runs as oneDNN's inner product, whose weights are left to oneDNN (`format_tag::any`)
and stored at compile time in the blocked format it chose (`fc_weights_layout`, named in our
notation by `formats.layout_of_blocking`); weights that arrive plain are reordered once at
load. Chosen by measurement at batch 1, against oneDNN's matmul on the same weights plain,
transposed or in its own format: the matmul on plain K x N weights repacks them into its
scratchpad on every call (three times slower than onnxruntime on alexnet's 9216 x 4096),
on weights in the format it chooses it comes close to onnxruntime; the inner product on its
blocked weights is the fastest, and among its implementations `brgemm:avx2` (blocks of 8 x 24)
beats the first one oneDNN offers (`brgemm:avx512_core`, 16 x 64) on an AVX-512 machine at a
few rows, where the product only streams the weights (`SMALL_BATCH_PREFERRED`; figures in
docs/benchmarks.md, "fully connected at batch 1"). Beyond SMALL_BATCH_ROWS rows (a
transformer's tokens) the product runs as oneDNN's matmul on weights in the format it
chooses (`fc_as_matmul`): up to 1.5 times faster than the inner product's first choice on
vit_b_16's Linear layers (197 rows), about as fast on ConvNeXt's and Swin's, and the whole
vit_b_16 and convnext_tiny 1.2 times faster (docs/benchmarks.md, "the transformers' Linear
layers"). A fused matmul's bias and activation (`nn.fused_matmul`)
are the primitive's bias and eltwise post-op; where that post-op is the reference's on
finite values only (the exact GELU's gelu_erf, relu and clip without `nnan`:
`guarded_activation`), each call the operands' norms do not prove finite runs the reference
(`calls.ProductCall`).

The oneDNN targets prefer the `blas` family (kernels/blas.py) to these kernels for a float32
product on at most 8 rows whose constant weights take at least 1 MiB (a CNN's classifier at
batch 1): on an Intel AVX-512 machine with the weights coming from L3, numpy's BLAS streamed
them about twice as fast as every implementation above (docs/benchmarks.md, "the small
CNNs").

Other products run as oneDNN's matmul on the operands' arrays as they are: a gemm's
transposed operand through swapped strides (a constant b read transposed and not a fully
connected layer, i.e. with trans_a, stored transposed: `_gemm_b_layout`), an nn.matmul's
batch dims broadcast by oneDNN itself (dims of 1), a rank-1 operand promoted as numpy does.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant_operand
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc
from nnlayout.kernels.onednn.common import (
    Layouts,
    contiguous_md,
    data_type,
    float_refusal,
    is_fast,
    op_key,
    remembered,
)
from nnlayout.kernels.onednn.eltwise import activation_eltwise, finite_only
from nnlayout.kernels.onednn.formats import layout_of_blocking
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Target, layouts_refusal

Product = nn.GemmOp | nn.MatmulOp | nn.FusedMatmulOp

# How a gemm's constant b read transposed is stored (`_gemm_b_layout`): (N, K) as K x N.
_TRANSPOSED_MATRIX = "IO"
# Inner product implementations taken over oneDNN's first choice for at most
# SMALL_BATCH_ROWS rows, where oneDNN offers them (module doc).
SMALL_BATCH_PREFERRED = ("brgemm:avx2",)
SMALL_BATCH_ROWS = 8
# The weights layout of each fully connected product (op_key), "" where our notation
# cannot name oneDNN's format: cleared with oneDNN's other choices.
FC_LAYOUTS: dict[tuple[object, ...], str] = {}


# ------------------------------------------------------------------ fully connected
def _fc_shaped(op: Operation) -> bool:
    """A gemm without trans_a, or a matmul with a 2-D right operand."""
    if isinstance(op, nn.GemmOp):
        return op.trans_a is None
    return isinstance(op, nn.MatmulOp | nn.FusedMatmulOp) and len(shape_of(op.rhs)) == 2


def is_fully_connected(op: Operation) -> bool:
    """A gemm (no trans_a) or matmul whose right operand is a 2-D constant, or is stored
    as the inner product asks (`fc_weights_layout`)."""
    if not _fc_shaped(op):
        return False
    weights = op.operands[1]
    layout = encoding_name(weights.type)
    return is_constant_operand(op, weights) if not layout else layout == fc_weights_layout(op)


def _weights_stored_nk(op: Product) -> bool:
    """Whether the weights operand holds oneDNN's (N, K) as its logical order."""
    return isinstance(op, nn.GemmOp) and op.trans_b is not None


def _fc_dims(op: Product) -> tuple[int, int, int]:
    """(M, K, N): rows, contraction, columns."""
    lhs = shape_of(op.operands[0])
    n = shape_of(op.results[0])[-1] if len(shape_of(op.operands[1])) == 2 else 1
    return math.prod(lhs[:-1]), lhs[-1], n


def _bias(op: Product) -> SSAValue | None:
    """The row added to every row of the product: a gemm's c, a fused matmul's bias."""
    return op.bias if isinstance(op, nn.FusedMatmulOp) else getattr(op, "c", None)


def _post_ops(op: Product) -> tuple[b.PostOp, ...]:
    """A fused matmul's activation as oneDNN's eltwise post-op (exact on every input, or
    on finite values, where the kernel guards it: `guarded_activation`)."""
    return activation_eltwise(op) if isinstance(op, nn.FusedMatmulOp) else ()


def fc_as_matmul(op: Product) -> bool:
    """Whether the fully connected `op` runs as oneDNN's matmul (more than SMALL_BATCH_ROWS
    rows: a transformer's Linear on its tokens) rather than its inner product (module
    doc)."""
    return _fc_dims(op)[0] > SMALL_BATCH_ROWS


def fc_pd(op: Product) -> b.PrimitiveDesc:
    """The fully connected `op` with weights `any`: at more than SMALL_BATCH_ROWS rows
    oneDNN's matmul, else its inner product, SMALL_BATCH_PREFERRED's implementation where
    oneDNN offers it, else its first."""
    m, k, n = _fc_dims(op)
    bias = _bias(op)
    t = data_type(op.results[0])
    src = MemoryDesc.with_strides((m, k), (k, 1), t)
    dst = MemoryDesc.with_strides((m, n), (n, 1), t)
    if fc_as_matmul(op):
        return p.matmul_pd(
            src,
            MemoryDesc.with_tag((k, n), b.dnnl_format_tag_any, t),
            None if bias is None else MemoryDesc.with_strides((1, n), (n, 1), t),
            dst,
            _post_ops(op),
        )

    def create() -> b.PrimitiveDesc:
        return p.inner_product_pd(
            src,
            MemoryDesc.with_tag((n, k), b.dnnl_format_tag_any, t),
            None if bias is None else MemoryDesc.with_strides((n,), (1,), t),
            dst,
            _post_ops(op),
        )

    pd = create()
    while not pd.implementation.startswith(SMALL_BATCH_PREFERRED):
        if not pd.next_implementation():
            return create()
    return pd


def fc_weights_layout(op: Product) -> str:
    """Our layout of the weights operand in the format the inner product chose; "" where
    our notation cannot name it (the weights then stay plain and are reordered at load)."""
    key = op_key(op)
    if key not in FC_LAYOUTS:
        FC_LAYOUTS[key] = _fc_layout(op)
    return FC_LAYOUTS[key]


def _fc_layout(op: Product) -> str:
    if data_type(op.results[0]) != b.dnnl_f32:
        return PLAIN_LAYOUT  # bf16 weights: packed at load (their blocks pair rows)
    try:
        md = fc_pd(op).md(b.dnnl_query_weights_md)
    except DnnlError:
        return PLAIN_LAYOUT
    if not md.is_blocked:
        return PLAIN_LAYOUT
    # The inner product's weights are (N, K), the matmul's (K, N); our operand is [N, K]
    # (O, I) or [K, N] (O = K, I = N).
    letters = ("O", "I") if _weights_stored_nk(op) != fc_as_matmul(op) else ("I", "O")
    layout = layout_of_blocking(md.blocking, letters)
    shape = shape_of(op.operands[1])
    if LayoutSpec.parse(layout).byte_size(shape, 4) != md.size:
        return PLAIN_LAYOUT
    return PLAIN_LAYOUT if LayoutSpec.parse(layout).is_identity else layout


def fc_given_weights(op: Product) -> MemoryDesc:
    """The weights as the operand holds them, in oneDNN's terms ((N, K) for its inner
    product, (K, N) for its matmul): plain, or in the primitive's own format
    (`fc_weights_layout`)."""
    _, k, n = _fc_dims(op)
    layout = encoding_name(op.operands[1].type)
    if layout and layout == fc_weights_layout(op):
        return fc_pd(op).md(b.dnnl_query_weights_md)
    t = data_type(op.results[0])
    if fc_as_matmul(op):
        strides = (1, k) if _weights_stored_nk(op) else (n, 1)
        return MemoryDesc.with_strides((k, n), strides, t)
    strides = (k, 1) if _weights_stored_nk(op) else (1, n)
    return MemoryDesc.with_strides((n, k), strides, t)


# ------------------------------------------------------------------ other products
def _gemm_b_layout(op: nn.GemmOp) -> str:
    """Plain, but a constant b that is read transposed (trans_b: how ONNX's Gemm holds a
    dense layer's weights) is stored transposed at compile time, so that oneDNN's matmul
    reads K x N rows instead of going through swapped strides, which are slower. A b
    computed at run time keeps its strides (transposing it would cost more than the
    strides do)."""
    constant = isinstance(op.b.owner, nn.ConstantOp)
    return _TRANSPOSED_MATRIX if op.trans_b is not None and constant else PLAIN_LAYOUT


def _gemm_pd(op: nn.GemmOp, b_layout: str) -> b.PrimitiveDesc:
    """oneDNN's matmul computing op(a) @ op(b) + c on the operands' arrays, b stored in
    `b_layout`: a transposed operand is read with swapped strides unless stored transposed,
    c is a bias row broadcast over M."""

    t = data_type(op.output)

    def matrix(value: SSAValue, transposed: bool, layout: str = PLAIN_LAYOUT) -> MemoryDesc:
        rows, columns = shape_of(value)
        if transposed and layout == _TRANSPOSED_MATRIX:
            return MemoryDesc.with_strides((columns, rows), (rows, 1), t)
        if transposed:
            return MemoryDesc.with_strides((columns, rows), (1, columns), t)
        return MemoryDesc.with_strides((rows, columns), (columns, 1), t)

    n = shape_of(op.output)[1]
    bias = None if op.c is None else MemoryDesc.with_strides((1, n), (n, 1), t)
    return p.matmul_pd(
        matrix(op.a, op.trans_a is not None),
        matrix(op.b, op.trans_b is not None, b_layout),
        bias,
        matrix(op.output, False),
    )


def matmul_dims(op: nn.MatmulOp | nn.FusedMatmulOp) -> tuple[tuple[int, ...], ...]:
    """oneDNN's dims of lhs, rhs and result, of one rank: a rank-1 lhs is a row, a rank-1
    rhs a column (numpy's promotion), batch dims padded with leading 1s, which oneDNN
    broadcasts."""
    lhs, rhs = shape_of(op.lhs), shape_of(op.rhs)
    lhs = (1, *lhs) if len(lhs) == 1 else lhs
    rhs = (*rhs, 1) if len(rhs) == 1 else rhs
    rank = max(len(lhs), len(rhs))
    lhs, rhs = (1,) * (rank - len(lhs)) + lhs, (1,) * (rank - len(rhs)) + rhs
    batch = tuple(max(x, y) for x, y in zip(lhs[:-2], rhs[:-2], strict=True))
    return lhs, rhs, (*batch, lhs[-2], rhs[-1])


def _matmul_pd(op: nn.MatmulOp | nn.FusedMatmulOp) -> b.PrimitiveDesc:
    lhs, rhs, out = matmul_dims(op)
    t = data_type(op.output)
    row = (1,) * (len(out) - 1) + out[-1:]
    bias = None if _bias(op) is None else contiguous_md(row, t)
    return p.matmul_pd(
        contiguous_md(lhs, t), contiguous_md(rhs, t), bias, contiguous_md(out, t), _post_ops(op)
    )


def _product_pd(op: Product, layout: str) -> b.PrimitiveDesc:
    """The primitive of `op` with its weights operand in `layout`."""
    if is_fully_connected(op):
        return fc_pd(op)
    if isinstance(op, nn.GemmOp):
        return _gemm_pd(op, layout)
    return _matmul_pd(op)


# ------------------------------------------------------------------ the kernel's rules
def _weights_layout(op: Product) -> str:
    """How the kernel asks the weights operand (operand 1) to be stored."""
    if is_fully_connected(op):
        return fc_weights_layout(op)
    return _gemm_b_layout(op) if isinstance(op, nn.GemmOp) else PLAIN_LAYOUT


def _weights_layouts(op: Product) -> tuple[str, ...]:
    """The layouts the kernel reads the weights operand in (whichever a pass stored it in:
    dispatch's choice between them depends on whether it is constant)."""
    found = [PLAIN_LAYOUT]
    if _fc_shaped(op):
        found.append(fc_weights_layout(op))
    if isinstance(op, nn.GemmOp) and op.trans_b is not None:
        found.append(_TRANSPOSED_MATRIX)
    return tuple(dict.fromkeys(found))


def gemm_layouts(op: Product, target: Target) -> Layouts:
    """Plain, but for the weights (operand 1): a dense layer's in oneDNN's format, a
    transposed Gemm's stored K x N."""
    operands = (PLAIN_LAYOUT, _weights_layout(op)) + (PLAIN_LAYOUT,) * (len(op.operands) - 2)
    return operands, (PLAIN_LAYOUT,)


def gemm_types_reason(op: Product) -> str | None:
    """`_shape_reason`; the primitive reads every operand and writes the result plain, but
    the weights, plain or as the kernel stores them (`_weights_layouts`)."""
    if (reason := _shape_reason(op)) is not None:
        return reason
    return layouts_refusal(
        op,
        [(PLAIN_LAYOUT,), _weights_layouts(op), *[(PLAIN_LAYOUT,)] * (len(op.operands) - 2)],
        [(PLAIN_LAYOUT,)],
    )


def _choice(op: Product, layout: str | None = None) -> tuple[str, int]:
    """oneDNN's implementation of the product and its scratchpad bytes, the weights stored
    in `layout` (default: as the kernel asks)."""
    layout = _weights_layout(op) if layout is None else layout
    key = (op_key(op), "product", layout)
    return remembered(key, lambda: _product_pd(op, layout))


def gemm_workspace(op: Product, target: Target) -> int:
    """The scratchpad bytes of the primitive as it runs: on the weights stored as the kernel
    asks, or plain where no pass stored them so (`select-dispatch` alone), which may take
    a larger scratchpad (a gemm's b read through swapped strides is repacked)."""
    return max(_choice(op, layout)[1] for layout in {_weights_layout(op), PLAIN_LAYOUT})


def gemm_accepts(op: Product, target: Target, padding: bool) -> str | None:
    """`_shape_reason`, then a fast implementation."""
    if (reason := _shape_reason(op)) is not None:
        return reason
    implementation, _ = _choice(op)
    return None if is_fast(implementation) else f"oneDNN chose {implementation}"


def _shape_reason(op: Product) -> str | None:
    """f32 (or bf16, `float_refusal`); a gemm computes op(a) @ op(b) + c with c a row (or
    absent): oneDNN adds a bias row and no scales are set on it. A fused matmul's activation
    is oneDNN's eltwise post-op, guarded where that is exact on finite values only
    (`guarded_activation`)."""
    if (reason := float_refusal(op)) is not None:
        return reason
    if isinstance(op, nn.MatmulOp | nn.FusedMatmulOp):
        return None
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


def guarded_activation(op: Operation) -> bool:
    """Whether `op` is a fused matmul whose activation's post-op computes the reference's
    function on finite values only (`eltwise.finite_only`): relu, clip and hardsigmoid turn
    NaN into a bound (but under `nnan`, the promise that no NaN reaches an activation), the
    exact GELU's gelu_erf turns +inf into NaN (`nnan` promises nothing about infinities).
    Its kernel runs the fused primitive on calls that cannot make NaN or an infinity before
    the activation, and the reference otherwise (`calls.ProductCall`)."""
    if not isinstance(op, nn.FusedMatmulOp):
        return False
    activation = op.activation_op()
    if activation is None or not finite_only(activation):
        return False
    return op.nnan is None or isinstance(activation, nn.GeluOp)


def gemm_compiled(op: Product) -> tuple[Compiled, tuple[int, ...]]:
    """The primitive on the weights as stored (run inside nn.compute: they are stored by
    now); a fully connected layer's weights given plain are reordered at load
    (`reorder.weights_repacker`)."""
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + (b.DNNL_ARG_BIAS,) * (len(op.operands) - 2)
    layout = encoding_name(op.operands[1].type)
    key = ("product", op_key(op), "fc" if is_fully_connected(op) else layout)
    compiled = p.get_compiled(key, lambda: _product_pd(op, layout), (*args, b.DNNL_ARG_DST))
    return compiled, args
