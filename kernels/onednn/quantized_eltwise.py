"""oneDNN kernels of quantized element-wise and pooling ops:
`nn.qadd` (com.microsoft QLinearAdd: a residual connection) as oneDNN's binary add,
`nn.qmul` (QLinearMul) as its binary mul where a's and b's zero points are 0,
`nn.qresize` (a linear resize of quantized data) as its resampling, and `nn.max_pool2d` of
u8/s8 data as its max pooling.

qadd: y = saturate(round(((a - a_zp) * a_scale + (b - b_zp) * b_scale) / y_scale) + y_zp).
oneDNN's binary primitive takes scales for its sources but no zero points, so the scales
are a_scale / y_scale and b_scale / y_scale, and a linear post-op adds the constant
y_zp - a_zp * a_scale / y_scale - b_zp * b_scale / y_scale before oneDNN rounds (to nearest
even) and saturates: the same real value in another f32 order, so within one step of the
reference (exact on the tests' data). qadd's operands that broadcast (Swin's relative position
bias and window mask, [64, 3, 49, 49] + [1, 3, 49, 49]) are plain, their axes merged where both
broadcast alike (`broadcast_shapes`); the result overwrites the operand of its shape. A clamp
(a folded Relu or Clip) is a clip post-op after the shift: its bounds are integers, so
clipping before oneDNN rounds is clipping after.

qmul: y = saturate(round((a - a_zp) * a_scale * (b - b_zp) * b_scale / y_scale) + y_zp).
With no source zero points in oneDNN's binary, (a - a_zp) * (b - b_zp) is a scale and a shift
of a * b only where a_zp = b_zp = 0 (a ReLU's output, often): then the source scales are
a_scale / y_scale and b_scale and the linear post-op adds y_zp; other zero points are refused
(the reference runs). Within one step of the reference, like qadd.

Both take NHWC operands and write an NHWC result, what oneDNN's int8 convolutions write (on
plain NCHW u8 data oneDNN has only its reference code): no channel padding. Of another rank
than 4 (a transformer's residual add, [1, L, E]), operands and result are plain and, of one
shape, described to oneDNN as one flat run of elements. (Were a
blocked layout ever typed on them, one whose channels do not fill its blocks is refused
for qadd, which would write the image of 0, y_zp - ..., into its padding lanes.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.blocked import full_operand
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.collapsed import collapsed_shapes
from nnlayout.kernels.onednn.common import Layouts, format_of, is_fast, row_major_strides
from nnlayout.kernels.onednn.eltwise import binary_order
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.kernels.onednn.movement import movement_reason
from nnlayout.kernels.onednn.pooling import pool_pd, pool_reason
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import INT8, data_type_of
from nnlayout.kernels.onednn.quantized_call import (
    PrimitiveCall,
    int8_kernel_fields,
    runtime_descriptors,
    typed_as,
)
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

NHWC = LayoutSpec.parse("NHWC")
_SOURCES = (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1)


def _int8_type(op: Operation) -> int | None:
    """dnnl_u8 or dnnl_s8 when every operand and the result are of that type, else None."""
    types = {data_type_of(v) for v in (*op.operands, *op.results)}
    return types.pop() if len(types) == 1 and types <= set(INT8) else None


def _qadd_values(op: nn.QAddOp | nn.QMulOp) -> tuple[dict[int, np.ndarray], float]:
    """The source scales (execution argument -> value) and the post-op's constant: for qadd
    a_scale / y_scale and b_scale / y_scale, shifted by y_zp - a_zp * a_scale / y_scale -
    b_zp * b_scale / y_scale; for qmul (zero points of a and b 0) a_scale / y_scale and
    b_scale, shifted by y_zp."""
    a, c, y = (op.qparams(prefix) for prefix in ("a", "b", "y"))
    ratios = [np.float32(v.scale) / np.float32(y.scale) for v in (a, c)]
    if isinstance(op, nn.QMulOp):
        ratios[1] = np.float32(c.scale)
        shift = float(y.zero_point)
    else:
        shift = float(y.zero_point) - sum(
            float(v.zero_point) * float(r) for v, r in zip((a, c), ratios, strict=True)
        )
    values = {
        b.DNNL_ARG_ATTR_SCALES | arg: np.asarray([ratios[i]], np.float32)
        for arg, i in zip(_SOURCES, _order(op), strict=True)
    }
    return values, shift


def _order(op: Operation) -> tuple[int, int]:
    """Which operands are oneDNN's first and second sources: a qadd's operand of the
    result's shape first (`binary_order`: oneDNN broadcasts only its second source), a
    qmul's as written (a broadcast qmul is qmul_gate_onednn's)."""
    return binary_order(op) if isinstance(op, nn.QAddOp) else (0, 1)


def clamp_post_ops(op: nn.QBinaryOp) -> tuple[b.PostOp, ...]:
    """The clip post-op of the op's clamp (a folded Relu or Clip), none without one: after
    the last shift, its bounds integers, so clipping before oneDNN rounds is clipping after."""
    if op.clamp == (None, None):
        return ()
    low, high = op.clamp_limits(op.output.type.element_type)  # type: ignore[attr-defined]
    return (b.PostOp.eltwise(b.dnnl_eltwise_clip, low, high),)


def qadd_pd(op: nn.QAddOp | nn.QMulOp, tag: int | None) -> b.PrimitiveDesc:
    """oneDNN's binary add (or mul) computing `op` on data of format `tag` (None: plain
    data of another rank than 4, described as one flat run: operands of one shape; or
    plain operands that broadcast, described by `broadcast_shapes`)."""
    data_type = _int8_type(op) or b.dnnl_u8
    shape = shape_of(op.output)
    if _broadcast(op):
        operands = [shape_of(op.operands[i]) for i in _order(op)]
        shapes = broadcast_shapes(operands, shape)
        lhs, rhs, out = (
            b.MemoryDesc.with_strides(s, row_major_strides(s), data_type) for s in shapes
        )
    else:
        if tag is None:
            md = b.MemoryDesc.with_strides((math.prod(shape),), (1,), data_type)
        else:
            md = b.MemoryDesc.with_tag(shape, tag, data_type)
        lhs = rhs = out = md
    _, shift = _qadd_values(op)
    post_ops = (b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, shift), *clamp_post_ops(op))
    return p.binary_pd(
        b.dnnl_binary_mul if isinstance(op, nn.QMulOp) else b.dnnl_binary_add,
        lhs,
        rhs,
        out,
        post_ops,
        Quantization(tuple((arg, 0) for arg in _SOURCES)),
    )


def broadcast_shapes(
    operands: Sequence[tuple[int, ...]], result: tuple[int, ...]
) -> list[tuple[int, ...]]:
    """The operands' and the result's shapes as oneDNN's binary is given them: padded to the
    result's rank, adjacent axes merged where every operand broadcasts alike
    (`collapsed_shapes`: (4, 12, 49, 49) + (1, 12, 49, 49) is (4, 28812) + (1, 28812))."""
    padded = [(1,) * (len(result) - len(s)) + tuple(s) for s in operands]
    merged, shapes = collapsed_shapes(result, padded)
    return [*shapes, merged]


def _broadcast(op: Operation) -> bool:
    """Whether `op` is a qadd or qmul whose operands are of different shapes (qmul_onednn
    refuses them)."""
    return isinstance(op, nn.QAddOp | nn.QMulOp) and shape_of(op.lhs) != shape_of(op.rhs)


def _flat(op: Operation) -> bool:
    """Whether `op` is a qadd or qmul not of rank 4, or one that broadcasts: plain data
    (one flat run for oneDNN where the operands are of one shape)."""
    return isinstance(op, nn.QAddOp | nn.QMulOp) and (
        len(shape_of(op.output)) != 4 or _broadcast(op)
    )


def _tag(op: Operation, layout: str) -> int | None:
    """The data format of `op` in `layout` (an NHWC or plain text), None for a flat run."""
    if _flat(op):
        return None
    return by_layout("data", layout).value  # type: ignore[union-attr]


def qresize_pd(op: nn.QResizeOp, tag: int) -> b.PrimitiveDesc:
    """oneDNN's linear resampling of the integers, in f32 (its weights sum to 1, so the
    interpolation of x - x_zp is that of x, less x_zp), then linear post-ops: (v - x_zp) *
    x_scale / y_scale, rounded half to even before y's zero point is added (as quantize
    rounds: an odd zero point would move a tie, which a downsampling by 2 makes common, the
    other way), + y_zp; oneDNN's conversion saturates (and rounds, where y_zp is 0)."""
    data_type = _int8_type(op) or b.dnnl_u8
    src, dst = (b.MemoryDesc.with_tag(shape_of(v), tag, data_type) for v in (op.input, op.output))
    x, y = op.qparams("x"), op.qparams("y")
    ratio = np.float32(x.scale) / np.float32(y.scale)
    post_ops: tuple[b.PostOp, ...] = ()
    if not (x.same_as(y) and int(x.zero_point) == 0):
        shift = -ratio * np.float32(x.zero_point)
        post_ops = (b.PostOp.eltwise(b.dnnl_eltwise_linear, float(ratio), float(shift)),)
    if int(y.zero_point) != 0:
        post_ops += (
            b.PostOp.eltwise(b.dnnl_eltwise_round),
            b.PostOp.eltwise(b.dnnl_eltwise_linear, 1.0, float(y.zero_point)),
        )
    return p.resampling_pd(b.dnnl_resampling_linear, src, dst, post_ops)


def _pd(op: Operation, tag: int | None) -> b.PrimitiveDesc:
    if isinstance(op, nn.QAddOp | nn.QMulOp):
        return qadd_pd(op, tag)
    if isinstance(op, nn.QResizeOp):
        assert tag is not None
        return qresize_pd(op, tag)
    return pool_pd(op, tag, _int8_type(op) or b.dnnl_u8)


def _shape_reason(op: Operation) -> str | None:
    if _int8_type(op) is None:
        return "not u8 or s8 throughout; the oneDNN kernel takes one int8 type"
    if isinstance(op, nn.QMulOp) and any(
        int(op.qparams(side).zero_point) != 0 for side in ("a", "b")
    ):
        return (
            "a zero point of a or b != 0; oneDNN's binary takes no source zero points, and "
            "(a - a_zp) * (b - b_zp) is no scale and shift of a * b"
        )
    if isinstance(op, nn.QMulOp) and _broadcast(op):
        return "broadcasting (qmul_gate_onednn takes a qmul by a broadcast operand)"
    if isinstance(op, nn.QAddOp | nn.QMulOp):
        if full_operand(op) is None:
            return "neither operand is of the result's shape"
        return None
    if isinstance(op, nn.QResizeOp):
        return movement_reason(op)
    return pool_reason(op)


def _format_reason(op: Operation, spec: LayoutSpec | None) -> str | None:
    """Why the kernel cannot run `op` on data of layout `spec` (None: plain) here."""
    if _flat(op) and spec is not None:
        return f"layout '{spec.text}' on data of rank {len(shape_of(op.output))}"
    fmt = by_layout("data", "" if spec is None else spec.text)
    if fmt is None:
        return f"layout '{spec.text if spec else 'NCHW'}' has no oneDNN format"
    if (
        isinstance(op, nn.QAddOp | nn.QMulOp)
        and spec
        and spec.padding_elements(shape_of(op.output))
    ):
        return f"{spec.text} pads its channels; qadd would write the image of 0 there"
    try:
        implementation = _pd(op, None if _flat(op) else fmt.value).implementation
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    return f"oneDNN offers only {implementation} for it" if not is_fast(implementation) else None


def int8_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """Shape and type rules, then a fast implementation on NHWC data (oneDNN's int8
    convolutions write it; on plain NCHW u8 data oneDNN has only its reference code), or on
    plain data of another rank (a transformer's residual add), one flat run."""
    return _shape_reason(op) or _format_reason(op, None if _flat(op) else NHWC)


def int8_layouts(op: Operation, target: Target) -> Layouts:
    layout = PLAIN_LAYOUT if _flat(op) else NHWC.text
    return (layout,) * len(op.operands), (layout,)


def int8_workspace(op: Operation, target: Target) -> int:
    return _pd(op, _tag(op, NHWC.text)).scratchpad_bytes


class _Bound:
    """The op's primitive bound once for the format its types carry; `on` binds it to the
    arrays generated code always passes (pointed at once where they are C-contiguous:
    quantized_call.py)."""

    def __init__(self, op: Operation):
        reason = _shape_reason(op)
        if reason is not None:
            raise BindingRefused(reason)
        tag = _typed_tag(op)
        try:
            pd = _pd(op, tag)
        except b.DnnlError as error:
            raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
        values: dict[int, np.ndarray] = {}
        if isinstance(op, nn.QAddOp | nn.QMulOp):
            values, _ = _qadd_values(op)
        self.args = _SOURCES[: len(op.operands)]
        self.order = _order(op) if len(op.operands) == 2 else (0,)
        compiled = Compiled(pd, (*self.args, b.DNNL_ARG_DST), runtime=runtime_descriptors(values))
        self.call = PrimitiveCall(compiled, values)
        self.dtype = p.NUMPY_TYPES[_int8_type(op) or b.dnnl_u8]

    def _sources(self, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        return {
            arg: np.ascontiguousarray(inputs[i]).reshape(-1).view(self.dtype)
            for arg, i in zip(self.args, self.order, strict=True)
        }

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.nbytes == self.call.compiled.nbytes(b.DNNL_ARG_DST)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        direct = self._direct(out)
        result = out if direct else np.empty(out.shape, out.dtype)
        self.call.call_on(self._sources(inputs), result.reshape(-1).view(self.dtype))
        if not direct:
            out[...] = result

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if not (self._direct(out) and all(x.flags.c_contiguous for x in inputs)):
            return partial(self, inputs, out)
        return self.call.bind_to(self._sources(inputs), out.reshape(-1).view(self.dtype))


def _typed_tag(op: Operation) -> int | None:
    """The data format operand 0's type carries (None: a flat run)."""
    return None if _flat(op) else format_of(op.operands[0], "data").value


def _implementation(op: Operation) -> str:
    return _pd(op, _typed_tag(op)).implementation


def _types_reason(op: Operation) -> str | None:
    """A flat run is plain data: its values typed in no layout (hand-written IR may)."""
    return typed_as(PLAIN_LAYOUT)(op) if _flat(op) else None


def _applies(op: Operation) -> bool:
    return _int8_type(op) is not None


def int8_eltwise_kernels(family: str) -> list[Kernel]:
    """qadd_onednn, qmul_onednn, qresize_onednn, and max_pool2d_int8_onednn, which applies
    to integer data only (and is tried before the f32 kernel, which refuses it)."""
    common = int8_kernel_fields(
        _Bound,
        accepts=int8_accepts,
        layouts=int8_layouts,
        workspace=int8_workspace,
        implementation_of=_implementation,
    )
    return [
        Kernel(
            "qadd_onednn",
            nn.QAddOp,
            family,
            in_place_of=full_operand,
            accepts_types=_types_reason,
            **common,  # type: ignore[arg-type]
        ),
        Kernel(
            "qmul_onednn",
            nn.QMulOp,
            family,
            in_place_of=full_operand,
            accepts_types=_types_reason,
            **common,  # type: ignore[arg-type]
        ),
        Kernel("qresize_onednn", nn.QResizeOp, family, **common),  # type: ignore[arg-type]
        Kernel(
            "max_pool2d_int8_onednn",
            nn.MaxPool2dOp,
            family,
            applies=_applies,
            priority=1,
            **common,  # type: ignore[arg-type]
        ),
    ]
