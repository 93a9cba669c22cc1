"""oneDNN kernel of `nn.qconcat` (com.microsoft QLinearConcat: DenseNet's feature maps, UNet's
skip connections), `qconcat_onednn`.

y = concat(requantize(x_i from (x_scale[i], x_zero_point[i]) to (y_scale, y_zero_point))).
Where every input has y's scale and zero point (what `quantize_static` gives a concat whose
inputs and result share one calibrated range) it is a plain u8/s8 concatenation: oneDNN's
concat primitive, exact. An input of other parameters is first requantized by a reorder with
src scale and zero point x_i's and dst scale and zero point y's, into a buffer the kernel owns
(the memory plan does not count it): saturate(round((x_i - x_zp_i) * x_scale_i / y_scale) +
y_zp), oneDNN's order of the same f32 value, within one step of the reference at a rare half
step; the concat then reads that buffer in the input's place.

Why not one reorder per input straight into its slot of the result (a submemory, no
buffer): oneDNN v3.2's `jit:uni` reorder into a strided destination drops both zero points
when the slot's channel count is not a multiple of 8 (measured: 7 channels of 28 gave
round(x * x_scale / y_scale), zero points ignored), so the slots are written by the concat
primitive, which only copies. The requantizing reorders are tried once when bound, on every
code (`_requantizes_every_code`; the same v3.2 reorder drops zero points on some dense
shapes too, `quantized_call.maps_fill`); where one maps a code to anything but its
requantization, the reference kernel runs the op.

Rank-4 data is NHWC, what oneDNN's int8 convolutions write (so no channel padding, no lane to
hold a zero point); other ranks plain row-major. The result is written whole, by oneDNN
(`writes_strided=False`): bufferize places the inputs of `nn.concat` only, so a qconcat's
inputs keep buffers of their own and the kernel copies them (in DenseNet each layer's
qconcat requantizes and copies all the features so far: `quantize_static` gives every
concatenation parameters of its own).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.dialects.nn.quantized import QParams, numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.common import Layouts, is_fast
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import DATA_TYPES, INT8
from nnlayout.kernels.onednn.quantized_call import (
    PrimitiveCall,
    int8_kernel,
    runtime_descriptors,
    runtime_values,
)
from nnlayout.kernels.onednn.quantized_reorder import NHWC, data_md
from nnlayout.kernels.reference_quantized import qconcat
from nnlayout.kernels.registry import BindingRefused, FixedCall, Kernel, Target

# Requantizing reorder: x_i's scale and zero point at the source, y's at the destination.
_REQUANTIZE = Quantization(
    ((b.DNNL_ARG_SRC, 0), (b.DNNL_ARG_DST, 0)), ((b.DNNL_ARG_SRC, 0), (b.DNNL_ARG_DST, 0))
)


def _layout(op: Operation) -> str:
    return NHWC.text if len(shape_of(op.results[0])) == 4 else PLAIN_LAYOUT


def refusal(op: Operation) -> str | None:
    """Why the oneDNN kernel cannot compute `op` (None: it can)."""
    assert isinstance(op, nn.QConcatOp)
    dtype = numpy_dtype(op.output.type.element_type)  # type: ignore[attr-defined]
    if DATA_TYPES.get(dtype) not in INT8:
        return f"{dtype} data; the oneDNN kernel takes u8 or s8"
    if op.qparams("y").per_axis or op.qparams("x").scale.ndim != 1:
        return "per-axis scales; the oneDNN kernel takes one per tensor"
    return None


def qconcat_layouts(op: Operation, target: Target) -> Layouts:
    """Every input and the result NHWC where they have rank 4, else plain."""
    return (_layout(op),) * len(op.operands), (_layout(op),)


def _typed_layout(op: Operation) -> str:
    """The one layout (NHWC or plain) the inputs and the result carry, else refused."""
    found = set()
    for value in (*op.operands, *op.results):
        spec = layout_of(value.type)  # type: ignore[arg-type]
        found.add(PLAIN_LAYOUT if spec is None else spec.text)
    if len(found) != 1 or not found <= {PLAIN_LAYOUT, NHWC.text}:
        raise BindingRefused(f"layouts {sorted(found)}: the kernel reads one, NHWC or plain")
    return found.pop()


def _requantized(op: nn.QConcatOp) -> list[QParams | None]:
    """Per input: its parameters where they differ from y's (it is requantized), else None."""
    y = op.qparams("y")
    return [None if x.same_as(y) else x for x in op.input_qparams()]


def _requantize_call(source: MemoryDesc, x: QParams, y: QParams) -> PrimitiveCall:
    """A reorder of `source` onto itself from x's scale and zero point to y's."""
    pd = p.reorder_pd(source, source, _REQUANTIZE)
    values = runtime_values(
        _REQUANTIZE,
        {b.DNNL_ARG_SRC: [float(x.scale)], b.DNNL_ARG_DST: [float(y.scale)]},
        {b.DNNL_ARG_SRC: int(x.zero_point), b.DNNL_ARG_DST: int(y.zero_point)},
    )
    compiled = Compiled(pd, (b.DNNL_ARG_SRC, b.DNNL_ARG_DST), runtime=runtime_descriptors(values))
    return PrimitiveCall(compiled, values)


def _requantizes_every_code(call: PrimitiveCall, x: QParams, y: QParams, dtype: np.dtype) -> bool:
    """Whether the requantizing reorder `call` maps every code of `dtype` at every position of
    its buffer as x -> y's requantization does (oneDNN v3.2's reorder drops zero points on
    some shapes: `quantized_call.maps_fill`). A source of x's zero point alone would not see a
    dropped one whose product with x_scale / y_scale rounds to 0, hence all the codes; those
    within float rounding of a half step are not compared."""
    info = np.iinfo(dtype)
    codes = np.arange(info.min, info.max + 1)
    exact = (codes - int(x.zero_point)) * (float(x.scale) / float(y.scale))
    want = np.clip(np.rint(exact) + int(y.zero_point), info.min, info.max)
    compared = np.abs(exact - np.floor(exact) - 0.5) > 1e-3
    size = call.compiled.nbytes(b.DNNL_ARG_SRC) // dtype.itemsize
    out = np.empty(size, dtype)
    for start in range(0, len(codes), size):  # the whole buffer each time, codes repeated
        picked = np.resize(np.roll(codes, -start), size)
        call.call_on({b.DNNL_ARG_SRC: picked.astype(dtype)}, out)
        shown = np.resize(np.roll(compared, -start), size)
        if np.any((out != np.resize(np.roll(want, -start), size)) & shown):
            return False
    return True


@dataclass
class _Calls:
    """The requantizing reorders (input index -> its call) and the concat."""

    requantize: dict[int, PrimitiveCall]
    concat: PrimitiveCall

    def all(self) -> list[PrimitiveCall]:
        return [*self.requantize.values(), self.concat]


def _calls(op: nn.QConcatOp, layout: str) -> _Calls:
    """oneDNN's calls computing `op` on data of `layout` (module doc)."""
    data = DATA_TYPES[numpy_dtype(op.output.type.element_type)]  # type: ignore[attr-defined]
    out = data_md(shape_of(op.output), layout, data)
    sources = [data_md(shape_of(x), layout, data) for x in op.inputs]
    y = op.qparams("y")
    requantize = {
        i: _requantize_call(sources[i], x, y)
        for i, x in enumerate(_requantized(op))
        if x is not None
    }
    pd = p.concat_pd(out, op.normalized_axis, sources)
    args = tuple(b.DNNL_ARG_MULTIPLE_SRC + i for i in range(len(sources)))
    return _Calls(requantize, PrimitiveCall(Compiled(pd, (*args, b.DNNL_ARG_DST)), {}))


def _implementations(calls: _Calls) -> list[str]:
    return sorted({call.compiled.pd.implementation for call in calls.all()})


def accepts(op: Operation, target: Target, padding: bool) -> str | None:
    reason = refusal(op)
    if reason is not None:
        return reason
    try:
        names = _implementations(_calls(op, _layout(op)))  # type: ignore[arg-type]
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    slow = [name for name in names if not is_fast(name)]
    return f"oneDNN offers only {', '.join(slow)} for it" if slow else None


def workspace(op: Operation, target: Target) -> int:
    """Each call has a scratchpad of its own (PrimitiveCall): the largest is what runs."""
    calls = _calls(op, _layout(op))  # type: ignore[arg-type]
    return max(call.compiled.scratchpad_bytes for call in calls.all())


Step = tuple[PrimitiveCall, dict[int, np.ndarray], np.ndarray]  # a call, sources, result


class _Bound:
    """The op's primitives bound once for the layout its types carry, with a buffer of its
    own for each requantized input; `on` points them once at the arrays generated code
    always passes (quantized_call.py)."""

    def __init__(self, op: Operation):
        reason = refusal(op)
        if reason is not None:
            raise BindingRefused(reason)
        assert isinstance(op, nn.QConcatOp)
        try:
            self.calls = _calls(op, _typed_layout(op))
        except b.DnnlError as error:
            raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
        self.dtype = numpy_dtype(op.output.type.element_type)  # type: ignore[attr-defined]
        self.requantized = {
            i: np.empty(math.prod(shape_of(op.inputs[i])), self.dtype)
            for i in self.calls.requantize
        }
        # Where oneDNN's reorder drops a zero point on this shape, the reference.
        x, y = op.input_qparams(), op.qparams("y")
        self.op, self.layout = op, _typed_layout(op)
        self.reference = not all(
            _requantizes_every_code(call, x[i], y, self.dtype)
            for i, call in self.calls.requantize.items()
        )

    def _steps(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> list[Step]:
        """The requantizing reorders, then the concat, each with its sources (flat,
        contiguous) and destination."""
        flat = [np.ascontiguousarray(x).reshape(-1).view(self.dtype) for x in inputs]
        steps: list[Step] = [
            (call, {b.DNNL_ARG_SRC: flat[i]}, self.requantized[i])
            for i, call in self.calls.requantize.items()
        ]
        joined = {
            b.DNNL_ARG_MULTIPLE_SRC + i: self.requantized.get(i, x) for i, x in enumerate(flat)
        }
        steps.append((self.calls.concat, joined, out.reshape(-1).view(self.dtype)))
        return steps

    def _direct(self, out: np.ndarray) -> bool:
        size = self.calls.concat.compiled.nbytes(b.DNNL_ARG_DST)
        return out.flags.c_contiguous and out.nbytes == size

    def _reference(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        """The reference kernel's result, in the layout the types carry."""
        nhwc = self.layout == NHWC.text

        def logical(x: np.ndarray, value: object) -> np.ndarray:
            shape = shape_of(value)  # type: ignore[arg-type]
            return NHWC.unpack(np.asarray(x), shape) if nhwc else np.asarray(x).reshape(shape)

        plain = qconcat(
            self.op, [logical(x, v) for x, v in zip(inputs, self.op.inputs, strict=True)]
        )
        out[...] = (NHWC.pack(plain) if nhwc else plain).reshape(out.shape)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self.reference:
            self._reference(inputs, out)
            return
        direct = self._direct(out)
        result = out if direct else np.empty(out.shape, out.dtype)
        for call, sources, destination in self._steps(inputs, result):
            call.call_on(sources, destination)
        if not direct:
            out[...] = result

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if self.reference or not (self._direct(out) and all(x.flags.c_contiguous for x in inputs)):
            return partial(self, inputs, out)
        bound = [call.bind_to(sources, flat) for call, sources, flat in self._steps(inputs, out)]
        if len(bound) == 1:
            return bound[0]
        return partial(_run_all, tuple(bound))


def _run_all(calls: Sequence[FixedCall]) -> None:
    for call in calls:
        call()


def _implementation(op: Operation) -> str:
    return "+".join(_implementations(_calls(op, _typed_layout(op))))  # type: ignore[arg-type]


def qconcat_kernels(family: str) -> list[Kernel]:
    """qconcat_onednn."""
    return [
        int8_kernel(
            "qconcat_onednn",
            nn.QConcatOp,
            family,
            _Bound,
            accepts=accepts,
            layouts=qconcat_layouts,
            workspace=workspace,
            implementation_of=_implementation,
        )
    ]
