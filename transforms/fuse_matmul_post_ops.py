"""`fuse-matmul-post-ops{target padding nnan=false remarks=false}`: fold the bias add and
activation after a matrix product into it, where its chosen kernel takes them as post-ops.

oneDNN's matmul and inner product apply a bias and an `eltwise` post-op while the result is
still in registers.

Why: a transformer's Linear is exported as MatMul then Add (the bias), often then GELU
(the MLP); onnxruntime fuses MatMul + Add into one Gemm. Unfused, each bias add and each
activation is a kernel call and a pass over the product's result in memory (ConvNeXt-T: 36
adds and 18 GELUs, vit_b_16: 36 adds and 12 GELUs). Two patterns, each small, composed by
one walk in program order (the add is met before the activation after it):

    %p = nn.matmul %x, %w {kernel = #nn.kernel<"matmul_onednn", ...>}
    %s = nn.add %p, %b {kernel = ...}          // %b: tensor<Nxf32>, a row of the result
    %y = nn.gelu %s approximate "tanh" {kernel = ...}
  becomes
    %y = nn.fused_matmul %x, %w bias %b activation "gelu" approximate "tanh"
           {kernel = #nn.kernel<"fused_matmul_onednn", ...>}

* `FuseBiasIntoMatmul`: `add(matmul(x, w), b)` (either order), w 2-D ([K, N]) and b a
  vector of N (what the exporters write), the product's result used by the add alone;
* `FuseActivationIntoMatmul`: `act(matmul(...))` or `act(fused_matmul(...))` without an
  activation yet, act one of `nn.fused_conv2d`'s activations; and `act(gemm(x, w, c))`, a
  dense layer as ONNX's Gemm writes it (the classifiers of AlexNet and VGG, SE blocks
  exported as Gemm), with alpha = beta = 1, x not transposed and w, c constant: the fused
  matmul reads w transposed where the gemm did (trans_b, the exporters' [N, K]) and c as a
  vector, both constant expressions computed once at load:

    %h = nn.gemm %x, %w, %c trans_b alpha 1.0 beta 1.0 {kernel = ...}
    %y = nn.relu %h {kernel = ...}
  becomes
    %t = nn.transpose %w perm [1, 0]
    %y = nn.fused_matmul %x, %t bias %c activation "relu" {kernel = ...}

As `fuse-post-ops` (which this pass follows in `default-pipeline`), it runs after
`select-dispatch`, keyed on the product's kernel: that kernel must declare `post_ops` and its
family must have a kernel for `nn.fused_matmul` that accepts the fused op, which then gets
that kernel; otherwise nothing changes and a remark (with `remarks=true`) says why. oneDNN's
kernel takes every activation as its eltwise post-op. Where that post-op computes the
reference's function on finite values only (`eltwise.finite_only`: the exact GELU's gelu_erf
turns +inf into NaN; relu, clip and hardsigmoid turn NaN into a bound, unless `nnan`
promises that no NaN reaches an activation), the kernel guards each call: the product
before the activation is finite when the norms of x, w and the bias are small enough
(|x| |w| + |b| bounds every element and partial sum), and a call they do not bound runs
the reference kernel instead, so the exact GELU of ViT, Swin, MaxViT and ConvNeXt fuses
without ever giving another number than the unfused program (see `ProductCall` in
kernels/onednn/calls.py; the guard costs a pass over x, 1/N of the product's work). The
target and padding are those `select-dispatch` recorded on the module (`recorded_choices`).

The fused op computes the unfused sequence (its reference kernel does exactly that), NaN
and infinities included: the bias is added in float32 after the product, as the add did.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.nn import (
    ACTIVATIONS,
    AddOp,
    FusedMatmulOp,
    GemmOp,
    MatmulOp,
    ReshapeOp,
    TransposeOp,
    UnaryOp,
    shape_of,
)
from nnlayout.kernels.facts import kernel_facts
from nnlayout.kernels.registry import Target
from nnlayout.transforms.fuse_post_ops import FusionPass, dispatch_fused


@dataclass
class _Fuser:
    """Builds a fused product and asks the chosen kernel's family for it."""

    target: Target
    padding: bool
    nnan: bool
    print_remarks: bool

    def fuse(
        self,
        product: MatmulOp | FusedMatmulOp | GemmOp,
        replaced: Operation,
        bias: SSAValue | None,
        activation: UnaryOp | None,
        rewriter: PatternRewriter,
    ) -> bool:
        """Replaces `replaced` (the add or activation reading `product`) by `product` with
        `bias` and `activation` applied, when a kernel of the family of `product`'s kernel
        accepts it (True); else a remark says why (where a kernel of the family applies)."""
        chosen = kernel_facts(product)
        if chosen is None or not chosen.post_ops:
            return False
        made: list[Operation] = []  # a gemm's weights and bias as a matmul reads them
        if isinstance(product, GemmOp):
            made, weights, bias = _dense_operands(product)
            matmul = MatmulOp(product.a, weights)
            fused = _fused(matmul, bias, activation, self.nnan)
            matmul.erase()
        else:
            fused = _fused(product, bias, activation, self.nnan)
        reasons = dispatch_fused(fused, product, chosen.family, self.target, self.padding)
        if reasons is None:
            fused.output.name_hint = replaced.results[0].name_hint or product.results[0].name_hint
            if made:
                rewriter.insert(made, InsertPoint.before(product))
            rewriter.replace(replaced, fused)
            rewriter.erase(product)
            return True
        for op in reversed(made):
            op.erase()
        if reasons:
            self.remark(replaced, product, chosen.name, reasons[0])
        return False

    def remark(self, replaced: Operation, product: Operation, kernel: str, reason: str) -> None:
        """Says at `replaced` why it was not fused into `product` (whose kernel is `kernel`)."""
        remarks.emit(
            replaced,
            FuseMatmulPostOpsPass.name,
            f"not fused into {product.name} ({kernel}): {reason}",
            self.print_remarks,
        )


def _dense_operands(gemm: GemmOp) -> tuple[list[Operation], SSAValue, SSAValue | None]:
    """The detached ops (located at `gemm`) making a dense layer's weights [K, N] and bias
    [N] of `gemm`'s b and c (`_dense_refusal`): b transposed where the gemm reads it so, c
    reshaped where it is [1, N]; constant expressions, computed once at load."""
    made: list[Operation] = []
    weights, bias = gemm.b, gemm.c
    if gemm.trans_b is not None:
        made.append(TransposeOp(weights, (1, 0)))
        weights = made[-1].results[0]
    if bias is not None and len(shape_of(bias)) == 2:
        made.append(ReshapeOp(bias, shape_of(bias)[1:]))
        bias = made[-1].results[0]
    for op in made:
        op.location = gemm.location
    return made, weights, bias


def _dense_refusal(gemm: GemmOp) -> str | None:
    """Why `gemm` is no dense layer that a fused matmul computes (None: it is one): alpha =
    1, a 2-D and not transposed, b a constant expression, and c absent or a constant row of
    N ([N] or [1, N]) with beta = 1."""
    c, n = gemm.c, shape_of(gemm.output)[1]
    if gemm.alpha.value.data != 1:
        return f"alpha {gemm.alpha.value.data} (a dense layer has alpha = 1)"
    if gemm.trans_a is not None or len(shape_of(gemm.a)) != 2:
        return "its a is transposed (a dense layer's rows are not)"
    if not is_constant(gemm.b):
        return "its b is computed at run time (a dense layer's weights are constant)"
    if c is None:
        return None
    if gemm.beta.value.data != 1:
        return f"beta {gemm.beta.value.data} (a dense layer has beta = 1)"
    if tuple(shape_of(c)) not in ((n,), (1, n)) or not is_constant(c):
        return f"its c is not a constant row of {n} (a dense layer's bias)"
    return None


def _fused(
    product: MatmulOp | FusedMatmulOp,
    bias: SSAValue | None,
    activation: UnaryOp | None,
    nnan: bool,
) -> FusedMatmulOp:
    """A detached `nn.fused_matmul`: `product` (with what it fused already) with `bias` and
    `activation` applied."""
    if isinstance(product, FusedMatmulOp):
        bias = product.bias if bias is None else bias
        activation = product.activation_op() if activation is None else activation
        nnan = nnan or product.nnan is not None
        product = MatmulOp(product.lhs, product.rhs)  # detached: what the fused op reads
        fused = FusedMatmulOp(product, bias, activation, nnan)
        product.erase()
        return fused
    return FusedMatmulOp(product, bias, activation, nnan)


def _fusable(value: SSAValue) -> MatmulOp | FusedMatmulOp | None:
    """The product of a 2-D right operand producing `value`, if `value` has no other use."""
    product = value.owner
    if (
        isinstance(product, MatmulOp | FusedMatmulOp)
        and value.has_one_use()
        and len(shape_of(product.rhs)) == 2
    ):
        return product
    return None


def _row(value: SSAValue, columns: int) -> SSAValue | None:
    """The vector of `columns` that `value` is: itself, or the vector `extend-ranks`
    reshaped to [1, ..., 1, columns]; else None."""
    if tuple(shape_of(value)) == (columns,):
        return value
    reshape = value.owner
    if (
        isinstance(reshape, ReshapeOp)
        and set(shape_of(value)[:-1]) <= {1}
        and tuple(shape_of(reshape.input)) == (columns,)
    ):
        return reshape.input
    return None


@dataclass
class FuseBiasIntoMatmul(RewritePattern):
    """`add(matmul(x, w), b)` -> `fused_matmul(x, w) bias b`; w [K, N] and b a vector of N
    (or its reshape to [1, ..., 1, N], which goes where nothing else reads it)."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            product = _fusable(value)
            if (
                product is None
                or other is value
                or op.output.type != value.type
                or (
                    isinstance(product, FusedMatmulOp)
                    and (product.bias is not None or product.activation is not None)
                )
            ):
                continue
            bias = _row(other, shape_of(product.rhs)[1])
            if bias is None:
                continue
            reshape = other.owner if bias is not other else None
            fused = self.fuser.fuse(product, op, bias, None, rewriter)
            if fused and reshape is not None and not reshape.results[0].uses:
                rewriter.erase(reshape)
            return


@dataclass
class FuseActivationIntoMatmul(RewritePattern):
    """`act(matmul(...))` -> `fused_matmul(...) activation "act"`; a dense layer's
    `act(gemm(x, w, c))` -> `fused_matmul(x, w') bias c' activation "act"` (`_dense_refusal`)."""

    fuser: _Fuser

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnaryOp, rewriter: PatternRewriter) -> None:
        if type(op) not in ACTIVATIONS.values():
            return
        gemm = op.input.owner
        if isinstance(gemm, GemmOp) and op.input.has_one_use():
            if (reason := _dense_refusal(gemm)) is None:
                self.fuser.fuse(gemm, op, None, op, rewriter)
            elif (chosen := kernel_facts(gemm)) is not None and chosen.post_ops:
                self.fuser.remark(op, gemm, chosen.name, reason)
            return
        product = _fusable(op.input)
        if product is None or (
            isinstance(product, FusedMatmulOp) and product.activation is not None
        ):
            return
        self.fuser.fuse(product, op, None, op, rewriter)


@dataclass(frozen=True)
class FuseMatmulPostOpsPass(FusionPass):
    name = "fuse-matmul-post-ops"

    def patterns(self, target: Target, padding: bool) -> list[RewritePattern]:
        fuser = _Fuser(target, padding, self.nnan, self.remarks)
        return [FuseBiasIntoMatmul(fuser), FuseActivationIntoMatmul(fuser)]
