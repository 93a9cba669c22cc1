"""3-D convolution and pooling (torch's Conv3d, MaxPool3d, AvgPool3d: video models such as
torchvision's r3d_18, mc3_18, r2plus1d_18 and s3d) imported as 2-D ones, which have every
target's kernels, blocked layouts and memory planning already. TVM's frontends legalize
likewise where a backend lacks an N-D operator.

Convolution: the clip's frames become a batch of images and each depth tap of the kernel is
one 2-D convolution over every output depth at once; their sum is the 3-D convolution (linear
in its taps; float32 rounding of the sum of kd partial sums, as onnxruntime's own order
differs from a single sum anyway). The depth padding is zero frames concatenated around the
clip (a concat keeps the convolutions' blocked layouts, where a pad along the batch would
not). With one clip the frames are a 4-D tensor, so that between two such layers, once
`sink-movement` has cancelled the transposes back and forth, the frames stay the batch of
the convolutions' own results:

    Conv(x: 1xCxDxHxW, w: OxCgx3xKHxKW, pads [1, ph, pw, 1, ph, pw], strides [sd, sh, sw])
      frames = reshape(transpose x [0, 2, 1, 3, 4], D x C x H x W)
      padded = concat(zeros 1 x C x H x W, frames, zeros 1 x C x H x W) along the frames
      for t in 0, 1, 2 (times the depth dilation):
        c_t = conv2d(slice padded from frame t, step sd, Dout of them, w[:, :, t],
                     strides [sh, sw], pads [ph, pw, ph, pw])          Dout x O x Ho x Wo
      y = transpose(reshape(c_0 + c_1 + c_2 (+ bias), 1 x Dout x O x Ho x Wo), [0, 2, 1, 3, 4])

(N clips: the frames N x D x C x H x W, concatenated and sliced along axis 1, each tap's
slice reshaped into a batch of N * Dout images.)

Pooling is separable: a window over depth, height and width is a window over height and
width (depth in the channels) followed by one over depth (height and width flattened into
one axis that a window of 1 leaves alone). Max is exact either way; an average divides by
the product of the per-axis counts, which is the 3-D window's count with or without the
padding counted (onnxruntime's pools clip each axis alike, ceil_mode windows included):

    MaxPool(x: NxCxDxHxW, kernel [kd, kh, kw])
      = reshape(max_pool2d(reshape(max_pool2d(reshape(x, N x C*D x H x W), [kh, kw]),
                                   N x C x D x Ho*Wo), [kd, 1]), N x C x Dout x Ho x Wo)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects import nn
from nnlayout.dialects.nn import pool2d_shape
from nnlayout.dialects.nn.base import _window_output
from nnlayout.frontends.onnx.state import ImportState

DEPTH_FIRST = [0, 2, 1, 3, 4]  # N C D H W <-> N D C H W (its own inverse)


def _depth_swap(state: ImportState, x: SSAValue) -> Operation:
    """The op swapping x's axes 1 and 2 (not emitted): a reshape where either has size 1
    (the same bytes)."""
    shape = nn.shape_of(x)
    swapped = [shape[i] for i in DEPTH_FIRST]
    if 1 in shape[1:3]:
        return state.build(lambda: nn.ReshapeOp(x, swapped))
    return state.build(lambda: nn.TransposeOp(x, DEPTH_FIRST))


def _depth_tap(state: ImportState, w: SSAValue, tap: int) -> SSAValue:
    """w[:, :, tap] of the O x Cg x kd x kh x kw weights (of constant weights, a constant
    expression: evaluated once, at load, and packed as any convolution's weights)."""
    o, cg, _, kh, kw = nn.shape_of(w)
    part = state.emit(state.build(lambda: nn.SliceOp(w, [0, 0, tap, 0, 0], [o, cg, 1, kh, kw])))
    return state.reshaped(part, [o, cg, kh, kw])


def conv3d(
    state: ImportState,
    node: onnx.NodeProto,
    x: SSAValue,
    w: SSAValue,
    b: SSAValue | None,
    window: dict,
) -> None:
    """A Conv over three spatial axes, as 2-D convolutions over the depth taps."""
    n, c, depth, h, width = nn.shape_of(x)
    kd = nn.shape_of(w)[2]
    sd, dd = window["strides"][0], window["dilations"][0]
    pd0, pd1 = window["pads"][0], window["pads"][3]
    try:  # the 2-D convolution's rule along the depth
        out_depth = _window_output("Conv", depth, kd, sd, pd0, pd1, dd, False, "depth")
    except VerifyException as error:
        raise state.fail(str(error)) from None
    lead = [n] if n > 1 else []  # one clip: its frames are a batch of images, 4-D
    frames = state.reshaped(state.emit(_depth_swap(state, x)), [*lead, depth, c, h, width])
    frames = _framed(state, frames, pd0, pd1)
    total: SSAValue | None = None
    for tap in range(kd):
        bias = b if tap == kd - 1 else None
        made = _depth_conv(state, frames, _depth_tap(state, w, tap), bias, tap, window, out_depth)
        total = made if total is None else state.emit(nn.AddOp(total, made))
    assert total is not None  # kd >= 1: the weights' verified shape
    _, o, ho, wo = nn.shape_of(total)
    result = state.reshaped(total, [n, out_depth, o, ho, wo])
    state.output(node, _depth_swap(state, result))


def conv_transpose3d(
    state: ImportState,
    node: onnx.NodeProto,
    x: SSAValue,
    w: SSAValue,
    b: SSAValue | None,
    window: dict,
) -> None:
    """A ConvTranspose over three spatial axes (`window`: strides, pads, output_padding,
    dilations, three each, pads six; groups), as 2-D ones over the depth taps: tap t's
    transposed convolution of every input frame i lands on full output frame i * sd + t * dd.
    The frames of one residue r modulo the depth stride sd take the taps whose t * dd is r
    modulo sd, each shifted by zero frames; the residues interleave (a concat along a new
    axis after the frames, then a reshape), and the depth pads crop the result. The bias is
    added last, as frames no tap reaches (output_padding) have it too."""
    n, _, depth, _, _ = nn.shape_of(x)
    sd, dd = window["strides"][0], window["dilations"][0]
    full, out_depth, o = _transposed_depth(state, x, w, b, window)
    lead = [n] if n > 1 else []
    taps = _transposed_taps(state, x, w, window)
    taps = [state.reshaped(v, [*lead, depth, *nn.shape_of(v)[1:]]) for v in taps]
    length = -(-full // sd)  # frames of each residue
    residues = [_residue(state, taps, r, sd, dd, length) for r in range(sd)]
    whole = residues[0]
    if sd > 1:
        axis = len(lead) + 1
        parts = [
            state.reshaped(v, [*nn.shape_of(v)[:axis], 1, *nn.shape_of(v)[axis:]]) for v in residues
        ]
        stacked = state.emit(state.build(lambda: nn.ConcatOp(parts, axis)))
        shape = nn.shape_of(stacked)
        whole = state.reshaped(stacked, [*lead, length * sd, *shape[axis + 1 :]])
    result = _taken(state, whole, window["pads"][0], 1, out_depth)
    if b is not None:
        result = state.emit(state.build(lambda: nn.AddOp(result, state.reshaped(b, [o, 1, 1]))))
    ho, wo = nn.shape_of(result)[-2:]
    result = state.reshaped(result, [n, out_depth, o, ho, wo])
    state.output(node, _depth_swap(state, result))


def _transposed_depth(
    state: ImportState, x: SSAValue, w: SSAValue, b: SSAValue | None, window: dict
) -> tuple[int, int, int]:
    """A 3-D ConvTranspose's frames before the depth pads crop them, after, and its output
    channels; refuses what onnxruntime refuses (and the 2-D op's verifier, on the other
    axes): an output_padding of the stride or dilation or more, a bias of another length,
    pads that leave no frame."""
    depth, kd = nn.shape_of(x)[2], nn.shape_of(w)[2]
    sd, dd = window["strides"][0], window["dilations"][0]
    pd0, pd1, opd = window["pads"][0], window["pads"][3], window["output_padding"][0]
    if not 0 <= opd < max(sd, dd):
        raise state.fail(
            f"ConvTranspose's depth output_padding {opd} must be at least 0 and smaller than "
            f"the depth stride or dilation ({max(sd, dd)})"
        )
    o = nn.shape_of(w)[1] * window["groups"]
    if b is not None and list(nn.shape_of(b)) != [o]:
        raise state.fail(f"ConvTranspose's bias must have shape [{o}], got {list(nn.shape_of(b))}")
    full = (depth - 1) * sd + (kd - 1) * dd + 1 + opd
    if full - pd0 - pd1 < 1:
        raise state.fail(
            f"ConvTranspose's depth pads {pd0} + {pd1} leave {full - pd0 - pd1} of its {full} "
            "frames"
        )
    return full, full - pd0 - pd1, o


def _planar(window: dict) -> dict:
    """A 3-D window's height and width parts, as a 2-D convolution's keyword arguments."""
    _, ph0, pw0, _, ph1, pw1 = window["pads"]
    return {
        "strides": window["strides"][1:],
        "pads": [ph0, pw0, ph1, pw1],
        "dilations": window["dilations"][1:],
        "groups": window["groups"],
    }


def _transposed_taps(state: ImportState, x: SSAValue, w: SSAValue, window: dict) -> list[SSAValue]:
    """Each depth tap's 2-D transposed convolution of all of x's frames, as a batch of
    images (clip by clip)."""
    n, c, depth, h, width = nn.shape_of(x)
    frames = state.reshaped(state.emit(_depth_swap(state, x)), [n * depth, c, h, width])
    taps = []
    for tap in range(nn.shape_of(w)[2]):
        weights = _depth_tap(state, w, tap)
        image = state.build(  # inside: a shape rule's refusal names the node
            lambda weights=weights: nn.ConvTranspose2dOp(
                frames,
                weights,
                None,
                output_padding=window["output_padding"][1:],
                **_planar(window),
            )
        )
        taps.append(state.emit(image))
    return taps


def _residue(
    state: ImportState, taps: list[SSAValue], r: int, sd: int, dd: int, length: int
) -> SSAValue:
    """The `length` full output frames r, r + sd, r + 2 sd, ...: the sum of the taps t whose
    t * dd is r modulo sd, tap t's frame i at (t * dd - r) / sd + i; zeros where none is."""
    total: SSAValue | None = None
    for t, frames in enumerate(taps):
        if (t * dd) % sd != r:
            continue
        shift = (t * dd - r) // sd
        depth = nn.shape_of(frames)[-4]
        placed = _framed(state, frames, shift, length - shift - depth)
        total = placed if total is None else state.emit(nn.AddOp(total, placed))
    if total is not None:
        return total
    shape = list(nn.shape_of(taps[0]))
    shape[-4] = length
    return _constant_frames(state, shape, 0.0)


def _framed(
    state: ImportState, frames: SSAValue, before: int, after: int, value: float = 0.0
) -> SSAValue:
    """`frames` (depth on the axis before the channels) with `before` and `after` frames of
    `value` around them: a concat, which the layouts keep blocked and the frames' producer
    writes in place, of `value` broadcast from a constant."""
    if not before and not after:
        return frames
    shape = nn.shape_of(frames)
    axis = len(shape) - 4
    made: dict[int, SSAValue] = {}

    def filled(count: int) -> list[SSAValue]:
        if count and count not in made:
            made[count] = _constant_frames(state, [*shape[:axis], count, *shape[axis + 1 :]], value)
        return [made[count]] if count else []

    inputs = [*filled(before), frames, *filled(after)]
    return state.emit(state.build(lambda: nn.ConcatOp(inputs, axis)))


def _constant_frames(state: ImportState, shape: Sequence[int], value: float) -> SSAValue:
    """Frames of `shape`, every element `value`: one constant element broadcast."""
    fill = state.made_constant("fill_frame", np.full([1] * len(shape), value, np.float32))
    return state.emit(state.build(lambda: nn.ExpandOp(fill, list(shape))))


def _taken(state: ImportState, frames: SSAValue, start: int, step: int, count: int) -> SSAValue:
    """`count` frames of `frames` from frame `start`, every `step`-th (all of them: itself)."""
    shape = nn.shape_of(frames)
    axis = len(shape) - 4
    if (start, step, count) == (0, 1, shape[axis]):
        return frames
    starts, steps = [0] * len(shape), [1] * len(shape)
    starts[axis], steps[axis] = start, step
    sizes = [*shape[:axis], count, *shape[axis + 1 :]]
    return state.emit(state.build(lambda: nn.SliceOp(frames, starts, sizes, steps)))


def _depth_conv(
    state: ImportState,
    frames: SSAValue,
    weights: SSAValue,
    bias: SSAValue | None,
    tap: int,
    window: dict,
    out_depth: int,
) -> SSAValue:
    """The 2-D convolution of depth tap `tap` over every output depth: of the frames it
    reads of the zero-framed `frames`, batched."""
    shape = nn.shape_of(frames)
    axis = len(shape) - 4
    start, step = tap * window["dilations"][0], window["strides"][0]
    part = _taken(state, frames, start, step, out_depth)
    image = state.reshaped(part, [math.prod(shape[:axis]) * out_depth, *shape[axis + 1 :]])
    return state.emit(
        state.build(  # inside: a shape rule's refusal names the node
            lambda: nn.Conv2dOp(image, weights, bias, **_planar(window))
        )
    )


def pool3d(
    state: ImportState,
    node: onnx.NodeProto,
    x: SSAValue,
    window: dict,
    make: Callable[..., Operation],
) -> None:
    """A pool over three spatial axes: over height and width, then over depth. `window`:
    kernel, strides, pads, dilations (three each, pads six) and ceil_mode."""
    n, c, depth, _, _ = nn.shape_of(x)
    if n == 1 and make is nn.MaxPool2dOp:
        _max_pool_frames(state, node, x, window)
        return
    kd, *kernel = window["kernel"]
    sd, *strides = window["strides"]
    dd, *dilations = window["dilations"]
    pd0, ph0, pw0, pd1, ph1, pw1 = window["pads"]
    ceil_mode = window["ceil_mode"]
    images = state.reshaped(x, [n, c * depth, *nn.shape_of(x)[3:]])
    planes = _pooled(
        state, images, make, kernel, strides, [ph0, pw0, ph1, pw1], dilations, ceil_mode
    )
    ho, wo = nn.shape_of(planes)[2:]
    columns = state.reshaped(planes, [n, c, depth, ho * wo])
    pooled = _pooled(state, columns, make, [kd, 1], [sd, 1], [pd0, 0, pd1, 0], [dd, 1], ceil_mode)
    shape = [n, c, nn.shape_of(pooled)[2], ho, wo]
    state.output(node, state.build(lambda: nn.ReshapeOp(pooled, shape)))


def _max_pool_frames(state: ImportState, node: onnx.NodeProto, x: SSAValue, window: dict) -> None:
    """A max pool of one clip on its frames (as a 3-D convolution reads them): over height
    and width as a batch of images, then the largest of the frames each depth window takes,
    the depth padding frames of -inf (and as many more as a ceil_mode window overhangs)."""
    _, c, depth, h, width = nn.shape_of(x)
    kd, sd, dd = window["kernel"][0], window["strides"][0], window["dilations"][0]
    pd0, ph0, pw0, pd1, ph1, pw1 = window["pads"]
    frames = state.reshaped(state.emit(_depth_swap(state, x)), [depth, c, h, width])
    hw = [window[key][1:] for key in ("kernel", "strides")]
    planes = _pooled(
        state,
        frames,
        nn.MaxPool2dOp,
        *hw,
        [ph0, pw0, ph1, pw1],
        window["dilations"][1:],
        window["ceil_mode"],
    )
    # The depth windows by the rule (and checks) of the 2-D pool over depth the 5-D path
    # builds: a [kd, 1] window over one column of `depth` rows.
    depth_pool = ([kd, 1], [sd, 1], [pd0, 0, pd1, 0], [dd, 1], window["ceil_mode"])
    try:
        out_depth = pool2d_shape("nn.max_pool2d", (1, 1, depth, 1), *depth_pool)[2]
    except VerifyException as error:
        raise state.fail(str(error)) from None
    extent = (kd - 1) * dd + 1
    after = max(pd1, (out_depth - 1) * sd + extent - depth - pd0)
    padded = _framed(state, planes, pd0, after, float("-inf"))
    largest = _taken(state, padded, 0, sd, out_depth)
    for tap in range(1, kd):
        taken = _taken(state, padded, tap * dd, sd, out_depth)
        largest = state.emit(nn.MaxOp(largest, taken))
    _, _, ho, wo = nn.shape_of(largest)
    result = state.reshaped(largest, [1, out_depth, c, ho, wo])
    state.output(node, _depth_swap(state, result))


def _pooled(
    state: ImportState,
    x: SSAValue,
    make: Callable[..., Operation],
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
) -> SSAValue:
    """A 2-D pool of x, or x itself where the window is one element moving by one."""
    if all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not any(pads):
        return x
    return state.emit(
        state.build(
            lambda: make(
                x,
                kernel=list(kernel),
                strides=list(strides),
                pads=list(pads),
                dilations=list(dilations),
                ceil_mode=ceil_mode,
            )
        )
    )
