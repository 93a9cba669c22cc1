"""oneDNN kernels (family `onednn`): convolution (also fused with its add and activation as
post-ops: `nn.fused_conv2d`), transposed convolution, gemm (oneDNN's matmul), pooling,
element-wise, binary, batch norm and concat ops as oneDNN primitives, called through ctypes on
numpy arrays.

Layouts come from oneDNN, not from a table: a convolution's `layouts(op, target)` builds the
primitive descriptor with `format_tag::any` and reads back the formats it chose (mapped to our
layout strings by formats.py) and the implementation's name. An implementation named `ref...`
is oneDNN's slow reference code and is refused: for a convolution the kernel first retries with
a plain `nchw` source (the fast stem: a 3-channel source padded to `nChw8c` falls to
`ref:any`, 800x slower), with grouped weights blocked as our layouts can name them and with
plain grouped weights (`_first_conv_choice` gives the order), so dispatch falls back to numpy
only when oneDNN has no fast implementation. The other ops run on whatever layout their operand has
(`"*"`), as long as oneDNN has a fast implementation for it.

Semantics kept equal to the reference kernels, where oneDNN differs:
- NaN: oneDNN's exp turns NaN into inf, so exp has no oneDNN kernel here. Its relu and clip
  (max/min instructions; leaky_relu with alpha 0 is its relu) turn NaN into a bound, and its
  max pooling drops NaN and turns a window of -inf into the lowest float: these run in
  oneDNN on calls whose input is finite (known from the kernel that wrote it, `NormBound`,
  or checked by one BLAS pass, `_norm`) and in numpy otherwise. A convolution fused with
  them checks that nothing can overflow either (`Epilogue`).
- Padding (invariant 2): oneDNN leaves 0 * NaN in padded output channels and sigmoid(0) in
  padded lanes, so results in a padded layout get their padding lanes re-zeroed.
- ceil_mode pooling is oneDNN pooling with a larger bottom/right padding; with
  count_include_pad that extra padding would count in the divisor, so that case is refused.

Implementations follow the registry's `impl(op, inputs)` through `run`, a thin wrapper that
allocates the result (of oneDNN's byte size) and the scratchpad, around
`execute(op, inputs, out, scratchpad)`, which writes into caller-owned buffers; `prepare` binds
an op once, deciding at load what depends on the op alone (`executor`), and `Prepared.on`
binds it to the buffers generated code always passes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, partial
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.compute import last_writers, operands_outside
from nnlayout.dialects.kernel_attr import ANY_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, buffer_bytes, encoding_name, layout_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.blocked import broadcast_reason, full_operand, max_pool2d_any
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc
from nnlayout.kernels.onednn.formats import (
    FORMATS,
    Format,
    by_layout,
    identify,
    identify_all,
    names,
)
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import (
    PREPARED_IN_SESSION,
    BindingRefused,
    FixedCall,
    Kernel,
    Target,
    layouts_refusal,
    one_layout_refusal,
)

Layouts = tuple[tuple[str, ...], tuple[str, ...]]
ANY = b.dnnl_format_tag_any


def _format(value: SSAValue, role: str, dims: tuple[int, ...] = ()) -> Format:
    """The format of a value's layout, of oneDNN's `dims` (needed for grouped weights, whose
    group size decides whether our layout names oneDNN's format); raises naming it when
    oneDNN has none."""
    assert dims or role != "grouped", "grouped weights need oneDNN's dims (g, o, i, h, w)"
    layout = encoding_name(value.type)
    found = by_layout(role, layout)
    if found is None or not names(found, dims):
        raise BindingRefused(
            f"layout '{layout or 'plain'}' has no oneDNN format ({role}"
            f"{f' {dims}' if dims else ''})"
        )
    return found


@cache
def _padded_layout(value_type: Attribute) -> LayoutSpec | None:
    """The layout of a tensor type when it has padding lanes (asked by every unbound run)."""
    spec = layout_of(value_type)
    if (
        spec is None
        or not isinstance(value_type, TensorType)
        or not spec.padding_elements(value_type.get_shape())
    ):
        return None
    return spec


_NOT_F32 = "not float32; the oneDNN kernels are f32 only"


def _is_f32(op: Operation) -> bool:
    return all(getattr(v.type, "element_type", None) == f32 for v in (*op.operands, *op.results))


# ------------------------------------------------------------------- convolution
@dataclass(frozen=True)
class WindowGeometry:
    """Shapes and window attributes of a (transposed) convolution in oneDNN's terms."""

    src: tuple[int, ...]
    weights: tuple[int, ...]
    bias: bool
    dst: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]  # ours: 1 = dense
    padding_l: tuple[int, ...]
    padding_r: tuple[int, ...]


@dataclass(frozen=True)
class ConvGeometry(WindowGeometry):
    """A convolution: weights are 5-D (g, o, i, h, w) when grouped."""

    weights_role: str = "weights"  # "weights", "grouped" or "depthwise"
    post_ops: tuple[b.PostOp, ...] = ()


def conv_geometry(op: nn.Conv2dOp | nn.FusedConv2dOp) -> ConvGeometry:
    groups = op.groups.value.data
    o, i, kh, kw = shape_of(op.weight)
    pads = ints(op.pads)
    if groups == 1:
        weights, role = (o, i, kh, kw), "weights"
    else:
        weights = (groups, o // groups, i, kh, kw)
        role = "depthwise" if o == groups == shape_of(op.input)[1] else "grouped"
    post_ops = fused_epilogue(op).post_ops if isinstance(op, nn.FusedConv2dOp) else ()
    return ConvGeometry(
        shape_of(op.input),
        weights,
        op.bias is not None,
        shape_of(op.output),
        ints(op.strides),
        ints(op.dilations),
        pads[:2],
        pads[2:],
        role,
        post_ops,
    )


@dataclass(frozen=True)
class Epilogue:
    """A fused convolution's add and activation in oneDNN's terms, with the reference
    semantics. `post_ops` are exact on every input; with `numpy_activation` the activation
    has no exact post-op and runs after the primitive, as its reference kernel does.

    `finite_post_ops`, when set, compute the same function but for NaN and infinities:
    oneDNN's relu and clip post-ops are max/min in an operand order that turns NaN into a
    bound, and leaky_relu's relu with alpha 0 maps -inf to 0 * -inf = NaN. A convolution
    whose operands are finite and small enough cannot make NaN or an infinity
    (`_conv_bounds`), so the kernel checks that before each call (from bounds on the norms
    of source and addend: kept by the kernels that wrote them, else one BLAS pass) and then
    runs these cheap post-ops; a NaN in the input still comes out NaN."""

    post_ops: tuple[b.PostOp, ...]
    numpy_activation: bool = False
    finite_post_ops: tuple[b.PostOp, ...] | None = None


def fused_epilogue(op: nn.FusedConv2dOp) -> Epilogue:
    """How oneDNN computes `op`'s epilogue. Under `nnan` (no NaN reaches the activation)
    relu and clip are their post-ops; otherwise relu is exactly oneDNN's elu with alpha 0
    (x for x > 0, else 0 * (exp(x) - 1)), which keeps NaN at the cost of an exp, and clip
    and leaky_relu with alpha 0 are numpy after the primitive, each with the cheap post-op
    for finite operands."""
    post_ops = (b.PostOp.sum(),) if op.addend is not None else ()
    activation = op.activation_op()
    if activation is None:
        return Epilogue(post_ops)
    eltwise = (*post_ops, b.PostOp.eltwise(*_eltwise_params(activation)))
    if op.nnan is not None or not _finite_only(activation):
        return Epilogue(eltwise)
    if isinstance(activation, nn.ReluOp):
        return Epilogue((*post_ops, b.PostOp.eltwise(b.dnnl_eltwise_elu, 0.0)), False, eltwise)
    return Epilogue(post_ops, True, eltwise)  # clip, leaky_relu with alpha 0


def conv_pd(g: ConvGeometry, src: int, weights: int, dst: int) -> b.PrimitiveDesc:
    """The convolution's primitive descriptor with the given format tags (or ANY)."""
    bias = MemoryDesc.with_tag((g.dst[1],), by_layout("vector", "").value) if g.bias else None
    return p.convolution_pd(
        MemoryDesc.with_tag(g.src, src),
        MemoryDesc.with_tag(g.weights, weights),
        bias,
        MemoryDesc.with_tag(g.dst, dst),
        g.strides,
        g.dilations,
        g.padding_l,
        g.padding_r,
        g.post_ops,
    )


@dataclass(frozen=True)
class ConvChoice:
    """What oneDNN chose for a convolution: formats of src, weights, dst, and its code."""

    formats: tuple[Format, Format, Format]
    implementation: str
    scratchpad: int


@cache
def conv_choice(
    g: ConvGeometry, data_format: str = "", preferred: tuple[str, ...] = ()
) -> ConvChoice | str:
    """oneDNN's fast choice for `g`, or why there is none; an implementation named in
    `preferred` (the target's) replaces it where oneDNN offers one for the same instruction
    set and activation formats (`_preferred_alternative`)."""
    choice = _first_conv_choice(g, data_format)
    if isinstance(choice, str) or not preferred or choice.implementation.startswith(preferred):
        return choice
    return _preferred_alternative(g, choice, preferred) or choice


def _first_conv_choice(g: ConvGeometry, data_format: str) -> ConvChoice | str:
    """oneDNN's own fast choice for `g`, or why there is none. `data_format` (a layout of
    ours, from the target) is asked first: in and out, then from a plain source (the stem,
    whose input arrives plain). Then, in order: every format left to oneDNN; a plain nchw
    source (the fast stem); channel-blocked sources (the jit convolutions' formats, for
    machines where the brgemm ones are not in our map); plain weights (grouped
    convolutions, which, like one-pixel ones, ask for channels-last first). A choice whose
    destination format differs from its source's (oneDNN's stem: nchw -> nChw8c) would cost
    the next layers a reorder each where they run channels-last, so the same format on both
    sides is tried first for it."""
    notes: list[str] = []
    plain = by_layout("data", "")
    if data_format and (asked := by_layout("data", data_format)) is not None:
        for src, what in (
            (asked, f"{asked.tag} in and out"),
            (plain, f"a {plain.tag} source into {asked.tag}"),
        ):
            choice = _conv_attempt(g, src.value, ANY, asked.value, what, notes)
            if choice is not None:
                return choice
    data = [
        f
        for layout in ("", "NHWC", "NCHW16c", "NCHW8c")
        if (f := by_layout("data", layout)) is not None
    ]
    attempts = [(ANY, ANY, ANY, "formats of its choice")]
    nhwc = by_layout("data", "NHWC")
    channels_last = (nhwc.value, ANY, nhwc.value, f"{nhwc.tag} in and out")
    if g.weights_role == "grouped":
        # oneDNN's own choice is a blocked format, where its jit code is as fast as on nhwc
        # (avx512_core: 0.23 against 0.24 ms for 224 channels in 14 groups at 28x28) and
        # slower than its brgconv on avx2 (0.56 against 0.42): channels-last is where the
        # other convolutions run, so it saves a reorder on each side. Where the weights it
        # picks pad each group (24 channels a group in gOhwi32o on avx512_core), the ones
        # we can name follow, widest blocks first: gOhwi24o ran in 0.13 ms there, oneDNN's
        # gemm on nchw, the next fast choice, in 0.22.
        attempts[:0] = [channels_last] + [
            (nhwc.value, f.value, nhwc.value, f"{nhwc.tag} in and out, {f.tag} weights")
            for f in reversed(FORMATS)
            if f.role == "grouped" and names(f, g.weights) and LayoutSpec.parse(f.layout).is_blocked
        ]
    elif g.src[2:] == g.dst[2:] == (1, 1):
        # One pixel (squeeze-and-excitation's fully connected layers): nchw and nhwc are the
        # same bytes, but oneDNN names its choice nchw, which cost a reorder on each side
        # where the layers around run channels-last (32 in SE-ResNet-50).
        attempts.insert(0, channels_last)
    attempts += [(f.value, ANY, ANY, f"a {f.tag} source") for f in data]
    attempts.append((ANY, by_layout(g.weights_role, "").value, ANY, "plain weights"))
    for src, weights, dst, what in attempts:
        choice = _conv_attempt(g, src, weights, dst, what, notes)
        if choice is None:
            continue
        source, destination = choice.formats[0], choice.formats[2]
        if source.value != destination.value:
            for f in data[1:]:  # channels-last first: what oneDNN picks on avx2
                same = _conv_attempt(g, f.value, weights, f.value, f"{f.tag} in and out", notes)
                if same is not None:
                    return same
        return choice
    return "; ".join(notes)


def _preferred_alternative(
    g: ConvGeometry, choice: ConvChoice, preferred: tuple[str, ...]
) -> ConvChoice | None:
    """The first implementation oneDNN lists, in its order, whose name starts with one of
    `preferred` and that targets the same instruction set as `choice`, on the same source
    and destination formats with weights of its choice; None when it lists none before its
    reference implementation. A preference is measured against oneDNN's first choice on one
    kind of machine: on an AVX-512 one oneDNN also lists the avx2 code the `onednn` target
    prefers on AVX2 machines, and there it ran ResNet-50's 1x1 convolutions 1.5-2x slower
    than oneDNN's own avx512_core choice."""
    isa = _isa(choice.implementation)
    pd = conv_pd(g, choice.formats[0].value, ANY, choice.formats[2].value)
    while not pd.implementation.startswith("ref"):
        if (
            pd.implementation.startswith(preferred)
            and _isa(pd.implementation) == isa
            and (
                found := _choice_of(
                    g,
                    pd,
                    "a preferred implementation",
                    [],
                    (choice.formats[0].value, choice.formats[2].value),
                )
            )
            is not None
        ):
            return found
        if not pd.next_implementation():
            break
    return None


def _isa(implementation: str) -> str:
    """The instruction set an implementation name ends with ("jit_1x1:avx2" -> "avx2")."""
    return implementation.rpartition(":")[2]


def _conv_attempt(
    g: ConvGeometry, src: int, weights: int, dst: int, what: str, notes: list[str]
) -> ConvChoice | None:
    """oneDNN's choice with these format tags (ANY: its own) if fast and nameable in our
    layouts, else None with the reason appended to `notes`."""
    try:
        pd = conv_pd(g, src, weights, dst)
    except DnnlError as error:
        notes.append(f"{what}: {error}")
        return None
    return _choice_of(g, pd, what, notes, (src, dst))


def _choice_of(
    g: ConvGeometry,
    pd: b.PrimitiveDesc,
    what: str,
    notes: list[str],
    asked: tuple[int, int] = (ANY, ANY),
) -> ConvChoice | None:
    """The implementation `pd` holds if fast and nameable in our layouts, else None with the
    reason appended to `notes`. `asked` are the source and destination tags `pd` was asked
    for, which name its data where several of our formats do."""
    implementation = pd.implementation
    formats = (
        _data_format(pd.md(b.dnnl_query_src_md), asked[0]),
        identify(pd.md(b.dnnl_query_weights_md), g.weights_role),
        _data_format(pd.md(b.dnnl_query_dst_md), asked[1]),
    )
    source = formats[0].tag if formats[0] else "unmapped"
    if implementation.startswith("ref"):
        notes.append(
            f"oneDNN chose {implementation} for a {g.src[1]}-channel {source} source ({what})"
        )
        return None
    if None in formats:
        unmapped = [
            n
            for n, f in zip(("source", "weights", "destination"), formats, strict=True)
            if f is None
        ]
        notes.append(
            f"oneDNN's {implementation} wants a {unmapped[0]} format with no "
            f"nnlayout layout ({what})"
        )
        return None
    executed = _as_executed(g, formats, pd, implementation)  # type: ignore[arg-type]
    if executed is None:
        notes.append(f"oneDNN's {implementation} is not what its formats give when named ({what})")
        return None
    return ConvChoice(executed, implementation, pd.scratchpad_bytes)


def _data_format(md: MemoryDesc, asked: int) -> Format | None:
    """The data format of `md`: the one asked for where several name it (a one-pixel image,
    whose nchw and nhwc are the same bytes), else the first."""
    found = identify_all(md, "data")
    return next((f for f in found if f.value == asked), found[0] if found else None)


def _as_executed(
    g: ConvGeometry,
    formats: tuple[Format, Format, Format],
    pd: b.PrimitiveDesc,
    implementation: str,
) -> tuple[Format, Format, Format] | None:
    """The weight format to name so that the primitive rebuilt from explicit tags (as it is
    run) is the one oneDNN chose: where several tags describe the same weights (1x1
    kernels), oneDNN recognises only some of them (Oihw16o gave ref:any, Ohwi16o
    brgconv_1x1), so each spelling is tried. None when no spelling gives it back (a
    brgconv with a plain destination and a post-op came back as ref:any)."""
    for weights in identify_all(pd.md(b.dnnl_query_weights_md), g.weights_role):
        try:
            rebuilt = conv_pd(g, formats[0].value, weights.value, formats[2].value)
        except DnnlError:
            continue
        if rebuilt.implementation == implementation:
            return formats[0], weights, formats[2]
    return None


def _conv_accepts(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target, padding: bool) -> str | None:
    """Refuses when oneDNN has only its reference implementation (or formats we cannot
    name); oneDNN pads channels itself, so `padding` does not matter."""
    if not _is_f32(op):
        return _NOT_F32
    options = OneDNNOptions.of(target)
    choice = conv_choice(conv_geometry(op), options.data_format, options.preferred_implementations)
    if isinstance(choice, str):
        return choice
    if _drops_nan(op, choice.implementation):
        return f"oneDNN's {choice.implementation} applies its sigmoid post-op without NaN"
    return None


def _drops_nan(op: Operation, implementation: str) -> bool:
    """Found by fuzzing: the gemm-based convolutions' logistic post-op drops NaN (which
    `nnan` promises away)."""
    return (
        isinstance(op, nn.FusedConv2dOp)
        and op.activation is not None
        and op.nnan is None
        and op.activation.data == "sigmoid"
        and "gemm" in implementation
    )


def _chosen(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> ConvChoice:
    options = OneDNNOptions.of(target)
    choice = conv_choice(conv_geometry(op), options.data_format, options.preferred_implementations)
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN convolution: {choice}")
    return choice


def _conv_layouts(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> Layouts:
    """oneDNN's formats; a fused addend is the destination's starting contents."""
    src, weights, dst = (f.kernel_layout for f in _chosen(op, target).formats)
    operands = (src, weights) + ((PLAIN_LAYOUT,) if op.bias is not None else ())
    if isinstance(op, nn.FusedConv2dOp) and op.addend is not None:
        operands += (dst,)
    return operands, (dst,)


def _conv_workspace(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> int:
    """The scratchpad of the chosen primitive, or of its finite variant if larger."""
    choice = _chosen(op, target)
    finite = _finite_variant(op, tuple(f.value for f in choice.formats), choice.implementation)
    return max(choice.scratchpad, 0 if finite is None else finite[1])


def _finite_variant(
    op: nn.Conv2dOp | nn.FusedConv2dOp, tags: tuple[int, ...], implementation: str
) -> tuple[ConvGeometry, int] | None:
    """`op`'s geometry with its epilogue's `finite_post_ops`, and that primitive's scratchpad
    bytes, when it has them and oneDNN runs them on format `tags` with the same
    `implementation` as the exact post-ops (so the guard changes the epilogue only)."""
    g = _finite_geometry(op)
    if g is None:
        return None
    name, scratchpad = _remembered(("conv", g, tags), lambda: conv_pd(g, *tags))
    return (g, scratchpad) if name == implementation else None


def _finite_geometry(op: nn.Conv2dOp | nn.FusedConv2dOp) -> ConvGeometry | None:
    finite = fused_epilogue(op).finite_post_ops if isinstance(op, nn.FusedConv2dOp) else None
    return None if finite is None else replace(conv_geometry(op), post_ops=finite)


def _conv_variants(
    op: nn.Conv2dOp | nn.FusedConv2dOp,
) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """The convolution's primitive, its finite variant (None without one, or when oneDNN
    would run it with another implementation) and the execution arguments of its inputs.
    Where a finite variant runs, the exact primitive serves only calls whose operands are
    not finite, so it is created when first needed."""
    g = conv_geometry(op)
    tags = (
        _format(op.input, "data").value,
        _format(op.weight, g.weights_role, g.weights).value,
        _format(op.output, "data").value,
    )
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if g.bias else ())
    compiled = p.get_compiled(
        ("conv", g, tags), lambda: conv_pd(g, *tags), (*args, b.DNNL_ARG_DST), eager=False
    )
    if compiled.pd.implementation.startswith("ref"):
        # The weight format was oneDNN's choice where it ran with another thread count (a
        # brgconv blocks its weights by 16 or 24 depending on it): the activations' formats
        # are planned, the weights' are free, so let oneDNN choose them again; the executor
        # reorders the weights (`_weights_repacker`).
        free = (tags[0], ANY, tags[2])
        repacked = p.get_compiled(
            ("conv", g, free), lambda: conv_pd(g, *free), (*args, b.DNNL_ARG_DST), eager=False
        )
        if not repacked.pd.implementation.startswith("ref"):
            compiled, tags = repacked, free
    finite, finite_g = None, _finite_geometry(op)
    if finite_g is not None:
        candidate = p.get_compiled(
            ("conv", finite_g, tags),
            lambda: conv_pd(finite_g, *tags),
            (*args, b.DNNL_ARG_DST),
            eager=False,
        )
        if candidate.pd.implementation == compiled.pd.implementation and _weights_md(
            candidate
        ) == _weights_md(compiled):
            finite = candidate
    (compiled if finite is None else finite).primitive  # noqa: B018 (created now)
    return compiled, finite, args


# ------------------------------------------------------- transposed convolution
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


def _deconv_accepts(op: nn.ConvTranspose2dOp, target: Target, padding: bool) -> str | None:
    if not _is_f32(op):
        return _NOT_F32
    choice = deconv_choice(deconv_geometry(op), OneDNNOptions.of(target).data_format)
    return choice if isinstance(choice, str) else None


def _deconv_chosen(op: nn.ConvTranspose2dOp, target: Target) -> tuple[Format, str, int]:
    choice = deconv_choice(deconv_geometry(op), OneDNNOptions.of(target).data_format)
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN transposed convolution: {choice}")
    return choice


def _deconv_layouts(op: nn.ConvTranspose2dOp, target: Target) -> Layouts:
    data = _deconv_chosen(op, target)[0].kernel_layout
    return (data, PLAIN_LAYOUT) + ((PLAIN_LAYOUT,) if op.bias is not None else ()), (data,)


def _deconv_compiled(op: nn.ConvTranspose2dOp) -> tuple[Compiled, tuple[int, ...]]:
    g = deconv_geometry(op)
    tag = _format(op.input, "data").value
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if g.bias else ())
    compiled = p.get_compiled(
        ("deconv", g, tag), lambda: deconv_pd(g, tag), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args


def _weights_md(compiled: Compiled) -> MemoryDesc:
    return compiled.pd.md(b.dnnl_query_weights_md)


def _weights_repacker(
    op: Operation, compiled: Compiled
) -> Callable[[np.ndarray], np.ndarray] | None:
    """How `op`'s weights, as its operand holds them, become the ones `compiled` runs on;
    None where they already are. A transposed convolution's are ours, (i, o, h, w), packed
    by oneDNN's choice; a convolution's are in the format its type records, which oneDNN
    may have chosen anew at load (`_conv_variants`)."""
    if isinstance(op, nn.ConvTranspose2dOp):
        g = deconv_geometry(op)
        given = MemoryDesc.with_tag(g.weights, g.plain_weights)
    elif isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp):
        g = conv_geometry(op)
        weights = _format(op.weight, g.weights_role, g.weights)
        given = MemoryDesc.with_tag(g.weights, weights.value)
    else:
        return None
    wanted = _weights_md(compiled)
    if given == wanted:
        return None
    reorder = Compiled(p.reorder_pd(given, wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))

    def repack(weights: np.ndarray) -> np.ndarray:
        packed = np.empty(wanted.size // 4, dtype=np.float32)
        reorder(
            {
                b.DNNL_ARG_SRC: np.ascontiguousarray(weights, dtype=np.float32).ravel(),
                b.DNNL_ARG_DST: packed,
            },
            np.empty(reorder.scratchpad_bytes, np.uint8),
        )
        return packed

    return repack


# -------------------------------------------------------------- matrix multiply
# How a gemm's constant b read transposed is stored (`_gemm_b_layout`): (N, K) as K x N.
_TRANSPOSED_MATRIX = "IO"


def _gemm_b_layout(op: nn.GemmOp) -> str:
    """Plain, but a constant b that is read transposed (trans_b: how ONNX's Gemm holds a
    dense layer's weights) is stored transposed at compile time, so that oneDNN's matmul
    reads K x N rows instead of going through swapped strides: 0.113 against 0.276 ms for
    ResNet-50's 2048 -> 1000 classifier at 1 thread. A b computed at run time keeps its
    strides (transposing it would cost more than the strides do)."""
    constant = isinstance(op.b.owner, nn.ConstantOp)
    return _TRANSPOSED_MATRIX if op.trans_b is not None and constant else PLAIN_LAYOUT


def _gemm_layouts(op: nn.GemmOp, target: Target) -> Layouts:
    operands = (PLAIN_LAYOUT, _gemm_b_layout(op)) + ((PLAIN_LAYOUT,) if op.c is not None else ())
    return operands, (PLAIN_LAYOUT,)


def _gemm_types_reason(op: nn.GemmOp) -> str | None:
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


def _deconv_types_reason(op: nn.ConvTranspose2dOp) -> str | None:
    """The primitive reads the weights and bias plain, and writes the result in the
    input's format."""
    data = (encoding_name(op.input.type),)
    return layouts_refusal(op, [data, *[(PLAIN_LAYOUT,)] * (len(op.operands) - 1)], [data])


def _addend_types_reason(op: nn.FusedConv2dOp) -> str | None:
    """The sum post-op adds what the destination holds: the addend, in the result's layout
    (`_format` and the buffer sizes check the other operands when the kernel is bound)."""
    addend, result = encoding_name(op.addend.type), encoding_name(op.output.type)
    if addend != result:
        return (
            f"the addend is {addend or 'plain'} but the result {result or 'plain'}; the "
            "kernel adds it in the result's layout"
        )
    return None


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
# determines them (op kind, shapes, attributes, format).
_CHOICES: dict[tuple[object, ...], tuple[str, int]] = {}


def _remembered(key: tuple[object, ...], build: Callable[[], b.PrimitiveDesc]) -> tuple[str, int]:
    """The implementation of the primitive `build` describes and its scratchpad bytes,
    remembered by `key`; ("none (why)", 0) when oneDNN has none."""
    if key not in _CHOICES:
        try:
            pd = build()
            _CHOICES[key] = (pd.implementation, pd.scratchpad_bytes)
        except DnnlError as error:
            _CHOICES[key] = (f"none ({error})", 0)
    return _CHOICES[key]


def forget_choices() -> None:
    """Forgets oneDNN's choices and the primitives created in this process, as a new process
    would start (they depend on its thread count, which may have changed)."""
    conv_choice.cache_clear()
    deconv_choice.cache_clear()
    _CHOICES.clear()
    p.clear_cache()


def _gemm_choice(op: nn.GemmOp, layout: str | None = None) -> tuple[str, int]:
    """oneDNN's implementation of the gemm and its scratchpad bytes, b stored in `layout`
    (default: as the kernel asks, `_gemm_b_layout`)."""
    layout = _gemm_b_layout(op) if layout is None else layout
    return _remembered((_op_key(op), "matmul", layout), lambda: _gemm_pd(op, layout))


def _gemm_workspace(op: nn.GemmOp, target: Target) -> int:
    """The scratchpad bytes of the matmul as it runs: on b stored as the kernel asks, or
    plain where no pass stored it so (`select-dispatch` alone; `_gemm_compiled` reads the
    operand's encoding), whose swapped strides take a larger scratchpad (b repacked)."""
    return max(_gemm_choice(op, layout)[1] for layout in {_gemm_b_layout(op), PLAIN_LAYOUT})


def _gemm_accepts(op: nn.GemmOp, target: Target, padding: bool) -> str | None:
    """`_gemm_shape_reason`, then a fast implementation."""
    if (reason := _gemm_shape_reason(op)) is not None:
        return reason
    implementation, _ = _gemm_choice(op)
    return None if _is_fast(implementation) else f"oneDNN chose {implementation}"


def _gemm_shape_reason(op: nn.GemmOp) -> str | None:
    """op(a) @ op(b) + c with c a row (or absent): oneDNN's matmul adds a bias row and no
    scales are set on it."""
    if not _is_f32(op):
        return _NOT_F32
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


def _gemm_compiled(op: nn.GemmOp) -> tuple[Compiled, tuple[int, ...]]:
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if op.c is not None else ())
    layout = encoding_name(op.b.type)  # run inside nn.compute: b is stored by now
    compiled = p.get_compiled(
        ("gemm", _op_key(op), layout), lambda: _gemm_pd(op, layout), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args


# ---------------------------------------------------------------------- pooling
def _pool_padding_r(op: Operation) -> tuple[int, int]:
    """Bottom/right padding that fits all output windows: the explicit pads, or more where
    ceil_mode's last window overhangs them."""
    x, out = shape_of(op.operands[0]), shape_of(op.results[0])
    kernel, strides, pads, dilations = (
        ints(op.kernel),
        ints(op.strides),
        ints(op.pads),
        ints(op.dilations),
    )
    return tuple(  # type: ignore[return-value]
        max(
            pads[a + 2],
            (out[2 + a] - 1) * strides[a] + (kernel[a] - 1) * dilations[a] + 1 - x[2 + a] - pads[a],
        )
        for a in range(2)
    )


def _pool_pd(op: Operation, tag: int) -> b.PrimitiveDesc:
    x, out = shape_of(op.operands[0]), shape_of(op.results[0])
    if isinstance(op, nn.GlobalAvgPoolOp):
        return p.pooling_pd(
            b.dnnl_pooling_avg_include_padding,
            MemoryDesc.with_tag(x, tag),
            MemoryDesc.with_tag(out, tag),
            x[2:],
            (1, 1),
            (1, 1),
            (0, 0),
            (0, 0),
        )
    if isinstance(op, nn.MaxPool2dOp):
        algorithm = b.dnnl_pooling_max
    elif op.count_include_pad is not None:
        algorithm = b.dnnl_pooling_avg_include_padding
    else:
        algorithm = b.dnnl_pooling_avg_exclude_padding
    return p.pooling_pd(
        algorithm,
        MemoryDesc.with_tag(x, tag),
        MemoryDesc.with_tag(out, tag),
        ints(op.kernel),
        ints(op.strides),
        ints(op.dilations),
        ints(op.pads)[:2],
        _pool_padding_r(op),
    )


def _pool_reason(op: Operation) -> str | None:
    rank = len(shape_of(op.operands[0]))
    if rank != 4:
        return f"rank-{rank} input; oneDNN pooling here needs N, C, H, W"
    if (
        isinstance(op, nn.AvgPool2dOp)
        and op.count_include_pad is not None
        and (_pool_padding_r(op) != ints(op.pads)[2:])
    ):
        return "ceil_mode overhang with count_include_pad: oneDNN would count it in the divisor"
    return None


# ------------------------------------------------------------------ element-wise
# op type -> (algorithm, alpha, beta) of the oneDNN eltwise with the reference's semantics.
def _eltwise_params(op: Operation) -> tuple[int, float, float]:
    if isinstance(op, nn.LeakyReluOp):
        return b.dnnl_eltwise_relu, op.alpha.value.data, 0.0
    if isinstance(op, nn.ReluOp):
        return b.dnnl_eltwise_relu, 0.0, 0.0
    if isinstance(op, nn.ClipOp):
        return (b.dnnl_eltwise_clip_v2, *_clip_range(op))
    return _ELTWISE[type(op)]


def _clip_range(op: nn.ClipOp) -> tuple[float, float]:
    return (
        -math.inf if op.min is None else op.min.value.data,
        math.inf if op.max is None else op.max.value.data,
    )


def _finite_only(op: Operation) -> bool:
    """Whether oneDNN computes `op` as the reference does on finite inputs only: its relu and
    clip (also leaky_relu with alpha 0, as relu) are max/min in an operand order that turns
    NaN into a bound; its max pooling drops NaN and starts from the lowest float (a window
    of -inf gave -3.4e38). Such an op runs in numpy on a call whose input is not finite."""
    return isinstance(op, nn.ReluOp | nn.ClipOp | nn.MaxPool2dOp) or (
        isinstance(op, nn.LeakyReluOp) and op.alpha.value.data == 0
    )


_ELTWISE: dict[type[Operation], tuple[int, float, float]] = {
    nn.SigmoidOp: (b.dnnl_eltwise_logistic, 0.0, 0.0),
    nn.TanhOp: (b.dnnl_eltwise_tanh, 0.0, 0.0),
    nn.AbsOp: (b.dnnl_eltwise_abs, 0.0, 0.0),
    nn.SqrtOp: (b.dnnl_eltwise_sqrt, 0.0, 0.0),
    nn.NegOp: (b.dnnl_eltwise_linear, -1.0, -0.0),  # + 0.0 would turn -(+0.0) into +0.0
}
_BINARY: dict[type[Operation], int] = {
    nn.AddOp: b.dnnl_binary_add,
    nn.SubOp: b.dnnl_binary_sub,
    nn.MulOp: b.dnnl_binary_mul,
    nn.DivOp: b.dnnl_binary_div,
}


# -------------------------------------------------- ops in their operand's layout
def _any_pd(op: Operation, tag: int) -> b.PrimitiveDesc:
    """The primitive descriptor of a `"*"` op whose operands all have format `tag`."""
    if isinstance(op, nn.Pool2dOp | nn.GlobalAvgPoolOp):
        return _pool_pd(op, tag)
    md = [MemoryDesc.with_tag(shape_of(op.operands[i]), tag) for i in _data_operands(op)]
    out = MemoryDesc.with_tag(shape_of(op.results[0]), tag)
    if type(op) in _BINARY:
        first, second = _binary_order(op)
        return p.binary_pd(_BINARY[type(op)], md[first], md[second], out)
    if isinstance(op, nn.BatchNormOp):
        return p.batch_norm_pd(md[0], out, op.epsilon.value.data)
    if isinstance(op, nn.ConcatOp):
        return p.concat_pd(out, op.normalized_axis, md)
    algorithm, alpha, beta = _eltwise_params(op)
    return p.eltwise_pd(algorithm, md[0], out, alpha, beta)


def _data_operands(op: Operation) -> range:
    """The operands a `"*"` op reads in its format: all but a batch norm's vectors."""
    return range(1 if isinstance(op, nn.BatchNormOp) else len(op.operands))


def _any_types_reason(op: Operation) -> str | None:
    """`_any_shape_reason`; the primitive reads every data operand, and writes the result,
    in operand 0's format."""
    return _any_shape_reason(op) or one_layout_refusal(op, _data_operands(op))


def _any_args(op: Operation) -> tuple[int, ...]:
    """oneDNN's execution argument for each operand."""
    if isinstance(op, nn.BatchNormOp):
        return (
            b.DNNL_ARG_SRC,
            b.DNNL_ARG_SCALE,
            b.DNNL_ARG_SHIFT,
            b.DNNL_ARG_MEAN,
            b.DNNL_ARG_VARIANCE,
        )
    if isinstance(op, nn.ConcatOp):
        return tuple(b.DNNL_ARG_MULTIPLE_SRC + i for i in range(len(op.operands)))
    if type(op) in _BINARY:
        first, _ = _binary_order(op)
        return (
            (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1) if first == 0 else (b.DNNL_ARG_SRC_1, b.DNNL_ARG_SRC)
        )
    return (b.DNNL_ARG_SRC,)


def _op_key(op: Operation) -> tuple[object, ...]:
    """What determines an op's primitive besides its format: kind, shapes, attributes."""
    properties = tuple(sorted((k, str(v)) for k, v in op.properties.items()))
    return (op.name, tuple(shape_of(v) for v in (*op.operands, *op.results)), properties)


def _any_choice(op: Operation, tag: int) -> tuple[str, int]:
    """oneDNN's implementation of `op` on data of format `tag` and its scratchpad bytes."""
    return _remembered((_op_key(op), tag), lambda: _any_pd(op, tag))


def _is_fast(implementation: str) -> bool:
    """Not oneDNN's reference code, alone or inside another (conv:any+ref:any)."""
    return not any(part.startswith(("ref", "none")) for part in implementation.split("+"))


def _any_reason(op: Operation, fmt: Format | None, layout: str) -> str | None:
    """Why `op` cannot run in `layout` (None when oneDNN has a fast implementation)."""
    if fmt is None:
        return f"layout '{layout}' has no oneDNN format"
    implementation, _ = _any_choice(op, fmt.value)
    if not _is_fast(implementation):
        return f"oneDNN chose {implementation} for {fmt.tag} data"
    return None


def _any_workspace(op: Operation, target: Target) -> int:
    """The largest scratchpad among the data formats the op may arrive in (its layout is
    only known after propagate-layouts), so that a planner's buffer always suffices."""
    choices = [_any_choice(op, f.value) for f in FORMATS if f.role == "data"]
    return max((scratchpad for name, scratchpad in choices if _is_fast(name)), default=0)


def _any_accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """Shape rules, then a fast implementation for operand 0's data as it is: plain nchw
    (where dispatch leaves the op until propagate-layouts offers another layout), or a
    layout hand-written IR already gives it (NCHW4c2c has no oneDNN format: running the
    kernel was an internal error)."""
    layout = encoding_name(op.operands[0].type)
    return _any_shape_reason(op) or _any_reason(op, by_layout("data", layout), layout or "NCHW")


def _any_shape_reason(op: Operation) -> str | None:
    """Why oneDNN's primitive would not compute `op` as the reference does (None when it
    does): element type, rank, pooling geometry, broadcasting."""
    if not _is_f32(op):
        return _NOT_F32
    if isinstance(op, nn.Pool2dOp | nn.GlobalAvgPoolOp):
        return _pool_reason(op)
    if len(shape_of(op.results[0])) != 4:  # our formats name 4-D data only
        return "not rank 4; the oneDNN kernel needs N, C, H, W"
    if type(op) in _BINARY:
        return _binary_reason(op)
    return None


def _any_accepts_layout(op: Operation, spec: LayoutSpec) -> str | None:
    return _any_reason(op, by_layout("data", spec.text), spec.text)


def _binary_reason(op: Operation) -> str | None:
    """Operands that broadcast as `broadcast_reason` says, and that oneDNN's binary takes:
    only its second source broadcasts, so a broadcast first operand is swapped to second
    where the op commutes (torchvision's squeeze-and-excitation computes scale * x)."""
    if (reason := broadcast_reason(op)) is not None:
        return reason
    full = full_operand(op)
    if full is None:
        return "no operand has the result's shape (oneDNN broadcasts its second source only)"
    if full != 0 and not isinstance(op, nn.AddOp | nn.MulOp):
        return (
            f"operand 0 broadcasts, and oneDNN broadcasts only its second source, which "
            f"{op.name} does not let us swap"
        )
    return None


def _binary_order(op: Operation) -> tuple[int, int]:
    """Which operands are oneDNN's first and second sources (see `_binary_reason`): the one
    of the result's shape first."""
    return (0, 1) if full_operand(op) == 0 else (1, 0)


def _any_layouts(op: Operation, target: Target) -> Layouts:
    """Operand 0 and the result in any layout; batch norm's vectors plain."""
    if isinstance(op, nn.BatchNormOp):
        return (ANY_LAYOUT,) + (PLAIN_LAYOUT,) * 4, (ANY_LAYOUT,)
    return (ANY_LAYOUT,) * len(op.operands), (ANY_LAYOUT,)


def _any_compiled(op: Operation) -> tuple[Compiled, tuple[int, ...]]:
    tag = _format(op.operands[0], "data").value
    args = _any_args(op)
    compiled = p.get_compiled(
        ("any", _op_key(op), tag), lambda: _any_pd(op, tag), (*args, b.DNNL_ARG_DST)
    )
    return compiled, args


# --------------------------------------------------------------------- execution
def _compiled(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`op`'s primitive, its finite variant (see `Epilogue`) if any, and the execution
    arguments of its inputs."""
    if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp):
        return _conv_variants(op)
    build = (
        _deconv_compiled
        if isinstance(op, nn.ConvTranspose2dOp)
        else _gemm_compiled
        if isinstance(op, nn.GemmOp)
        else _any_compiled
    )
    compiled, args = build(op)
    return compiled, None, args


# Below this bound on every partial sum, a convolution in float32 cannot overflow (room is
# left for rounding in its sums and in the norms that bound them).
_FINITE_LIMIT = float(np.finfo(np.float32).max) / 16


def _norm(x: np.ndarray) -> float:
    """An upper bound on the Euclidean norm of `x`, from one BLAS pass (its float32 sum of
    squares, raised by that sum's largest rounding error): inf or NaN when `x` holds an
    infinity or NaN (or its square sum overflows, past 1.8e19)."""
    flat = x.reshape(-1)
    return math.sqrt(float(np.dot(flat, flat)) * (1 + flat.size * 2.0**-23))


def _largest_magnitude(x: np.ndarray) -> float:
    return float(np.max(np.abs(x)))  # NaN if any is


def _smallest(x: np.ndarray) -> float:
    return float(np.min(x))  # NaN if any is


def conv_norm_factors(op: nn.Conv2dOp | nn.FusedConv2dOp) -> tuple[float, float]:
    """sqrt(kh kw) and sqrt(positions) of a convolution (see `_conv_bounds`)."""
    n, _, h, w = shape_of(op.output)
    return math.sqrt(math.prod(shape_of(op.weight)[2:])), math.sqrt(n * h * w)


def _conv_bounds(
    factors: tuple[float, float], source: float, summand: float, weights: float, bias: float
) -> tuple[float, float]:
    """Bounds on a convolution whose source, addend, weights and bias have Euclidean norms
    of at most `source`, `summand`, `weights` and `bias`: on every partial sum of an output
    element, and on the norm of the result before its activation; (inf, inf) when it may
    overflow (or an operand is not finite). A partial sum is a sum of weight * input
    products over part of a window, plus bias and addend elements, so by Cauchy-Schwarz it
    is at most |weights| |source| + |bias| + |addend|; each input element is in at most
    kh * kw windows per output channel, so the result's norm is at most sqrt(kh kw)
    |weights| |source| + sqrt(positions) |bias| + |addend| (`factors` holds those two
    square roots)."""
    element = weights * source + bias + summand
    if not (source + summand < _FINITE_LIMIT and element < _FINITE_LIMIT):
        return math.inf, math.inf
    window, positions = factors
    return element, window * weights * source + positions * bias + summand


def _bound_after(op: Operation | None, size: int) -> Callable[[float], float]:
    """The bound on the norm of `op`'s result (an element-wise activation on `size`
    elements; None: no activation) from one on its finite operand's; inf when unknown."""
    if (
        op is None
        or isinstance(op, nn.ReluOp)
        or (isinstance(op, nn.LeakyReluOp) and op.alpha.value.data == 0)
    ):
        return lambda norm: norm  # |f(x)| <= |x|
    if isinstance(op, nn.ClipOp):
        low, high = _clip_range(op)
        largest = math.sqrt(size) * max(abs(low), abs(high))
        if low <= 0 <= high:
            return lambda norm: min(norm, largest)
        return lambda norm: largest
    if isinstance(op, nn.SigmoidOp | nn.TanhOp):
        return lambda norm: math.sqrt(size)
    if isinstance(op, nn.Pool2dOp):
        # A window's max, and its sum (so every partial sum of its average), is at most
        # sqrt(window) times its norm; each element is in at most `window` windows.
        window = math.sqrt(math.prod(ints(op.kernel)))
        return lambda norm: window * norm
    if isinstance(op, nn.GlobalAvgPoolOp):  # the same, with the whole plane as the window
        plane = math.sqrt(math.prod(shape_of(op.operands[0])[2:]))
        return lambda norm: plane * norm
    return lambda norm: math.inf


def _batch_norm_bound(op: nn.BatchNormOp) -> Callable[[float, float, float, float, float], float]:
    """The bound on the result of inference batch norm, a (x - mean) + shift with
    a = scale / sqrt(variance + epsilon) per channel, and on every intermediate however
    oneDNN orders it (x - mean, a x, a mean, ...), from the norm of its finite source and
    its vectors' (largest |scale|, smallest variance, norms of mean and shift); inf when
    it may overflow. A vector's norm over the whole tensor is sqrt(N H W) times its own."""
    shape = shape_of(op.operands[0])
    positions = math.sqrt(shape[0] * math.prod(shape[2:]))
    epsilon = op.epsilon.value.data

    def bound(
        source: float, scale_max: float, variance_min: float, mean_norm: float, shift_norm: float
    ) -> float:
        denominator = variance_min + epsilon
        factor = scale_max / math.sqrt(denominator) if denominator > 0 else math.inf
        if not factor < _FINITE_LIMIT:  # also NaN
            return math.inf
        return max(1.0, factor) * (source + positions * mean_norm) + positions * shift_norm

    return bound


class NormBound:
    """A bound on the Euclidean norm of the value a kernel wrote on its last call; inf when
    none is known (the value may then hold NaN or an infinity). The kernels reading that
    value next (found by `last_writers`) use it instead of a pass over their operand, so a
    chain of guarded convolutions measures its input once: the bound grows with each layer's
    weights until it is too large to be of use, and the next guard measures again. A kernel
    whose result is one part of a value read whole (a concat built in place) is asked to
    `measure` it: the whole's bound is then the exact norm of its parts, which does not
    compound through a dense block whose every layer reads all the parts before it. A
    reader trusts the bound only for the bytes it was about (`where`: address and size of
    the array written): a kernel called on arrays of the caller's choosing measures them or
    takes no bound."""

    __slots__ = ("measure", "value", "where")

    def __init__(self) -> None:
        self.value = math.inf
        self.measure = False
        self.where: Extent | None = None


Extent = tuple[int, int]  # a C-contiguous array's address and size in bytes


def _extent(x: np.ndarray) -> Extent:
    return x.ctypes.data, x.nbytes


def _linked(op: Operation) -> tuple[dict[int, list[NormBound]], NormBound]:
    """The bounds of the values `op` reads as source and addend, where the kernels that
    wrote them (one, or each part of a concat built in place) are oneDNN kernels prepared
    earlier in the same binding session (`PREPARED_IN_SESSION`) whose results nothing
    overwrote since, and the bound `op`'s kernel is to keep on its own result."""
    written, linked = NormBound(), {}
    found, session = operands_outside(op), PREPARED_IN_SESSION.get()
    if found is None or session is None:
        return linked, written
    compute, outside = found
    session[compute] = written
    reads = {b.DNNL_ARG_SRC: op.operands[0]}
    if isinstance(op, nn.FusedConv2dOp) and op.addend is not None:
        reads[b.DNNL_ARG_DST] = op.addend
    for arg, value in reads.items():
        bounds = [session.get(writer) for writer in last_writers(compute, outside[value]) or ()]
        if bounds and all(isinstance(bound, NormBound) for bound in bounds):
            linked[arg] = bounds
            for bound in bounds if len(bounds) > 1 else ():
                bound.measure = True
    return linked, written


def _constant_args(op: Operation, args: Sequence[int]) -> set[int]:
    """The execution arguments of `op`'s operands that are load-time constants: inputs of
    its nn.compute given as tensors, not buffers (the same read-only array on every call)."""
    found = operands_outside(op)
    if found is None:
        return set()
    return {
        arg
        for arg, value in zip(args, op.operands, strict=False)
        if isinstance(found[1][value].type, TensorType)
    }


class Executor(NamedTuple):
    """An op's kernel run as `run_into(inputs, out, scratchpad)`, and `on(inputs, out,
    scratchpad)`: the same bound to those very arrays, a call without arguments (see
    `executor`)."""

    run_into: Callable[[Sequence[np.ndarray], np.ndarray, np.ndarray | None], None]
    on: Callable[[Sequence[np.ndarray], np.ndarray, np.ndarray | None], FixedCall]


def _bound_reader(parts: Sequence[NormBound] | None) -> Callable[[np.ndarray, Extent], float]:
    """How a kernel bounds the norm of an operand `x` occupying `extent`: by the bounds its
    writers kept (`parts`: the root of their squares' sum when several kernels wrote it) if
    they wrote exactly those bytes on their last calls, else inf. A guard that cannot use
    the bound measures `x` (`_measured`)."""
    if parts is None:
        return lambda x, extent: math.inf
    if len(parts) == 1:
        [part] = parts
        return lambda x, extent: part.value if part.where == extent else math.inf
    tiled: list[object] = [None]  # the parts' extents last seen to tile an operand's

    def several(x: np.ndarray, extent: Extent) -> float:
        wheres = (extent, *(part.where for part in parts))
        if wheres != tiled[0]:
            end = extent[0]
            for where in sorted(w for w in wheres[1:] if w is not None):
                end = end + where[1] if where[0] == end else -1
            tiled[0] = wheres if None not in wheres and end == sum(extent) else None
        return math.hypot(*(part.value for part in parts)) if tiled[0] is not None else (math.inf)

    return several


def _measured(bound: float, x: np.ndarray, fits: Callable[[float], bool]) -> float:
    """`bound` where the guard `fits` can use it, else the norm of `x` itself: the writers'
    bounds compound layer by layer (each conv multiplies its source's by its weights'), so
    deep in a network they overflow, or only just fit, long before the values do (in
    ResNet-50, 8 convolutions a run ran their exact epilogue and its global average pooling
    ran in numpy until their sources were measured)."""
    return bound if fits(bound) else _norm(x)


def executor(
    op: Operation,
    compiled: Compiled,
    args: tuple[int, ...],
    finite: Compiled | None = None,
    linked: Mapping[int, Sequence[NormBound]] | None = None,
    written: NormBound | None = None,
    constants: Collection[int] = (),
) -> Executor:
    """`op` run by `compiled` as `(inputs, out, scratchpad)`, with what depends on the op
    alone (its kind, result padding, epilogue) decided now, and what depends on its arrays
    decided once per arrays (a *plan*, made on each call of `run_into`, once by `on`): a
    generated module's op, bound to the arena views it is given on every run, then pays per
    call only for its bounds and the primitive's execution.
    With a `finite` variant (a cheaper epilogue, see `Epilogue`), each call whose operands
    `_conv_bounds` bounds runs that instead. Norm bounds of operands come from `linked` (by
    execution argument: the bounds of the parts its writers wrote) where known; the bound
    of the result is kept in `written`. What is derived from `constants` (the arguments
    that are load-time constants, the same array on every call: norms, packed weights) is
    derived once."""
    written = NormBound() if written is None else written
    implementation = compiled.pd.implementation
    if not _is_fast(implementation):
        return _reference_executor(
            op,
            f"oneDNN offers only {implementation} here for the formats this program was "
            "compiled with (for another CPU?); nnlayout's reference kernel runs it instead: "
            "compile on this machine for oneDNN's fast kernels",
            written,
        )
    if _drops_nan(op, implementation):
        return _reference_executor(
            op,
            f"oneDNN picks {implementation} here for the formats this program was "
            "compiled with, and its sigmoid post-op drops NaN; nnlayout's reference kernel "
            "runs it instead",
            written,
        )
    addend = isinstance(op, nn.FusedConv2dOp) and op.addend is not None
    conv = isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp)
    # oneDNN skips the taps that fall in a convolution's zero padding, where the reference
    # multiplies: a weight that is NaN or infinite makes NaN there.
    pads_multiply = conv and any(ints(op.pads))  # type: ignore[union-attr]
    factors = conv_norm_factors(op) if conv else (0.0, 0.0)  # type: ignore[arg-type]
    batch_norm = _batch_norm_bound(op) if isinstance(op, nn.BatchNormOp) else None
    if isinstance(op, nn.BatchNormOp):
        epsilon = np.float32(op.epsilon.value.data)  # added in float32, as the reference does

        def divides_by_zero(variance: np.ndarray) -> bool:
            return bool(np.any(variance + epsilon == 0))

    repack = _weights_repacker(op, compiled)
    finite_only = _finite_only(op)
    # oneDNN's global average pooling sums in float32, the reference in float64: a plane whose
    # float32 sum overflows (3e38 x 16) gave inf for a finite mean. Such calls run in numpy.
    averages = isinstance(op, nn.GlobalAvgPoolOp)
    numpy_kernel = (
        max_pool2d_any if isinstance(op, nn.MaxPool2dOp) else REFERENCE_KERNELS.get(type(op))
    )
    padded, shape = _padded_layout(op.results[0].type), shape_of(op.results[0])
    fused_activation = op.activation_op() if isinstance(op, nn.FusedConv2dOp) else None
    activation = (
        fused_activation
        if isinstance(op, nn.FusedConv2dOp) and fused_epilogue(op).numpy_activation
        else None
    )
    spec = layout_of(op.results[0].type)
    size = math.prod(shape if spec is None else spec.physical_shape(shape))
    bound_after = _bound_after(fused_activation if conv else op, size)
    known = {} if linked is None else linked
    read_source = _bound_reader(known.get(b.DNNL_ARG_SRC))
    read_summand = _bound_reader(known.get(b.DNNL_ARG_DST))
    variants = [compiled] if finite is None else [compiled, finite]
    derived: dict[tuple[int, str], tuple[np.ndarray, Any]] = {}

    def once(arg: int, what: str, x: np.ndarray, derive: Callable[[np.ndarray], Any]) -> Any:
        """derive(x), computed once per array if the operand is a load-time constant (kept
        per argument and `what`: packed weights and their norm are two)."""
        if arg not in constants:
            return derive(x)
        if (seen := derived.get((arg, what))) is None or seen[0] is not x:
            seen = derived[arg, what] = (x, derive(x))
        return seen[1]

    def finish(out: np.ndarray, where: Extent, result: float) -> None:
        if padded is not None:
            padded.zero_padding(out, shape)
        if written.measure:
            result = _norm(out)
        # A bound past the limit is of no use to a guard, and may not bound what overflowed.
        written.value = result if result < _FINITE_LIMIT else math.inf
        written.where = where

    # The plan whose arrays the variants' memory objects point at now.
    owner: list[object] = [None]

    def plan(
        inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> tuple[FixedCall, bool]:
        """The op on these arrays, and whether that call may run again on new contents of
        them (it may not where an operand had to be copied to suit oneDNN)."""
        *sources, summand = inputs if addend else (*inputs, None)
        passed = (
            sources
            if repack is None
            else [sources[0], once(b.DNNL_ARG_WEIGHTS, "packed", sources[1], repack), *sources[2:]]
        )
        arrays = {
            arg: np.ascontiguousarray(x, dtype=np.float32)
            for arg, x in zip(args, passed, strict=True)
        }
        reusable = scratchpad is not None and all(  # constants never change
            arrays[arg] is x or arg in constants for arg, x in zip(args, sources, strict=True)
        )
        arrays[b.DNNL_ARG_DST] = out
        # oneDNN's sum post-op adds what dst holds: the addend, copied there unless in place.
        copied = (
            None
            if summand is None or summand.ctypes.data == out.ctypes.data
            else (out.reshape(summand.shape), summand)
        )
        source = arrays.get(b.DNNL_ARG_SRC)
        source_at = None if source is None else _extent(source)
        summand_at = None if summand is None else _extent(np.ascontiguousarray(summand))
        out_at = _extent(out)
        token = object()

        def point() -> None:
            for variant in variants:
                variant.point(arrays, scratchpad)
            owner[0] = token

        if conv:
            weights, bias = arrays[b.DNNL_ARG_WEIGHTS], arrays.get(b.DNNL_ARG_BIAS)
            weights_norm = (
                once(b.DNNL_ARG_WEIGHTS, "norm", weights, _norm)
                if b.DNNL_ARG_WEIGHTS in constants
                else None
            )
            bias_norm = (
                0.0
                if bias is None
                else (
                    once(b.DNNL_ARG_BIAS, "norm", bias, _norm)
                    if b.DNNL_ARG_BIAS in constants
                    else None
                )
            )
            run_finite = None if finite is None else finite.runner()
            run_exact = compiled.runner()

            def measured_operands() -> tuple[float, float]:
                return _norm(source), _norm(out) if addend else 0.0  # type: ignore[arg-type]

            def call() -> None:
                if owner[0] is not token:
                    point()
                norm = _norm(weights) if weights_norm is None else weights_norm
                if pads_multiply and not math.isfinite(norm):
                    out[...] = _reference_result(op, inputs).reshape(out.shape)
                    finish(out, out_at, math.inf)
                    return
                if copied is not None:
                    copied[0][...] = copied[1]
                bias_bound = _norm(bias) if bias_norm is None else bias_norm
                operands = (
                    read_source(source, source_at),
                    read_summand(out, summand_at) if addend else 0.0,
                )
                # The guard measures what its writers' bounds do not vouch for: none known,
                # or ones that compounded past what the sums may reach (`_measured`).
                measure = run_finite is not None
                if measure and not max(operands) < _FINITE_LIMIT:
                    operands, measure = measured_operands(), False
                element, before = _conv_bounds(factors, *operands, norm, bias_bound)
                if measure and not element < _FINITE_LIMIT:
                    element, before = _conv_bounds(factors, *measured_operands(), norm, bias_bound)
                if run_finite is not None and element < _FINITE_LIMIT:
                    run_finite()
                else:
                    run_exact()
                    if activation is not None:
                        out[...] = REFERENCE_KERNELS[type(activation)](activation, [out])
                finish(out, out_at, bound_after(before) if before < math.inf else math.inf)

        elif finite_only or averages:
            run = compiled.runner()
            fits: Callable[[float], bool] = (
                (lambda bound: bound_after(bound) < _FINITE_LIMIT) if averages else math.isfinite
            )

            def call() -> None:
                if owner[0] is not token:
                    point()
                bound = _measured(
                    read_source(source, source_at),
                    source,  # type: ignore[arg-type]
                    fits,
                )
                if fits(bound):
                    run()
                    finish(out, out_at, bound_after(bound))
                else:
                    out[...] = (
                        _reference_result(op, sources).reshape(out.shape)
                        if averages
                        else numpy_kernel(op, sources)
                    )
                    finish(out, out_at, math.inf)

        else:
            run = compiled.runner()
            after = (
                bound_after
                if batch_norm is None
                else (
                    lambda bound: batch_norm(
                        bound,
                        once(
                            b.DNNL_ARG_SCALE,
                            "largest",
                            arrays[b.DNNL_ARG_SCALE],
                            _largest_magnitude,
                        ),
                        once(
                            b.DNNL_ARG_VARIANCE, "smallest", arrays[b.DNNL_ARG_VARIANCE], _smallest
                        ),
                        once(b.DNNL_ARG_MEAN, "norm", arrays[b.DNNL_ARG_MEAN], _norm),
                        once(b.DNNL_ARG_SHIFT, "norm", arrays[b.DNNL_ARG_SHIFT], _norm),
                    )
                )
            )

            def call() -> None:
                if owner[0] is not token:
                    point()
                if batch_norm is not None and once(
                    b.DNNL_ARG_VARIANCE, "zero", arrays[b.DNNL_ARG_VARIANCE], divides_by_zero
                ):
                    # oneDNN's (x - mean) / 0 is +-inf where the reference's
                    # x * inf + (shift - mean * inf) is NaN, as onnxruntime's
                    out[...] = _reference_result(op, sources).reshape(out.shape)
                    finish(out, out_at, math.inf)
                    return
                # Before the kernel: it may run in place.
                bound = math.inf if source is None else read_source(source, source_at)
                run()
                finish(out, out_at, after(bound) if bound < _FINITE_LIMIT else math.inf)

        return call, reusable

    def run_into(
        inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> None:
        plan(inputs, out, scratchpad)[0]()

    def on(
        inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> FixedCall:
        call, reusable = plan(inputs, out, scratchpad)
        return call if reusable else partial(run_into, inputs, out, scratchpad)

    return Executor(run_into, on)


def _reference_result(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """`op`'s reference kernel on its operands in their layouts, result in its own."""
    from nnlayout.kernels.values import apply_kernel  # lowering builds on the kernels

    return apply_kernel(op, REFERENCE_KERNELS[type(op)], False, inputs)


class SlowImplementationWarning(RuntimeWarning):
    """oneDNN has only its reference code, or code that is not exact, for an op as
    compiled: numpy runs the op."""


def _reference_executor(op: Operation, why: str, written: NormBound) -> Executor:
    """`op` run by nnlayout's reference kernel where oneDNN, on this machine, offers for the
    formats the op was compiled with only its reference code (a program compiled for a CPU
    with more features: about 100 times slower than numpy), or code that is not exact;
    `why` says which, and what to do, in the warning."""
    warnings.warn(f"{op.name}: {why}", SlowImplementationWarning, stacklevel=3)
    padded, shape = _padded_layout(op.results[0].type), shape_of(op.results[0])

    def run_into(
        inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> None:
        out[...] = _reference_result(op, inputs).reshape(out.shape)
        if padded is not None:
            padded.zero_padding(out, shape)
        written.value, written.where = math.inf, None

    return Executor(
        run_into, lambda inputs, out, scratchpad: partial(run_into, inputs, out, scratchpad)
    )


def _scratchpad(compiled: Compiled, finite: Compiled | None) -> np.ndarray:
    """A scratchpad for either variant."""
    size = max(compiled.scratchpad_bytes, 0 if finite is None else finite.scratchpad_bytes)
    return np.empty(size, dtype=np.uint8)


def _private(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`_compiled(op)` with memory objects of the caller's own: they are re-pointed on each
    call, and two threads running one op on shared ones pointed each other's at their
    arrays (two interpreters of one program gave garbage)."""
    shared, finite, args = _compiled(op)
    return shared.private(), None if finite is None else finite.private(), args


def _checked_private(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`_private(op)`, refused where oneDNN cannot read or write the op's values as typed:
    no primitive for their formats, or buffers of other sizes than its own."""
    try:
        compiled, finite, args = _private(op)
    except DnnlError as error:
        raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
    _check_buffer_sizes(op, compiled, args)
    return compiled, finite, args


def _check_buffer_sizes(op: Operation, compiled: Compiled, args: Sequence[int]) -> None:
    """Every operand but the weights (repacked at load), and the result, of the byte size
    its type gives, as oneDNN's primitive will read and write them."""
    values = [
        (f"operand {i}", v, arg)
        for i, (v, arg) in enumerate(zip(op.operands, args, strict=False))
        if arg != b.DNNL_ARG_WEIGHTS
    ]
    for what, value, arg in (*values, ("the result", op.results[0], b.DNNL_ARG_DST)):
        if (nbytes := buffer_bytes(value.type)) != compiled.nbytes(arg):
            raise BindingRefused(
                f"{what} takes {nbytes} bytes in layout "
                f"'{encoding_name(value.type) or 'plain'}'; oneDNN's "
                f"{compiled.pd.implementation} takes {compiled.nbytes(arg)}"
            )


def execute(
    op: Operation,
    inputs: Sequence[np.ndarray],
    out: np.ndarray,
    scratchpad: np.ndarray | None = None,
) -> None:
    """Runs `op` on physical arrays in its kernel's layouts, writing its result into `out`
    (a C-contiguous float32 buffer of the result's physical size)."""
    compiled, finite, args = _private(op)
    executor(op, compiled, args, finite).run_into(inputs, out, scratchpad)


def run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """`execute` with a newly allocated result and scratchpad (the registry's signature)."""
    compiled, finite, args = _checked_private(op)
    spec, shape = layout_of(op.results[0].type), shape_of(op.results[0])
    out = np.empty(shape if spec is None else spec.physical_shape(shape), dtype=np.float32)
    executor(op, compiled, args, finite).run_into(inputs, out, _scratchpad(compiled, finite))
    return out


class Prepared:
    """An op bound once (the registry's `prepare`): its primitives created and their
    scratchpad allocated. Each call executes straight into the destination when that is a
    C-contiguous float32 buffer of oneDNN's size, else into a new array that is copied;
    `on` binds it to buffers it will always be given."""

    def __init__(self, op: Operation):
        compiled, finite, args = _checked_private(op)
        linked, self.written = _linked(op)
        self.op = op
        self.executor = executor(
            op, compiled, args, finite, linked, self.written, _constant_args(op, args)
        )
        self.scratchpad = _scratchpad(compiled, finite)
        self.size = compiled.nbytes(b.DNNL_ARG_DST)

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.dtype == np.float32 and out.nbytes == self.size

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self._direct(out):
            self.executor.run_into(inputs, out, self.scratchpad)
        else:
            self.written.value, self.written.where = math.inf, None
            out[...] = run(self.op, inputs)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if self._direct(out):
            return self.executor.on(inputs, out, self.scratchpad)
        return partial(self, inputs, out)


def kernels() -> list[Kernel]:
    """The oneDNN family's descriptors (float32 ops only)."""
    # oneDNN pads inside its primitives (no copy to save), and its fast implementations
    # want dense buffers: no halos, no strided outputs.
    result = [
        Kernel(
            "conv2d_onednn",
            nn.Conv2dOp,
            "onednn",
            run,
            accepts=_conv_accepts,
            layouts=_conv_layouts,
            workspace=_conv_workspace,
            prepare=Prepared,
            reads_halo=False,
            writes_strided=False,
            post_ops=True,
        ),
        # With an addend, oneDNN accumulates into it: in place when the planner can.
        Kernel(
            "conv_transpose2d_onednn",
            nn.ConvTranspose2dOp,
            "onednn",
            run,
            accepts=_deconv_accepts,
            layouts=_deconv_layouts,
            accepts_types=_deconv_types_reason,
            workspace=lambda op, target: _deconv_chosen(op, target)[2],
            prepare=Prepared,
            reads_halo=False,
            writes_strided=False,
        ),
        Kernel(
            "gemm_onednn",
            nn.GemmOp,
            "onednn",
            run,
            accepts=_gemm_accepts,
            layouts=_gemm_layouts,
            workspace=_gemm_workspace,
            accepts_types=_gemm_types_reason,
            prepare=Prepared,
            reads_halo=False,
            writes_strided=False,
        ),
        Kernel(
            "fused_conv2d_onednn",
            nn.FusedConv2dOp,
            "onednn",
            run,
            applies=lambda op: op.addend is None,
            accepts=_conv_accepts,
            layouts=_conv_layouts,
            workspace=_conv_workspace,
            prepare=Prepared,
            reads_halo=False,
            writes_strided=False,
            post_ops=True,
        ),
        Kernel(
            "fused_conv2d_sum_onednn",
            nn.FusedConv2dOp,
            "onednn",
            run,
            applies=lambda op: op.addend is not None,
            accepts=_conv_accepts,
            accepts_types=_addend_types_reason,
            layouts=_conv_layouts,
            workspace=_conv_workspace,
            prepare=Prepared,
            in_place=3,
            reads_halo=False,
            writes_strided=False,
            post_ops=True,
        ),
    ]
    any_ops: list[tuple[type[Operation], bool]] = [
        (nn.MaxPool2dOp, False),
        (nn.AvgPool2dOp, False),
        (nn.GlobalAvgPoolOp, False),
        (nn.ConcatOp, False),
        (nn.BatchNormOp, True),
        *(
            (op_type, True)
            for op_type in (*_ELTWISE, nn.ReluOp, nn.ClipOp, nn.LeakyReluOp, *_BINARY)
        ),
    ]
    for op_type, in_place in any_ops:
        name = op_type.name.removeprefix("nn.") + "_onednn"
        result.append(
            Kernel(
                name,
                op_type,
                "onednn",
                run,
                accepts=_any_accepts,
                layouts=_any_layouts,
                accepts_layout=_any_accepts_layout,
                workspace=_any_workspace,
                accepts_types=_any_types_reason,
                in_place=0 if in_place else None,
                in_place_of=full_operand if op_type in _BINARY else None,
                prepare=Prepared,
                reads_halo=False,
                writes_strided=False,
            )
        )
    return result
