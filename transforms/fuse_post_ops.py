"""`fuse-post-ops{target padding nnan=false remarks=false}`: fold a convolution's residual add
and activation into the convolution, where its chosen kernel can apply them as post-ops.

Run after `select-dispatch`: a fusion is keyed on the kernel the convolution got, and the
fused op's kernel is chosen for the target and padding select-dispatch recorded on the module
(`nnlayout.target`, `nnlayout.padding`). An option given must agree with the record (else the
pass fails at the module, saying both); where the module records nothing (IR dispatched by
hand), the options are used, by default `host` and padding on. That kernel
must declare `post_ops` (oneDNN's convolution does; numpy kernels gain nothing from fusing),
and its family (e.g. `onednn`) must have a kernel for `nn.fused_conv2d` that applies to and
accepts the fused op (for oneDNN: a fast primitive descriptor with `sum`/`eltwise`
post-ops exists, with the reference semantics, NaN included); otherwise nothing changes and
a remark says why. The convolution kernel's family and whether it takes post-ops are facts of
the kernel, not of the op, which `#nn.kernel` does not carry: the pass asks them of
`kernel_facts` (kernels/facts.py), the one place passes look a chosen kernel up. The fused
op gets that kernel, so no re-dispatch is needed:

    %c = nn.conv2d %x, %w, %b ... {kernel = #nn.kernel<"conv2d_onednn", ...>}
    %s = nn.add %c, %r {kernel = ...}
    %y = nn.relu %s {kernel = ...}
  becomes
    %y = nn.fused_conv2d %x, %w, %b add %r ... activation "relu"
           {kernel = #nn.kernel<"fused_conv2d_sum_onednn", ..., in_place = 3>}

`nnan=true` is the fast-math promise of arith's `nnan` flag: no NaN reaches an activation.
The fused ops then carry `nnan`, and oneDNN always uses its relu and clip post-ops, which map
NaN to a bound. Without it the kernel uses them only on calls whose operands are finite and
too small to overflow (checked at run time), and otherwise an exact epilogue: relu as elu with
alpha 0, clip in numpy after the primitive (see `Epilogue` in kernels/onednn/convolution.py).

An add fuses first (oneDNN's post-ops run in order: sum, then the activation), and only into
a convolution without an activation, since `relu(conv) + r` is not `relu(conv + r)`. The
convolution's result must have no other use. The fused kernel may write over the addend's
buffer (`in_place = 3`), so a residual connection costs no extra memory: the memory planner
sees one buffer where there were three (convolution, sum, activation).

The int8 residual add fuses the same way: a `nn.qadd` of a `nn.qconv2d`'s result (read with
the parameters it was written with, no other use) and an addend of the result's type becomes
`nn.qconv2d_add`, where the convolution's kernel family has a kernel for it (oneDNN's int8
convolution with the convolution's requantization and the add as post-ops, VNNI or AMX code):

    %c = nn.qconv2d %x, %w, %b ... {kernel = #nn.kernel<"qconv2d_onednn", ...>, y_* = c's}
    %y = nn.qadd %c, %r {kernel = ..., a_* = c's, b_* = r's, y_*}
  becomes
    %y = nn.qconv2d_add %x, %w, %b add %r ... {kernel = #nn.kernel<"qconv2d_add_onednn", ...,
           in_place = 3>, x_*, w_*, c_*, r_*, y_*}

It means exactly the unfused sequence (the convolution quantized to c's step, then the
qadd); the kernel keeps both roundings (kernels/onednn/quantized.py, `sum_post_ops`), so it
agrees with the two kernels but where the order of f32 operations moves a value at a half
step (onnxruntime's order where the convolution is the qadd's second operand). Writing over
%r's buffer saves the convolution's result buffer: the bottleneck's
input, the last convolution's input and its result are no longer live together. Where %r
is computed by a pure op that only the fused op reads (a downsampling shortcut, which
onnxruntime's quantizer orders before the main path) and computing it just before the
fused op lowers the most bytes live at once between the two (counted on the tensor types,
constants aside), it is moved there: its result then is not live beside the main path's
(int8 ResNet-50's arena: 1.72 MiB unfused, 1.53 MiB fused, 1.24 MiB with the move).

An activation after an inference batch norm that is not after a convolution (DenseNet's
pre-activation layers; `fold-batch-norm` folds the others) fuses too, when the batch norm's
kernel family has a convolution kernel for it: batch norm is a per-channel scale and shift,
a depthwise 1x1 convolution with weight s = scale / sqrt(var + eps) and bias
shift - mean * s, computed from the constants at load (`fold_parameters`; it reassociates
the arithmetic as `fold-batch-norm` does, with the same caveat for ill-conditioned
statistics):

    %n = nn.batch_norm %x, %scale, %shift, %mean, %var epsilon 1.0e-05 {kernel = ...}
    %y = nn.relu %n {kernel = ...}
  becomes (after the ops computing %scale_1 and %shift_1)
    %y = nn.fused_conv2d %x, %scale_1, %shift_1 strides [1, 1] pads [0, 0, 0, 0]
           dilations [1, 1] groups 16 activation "relu" {kernel = ...}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.kernel_attr import KERNEL_ATTR, kernel_of
from nnlayout.dialects.layout import buffer_bytes
from nnlayout.dialects.nn import (
    ACTIVATIONS,
    AddOp,
    BatchNormOp,
    ConstantOp,
    Conv2dOp,
    FusedConv2dOp,
    QAddOp,
    QConv2dAddOp,
    QConv2dOp,
    UnaryOp,
    shape_of,
    tensor_type,
)
from nnlayout.kernels.facts import kernel_facts
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target
from nnlayout.kernels.values import element_dtype
from nnlayout.transforms.fold_batch_norm import fold_parameters
from nnlayout.transforms.select_dispatch import recorded_choices
from nnlayout.transforms.stages import require_tensor_level


def dispatch_fused(
    fused: Operation, origin: Operation, family: str, target: Target, padding: bool
) -> list[str] | None:
    """Gives detached `fused` the first kernel of `family` that accepts it (None), at
    `origin`'s location (later diagnostics point at the op fused into); else erases it and
    returns each refusing kernel's reason (empty where no kernel of the family applies)."""
    reasons = []
    for kernel in registry().for_op(type(fused)):
        if kernel.family != family or not kernel.applies(fused):
            continue
        reason = kernel.refusal(fused, target, padding)
        if reason is None:
            fused.attributes[KERNEL_ATTR] = kernel.attribute(fused, target)
            fused.location = origin.location
            return None
        reasons.append(reason)
    fused.erase()
    return reasons


@dataclass
class _Fuser:
    """Builds a fused op for a convolution and asks the chosen kernel's family for it."""

    target: Target
    padding: bool
    nnan: bool
    print_remarks: bool

    def fused_op(
        self, conv: Conv2dOp | FusedConv2dOp, addend: SSAValue | None, activation: UnaryOp | None
    ) -> tuple[FusedConv2dOp, ConstantOp | None] | list[str]:
        """`conv` with `addend` and `activation` applied as post-ops, a detached
        `nn.fused_conv2d` given the kernel of `conv`'s kernel family that accepts it (and
        the zero bias it reads, where `conv` has none); else why not: each kernel's reason
        (none where no kernel of the family applies)."""
        chosen = kernel_facts(conv)
        if chosen is None or not chosen.post_ops:
            return []
        zero_bias = (
            None
            if conv.bias is not None
            else _zeros(
                TensorType(tensor_type(conv.output).element_type, shape_of(conv.weight)[:1])
            )
        )
        bias = conv.bias if zero_bias is None else zero_bias.output
        if isinstance(conv, FusedConv2dOp):
            addend = conv.addend if addend is None else addend
            activation = conv.activation_op() if activation is None else activation
        fused = FusedConv2dOp(conv, bias, addend, activation, self.nnan)
        reasons = dispatch_fused(fused, conv, chosen.family, self.target, self.padding)
        if reasons is not None:
            if zero_bias is not None:
                zero_bias.erase()
            return reasons
        return fused, zero_bias

    def fuse(
        self,
        conv: Conv2dOp | FusedConv2dOp,
        replaced: Operation,
        addend: SSAValue | None,
        activation: UnaryOp | None,
        rewriter: PatternRewriter,
    ) -> None:
        """Replaces `replaced` (the add or activation consuming `conv`) by the fused op when
        a kernel of the family `conv`'s kernel belongs to accepts it; else a remark says
        why."""
        found = self.fused_op(conv, addend, activation)
        if isinstance(found, list):
            if found and (chosen := kernel_of(conv)) is not None:
                remarks.emit(
                    replaced,
                    FusePostOpsPass.name,
                    f"not fused into {conv.name} ({chosen.kernel_name.data}): {found[0]}",
                    self.print_remarks,
                )
            return
        fused, zero_bias = found
        fused.output.name_hint = replaced.results[0].name_hint or conv.output.name_hint
        if zero_bias is not None:
            zero_bias.output.name_hint = "zero_bias"
            zero_bias.location = conv.location
            rewriter.insert(zero_bias, InsertPoint.before(replaced))
        rewriter.replace(replaced, fused)
        rewriter.erase(conv)


def _zeros(tensor: TensorType[Attribute]) -> ConstantOp:
    """A splat constant of zeros: the bias of a convolution that has none."""
    zero = np.zeros(1, dtype=element_dtype(tensor.element_type)).tobytes()
    return ConstantOp(tensor, value=DenseIntOrFPElementsAttr(tensor, BytesAttr(zero)))


def _fusable(value: SSAValue) -> Conv2dOp | FusedConv2dOp | None:
    """The convolution producing `value`, if `value` has no other use."""
    conv = value.owner
    if isinstance(conv, Conv2dOp | FusedConv2dOp) and value.has_one_use():
        return conv
    return None


@dataclass
class FuseAddIntoConvolution(RewritePattern):
    """`add(conv(...), r)` -> `fused_conv2d(...) add r`; `r` of the result's type."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            conv = _fusable(value)
            if (
                conv is None
                or other.type != value.type
                or other is value
                or (
                    isinstance(conv, FusedConv2dOp)
                    and (conv.addend is not None or conv.activation is not None)
                )
            ):
                continue
            self.fuser.fuse(conv, op, other, None, rewriter)
            return


@dataclass
class FuseQAddIntoQConv(RewritePattern):
    """`qadd(qconv2d(...), r)` -> `qconv2d_add(...) add r`: the int8 residual add as the
    convolution's sum post-op, written over r's buffer (in place), as the f32 fusion does.
    The qadd must not be clamped, the convolution have no activation (nn.qconv2d_add's c is
    requantized only), its result have no other use and be read by the qadd with the
    parameters it was written with, and `r` have the result's type (no broadcast)."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QAddOp, rewriter: PatternRewriter) -> None:
        if op.clamp != (None, None):
            if any(isinstance(v.owner, QConv2dOp) for v in op.operands):
                remarks.emit(
                    op,
                    FusePostOpsPass.name,
                    "not fused into its convolution: the add is clamped (a folded Relu or "
                    "Clip), and nn.qconv2d_add clamps only the convolution's result",
                    self.fuser.print_remarks,
                )
            return
        for value, other, prefixes in ((op.lhs, op.rhs, "ab"), (op.rhs, op.lhs, "ba")):
            conv = value.owner
            if (
                not isinstance(conv, QConv2dOp)
                or conv.activation is not None
                or not value.has_one_use()
                or other is value
                or other.type != op.output.type
                or not conv.qparams("y").same_as(op.qparams(prefixes[0]))
                or (chosen := kernel_facts(conv)) is None
                or not chosen.post_ops
            ):
                continue
            fused = QConv2dAddOp(conv, other, op.qparams(prefixes[1]), op.qparams("y"))
            reasons = dispatch_fused(
                fused, conv, chosen.family, self.fuser.target, self.fuser.padding
            )
            if reasons is not None:
                if not reasons:
                    return
                remarks.emit(
                    op,
                    FusePostOpsPass.name,
                    f"not fused into {conv.name} ({chosen.name}): {reasons[0]}",
                    self.fuser.print_remarks,
                )
                return
            fused.output.name_hint = op.output.name_hint or conv.output.name_hint
            rewriter.replace(op, fused)
            rewriter.erase(conv)
            _sink_shortcut(fused, rewriter)
            return


def _sink_shortcut(fused: QConv2dAddOp, rewriter: PatternRewriter) -> None:
    """Moves the op computing `fused`'s addend (a residual block's shortcut, e.g. its
    downsampling convolution) to just before `fused` where that lowers the most bytes live
    at once between them: computed first, its result would stay live beside the main
    path's (onnxruntime's quantizer orders ResNet-50's shortcut first; the exporters, and
    so the f32 model, last). Only a pure op whose result only `fused` reads; the order of
    the other ops is kept, so nothing else's live range grows but its operands'."""
    producer = fused.addend.owner
    if (
        not isinstance(producer, Operation)
        or isinstance(producer, ConstantOp)
        or producer.parent is not fused.parent
        or len(producer.results) != 1
        or not producer.results[0].has_one_use()
        or not is_side_effect_free(producer)
    ):
        return
    window: list[Operation] = []
    current = producer.next_op
    while current is not None and current is not fused:
        window.append(current)
        current = current.next_op
    if current is None or not window:
        return
    if _peak_bytes([*window, producer, fused]) < _peak_bytes([producer, *window, fused]):
        producer.detach()
        rewriter.insert(producer, InsertPoint.before(fused))


def _peak_bytes(order: list[Operation]) -> int:
    """The most bytes of run-time values (constants aside) live at once while `order` runs,
    a value counting from its definition (or the window's start) to its last use in the
    window (or its end, if read after it)."""
    index = {op: i for i, op in enumerate(order)}
    spans: dict[SSAValue, tuple[int, int]] = {}
    for i, op in enumerate(order):
        for value in (*op.operands, *op.results):
            if value in spans or isinstance(value.owner, ConstantOp):
                continue
            first = index.get(value.owner, 0)  # type: ignore[arg-type]
            uses = [index.get(use.operation, len(order)) for use in value.uses]
            spans[value] = (first, min(max(uses, default=i), len(order) - 1))
    return max(
        sum(buffer_bytes(v.type) for v, (a, z) in spans.items() if a <= step <= z)
        for step in range(len(order))
    )


@dataclass
class FuseActivationIntoConvolution(RewritePattern):
    """`act(conv(...))` -> `fused_conv2d(...) activation "act"`."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnaryOp, rewriter: PatternRewriter) -> None:
        if type(op) not in ACTIVATIONS.values():
            return
        conv = _fusable(op.input)
        if conv is None or (isinstance(conv, FusedConv2dOp) and conv.activation is not None):
            return
        self.fuser.fuse(conv, op, None, op, rewriter)


@dataclass
class BatchNormAndActivationAsConvolution(RewritePattern):
    """`act(batch_norm(x))` -> `fused_conv2d(x, s, shift - mean * s) groups C activation
    "act"`, s = scale / sqrt(var + eps): inference batch norm is a per-channel scale and
    shift, a depthwise 1x1 convolution, whose kernel applies the activation as a post-op
    while the result is in registers (one pass over memory and one call instead of two, as
    onnxruntime does for DenseNet's pre-activation layers). Only where the batch norm's
    kernel family has the convolution's kernel (`select` on the target) and it fuses."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnaryOp, rewriter: PatternRewriter) -> None:
        norm = op.input.owner
        if (
            type(op) not in ACTIVATIONS.values()
            or not isinstance(norm, BatchNormOp)
            or (not norm.output.has_one_use())
            or len(shape_of(norm.input)) != 4
        ):
            return
        chosen = kernel_facts(norm)
        if chosen is None or not all(is_constant(v) for v in norm.operands[1:]):
            return
        family = chosen.family
        folded, weight, bias = fold_parameters(norm, None, None)
        # A depthwise 1x1 convolution, never inserted: what the fused op is made from.
        conv = Conv2dOp(
            norm.input,
            weight,
            bias,
            strides=(1, 1),
            pads=(0, 0, 0, 0),
            dilations=(1, 1),
            groups=shape_of(norm.input)[1],
        )
        conv.location = norm.location
        selection = registry().select(conv, self.fuser.target, self.fuser.padding)
        found: tuple[FusedConv2dOp, ConstantOp | None] | list[str] = []
        if selection is not None and selection.kernel.family == family:
            conv.attributes[KERNEL_ATTR] = selection.kernel.attribute(conv, self.fuser.target)
            found = self.fuser.fused_op(conv, None, op)
        conv.erase()
        if isinstance(found, list):
            for new_op in reversed(folded):
                new_op.erase()
            if found:
                remarks.emit(
                    op,
                    FusePostOpsPass.name,
                    f"{norm.name} and {op.name} not run as one convolution: {found[0]}",
                    self.fuser.print_remarks,
                )
            return
        fused = found[0]
        fused.output.name_hint = op.output.name_hint or norm.output.name_hint
        weight.name_hint, bias.name_hint = norm.scale.name_hint, norm.bias.name_hint
        rewriter.insert(folded, InsertPoint.before(norm))
        rewriter.replace(op, fused)
        rewriter.erase(norm)


@dataclass(frozen=True)
class FusionPass(ModulePass):
    """What `fuse-post-ops` and `fuse-matmul-post-ops` share: their options, and one walk of
    their patterns in program order (an add is met before the activation that follows it),
    after `select-dispatch`, for the target and padding it recorded."""

    # None: what select-dispatch recorded on the module (`recorded_choices`).
    target: str | None = None
    padding: bool | None = None
    nnan: bool = False
    remarks: bool = False

    def patterns(self, target: Target, padding: bool) -> list[RewritePattern]:
        """The pass's patterns, for `target` and `padding`."""
        raise NotImplementedError

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        target, padding = recorded_choices(op, self.target, self.padding)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(self.patterns(target, padding)),
            apply_recursively=False,
        ).rewrite_module(op)


@dataclass(frozen=True)
class FusePostOpsPass(FusionPass):
    name = "fuse-post-ops"

    def patterns(self, target: Target, padding: bool) -> list[RewritePattern]:
        fuser = _Fuser(target, padding, self.nnan, self.remarks)
        return [
            FuseAddIntoConvolution(fuser),
            FuseQAddIntoQConv(fuser),
            FuseActivationIntoConvolution(fuser),
            BatchNormAndActivationAsConvolution(fuser),
        ]
