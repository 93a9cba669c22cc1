"""The shape rules of the `nn` ops, as plain functions, so that importers and passes compute
result types the same way the verifiers check them."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    Shape,
    _require_len,
    _require_non_negative,
    _require_positive,
    _require_rank,
    _window_output,
    broadcast_shapes,
    normalize_axis,
)


# ------------------------------------------------------------------------ shape rules
def conv2d_shape(
    x: Shape,
    w: Shape,
    bias: Shape | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
    op_name: str = "nn.conv2d",
) -> Shape:
    _require_rank(op_name, "input", x, 4)
    _require_rank(op_name, "weight", w, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    if groups <= 0:
        raise VerifyException(f"{op_name}: groups must be positive, got {groups}")
    n, c, h, wd = x
    o, i, kh, kw = w
    if c % groups:
        raise VerifyException(
            f"{op_name}: input has {c} channels, not divisible by groups={groups}"
        )
    if c // groups != i:
        raise VerifyException(
            f"{op_name}: input has {c} channels but weight expects {i * groups} (groups={groups})"
        )
    if o % groups:
        raise VerifyException(
            f"{op_name}: weight has {o} output channels, not divisible by groups={groups}"
        )
    if bias is not None and bias != (o,):
        raise VerifyException(f"{op_name}: bias must have shape [{o}], got {list(bias)}")
    oh = _window_output(op_name, h, kh, strides[0], pads[0], pads[2], dilations[0], False, "height")
    ow = _window_output(op_name, wd, kw, strides[1], pads[1], pads[3], dilations[1], False, "width")
    return (n, o, oh, ow)


def conv_transpose2d_shape(
    x: Shape,
    w: Shape,
    bias: Shape | None,
    strides: Sequence[int],
    pads: Sequence[int],
    output_padding: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> Shape:
    op_name = "nn.conv_transpose2d"
    _require_rank(op_name, "input", x, 4)
    _require_rank(op_name, "weight", w, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    _require_len(op_name, "output_padding", output_padding, 2)
    _require_non_negative(op_name, "output_padding", output_padding)
    if groups <= 0:
        raise VerifyException(f"{op_name}: groups must be positive, got {groups}")
    for axis in range(2):
        if output_padding[axis] >= max(strides[axis], dilations[axis]):
            raise VerifyException(
                f"{op_name}: output_padding {list(output_padding)} must be smaller than "
                f"the stride or the dilation on each axis"
            )
    n, c, h, wd = x
    i, o_per_group, kh, kw = w
    if c != i:
        raise VerifyException(
            f"{op_name}: input has {c} channels but weight expects {i} "
            f"(weight is [C_in, C_out/groups, kH, kW])"
        )
    if c % groups:
        raise VerifyException(
            f"{op_name}: input has {c} channels, not divisible by groups={groups}"
        )
    o = o_per_group * groups
    if bias is not None and bias != (o,):
        raise VerifyException(f"{op_name}: bias must have shape [{o}], got {list(bias)}")
    sizes = []
    for axis, (size, k) in enumerate(((h, kh), (wd, kw))):
        out = (
            strides[axis] * (size - 1)
            + output_padding[axis]
            + (k - 1) * dilations[axis]
            + 1
            - pads[axis]
            - pads[axis + 2]
        )
        if out <= 0:
            raise VerifyException(
                f"{op_name}: pads {list(pads)} leave no output along spatial axis {axis}"
            )
        sizes.append(out)
    return (n, o, sizes[0], sizes[1])


def _check_window_attrs(
    op_name: str, strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
) -> None:
    _require_len(op_name, "strides", strides, 2)
    _require_len(op_name, "pads", pads, 4)
    _require_len(op_name, "dilations", dilations, 2)
    _require_positive(op_name, "strides", strides)
    _require_non_negative(op_name, "pads", pads)
    _require_positive(op_name, "dilations", dilations)


def matmul_shape(a: Shape, b: Shape) -> Shape:
    op_name = "nn.matmul"
    if not a or not b:
        raise VerifyException(f"{op_name}: operands must have rank >= 1")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise VerifyException(
            f"{op_name}: contraction sizes differ: lhs {list(a)} has K={a2[-1]}, "
            f"rhs {list(b)} has K={b2[-2]}"
        )
    batch = broadcast_shapes(op_name, a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def gemm_shape(a: Shape, b: Shape, c: Shape | None, trans_a: bool, trans_b: bool) -> Shape:
    op_name = "nn.gemm"
    _require_rank(op_name, "a", a, 2)
    _require_rank(op_name, "b", b, 2)
    m, k = (a[1], a[0]) if trans_a else a
    kb, n = (b[1], b[0]) if trans_b else b
    if k != kb:
        raise VerifyException(
            f"{op_name}: contraction sizes differ: a gives K={k}, b gives K={kb} "
            f"(trans_a={int(trans_a)}, trans_b={int(trans_b)})"
        )
    if c is not None and broadcast_shapes(op_name, c, (m, n)) != (m, n):
        raise VerifyException(
            f"{op_name}: c of shape {list(c)} does not broadcast to the result [{m}, {n}]"
        )
    return (m, n)


def pool2d_shape(
    op_name: str,
    x: Shape,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil_mode: bool,
) -> Shape:
    _require_rank(op_name, "input", x, 4)
    _check_window_attrs(op_name, strides, pads, dilations)
    _require_len(op_name, "kernel", kernel, 2)
    _require_positive(op_name, "kernel", kernel)
    for axis in range(2):
        extent = dilations[axis] * (kernel[axis] - 1) + 1
        if max(pads[axis], pads[axis + 2]) >= extent:
            raise VerifyException(
                f"{op_name}: pads {list(pads)} must be smaller than the window extent {extent} "
                f"(kernel {kernel[axis]}, dilation {dilations[axis]}) along spatial axis {axis}; "
                "a window would see only padding"
            )
    n, c, h, w = x
    oh = _window_output(
        op_name, h, kernel[0], strides[0], pads[0], pads[2], dilations[0], ceil_mode, "height"
    )
    ow = _window_output(
        op_name, w, kernel[1], strides[1], pads[1], pads[3], dilations[1], ceil_mode, "width"
    )
    return (n, c, oh, ow)


def concat_shape(shapes: Sequence[Shape], axis: int) -> Shape:
    op_name = "nn.concat"
    if not shapes:
        raise VerifyException(f"{op_name}: needs at least one input")
    rank = len(shapes[0])
    axis = normalize_axis(op_name, axis, rank)
    for index, shape in enumerate(shapes):
        if len(shape) != rank:
            raise VerifyException(
                f"{op_name}: input {index} has rank {len(shape)} ({list(shape)}), but input 0 "
                f"has rank {rank} ({list(shapes[0])})"
            )
        if any(shape[d] != shapes[0][d] for d in range(rank) if d != axis):
            raise VerifyException(
                f"{op_name}: input {index} has shape {list(shape)}, which differs from input 0 "
                f"{list(shapes[0])} outside the concatenation axis {axis}"
            )
    total = sum(s[axis] for s in shapes)
    return shapes[0][:axis] + (total,) + shapes[0][axis + 1 :]


def flatten_shape(x: Shape, axis: int) -> Shape:
    axis = normalize_axis("nn.flatten", axis, len(x), inclusive_end=True)
    return (math.prod(x[:axis]), math.prod(x[axis:]))


def transpose_shape(x: Shape, perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(x))):
        raise VerifyException(
            f"nn.transpose: perm {list(perm)} is not a permutation of 0..{len(x) - 1}"
        )
    return tuple(x[p] for p in perm)


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    """The permutation that undoes `perm`: a transpose by it after one by `perm` moves
    nothing; entry a is the axis source axis a goes to."""
    inverse = [0] * len(perm)
    for position, axis in enumerate(perm):
        inverse[axis] = position
    return tuple(inverse)
