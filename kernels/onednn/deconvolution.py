"""Transposed convolutions (`nn.conv_transpose2d`) as oneDNN's deconvolution primitive.

oneDNN chooses the data format (source and destination share one) and packs the weights in
a blocked format of its choice from ours, (i, o, h, w) read as its iohw, when the kernel
first sees them (`reorder.weights_repacker`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import encoding_name
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc
from nnlayout.kernels.onednn.common import ANY, NOT_F32, Layouts, format_of, is_f32
from nnlayout.kernels.onednn.convolution import WindowGeometry
from nnlayout.kernels.onednn.formats import FORMATS, Format, by_layout, identify
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.registry import Target, layouts_refusal


@dataclass(frozen=True)
class DeconvGeometry(WindowGeometry):
    """A transposed convolution: weights (o, i, h, w), or (g, o, i, h, w) when grouped, where
    ours are (i, o, h, w), read as oneDNN's iohw / giohw; `padding_r` is ONNX's end pads
    less output_padding."""

    @property
    def plain_weights(self) -> int:
        return b.dnnl_iohw if len(self.weights) == 4 else b.dnnl_giohw


def deconv_geometry(op: nn.ConvTranspose2dOp) -> DeconvGeometry:
    groups = op.groups.value.data
    i, o, kh, kw = shape_of(op.weight)
    weights = (o, i, kh, kw) if groups == 1 else (groups, o, i // groups, kh, kw)
    pads, extra = ints(op.pads), ints(op.output_padding)
    return DeconvGeometry(
        shape_of(op.input),
        weights,
        op.bias is not None,
        shape_of(op.output),
        ints(op.strides),
        ints(op.dilations),
        pads[:2],
        tuple(pads[2 + a] - extra[a] for a in range(2)),
    )


def deconv_pd(g: DeconvGeometry, data: int, weights: int = ANY) -> b.PrimitiveDesc:
    """The primitive descriptor with source and destination in format `data` (or ANY)."""
    bias = MemoryDesc.with_tag((g.dst[1],), by_layout("vector", "").value) if g.bias else None
    return p.deconvolution_pd(
        MemoryDesc.with_tag(g.src, data),
        MemoryDesc.with_tag(g.weights, weights),
        bias,
        MemoryDesc.with_tag(g.dst, data),
        g.strides,
        g.dilations,
        g.padding_l,
        g.padding_r,
    )


@cache
def deconv_choice(g: DeconvGeometry, data_format: str = "") -> tuple[Format, str, int] | str:
    """oneDNN's fast choice for `g` (data format, implementation, scratchpad bytes), or why
    there is none; `data_format` (the target's) is asked first. Its weights are in a blocked
    format of its choice, packed from ours when the kernel first sees them; source and
    destination share one format."""
    notes = []
    asked = by_layout("data", data_format) if data_format else None
    for data in ((asked.value,) if asked else ()) + (
        ANY,
        *(f.value for f in FORMATS if f.role == "data"),
    ):
        try:
            pd = deconv_pd(g, data)
        except DnnlError as error:
            notes.append(str(error))
            continue
        found = identify(pd.md(b.dnnl_query_src_md), "data")
        if pd.implementation.startswith(("ref", "conv:any+ref")):
            notes.append(f"oneDNN chose {pd.implementation}")
        elif (
            found is not None
            and found == identify(pd.md(b.dnnl_query_dst_md), "data")
            and (deconv_pd(g, found.value).implementation == pd.implementation)
        ):  # as it runs
            return found, pd.implementation, pd.scratchpad_bytes
    return "; ".join(dict.fromkeys(notes)) or "no format of ours for its source"


def deconv_accepts(op: nn.ConvTranspose2dOp, target: Target, padding: bool) -> str | None:
    if not is_f32(op):
        return NOT_F32
    choice = deconv_choice(deconv_geometry(op), OneDNNOptions.of(target).data_format)
    return choice if isinstance(choice, str) else None


def deconv_chosen(op: nn.ConvTranspose2dOp, target: Target) -> tuple[Format, str, int]:
    choice = deconv_choice(deconv_geometry(op), OneDNNOptions.of(target).data_format)
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN transposed convolution: {choice}")
    return choice


def deconv_layouts(op: nn.ConvTranspose2dOp, target: Target) -> Layouts:
    """oneDNN's format for the input and result; weights and bias plain."""
    data = deconv_chosen(op, target)[0].kernel_layout
    return (data, PLAIN_LAYOUT) + ((PLAIN_LAYOUT,) if op.bias is not None else ()), (data,)


def deconv_compiled(op: nn.ConvTranspose2dOp) -> tuple[Compiled, tuple[int, ...]]:
    g = deconv_geometry(op)
    tag = format_of(op.input, "data").value
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if g.bias else ())
    compiled = p.get_compiled(
        ("deconv", g, tag), lambda: deconv_pd(g, tag), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args


def deconv_types_reason(op: nn.ConvTranspose2dOp) -> str | None:
    """The primitive reads the weights and bias plain, and writes the result in the
    input's format."""
    data = (encoding_name(op.input.type),)
    return layouts_refusal(op, [data, *[(PLAIN_LAYOUT,)] * (len(op.operands) - 1)], [data])


def deconv_workspace(op: nn.ConvTranspose2dOp, target: Target) -> int:
    """The scratchpad bytes of oneDNN's choice."""
    return deconv_chosen(op, target)[2]
