"""`default-pipeline{target=host padding=true bf16=false nnan=false remarks=false
verify=false activation-format=auto}`: the whole compiler, in order (`host`: oneDNN where it
loads, else the CPU's best blocked target).

fuse-activations (the exporters' SiLU and GELU graphs become nn.swish and nn.gelu, matched
while their constants are still the exporters' scalars) -> fold-qdq (a QDQ model's
dequantize -> op -> quantize becomes one quantized op) -> tabulate-qbinary (a qmul or qadd
of two functions of one 8-bit value, onnxruntime's swish and hardswish, becomes one table of
it) -> fuse-integer-scale (a dynamic quantization's MatMulInteger -> Cast -> Mul -> Add
becomes one nn.matmul_integer_to_float) -> share-dynamic-range (its scale and zero point read the
activation's range once) -> extend-ranks (operands of broadcasting element-wise ops get
the result's rank) -> fold-batch-norm (a batch norm after a convolution becomes part of its
weight and bias) -> fold-pad (a zero pad before a convolution becomes part of its pads) ->
split-image-conv (a 7x7 stem over the image becomes one convolution per input channel,
summed: short float32 sums, as onnxruntime's) -> fuse-channel-shuffle (ShuffleNet's
Reshape-Transpose-Reshape becomes one op) -> fold-scatter-transposes (a scatter between a
transpose and its inverse, the dynamo exporter's key/value cache write, scatters along the
original axis) -> sink-movement (transposes and reshapes move below element-wise ops;
inverse pairs cancel: a video network's 3-D layers keep their depth-first frames) ->
nest-concats (a concat repeating an earlier concat's inputs takes its result: DenseNet's
flat concats become a chain that bufferize places in one buffer) -> with
`bf16=true` (or NNLAYOUT_BF16=1 with the command-line tools), convert-to-bf16 (f32 ops whose
kernels compute bf16 become bf16 ops, with casts at the boundaries; a no-op with a remark on
a target without bf16 kernels) -> select-dispatch (every op gets its kernel) ->
fuse-post-ops (a convolution absorbs the add and activation after it where its kernel can)
-> fuse-matmul-post-ops (a matrix product absorbs its bias add and activation likewise) ->
with `activation-format=auto`, blocked-stem (on `host` in NHWC, the stem convolutions up to
a 16-channel result run in nChw16c, reading the input directly, and so do a split stem's
convolutions and the pooling after them) -> insert-layouts (reorders
around kernels that want blocked layouts) -> propagate-layouts (layouts flow, reorder pairs
cancel) -> fold-constants (weights packed at compile time) -> bufferize (buffers with
explicit padding, halos and in-place concats) -> plan-memory (one arena, in-place kernels
overwrite their input). `verify=true` then checks the plan with verify-memory-plan (which
changes nothing);
`report=true` and `svg="FILE"` are plan-memory's: the plan printed to stderr and drawn.

The target and padding go to select-dispatch alone, which records them on the module
(`nnlayout.target`, `nnlayout.padding`), where fuse-post-ops and fuse-matmul-post-ops read
them. `activation-format` (auto, nhwc or nchw16c) goes to select-dispatch too: on `host`, the
activation format chosen per module by transforms/activation_format.py's rule, or forced.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnlayout.lowering.bufferize import BufferizePass
from nnlayout.transforms.blocked_stem import BlockedStemPass
from nnlayout.transforms.convert_bf16 import ConvertToBf16Pass
from nnlayout.transforms.extend_ranks import ExtendRanksPass
from nnlayout.transforms.fold_batch_norm import FoldBatchNormPass
from nnlayout.transforms.fold_constants import FoldConstantsPass
from nnlayout.transforms.fold_pad import FoldPadPass
from nnlayout.transforms.fold_qdq import FoldQdqPass
from nnlayout.transforms.fold_scatter_transposes import FoldScatterTransposesPass
from nnlayout.transforms.fuse_activations import FuseActivationsPass
from nnlayout.transforms.fuse_channel_shuffle import FuseChannelShufflePass
from nnlayout.transforms.fuse_integer_scale import FuseIntegerScalePass
from nnlayout.transforms.fuse_matmul_post_ops import FuseMatmulPostOpsPass
from nnlayout.transforms.fuse_post_ops import FusePostOpsPass
from nnlayout.transforms.insert_layouts import InsertLayoutsPass
from nnlayout.transforms.nest_concats import NestConcatsPass
from nnlayout.transforms.plan_memory import PlanMemoryPass
from nnlayout.transforms.propagate_layouts import PropagateLayoutsPass
from nnlayout.transforms.select_dispatch import SelectDispatchPass
from nnlayout.transforms.share_dynamic_range import ShareDynamicRangePass
from nnlayout.transforms.sink_movement import SinkMovementPass
from nnlayout.transforms.split_image_conv import SplitImageConvPass
from nnlayout.transforms.tabulate_qbinary import TabulateQBinaryPass
from nnlayout.transforms.verify_memory_plan import VerifyMemoryPlanPass


@dataclass(frozen=True)
class DefaultPipelinePass(ModulePass):
    name = "default-pipeline"

    target: str = "host"
    padding: bool = True
    bf16: bool = False  # convert-to-bf16 before select-dispatch (docs/quantization.md)
    nnan: bool = False  # fuse-post-ops' fast-math promise: no NaN reaches an activation
    remarks: bool = False
    verify: bool = False
    report: bool = False  # plan-memory's: each function's plan printed to stderr
    svg: str = ""  # plan-memory's: the plans drawn in this SVG file
    activation_format: str = "auto"  # select-dispatch's, on host: auto, nhwc or nchw16c

    def passes(self) -> tuple[ModulePass, ...]:
        return (
            FuseActivationsPass(),
            FoldQdqPass(self.remarks),
            TabulateQBinaryPass(),
            FuseIntegerScalePass(),
            ShareDynamicRangePass(),
            ExtendRanksPass(),
            FoldBatchNormPass(self.remarks),
            FoldPadPass(),
            SplitImageConvPass(),
            FuseChannelShufflePass(),
            FoldScatterTransposesPass(),
            SinkMovementPass(),
            NestConcatsPass(),
            *((ConvertToBf16Pass(self.target, self.padding, self.remarks),) if self.bf16 else ()),
            SelectDispatchPass(self.target, self.padding, self.remarks, self.activation_format),
            FusePostOpsPass(nnan=self.nnan, remarks=self.remarks),
            FuseMatmulPostOpsPass(nnan=self.nnan, remarks=self.remarks),
            *((BlockedStemPass(self.remarks),) if self.activation_format == "auto" else ()),
            InsertLayoutsPass(),
            PropagateLayoutsPass(self.remarks),
            FoldConstantsPass(),
            BufferizePass(),
            PlanMemoryPass(self.report, self.svg),
            *((VerifyMemoryPlanPass(),) if self.verify else ()),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for one_pass in self.passes():
            one_pass.apply(ctx, op)
