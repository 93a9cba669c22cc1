"""`propagate-layouts{remarks=false}`: let blocked layouts flow, and cancel reorder pairs.

After `insert-layouts`, every blocked kernel is wrapped in reorders to and from the plain
layout. This pass removes the round trips between two blocked kernels:

- `SinkReorderThroughAnyLayoutOp`: an op whose kernel takes "any" layout (`"*"`: element-wise
  ops, pooling, ...) and whose operand comes from `reorder(blocked -> plain)` runs on the
  blocked value directly, if its kernel accepts that layout; its result becomes blocked and
  one reorder back to plain follows it. Its other "any" operands are reordered into the
  same layout (a residual add of two blocked values needs none). Which operands take "any"
  layout the op's `#nn.kernel` says; whether the kernel accepts this one is a question about
  a layout the op does not have yet, which no attribute can answer: it is asked of
  `kernel_facts(op).layout_refusal` (kernels/facts.py, the one place passes look a chosen
  kernel up). Where select-dispatch recorded `nnlayout.padding = false` on the module, a
  layout that would pad any of those operands or results (channels off the block: a
  DenseNet's concatenation of 20 and 8 channels in NCHW8c) is refused as well, with a
  remark: the kernels were chosen not to pad, and neither does propagation.
- `FoldReorderChain`: `reorder(reorder(x))` becomes `x` when it converts back to x's type,
  else a single reorder; a reorder to its own type disappears.
- `MergeSiblingReorders`: two reorders of one value into the same type become one (a value
  with two blocked consumers, e.g. a residual block's branch and its downsampling shortcut,
  was reordered once per consumer).
- `EraseDeadReorder`: a reorder nobody uses is removed.
- `TransposeToOrderedLayout`: a transpose of plain data whose result is reordered to a layout
  that only orders the axes (NHWC), directly or after up to `REACH` ops taking any layout,
  writes its result in that layout where the result then has its operand's bytes (its
  kernel says it can: `orders_result`). It becomes a view (lowering/views.py), and the
  reorder back to plain after it sinks like any other. ConvNeXt's blocks end with a permute
  of a plain [N, H, W, C] back to [N, C, H, W], a layer scale and a residual add, before the
  next block's NHWC depthwise convolution:

      %t = nn.transpose %y perm [0, 3, 1, 2]           (a copy)
      %s = nn.mul %scale, %t
      %a = nn.add %s, %previous
      %r = layout.reorder %a -> NHWC                   (a copy)
    becomes
      %t = nn.transpose %y perm [0, 3, 1, 2] : ... -> tensor<..., NHWC>   (a view)
      %s = nn.mul %scale', %t ; %a = nn.add %s, %previous'                (in NHWC)

Repeated to a fixed point, a chain conv -> relu -> conv keeps its data blocked throughout; for
ResNet-50 only the input and the output of the convolutional trunk are reordered. Propagation
stops at ops whose kernel needs a specific layout (a remark says which and why); reorders of
constants are left to `fold-constants`. Constant expressions have no kernel and are left
alone: a reorder of one is done once, at load.

Then, once the layouts have flowed, `HoistReorderAboveUpsampling`: where an "any" layout op
makes at least `UPSAMPLING` times the elements it reads (an upsampling resize, an expand) and
its result's one use is a reorder back to plain, the op runs plain on its operands reordered
instead, so that the smaller tensor is converted. A segmentation head returns its logits
upsampled 8x to the input's size: `conv -> resize -> reorder(NHWC -> plain) -> return`
becomes `conv -> reorder(NHWC -> plain) -> resize -> return`, a reorder of 1x21x28x28 rather
than of 1x21x224x224 (oneDNN's reorder of that 21-channel NHWC tensor took a fifth of
deeplabv3_mobilenet_v3_large's time). An op that grows less (a pad of a few rows) keeps its
propagated layout.

Once the layouts are final, a remark names each activation the layouts pad, once per value
(at the op that makes it), with the axis, its real and padded sizes and the layout:

    model.mlir:7:8: remark: [propagate-layouts] nn.conv2d: %y: axis 1 (C) padded from 20
    to 24 in NCHW8c

Where select-dispatch recorded `nnlayout.padding = false`, nothing is padded and nothing is
said. (Constants padded by their layouts, packed weights, are not activations: not reported.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

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

import nnlayout.transforms.remarks as remarks
from nnlayout.diagnostics import location_of
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.dispatch import recorded_padding
from nnlayout.dialects.kernel_attr import (
    ANY_LAYOUT,
    CSR_LAYOUT,
    KERNEL_ATTR,
    PLAIN_LAYOUT,
    kernel_of,
)
from nnlayout.dialects.layout import (
    LayoutSpec,
    ReorderOp,
    encoding_name,
    layout_of,
    transposed_same_bytes,
    with_encoding_name,
)
from nnlayout.dialects.nn import NNOp, TransposeOp, ints, shape_of
from nnlayout.kernels.facts import kernel_facts
from nnlayout.transforms.insert_layouts import change_result_layout, reorder_to
from nnlayout.transforms.stages import require_tensor_level


class FoldReorderChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.output.type:
            rewriter.replace_all_uses_with(op.output, op.input)
            rewriter.erase(op)
            return
        inner = op.input.owner
        if not isinstance(inner, ReorderOp):
            return
        if inner.input.type == op.output.type:
            rewriter.replace_all_uses_with(op.output, inner.input)
            rewriter.erase(op)
        else:
            single = ReorderOp(inner.input, op.output.type)  # type: ignore[arg-type]
            rewriter.replace(op, single)


class MergeSiblingReorders(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        for use in op.input.uses:
            sibling = use.operation
            if (
                isinstance(sibling, ReorderOp)
                and sibling is not op
                and sibling.output.type == op.output.type
                and sibling.parent_block() is op.parent_block()
                and sibling.is_before_in_block(op)
            ):
                rewriter.replace_all_uses_with(op.output, sibling.output)
                rewriter.erase(op)
                return


class EraseDeadReorder(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        if not op.output.uses:
            rewriter.erase(op)


# How many ops taking any layout `TransposeToOrderedLayout` looks through for the reorder.
REACH = 4


def _ordered_target(value: SSAValue, reach: int) -> str | None:
    """A layout that only orders the axes (NHWC) into which a reorder converts `value`, or
    the result of one of up to `reach` ops taking any layout that read it one after the
    other (None if there is none)."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, ReorderOp):
            spec = layout_of(user.output.type)
            if spec is not None and not spec.is_blocked:
                return spec.text
            continue
        kernel_attr = kernel_of(user)
        if (
            reach > 0
            and kernel_attr is not None
            and kernel_attr.operands[use.index] == ANY_LAYOUT
            and kernel_attr.results == (ANY_LAYOUT,)
            and (found := _ordered_target(user.results[0], reach - 1)) is not None
        ):
            return found
    return None


class TransposeToOrderedLayout(RewritePattern):
    """A transpose of plain data writes its result in the layout a reorder after it wants,
    where that makes it a view (module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        kernel_attr = kernel_of(op)
        kernel = kernel_facts(op)
        if kernel_attr is None or kernel is None or not kernel.orders_result:
            return
        if encoding_name(op.input.type) != PLAIN_LAYOUT:
            return
        if encoding_name(op.output.type) != PLAIN_LAYOUT:
            return
        layout = _ordered_target(op.output, REACH)
        if layout is None or LayoutSpec.parse(layout).rank != len(shape_of(op.output)):
            return  # none, or one of another rank (hand-written IR broadcasting on)
        ordered = with_encoding_name(op.output.type, layout)
        if not transposed_same_bytes(op.input.type, ordered, ints(op.perm)):
            return
        change_result_layout(rewriter, op.output, layout)
        op.attributes[KERNEL_ATTR] = kernel_attr.with_layouts(kernel_attr.operands, (layout,))
        rewriter.notify_op_modified(op)


def _blocked_source(reorder: ReorderOp) -> str | None:
    """The dense non-plain layout a reorder-to-plain converts from, if that is what it does."""
    source = encoding_name(reorder.input.type)
    target = encoding_name(reorder.output.type)
    if target != PLAIN_LAYOUT or source in (PLAIN_LAYOUT, CSR_LAYOUT):
        return None
    return source


def padding_reason(
    operands: list[SSAValue], results: list[SSAValue], spec: LayoutSpec
) -> str | None:
    """Why `spec` would pad one of these values (None when it pads none): what propagation
    may not do where padding is off."""
    for what, values in (("operand", operands), ("result", results)):
        for index, value in enumerate(values):
            shape = shape_of(value)
            if spec.padding_elements(shape):
                return (
                    f"padding is off, and {what} {index} {list(shape)} in '{spec.text}' "
                    "would be padded to whole blocks"
                )
    return None


@dataclass
class SinkReorderThroughAnyLayoutOp(RewritePattern):
    print_remarks: bool
    # Whether a propagated layout may pad channels (select-dispatch's `nnlayout.padding`).
    padding: bool = True
    # (op, layout) pairs already reported, so that revisits do not repeat a remark.
    reported: set[tuple[int, str]] = field(default_factory=set[tuple[int, str]])

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NNOp, rewriter: PatternRewriter) -> None:
        kernel_attr = kernel_of(op)
        if (
            kernel_attr is None
            or not kernel_attr.operands
            or (kernel_attr.operands[0] != ANY_LAYOUT)
        ):
            return
        # The "any layout" operands and results move together; the others (e.g. a batch
        # norm's parameter vectors) keep the layout the kernel declared for them.
        positions = [i for i, want in enumerate(kernel_attr.operands) if want == ANY_LAYOUT]
        operands = [op.operands[i] for i in positions]
        results = [
            v for v, want in zip(op.results, kernel_attr.results, strict=True) if want == ANY_LAYOUT
        ]
        if any(encoding_name(v.type) != PLAIN_LAYOUT for v in (*operands, *results)):
            return
        candidates = [
            layout
            for operand in operands
            if isinstance(operand.owner, ReorderOp)
            and (layout := _blocked_source(operand.owner)) is not None
        ]
        if not candidates:
            return
        layout = candidates[0]
        kernel = kernel_facts(op)
        assert kernel is not None  # it has kernel_attr
        spec = LayoutSpec.parse(layout)
        reason = kernel.layout_refusal(op, spec)
        if reason is not None:
            reason = f"{kernel.name}: {reason}"
        elif not self.padding:
            reason = padding_reason(operands, results, spec)
        if reason is not None:
            if (id(op), layout) not in self.reported:
                self.reported.add((id(op), layout))
                remarks.emit(
                    op,
                    PropagateLayoutsPass.name,
                    f"layout {layout} not propagated: {reason}",
                    self.print_remarks,
                )
            return
        for position, operand in zip(positions, operands, strict=True):
            owner = operand.owner
            if isinstance(owner, ReorderOp) and encoding_name(owner.input.type) == layout:
                op.operands[position] = owner.input
            else:
                reorder = reorder_to(operand, layout)
                rewriter.insert(reorder, InsertPoint.before(op))
                op.operands[position] = reorder.output
        for result in results:
            change_result_layout(rewriter, result, layout)
        rewriter.notify_op_modified(op)


# How many times the elements it reads an op must make for the reorder after it to be hoisted.
UPSAMPLING = 2


def _elements(value: SSAValue) -> int:
    count = 1
    for size in shape_of(value):
        count *= size
    return count


class HoistReorderAboveUpsampling(RewritePattern):
    """`reorder(op(x) in L -> plain)` becomes `op(reorder(x -> plain))` when op's kernel takes
    any layout, the reorder is its result's one use and op makes at least `UPSAMPLING` times
    the elements it reads (module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReorderOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if (
            encoding_name(op.output.type) != PLAIN_LAYOUT
            or encoding_name(op.input.type) in (PLAIN_LAYOUT, CSR_LAYOUT)
            or not isinstance(producer, NNOp)
            or is_constant_expression(producer)
            or len(producer.results) != 1
            or not op.input.has_one_use()
        ):
            return
        kernel_attr = kernel_of(producer)
        if kernel_attr is None or kernel_attr.results[0] != ANY_LAYOUT:
            return
        positions = [i for i, want in enumerate(kernel_attr.operands) if want == ANY_LAYOUT]
        read = sum(_elements(producer.operands[i]) for i in positions)
        if not positions or UPSAMPLING * read > _elements(op.input):
            return
        for position in positions:
            reorder = reorder_to(producer.operands[position], PLAIN_LAYOUT)
            rewriter.insert(reorder, InsertPoint.before(producer))
            producer.operands[position] = reorder.output
        change_result_layout(rewriter, producer.results[0], PLAIN_LAYOUT)
        rewriter.notify_op_modified(producer)


def report_kept_reorders(module: ModuleOp, print_remarks: bool) -> None:
    """A remark at each op that still receives an activation through a reorder."""
    for op in module.walk():
        if not isinstance(op, ReorderOp) or is_constant_expression(op):
            continue  # not a reorder, or one done at load
        for use in op.output.uses:
            kernel_attr = kernel_of(use.operation)
            if kernel_attr is None or kernel_attr.operands[use.index] == ANY_LAYOUT:
                continue  # not propagated into it: SinkReorderThroughAnyLayoutOp said why
            wanted = kernel_attr.operands[use.index] or "plain"
            remarks.emit(
                use.operation,
                PropagateLayoutsPass.name,
                f"operand {use.index} reordered from "
                f"{encoding_name(op.input.type) or 'plain'} to {wanted}: "
                f"{kernel_attr.kernel_name.data} needs {wanted}",
                print_remarks,
            )


def padded_axes(value: SSAValue) -> list[str]:
    """How the layout of `value`'s type pads it: one `axis I (X) padded from R to P` per
    padded axis (none for a plain, dynamically shaped or exactly blocked value)."""
    spec = layout_of(value.type)
    shape = shape_of(value)
    if spec is None or len(shape) != spec.rank or any(size < 0 for size in shape):
        return []
    padded = spec.padded_shape(shape)
    return [
        f"axis {index} ({axis}) padded from {real} to {whole}"
        for index, (axis, real, whole) in enumerate(
            zip(spec.logical_axes, shape, padded, strict=True)
        )
        if real != whole
    ]


def _remark_site(op: Operation) -> Operation:
    """Where a remark about `op`'s result goes: `op`, unless it is a reorder without a
    location of its own (made by this pass), then the first user that has one."""
    if location_of(op) is not None or not isinstance(op, ReorderOp):
        return op
    users = {use.operation for use in op.output.uses if location_of(use.operation) is not None}
    following = op.next_op
    while following is not None:
        if following in users:
            return following
        following = following.next_op
    return next(iter(users), op)


def report_padded_values(module: ModuleOp, print_remarks: bool) -> None:
    """A remark for each activation a blocked layout pads, once per value, where it is made."""
    for op in module.walk():
        if not isinstance(op, NNOp | ReorderOp) or is_constant_expression(op):
            continue
        for index, result in enumerate(op.results):
            axes = padded_axes(result)
            if not axes:
                continue
            name = f"%{result.name_hint}" if result.name_hint else f"result {index}"
            remarks.emit(
                _remark_site(op),
                PropagateLayoutsPass.name,
                f"{name}: {', '.join(axes)} in {encoding_name(result.type)}",
                print_remarks,
            )


@dataclass(frozen=True)
class PropagateLayoutsPass(ModulePass):
    name = "propagate-layouts"

    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        padding = recorded_padding(op) is not False  # no record: padding on, as dispatch's default
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    FoldReorderChain(),
                    MergeSiblingReorders(),
                    EraseDeadReorder(),
                    SinkReorderThroughAnyLayoutOp(self.remarks, padding),
                    TransposeToOrderedLayout(),
                ],
                dce_enabled=False,
            ),
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    HoistReorderAboveUpsampling(),
                    FoldReorderChain(),
                    MergeSiblingReorders(),
                    EraseDeadReorder(),
                ],
                dce_enabled=False,
            ),
        ).rewrite_module(op)
        if padding:
            report_padded_values(op, self.remarks)
        report_kept_reorders(op, self.remarks)
