"""`convert-to-bf16{target=host padding=true remarks=false}`: run a float32 model in bf16 where
the target's kernels compute in bf16.

bf16 keeps float32's exponent and 8 of its 24 significand bits: half the bytes to move, and
on a CPU with AVX512_BF16 (or AMX) oneDNN's bf16 convolutions and matrix products do two
(or many more) times the multiply-adds per cycle of float32, accumulating in f32. The price
is a rounding of every value to 8 bits (relative error <= 2^-9 per rounding).

What the pass does, per function, in program order: an op all of whose operands and result
are f32 becomes a bf16 op (operands, result, and so the buffers after bufferize: 2 bytes an
element) where the kernel `select-dispatch` would give the bf16 op computes it in bf16: a
kernel that says `bf16_data` (oneDNN's convolutions, fused convolutions, gemm/matmul,
pooling, element-wise, binary, concat and batch norm ops, where the CPU has AVX512_BF16: a
batch norm's bf16 vectors are widened to oneDNN's f32 ones by its kernel, and where an
activation follows, `fuse-post-ops` still makes the two one bf16 depthwise convolution, its
weight and bias folded in f32 and rounded once; kept f32 with casts around it, it cost
DenseNet-121 more than its convolutions gained, issue 27) or, on the `ref`
target, the reference kernels (the oracle: f32 math rounded once per op, so that bf16 can be
checked anywhere). An op that only moves data (reshape, flatten, transpose, slice, pad, ...)
follows its input: bf16 where it already is, exactly. Every other op stays f32, with a
remark saying why (its kernel's refusal, e.g. "the CPU has no AVX512_BF16"). Quantized ops
keep the element types their verifiers name: `nn.dynamic_scale` (f32 in, f32 out) and the
f32 inputs of `nn.dynamic_zero_point` and `nn.dynamic_quantize` read a cast back to f32.

Boundaries get explicit `nn.cast`s (round to nearest even into bf16, exact back): function
arguments and results stay f32, an f32 value entering the bf16 region is cast once (its
casts are shared by all its bf16 users), a bf16 value leaving it (a function result, the
operand of an op kept f32) is cast back. A weight (a constant, or a constant expression such
as a batch-norm-folded weight) gets a cast that is itself a constant expression: computed
once, when the program is loaded, never per inference. A bias is converted like the rest
(oneDNN would take it in f32, but `nn` ops have one element type; its rounding is below the
result's).

    func.func @f(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
      %w = nn.constant ... : tensor<8x8x3x3xf32>
      %c = nn.conv2d %x, %w ... -> tensor<1x8x8x8xf32>
      %r = nn.relu %c : tensor<1x8x8x8xf32>
      func.return %r : tensor<1x8x8x8xf32>
    }
  becomes, with `convert-to-bf16{target=onednn}` on a CPU with AVX512_BF16,
    func.func @f(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
      %w = nn.constant ... : tensor<8x8x3x3xf32>
      %x_bf16 = nn.cast %x : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xbf16>
      %w_bf16 = nn.cast %w : tensor<8x8x3x3xf32> -> tensor<8x8x3x3xbf16>
      %c = nn.conv2d %x_bf16, %w_bf16 ... -> tensor<1x8x8x8xbf16>
      %r = nn.relu %c : tensor<1x8x8x8xbf16>
      %r_f32 = nn.cast %r : tensor<1x8x8x8xbf16> -> tensor<1x8x8x8xf32>
      func.return %r_f32 : tensor<1x8x8x8xf32>
    }

A target without bf16 kernels (`avx2`, `avx512`: numpy's blocked kernels compute f32; oneDNN
on a CPU without AVX512_BF16, where it would emulate bf16 slowly) leaves the function as it
is, with one remark saying why: the option is a no-op there, never a wrong or slow result.
The pass runs before `select-dispatch` (`default-pipeline{bf16=true}`, or NNLAYOUT_BF16=1
with the command-line tools), which then picks the same bf16 kernels the pass asked about.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, ModuleOp, TensorType, bf16, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.providers import registry
from nnlayout.kernels.registry import Target
from nnlayout.transforms.select_dispatch import pass_target
from nnlayout.transforms.stages import require_tensor_level


def _tensor_types(op: Operation) -> list[TensorType]:
    return [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]


def _all_f32(op: Operation) -> bool:
    types = _tensor_types(op)
    return (
        bool(types)
        and len(types) == len(op.operands) + len(op.results)
        and all(t.element_type == f32 for t in types)
    )


def _in_bf16(value_type: TensorType) -> TensorType:
    return TensorType(bf16, value_type.get_shape(), value_type.encoding)


def _is_bf16(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, BFloat16Type)


def _probe(op: Operation) -> Operation:
    """`op` on bf16 operands and results, detached (block arguments for operands), to ask
    the registry which kernel would compute it."""
    block = Block(arg_types=[_in_bf16(v.type) for v in op.operands])  # type: ignore[arg-type]
    probe = type(op).create(
        operands=list(block.args),
        result_types=[_in_bf16(r.type) for r in op.results],  # type: ignore[arg-type]
        properties=dict(op.properties),
        attributes={k: v for k, v in op.attributes.items() if k != "kernel"},
    )
    block.add_op(probe)
    return probe


def bf16_refusal(op: Operation, target: Target, padding: bool) -> str | None:
    """Why `op` (all f32) should stay f32 on `target`; None where a kernel computes its bf16
    twin in bf16 (see the module doc)."""
    probe = _probe(op)
    try:
        selection = registry().select(probe, target, padding)
    finally:
        probe.parent_block().erase()  # type: ignore[union-attr]
    if selection is None:
        return f"no kernel implements {op.name}"
    kernel = selection.kernel
    if kernel.bf16_data or (kernel.family == "ref" and target.families[0] == "ref"):
        return None
    if selection.rejected:
        name, reason = selection.rejected[0]
        return f"{name}: {reason}"
    return f"no {'/'.join(target.families)} kernel computes {op.name} in bf16"


def _moves_data(op: Operation) -> bool:
    return isinstance(op, nn.NNOp) and op.ELEMENTS == "any"


@dataclass
class _Converter:
    target: Target
    padding: bool
    print_remarks: bool
    rewriter: Rewriter
    converted: int = 0
    # An f32 value's bf16 cast, shared by all its bf16 users.
    casts: dict[SSAValue, SSAValue] | None = None
    # The casts back to f32 this pass made: erased where no f32 user is left.
    backs: list[nn.CastOp] | None = None

    def as_bf16(self, value: SSAValue, user: Operation) -> SSAValue:
        """`value` in bf16: a converted op's result as it is (through the cast back to f32
        this pass put after it), else a cast inserted before `user` (the first bf16 user)."""
        owner = value.owner
        if isinstance(owner, nn.CastOp) and _is_bf16(owner.input) and owner.input.owner:
            return owner.input
        assert self.casts is not None
        if value not in self.casts:
            cast = nn.CastOp(value, bf16)
            self.rewriter.insert_op(cast, InsertPoint.before(user))
            self.casts[value] = cast.output
        return self.casts[value]

    def convert(self, op: Operation) -> None:
        """`op` remade in bf16, its result cast back to f32 for every current user (a later
        converted user reads the bf16 value through `as_bf16`)."""
        operands = [self.as_bf16(operand, op) for operand in op.operands]
        remade = type(op).create(
            operands=operands,
            result_types=[_in_bf16(r.type) for r in op.results],  # type: ignore[arg-type]
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        remade.location = op.location
        self.rewriter.insert_op(remade, InsertPoint.before(op))
        backs = [nn.CastOp(result, f32) for result in remade.results]
        for back in backs:
            back.location = op.location
        self.rewriter.insert_op(backs, InsertPoint.before(op))
        assert self.backs is not None
        self.backs.extend(backs)
        self.rewriter.replace_op(op, [], [back.output for back in backs])
        self.converted += 1

    def wants(self, op: Operation, known: dict[Operation, bool]) -> str | None:
        """None when `op` becomes bf16, else why it stays f32 ("" for ops that are no news:
        constants, casts, quantized or non-f32 ops)."""
        if (
            not isinstance(op, nn.NNOp)
            # quantized ops keep their verifiers' element types (nn.dynamic_scale: f32 in/out)
            or isinstance(op, nn.ConstantOp | nn.CastOp | nn.QuantizedOp)
            or kernel_of(op) is not None
            or not _all_f32(op)
            or is_constant_expression(op, known)
        ):
            return ""
        if _moves_data(op):
            source = op.operands[0].owner if op.operands else None
            follows = isinstance(source, nn.CastOp) and _is_bf16(source.input)
            return None if follows else ""
        return bf16_refusal(op, self.target, self.padding)

    def run(self, function: func.FuncOp) -> None:
        self.casts, self.backs = {}, []
        known: dict[Operation, bool] = {}
        kept: list[tuple[Operation, str]] = []
        for op in list(function.body.walk()):
            if op.parent is None:  # replaced meanwhile
                continue
            reason = self.wants(op, known)
            if reason is None:
                self.convert(op)
            elif reason:
                kept.append((op, reason))
        for back in reversed(self.backs):  # the ones later bf16 users read past
            if not back.output.uses:
                self.rewriter.erase_op(back)
        if self.converted == 0 and kept:
            op, reason = kept[0]
            remarks.emit(
                op,
                ConvertToBf16Pass.name,
                f"nothing runs in bf16 on target '{self.target.name}': {reason}; the function "
                "stays f32",
                self.print_remarks,
            )
            return
        for op, reason in kept:
            remarks.emit(op, ConvertToBf16Pass.name, f"stays f32: {reason}", self.print_remarks)


@dataclass(frozen=True)
class ConvertToBf16Pass(ModulePass):
    name = "convert-to-bf16"

    target: str = "host"
    padding: bool = True
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        target = pass_target(self.target)
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _Converter(target, self.padding, self.remarks, Rewriter()).run(function)
