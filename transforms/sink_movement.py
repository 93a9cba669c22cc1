"""`sink-movement`: transposes and reshapes move below the element-wise ops they feed, and
a transpose of a transpose (a reshape of a reshape) becomes one, or none where the two are
inverse.

A network imported layer by layer moves data into and out of the arrangement an op wants:
3-D convolutions run as 2-D ones over depth-first frames (frontends/onnx/volumes.py), so each
one transposes its input from N x C x D x H x W to N x D x C x H x W, reshapes it into a batch
of frames, and reshapes and transposes its result back; the ReLU and the residual add between
two of them read the moved-back value. An element-wise op commutes with any movement of
elements (each element is computed from the elements at its own position), so the movement
can run after it instead: there it meets the next layer's, and the inverse pair cancels (no
copy at all), while the op now reads the convolution's own result, where `fuse-post-ops` can
make it the convolution's post-op.

    %r = nn.reshape %c : tensor<8x4x6x6xf32> -> tensor<1x8x4x6x6xf32>
    %t = nn.transpose %r perm [0, 2, 1, 3, 4] : tensor<1x8x4x6x6xf32> -> tensor<1x4x8x6x6xf32>
    %a = nn.relu %t : tensor<1x4x8x6x6xf32>
    %u = nn.transpose %a perm [0, 2, 1, 3, 4] : tensor<1x4x8x6x6xf32> -> tensor<1x8x4x6x6xf32>
  becomes
    %a = nn.relu %c : tensor<8x4x6x6xf32>
    %u = nn.reshape %a : tensor<8x4x6x6xf32> -> tensor<1x8x4x6x6xf32>

Patterns (small, as xDSL's): `SinkBelowUnary` moves a kernel-less transpose or reshape with
one reader below the element-wise `nn` op (a `UnaryOp`: its result has its input's type) that
reads it; `SinkBelowBinary` moves two movements alike (transposes by one permutation,
reshapes from one shape; each read only there) below a `BinaryOp` of operands of the
result's shape (no broadcast), as one movement of its result; `SinkBelowSlice` makes a slice
of a transpose (that only slices read) the transpose of a slice where a concat of operands
transposed alike reads it; `SinkBelowConcat` moves those
of a concat's operands (moved alike: one permutation, or unit axes put first; each read only
there) below it, concatenating along the axis they take to the concat's (a video network's
branches concatenated along the channels); `ComposeMovements` folds a
transpose of a transpose (a reshape of a reshape) into one, or into its source where the two
are inverse; then `TransposeAsReshape` makes a transpose that moves only axes of size 1 (the
order of the others kept: a recurrent layer's [steps, 1, 1, hidden] result as ONNX's Y) a
reshape, which moves nothing in memory (last: made earlier, it would stop a concat's operands
from sinking alike). Ops with a kernel are left alone: the pass runs before
`select-dispatch` (in `default-pipeline`, after `fold-scatter-transposes`). A movement left
without readers is erased.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.nn import ints, inverse_permutation, shape_of, with_shape
from nnlayout.transforms.stages import require_tensor_level

Movement = nn.TransposeOp | nn.ReshapeOp


def _movement(value: SSAValue) -> Movement | None:
    """The kernel-less transpose or reshape making `value`, if one does."""
    owner = value.owner
    if isinstance(owner, nn.TransposeOp | nn.ReshapeOp) and kernel_of(owner) is None:
        return owner
    return None


def _same_movement(first: Movement, second: Movement) -> bool:
    """Whether the two move their operands' elements alike: transposes by one permutation,
    reshapes from one shape."""
    if isinstance(first, nn.TransposeOp) and isinstance(second, nn.TransposeOp):
        return ints(first.perm) == ints(second.perm)
    if isinstance(first, nn.ReshapeOp) and isinstance(second, nn.ReshapeOp):
        return shape_of(first.input) == shape_of(second.input)
    return False


def _again(movement: Movement, value: SSAValue) -> Movement:
    """`movement` applied to `value` (which has its operand's shape)."""
    if isinstance(movement, nn.TransposeOp):
        return nn.TransposeOp(value, list(ints(movement.perm)))
    return nn.ReshapeOp(value, list(shape_of(movement.output)))


def _replaced(op: Operation, inner: Operation, outer: Movement, rewriter: PatternRewriter) -> None:
    """`op` replaced by `inner` (on the unmoved operands) then `outer` (the movement, named
    as `op`'s result); the movements `op` read erased where nothing else reads them."""
    moved = [_movement(v) for v in op.operands]
    inner.location = outer.location = op.location
    rewriter.insert(inner, InsertPoint.before(op))
    outer.output.name_hint = op.results[0].name_hint
    rewriter.replace(op, outer)
    for movement in dict.fromkeys(moved):
        if movement is not None and not movement.output.uses:
            rewriter.erase(movement)


def _sunk(op: Operation, movement: Movement, rewriter: PatternRewriter) -> None:
    """`op` recomputed on the operands of the movements that make its operands, then moved
    as they were, in its place."""
    operands = [m.input for m in map(_movement, op.operands) if m is not None]
    inner = type(op).build(
        operands=operands,
        result_types=[with_shape(op.results[0], shape_of(operands[0]))],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    _replaced(op, inner, _again(movement, inner.results[0]), rewriter)


class SinkBelowUnary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.UnaryOp, rewriter: PatternRewriter) -> None:
        movement = _movement(op.input)
        if movement is None or kernel_of(op) is not None or not op.input.has_one_use():
            return
        _sunk(op, movement, rewriter)


class SinkBelowBinary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BinaryOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = _movement(op.lhs), _movement(op.rhs)
        if lhs is None or rhs is None or kernel_of(op) is not None:
            return
        shapes = {shape_of(v) for v in (op.lhs, op.rhs, op.output)}
        readers = {use.operation for v in (op.lhs, op.rhs) for use in v.uses}
        if len(shapes) != 1 or readers != {op} or not _same_movement(lhs, rhs):
            return
        _sunk(op, lhs, rewriter)


def _joined_alike(op: nn.SliceOp, movement: nn.TransposeOp) -> bool:
    """Whether `op` (a slice of `movement`) is read only by a concat whose every operand is a
    transpose by `movement`'s permutation or a slice of one: there the transposes, once
    below the slices, sink below the concat too."""
    readers = {use.operation for use in op.output.uses}
    if len(readers) != 1 or not isinstance(concat := readers.pop(), nn.ConcatOp):
        return False
    for value in concat.operands:
        owner = value.owner
        moved = _movement(owner.input) if isinstance(owner, nn.SliceOp) else _movement(value)
        if not isinstance(moved, nn.TransposeOp) or not _same_movement(moved, movement):
            return False
    return True


class SinkBelowSlice(RewritePattern):
    """A slice of a transpose that only slices read is the transpose of the slice of its
    operand (starts, sizes and steps carried back along the permutation), where a concat of
    operands transposed alike reads it: the transposes then sink below the concat (a
    scatter's rows around a slice assignment: MViT's). Elsewhere the slice stays: a slice
    of whole rows of the transposed data is a view (ViT's q, k, v), of the data a copy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.SliceOp, rewriter: PatternRewriter) -> None:
        movement = _movement(op.input)
        if not isinstance(movement, nn.TransposeOp) or kernel_of(op) is not None:
            return
        readers = [use.operation for use in op.input.uses]
        if not all(isinstance(r, nn.SliceOp) and kernel_of(r) is None for r in readers):
            return  # another reader keeps the whole transpose: slicing first saves nothing
        if not _joined_alike(op, movement):
            return  # a slice of the transposed data may be a view; of the data, a copy
        perm = ints(movement.perm)
        back = inverse_permutation(perm)
        starts, sizes, steps = (ints(getattr(op, name)) for name in ("starts", "sizes", "steps"))
        inner = nn.SliceOp(
            movement.input,
            [starts[back[a]] for a in range(len(perm))],
            [sizes[back[a]] for a in range(len(perm))],
            [steps[back[a]] for a in range(len(perm))],
        )
        _replaced(op, inner, nn.TransposeOp(inner.output, list(perm)), rewriter)


def _source_axis(movement: Movement, axis: int) -> int | None:
    """The axis of `movement`'s operand that its result's `axis` is: by the permutation, or
    past the unit axes a reshape puts before its operand's shape; None for another reshape."""
    if isinstance(movement, nn.TransposeOp):
        return ints(movement.perm)[axis]
    source, target = shape_of(movement.input), shape_of(movement.output)
    lead = len(target) - len(source)
    if lead < 0 or axis < lead or any(d != 1 for d in target[:lead]) or target[lead:] != source:
        return None
    return axis - lead


class SinkBelowConcat(RewritePattern):
    """A concat of values each moved alike (one permutation; unit axes put before each
    operand's shape) concatenates the unmoved values along the axis the movements take to
    the concat's, then moves the result: the channel concat of a video network's branches,
    each a 3-D convolution's frames moved back."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ConcatOp, rewriter: PatternRewriter) -> None:
        moved = [_movement(v) for v in op.inputs]
        if kernel_of(op) is not None or any(m is None for m in moved):
            return
        first = moved[0]
        assert first is not None
        axes = {_source_axis(m, op.normalized_axis) for m in moved if m is not None}
        readers = {use.operation for v in op.inputs for use in v.uses}
        if len(axes) != 1 or None in axes or readers != {op}:
            return
        transposes = isinstance(first, nn.TransposeOp)
        if not all(
            _same_movement(m, first) if transposes else isinstance(m, nn.ReshapeOp)
            for m in moved
            if m is not None
        ):
            return  # reshapes alike: `_source_axis` found one axis for all
        inner = nn.ConcatOp([m.input for m in moved if m is not None], axes.pop())
        outer = (
            _again(first, inner.output)
            if isinstance(first, nn.TransposeOp)
            else nn.ReshapeOp(inner.output, list(shape_of(op.output)))
        )
        _replaced(op, inner, outer, rewriter)


def _composed(inner: Movement, outer: Movement) -> Movement | None:
    """One movement doing `inner` then `outer` (of one kind), or None where together they
    move nothing."""
    if isinstance(inner, nn.TransposeOp) and isinstance(outer, nn.TransposeOp):
        first, second = ints(inner.perm), ints(outer.perm)
        perm = [first[axis] for axis in second]
        return None if perm == sorted(perm) else nn.TransposeOp(inner.input, perm)
    shape = shape_of(outer.output)
    return None if shape_of(inner.input) == shape else nn.ReshapeOp(inner.input, list(shape))


class ComposeMovements(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.TransposeOp | nn.ReshapeOp) or kernel_of(op) is not None:
            return
        inner = _movement(op.input)
        if inner is None or type(inner) is not type(op):
            return
        composed = _composed(inner, op)
        if composed is None:
            rewriter.replace(op, [], [inner.input])
        else:
            composed.location = op.location
            composed.output.name_hint = op.output.name_hint
            rewriter.replace(op, composed)
        if not inner.output.uses:
            rewriter.erase(inner)


class TransposeAsReshape(RewritePattern):
    """A transpose that keeps the order of the axes longer than 1 moves no element in
    memory: a reshape (a view once bufferized) instead of a copy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.TransposeOp, rewriter: PatternRewriter) -> None:
        if kernel_of(op) is not None:
            return
        shape = shape_of(op.input)
        moved = [axis for axis in ints(op.perm) if shape[axis] != 1]
        if moved != sorted(moved):
            return
        reshape = nn.ReshapeOp(op.input, list(shape_of(op.output)))
        reshape.location = op.location
        reshape.output.name_hint = op.output.name_hint
        rewriter.replace(op, reshape)


@dataclass(frozen=True)
class SinkMovementPass(ModulePass):
    name = "sink-movement"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        patterns = [
            SinkBelowUnary(),
            SinkBelowBinary(),
            SinkBelowSlice(),
            SinkBelowConcat(),
            ComposeMovements(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        # Once the transposes have sunk and met: a transpose made a reshape no longer sinks
        # alike with its concat's other operands (nor cancels with a transpose).
        last = [TransposeAsReshape(), ComposeMovements()]
        PatternRewriteWalker(GreedyRewritePatternApplier(last)).rewrite_module(op)
