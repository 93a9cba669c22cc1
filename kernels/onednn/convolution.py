"""Convolutions (`nn.conv2d`, and `nn.fused_conv2d`: a convolution with its add and
activation as post-ops) as oneDNN's convolution primitive.

Layouts come from oneDNN, not from a table: a convolution's layouts are read back from the
primitive descriptor built with `format_tag::any` (mapped to our layout strings by
formats.py), with the implementation's name. An implementation named `ref...` is oneDNN's
slow reference code and is refused: the kernel first retries with a plain `nchw` source (the
fast stem: a 3-channel source padded to `nChw8c` falls to `ref:any`), with grouped weights
blocked as our layouts can name them and with plain grouped weights (`_first_conv_choice`
gives the order), so dispatch falls back to numpy only when oneDNN has no fast
implementation.

A fused convolution's relu, clip or leaky_relu with alpha 0 turn NaN into a bound as
oneDNN's post-ops: it then has a cheaper variant run on calls whose operands cannot overflow
(`Epilogue`; the guard is in bounds.py and calls.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec, encoding_name
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc
from nnlayout.kernels.onednn.common import (
    ANY,
    Layouts,
    data_type,
    float_refusal,
    format_of,
    remembered,
    weights_md,
)
from nnlayout.kernels.onednn.eltwise import eltwise_params, finite_only
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
from nnlayout.kernels.registry import Target


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
    # dnnl_f32, or dnnl_bf16: bf16 source, weights, bias and destination (oneDNN accumulates
    # in f32 and rounds the result once). bf16 weights are left in oneDNN's choice of format
    # (its bf16 blockings, OHWI16i64o2i and the like, pair input channels), which the IR
    # does not name: the weights stay plain in the IR and are packed when the op is bound.
    data_type: int = b.dnnl_f32


def grouped_weights(
    weights: tuple[int, ...], groups: int, channels: int
) -> tuple[tuple[int, ...], str]:
    """OIHW `weights` as oneDNN takes them (g, o, i, h, w when grouped) and their role:
    "weights", "grouped" or "depthwise" (one group per input channel, of `channels`)."""
    o, i, kh, kw = weights
    if groups == 1:
        return (o, i, kh, kw), "weights"
    role = "depthwise" if o == groups == channels else "grouped"
    return (groups, o // groups, i, kh, kw), role


def window_geometry(
    op: nn.ConvWindowOp,
    source: SSAValue,
    weight: SSAValue,
    bias: bool,
    post_ops: tuple[b.PostOp, ...] = (),
    dnnl_type: int = b.dnnl_f32,
) -> ConvGeometry:
    """The geometry of a convolution-window op (conv2d, fused_conv2d, qconv2d, conv_integer)
    reading `source` with the OIHW weights `weight`: its strides, dilations and pads, the
    weights grouped as oneDNN takes them."""
    pads = ints(op.pads)
    weights, role = grouped_weights(shape_of(weight), op.groups.value.data, shape_of(source)[1])
    return ConvGeometry(
        shape_of(source),
        weights,
        bias,
        shape_of(op.output),  # type: ignore[attr-defined]
        ints(op.strides),
        ints(op.dilations),
        pads[:2],
        pads[2:],
        role,
        post_ops,
        dnnl_type,
    )


def conv_geometry(op: nn.Conv2dOp | nn.FusedConv2dOp) -> ConvGeometry:
    post_ops = fused_epilogue(op).post_ops if isinstance(op, nn.FusedConv2dOp) else ()
    return window_geometry(
        op, op.input, op.weight, op.bias is not None, post_ops, data_type(op.input)
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
    (`conv_bounds`), so the kernel checks that before each call (from bounds on the norms
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
    # The sum reads the destination's contents in its data type (bf16 for a bf16 convolution).
    summed = b.PostOp.sum(data_type=data_type(op.output))
    post_ops = (summed,) if op.addend is not None else ()
    activation = op.activation_op()
    if activation is None:
        return Epilogue(post_ops)
    eltwise = (*post_ops, b.PostOp.eltwise(*eltwise_params(activation)))
    if op.nnan is not None or not finite_only(activation):
        return Epilogue(eltwise)
    if isinstance(activation, nn.ReluOp):
        return Epilogue((*post_ops, b.PostOp.eltwise(b.dnnl_eltwise_elu, 0.0)), False, eltwise)
    return Epilogue(post_ops, True, eltwise)  # clip, leaky_relu with alpha 0


def conv_pd(g: ConvGeometry, src: int, weights: int, dst: int) -> b.PrimitiveDesc:
    """The convolution's primitive descriptor with the given format tags (or ANY)."""
    t = g.data_type
    vector = by_layout("vector", "").value
    bias = MemoryDesc.with_tag((g.dst[1],), vector, t) if g.bias else None
    return p.convolution_pd(
        MemoryDesc.with_tag(g.src, src, t),
        MemoryDesc.with_tag(g.weights, weights, t),
        bias,
        MemoryDesc.with_tag(g.dst, dst, t),
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
    preferred = _measured_preferences(g, preferred)
    if isinstance(choice, str) or not preferred or choice.implementation.startswith(preferred):
        return choice
    return _preferred_alternative(g, choice, preferred) or choice


def _measured_preferences(g: ConvGeometry, preferred: tuple[str, ...]) -> tuple[str, ...]:
    """The preferences that hold for `g`. None for bf16, whose weights `conv_variants` lets
    oneDNN choose when it binds: oneDNN's first implementation is what runs there, so it is
    what dispatch must report. Without jit_dw for a 1x1 depthwise window (DenseNet's batch
    norms, run as convolutions), where it was measured slower than oneDNN's brdgmm_dw on
    AVX-512 (docs/benchmarks.md, "depthwise convolutions: jit_dw over brdgmm_dw")."""
    if g.data_type != b.dnnl_f32:
        return ()
    if g.weights[-2:] == (1, 1):
        return tuple(name for name in preferred if not name.startswith("jit_dw"))
    return preferred


def _first_conv_choice(g: ConvGeometry, data_format: str) -> ConvChoice | str:
    """oneDNN's own fast choice for `g`, or why there is none. `data_format` (a layout of
    ours, from the target) is asked first (`_asked_format_choice`). Then, in order
    (`_attempts`): every format left to oneDNN; a plain nchw source (the fast stem);
    channel-blocked sources (the jit convolutions' formats, for machines where the brgemm
    ones are not in our map); plain weights (grouped convolutions, which, like one-pixel
    ones, ask for channels-last first). A choice whose destination format differs from its
    source's (oneDNN's stem: nchw -> nChw8c) would cost the next layers a reorder each where
    they run channels-last, so the same format on both sides is tried first for it."""
    notes: list[str] = []
    asked = _asked_format_choice(g, data_format, notes)
    if asked is not None:
        return asked
    data = [
        f
        for layout in ("", "NHWC", "NCHW16c", "NCHW8c")
        if (f := by_layout("data", layout)) is not None
    ]
    for src, weights, dst, what in _attempts(g, data):
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


def _asked_format_choice(g: ConvGeometry, data_format: str, notes: list[str]) -> ConvChoice | None:
    """oneDNN's fast choice with the target's `data_format` (a layout of ours; empty: none)
    in and out, then from a plain source (the stem, whose input arrives plain); None, with
    the reasons appended to `notes`, when neither is fast."""
    plain = by_layout("data", "")
    if data_format and (asked := by_layout("data", data_format)) is not None:
        for src, what in (
            (asked, f"{asked.tag} in and out"),
            (plain, f"a {plain.tag} source into {asked.tag}"),
        ):
            choice = _conv_attempt(g, src.value, ANY, asked.value, what, notes)
            if choice is not None:
                return choice
    return None


def _attempts(g: ConvGeometry, data: list[Format]) -> list[tuple[int, int, int, str]]:
    """The (source, weights, destination) format tags `_first_conv_choice` asks oneDNN for,
    in order, each with what it is called in a refusal; `data` are the data formats of ours,
    plain first."""
    attempts = [(ANY, ANY, ANY, "formats of its choice")]
    nhwc = by_layout("data", "NHWC")
    channels_last = (nhwc.value, ANY, nhwc.value, f"{nhwc.tag} in and out")
    if g.weights_role == "grouped":
        # oneDNN's own choice is a blocked format, where its jit code is no faster than on
        # nhwc (avx512_core) or slower than its brgconv (avx2): channels-last is where the
        # other convolutions run, so it saves a reorder on each side. Where the weights it
        # picks pad each group (24 channels a group in gOhwi32o on avx512_core), the ones
        # we can name follow, widest blocks first (faster there than oneDNN's gemm on nchw,
        # the next fast choice).
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
    return attempts


def _preferred_alternative(
    g: ConvGeometry, choice: ConvChoice, preferred: tuple[str, ...]
) -> ConvChoice | None:
    """The first implementation oneDNN lists, in its order, whose name starts with one of
    `preferred` and that targets the same instruction set as `choice`, on the same source
    and destination formats with weights of its choice; None when it lists none before its
    reference implementation. A preference is measured against oneDNN's first choice on one
    kind of machine: on an AVX-512 one oneDNN also lists the avx2 code the `onednn` target
    prefers on AVX2 machines, and there it runs 1x1 convolutions slower than oneDNN's own
    avx512_core choice."""
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
    bf16 = g.data_type == b.dnnl_bf16  # weights plain in the IR, packed when bound
    formats = (
        _data_format(pd.md(b.dnnl_query_src_md), asked[0]),
        by_layout(g.weights_role, "")
        if bf16
        else identify(pd.md(b.dnnl_query_weights_md), g.weights_role),
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
    executed = formats if bf16 else _as_executed(g, formats, pd, implementation)  # type: ignore[arg-type]
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


def conv_accepts(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target, padding: bool) -> str | None:
    """Refuses when oneDNN has only its reference implementation (or formats we cannot
    name); oneDNN pads channels itself, so `padding` does not matter."""
    if (reason := float_refusal(op)) is not None:
        return reason
    options = OneDNNOptions.of(target)
    choice = conv_choice(conv_geometry(op), options.data_format, options.preferred_implementations)
    if isinstance(choice, str):
        return choice
    if drops_nan(op, choice.implementation):
        return f"oneDNN's {choice.implementation} applies its sigmoid post-op without NaN"
    return None


def drops_nan(op: Operation, implementation: str) -> bool:
    """Found by fuzzing: the gemm-based convolutions' logistic post-op drops NaN (which
    `nnan` promises away)."""
    return (
        isinstance(op, nn.FusedConv2dOp)
        and op.activation is not None
        and op.nnan is None
        and op.activation.data == "sigmoid"
        and "gemm" in implementation
    )


def conv_chosen(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> ConvChoice:
    options = OneDNNOptions.of(target)
    choice = conv_choice(conv_geometry(op), options.data_format, options.preferred_implementations)
    if isinstance(choice, str):
        raise ValueError(f"{op.name}: no fast oneDNN convolution: {choice}")
    return choice


def conv_layouts(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> Layouts:
    """oneDNN's formats; a fused addend is the destination's starting contents."""
    src, weights, dst = (f.kernel_layout for f in conv_chosen(op, target).formats)
    operands = (src, weights) + ((PLAIN_LAYOUT,) if op.bias is not None else ())
    if isinstance(op, nn.FusedConv2dOp) and op.addend is not None:
        operands += (dst,)
    return operands, (dst,)


def conv_workspace(op: nn.Conv2dOp | nn.FusedConv2dOp, target: Target) -> int:
    """The scratchpad of the chosen primitive, or of its finite variant if larger."""
    choice = conv_chosen(op, target)
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
    name, scratchpad = remembered(("conv", g, tags), lambda: conv_pd(g, *tags))
    return (g, scratchpad) if name == implementation else None


def _finite_geometry(op: nn.Conv2dOp | nn.FusedConv2dOp) -> ConvGeometry | None:
    finite = fused_epilogue(op).finite_post_ops if isinstance(op, nn.FusedConv2dOp) else None
    return None if finite is None else replace(conv_geometry(op), post_ops=finite)


def conv_variants(
    op: nn.Conv2dOp | nn.FusedConv2dOp,
) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """The convolution's primitive, its finite variant (None without one, or when oneDNN
    would run it with another implementation) and the execution arguments of its inputs.
    Where a finite variant runs, the exact primitive serves only calls whose operands are
    not finite, so it is created when first needed."""
    g = conv_geometry(op)
    tags = (
        format_of(op.input, "data").value,
        format_of(op.weight, g.weights_role, g.weights).value,
        format_of(op.output, "data").value,
    )
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS) + ((b.DNNL_ARG_BIAS,) if g.bias else ())
    compiled = p.get_compiled(
        ("conv", g, tags), lambda: conv_pd(g, *tags), (*args, b.DNNL_ARG_DST), eager=False
    )
    if compiled.pd.implementation.startswith("ref") or g.data_type == b.dnnl_bf16:
        # bf16 weights are packed at binding into oneDNN's choice (`ConvGeometry`). The
        # weight format was oneDNN's choice where it ran with another thread count (a
        # brgconv blocks its weights by 16 or 24 depending on it): the activations' formats
        # are planned, the weights' are free, so let oneDNN choose them again; the executor
        # reorders the weights (`weights_repacker`).
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
        if candidate.pd.implementation == compiled.pd.implementation and weights_md(
            candidate
        ) == weights_md(compiled):
            finite = candidate
    (compiled if finite is None else finite).primitive  # noqa: B018 (created now)
    return compiled, finite, args


def addend_types_reason(op: nn.FusedConv2dOp | nn.QConv2dAddOp) -> str | None:
    """The sum post-op adds what the destination holds: the addend, in the result's layout
    (`format_of` and the buffer sizes check the other operands when the kernel is bound);
    the f32 and the int8 convolution with a residual add alike."""
    addend, result = encoding_name(op.addend.type), encoding_name(op.output.type)
    if addend != result:
        return (
            f"the addend is {addend or 'plain'} but the result {result or 'plain'}; the "
            "kernel adds it in the result's layout"
        )
    return None
