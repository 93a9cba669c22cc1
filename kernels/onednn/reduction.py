"""Reductions and the normalisations that reduce, as oneDNN's reduction, layer normalization
and LRN primitives: the `Rules` of the kernels of `nn.reduce`, `nn.layer_norm` and `nn.lrn`.

- `nn.reduce` runs in its operand's layout (`"*"`) where that layout blocks no reduced axis:
  a mean over H and W of NCHW16c data is one over whole physical axes, but over C it would
  read the block's padding lanes (zeros: a mean over 20 channels divided by 32 physical
  lanes, a max over negative values that a padding zero wins), so such a layout is refused
  and propagate-layouts leaves the reduction plain with a remark. Its log_sum kind has no
  oneDNN algorithm. oneDNN 3.2 has fast code only for reductions over the trailing axes of
  plain data, and none for its Lp norms (l1, l2, sum_square): dispatch asks it, and keeps
  the others in numpy, saying which code oneDNN offered.
- `nn.layer_norm` runs plain: oneDNN normalises over the last axis, so the op's input is
  described as the 2-D [rows, normalised elements] it is in row-major order (any `axis`), and
  its scale and bias as the vectors of the normalised elements they are, where they have
  that many elements (not broadcast).
- `nn.lrn` runs in NHWC where oneDNN has fast code for it there (avx512: every channel count
  and window), else plain NCHW where it has (avx2: a window of 5 over whole blocks of 8
  channels); its blocked code wants whole blocks too, so it never reads padding lanes.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import (
    NOT_F32,
    Layouts,
    format_of,
    is_f32,
    is_fast,
    op_key,
    remembered,
)
from nnlayout.kernels.onednn.formats import FORMATS, by_layout
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Target, layouts_refusal, one_layout_refusal

# nn.reduce's kind -> (oneDNN algorithm, p); eps is 0 for all.
ALGORITHMS: dict[str, tuple[int, float]] = {
    "sum": (b.dnnl_reduction_sum, 0.0),
    "mean": (b.dnnl_reduction_mean, 0.0),
    "max": (b.dnnl_reduction_max, 0.0),
    "min": (b.dnnl_reduction_min, 0.0),
    "prod": (b.dnnl_reduction_mul, 0.0),
    "l1": (b.dnnl_reduction_norm_lp_sum, 1.0),
    "l2": (b.dnnl_reduction_norm_lp_sum, 2.0),
    "sum_square": (b.dnnl_reduction_norm_lp_power_p_sum, 2.0),
}
# The layouts LRN may run in, in order of preference.
LRN_LAYOUTS = ("NHWC", PLAIN_LAYOUT)
# dnnl_format_tag_t of the plain (row-major) format of each rank: a, ab, abc, ...
_PLAIN_TAGS = {rank: rank + 1 for rank in range(1, 7)}


def _tag(op: Operation, layout: str) -> int | None:
    """The format tag of `op`'s data in `layout` (its operand's): plain of any rank, or a
    4-D data format; None when oneDNN has none."""
    rank = len(shape_of(op.operands[0]))
    if layout == PLAIN_LAYOUT:
        return _PLAIN_TAGS.get(rank)
    found = by_layout("data", layout) if rank == 4 else None
    return None if found is None else found.value


def _rows(op: nn.LayerNormOp) -> tuple[int, int]:
    """The input as oneDNN's layer normalization sees it: rows of normalised elements."""
    x = shape_of(op.input)
    axis = op.normalized_axis
    return math.prod(x[:axis]), math.prod(x[axis:])


def _pd(op: Operation, tag: int) -> b.PrimitiveDesc:
    if isinstance(op, nn.LayerNormOp):
        rows = MemoryDesc.with_tag(_rows(op), _PLAIN_TAGS[2])
        return p.layer_norm_pd(rows, rows, op.epsilon.value.data, op.bias is not None)
    src = MemoryDesc.with_tag(shape_of(op.operands[0]), tag)
    dst = MemoryDesc.with_tag(shape_of(op.results[0]), tag)
    if isinstance(op, nn.LrnOp):
        alpha, beta, bias = (a.value.data for a in (op.alpha, op.beta, op.bias))
        return p.lrn_pd(src, dst, op.size.value.data, alpha, beta, bias)
    assert isinstance(op, nn.ReduceOp)
    algorithm, power = ALGORITHMS[op.kind.data]
    return p.reduction_pd(algorithm, src, dst, power)


def _choice(op: Operation, tag: int) -> tuple[str, int]:
    return remembered((op_key(op), tag), lambda: _pd(op, tag))


def _shape_reason(op: Operation) -> str | None:
    """Why oneDNN's primitive would not compute `op` as the reference does (None when it
    does): element type, kind, window, broadcast scale."""
    if not is_f32(op):
        return NOT_F32
    if isinstance(op, nn.ReduceOp) and op.kind.data not in ALGORITHMS:
        return f"kind '{op.kind.data}' has no oneDNN reduction algorithm"
    if isinstance(op, nn.LrnOp):
        if len(shape_of(op.input)) != 4:
            return "not rank 4; oneDNN's LRN here needs N, C, H, W"
        if op.size.value.data % 2 == 0:
            return "an even size: oneDNN's window is not ONNX's then"
    if isinstance(op, nn.LayerNormOp):
        _, columns = _rows(op)
        for name in ("scale", "bias"):
            value = getattr(op, name)
            if value is not None and math.prod(shape_of(value)) != columns:
                return (
                    f"its {name} broadcasts; oneDNN's layer normalization takes one per "
                    "normalised element"
                )
    return None


def _layout_reason(op: Operation, layout: str) -> str | None:
    """Why `op` cannot run with its data in `layout` (None when oneDNN has a fast
    implementation for it)."""
    if isinstance(op, nn.ReduceOp) and layout != PLAIN_LAYOUT:
        spec = LayoutSpec.parse(layout)
        blocked = [i for i in op.reduced_axes if spec.blocks_of(spec.logical_axes[i])]
        if blocked:
            return (
                f"it reduces axis {blocked[0]}, which {layout} splits into blocks, whose "
                "padding lanes it would read"
            )
    tag = _tag(op, layout)
    if tag is None:
        return f"layout '{layout or 'plain'}' has no oneDNN format"
    implementation, _ = _choice(op, tag)
    if not is_fast(implementation):
        return f"oneDNN chose {implementation} for {layout or 'plain'} data"
    return None


def reduction_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """Shape rules, then a fast implementation for operand 0's data as it is (layer norm's:
    plain, as it runs)."""
    return _shape_reason(op) or _layout_reason(op, _running_layout(op))


def _running_layout(op: Operation) -> str:
    """The layout `op`'s data has when it runs: layer norm's plain, LRN's its own, else its
    operand's (`"*"`)."""
    if isinstance(op, nn.LayerNormOp):
        return PLAIN_LAYOUT
    return _lrn_layout(op) if isinstance(op, nn.LrnOp) else encoding_name(op.operands[0].type)


def _lrn_layout(op: Operation) -> str:
    """The first of LRN_LAYOUTS oneDNN has fast code for (the last when none: refused)."""
    for layout in LRN_LAYOUTS:
        if is_fast(_choice(op, _tag(op, layout) or 0)[0]):
            return layout
    return LRN_LAYOUTS[-1]


def reduction_accepts_layout(op: Operation, spec: LayoutSpec) -> str | None:
    """A reduction's answer for `spec` (its `"*"` operand's); layer norm and LRN read their
    operands in the layouts they declare, reordered to those, whatever they carried."""
    return _layout_reason(op, spec.text) if isinstance(op, nn.ReduceOp) else None


def reduction_layouts(op: Operation, target: Target) -> Layouts:
    """Layer norm plain, LRN in NHWC or plain; a reduction in its operand's layout."""
    if isinstance(op, nn.LayerNormOp):
        return (PLAIN_LAYOUT,) * len(op.operands), (PLAIN_LAYOUT,)
    if isinstance(op, nn.LrnOp):
        return (_lrn_layout(op),), (_lrn_layout(op),)
    return (ANY_LAYOUT,), (ANY_LAYOUT,)


def reduction_types_reason(op: Operation) -> str | None:
    """`_shape_reason`; the operand and result in the layouts the kernel reads and writes
    them in."""
    if isinstance(op, nn.LayerNormOp):
        plain = [(PLAIN_LAYOUT,)] * len(op.operands)
        return _shape_reason(op) or layouts_refusal(op, plain, [(PLAIN_LAYOUT,)])
    if isinstance(op, nn.LrnOp):
        return _shape_reason(op) or layouts_refusal(op, [LRN_LAYOUTS], [LRN_LAYOUTS])
    return _shape_reason(op) or one_layout_refusal(op, (0,))


def reduction_workspace(op: Operation, target: Target) -> int:
    """The largest scratchpad among the formats the op may run in."""
    if isinstance(op, nn.LayerNormOp):
        tags = [_PLAIN_TAGS[2]]
    elif isinstance(op, nn.LrnOp):
        tags = [_tag(op, layout) or 0 for layout in LRN_LAYOUTS]
    else:
        tags = [t for t in (_tag(op, PLAIN_LAYOUT),) if t is not None]
        if len(shape_of(op.operands[0])) == 4:
            tags += [f.value for f in FORMATS if f.role == "data"]
    choices = [_choice(op, tag) for tag in tags]
    return max((scratchpad for name, scratchpad in choices if is_fast(name)), default=0)


def _args(op: Operation) -> tuple[int, ...]:
    if isinstance(op, nn.LayerNormOp):
        shift = (b.DNNL_ARG_SHIFT,) if op.bias is not None else ()
        return (b.DNNL_ARG_SRC, b.DNNL_ARG_SCALE, *shift)
    return (b.DNNL_ARG_SRC,)


def reduction_compiled(op: Operation) -> tuple[Compiled, tuple[int, ...]]:
    if isinstance(op, nn.LayerNormOp):
        tag = _PLAIN_TAGS[2]
    elif encoding_name(op.operands[0].type) == PLAIN_LAYOUT:
        tag = _PLAIN_TAGS[len(shape_of(op.operands[0]))]
    else:
        tag = format_of(op.operands[0], "data").value
    args = _args(op)
    compiled = p.get_compiled(
        ("reduction", op_key(op), tag), lambda: _pd(op, tag), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args
