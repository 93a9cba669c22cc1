"""`fuse-activations`: the activations that torch's exporters write as small graphs become the
one op they compute, so that dispatch gives them one kernel (a oneDNN eltwise, or a
convolution post-op):

* SiLU, `x * sigmoid(x)` (either operand order) -> `nn.swish x`;
* `x * hardsigmoid(x)` with alpha 1/6, beta 1/2 (torch's HardSwish before opset 14) ->
  `nn.hardswish x`;
* exact GELU, `0.5 * x * (1 + erf(x / sqrt 2))` -> `nn.gelu x`, the product in any order and
  grouping, `x / sqrt 2` also as `x * (1 / sqrt 2)`;
* tanh GELU, `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` -> `nn.gelu x
  approximate "tanh"`, with `x^3` as `x * x * x` (grouped any way) or `nn.pow x exponent 3`;
* a leaky ReLU written as a selection, `torch.where(x > 0, x, a * x)` (also `x >= 0`, and
  `where(x < 0, a * x, x)`, `x <= 0`; the comparison either way round, the product in either
  order) with a constant slope a > 0 -> `nn.leaky_relu x alpha a`, which a convolution then
  takes as a post-op. Exact, NaN and signed zeros included: NaN compares false and a * NaN is
  NaN; at -0.0 both take -0.0 (x itself, or a * -0.0 with a > 0).

A pattern matches only when its constants are scalars (of a shape that does not broadcast x
to another shape) equal to the formula's within float32 rounding, and when every value it
replaces, but x, has no other use. The fused op computes the same formula, NaN included (x * 0
at x = -inf is NaN in both). Run before `select-dispatch` (`default-pipeline` does):

    %s = nn.sigmoid %x : tensor<1x8x4x4xf32>
    %y = nn.mul %x, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  becomes
    %y = nn.swish %x : tensor<1x8x4x4xf32>

    %d = nn.div %x, %sqrt2 : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
    %e = nn.erf %d : tensor<1x8xf32>
    %a = nn.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
    %m = nn.mul %x, %a : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    %y = nn.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  becomes
    %y = nn.gelu %x : tensor<1x8xf32>

(the constants %sqrt2, %one and %half go too, where nothing else reads them).

    %m = nn.compare "gt" %x, %zero : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xi1>
    %s = nn.mul %x, %tenth : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
    %y = nn.where %m, %x, %s : (tensor<1x8x4x4xi1>, ...) -> tensor<1x8x4x4xf32>
  becomes
    %y = nn.leaky_relu %x alpha 0.1 : tensor<1x8x4x4xf32>
"""

from __future__ import annotations

import math
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

from nnlayout.dialects import nn
from nnlayout.transforms.stages import require_tensor_level

# float32 rounds a constant by at most half an ulp (2^-24 relative); an exporter may also
# have rounded it once through float64, so allow a few ulps.
_TOLERANCE = 2.0**-21
_SQRT2 = math.sqrt(2)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_KAPPA = 0.044715


def _scalar(value: SSAValue, like: SSAValue) -> float | None:
    """The value of an inline one-element `nn.constant` that broadcasts against `like`
    without changing its shape; else None."""
    op = value.owner
    if not isinstance(op, nn.ConstantOp) or op.value is None:
        return None
    shape = nn.shape_of(value)
    if math.prod(shape) != 1 or len(shape) > len(nn.shape_of(like)):
        return None
    return float(op.inline_array().reshape(()))


def _is(value: SSAValue, like: SSAValue, expected: float) -> bool:
    found = _scalar(value, like)
    return found is not None and math.isclose(found, expected, rel_tol=_TOLERANCE)


def _only_use(value: SSAValue, op_type: type[Operation]) -> Operation | None:
    """The op of `op_type` producing `value`, if `value` has no other use."""
    owner = value.owner
    return owner if isinstance(owner, op_type) and value.has_one_use() else None


@dataclass
class _Match:
    """The ops a pattern replaces (consumers first), besides the root."""

    replaced: list[Operation]

    def factors(self, value: SSAValue) -> list[SSAValue]:
        """The factors of a product of `nn.mul`s whose intermediate results have no other
        use (recorded as replaced); `value` itself if it is no such product."""
        mul = _only_use(value, nn.MulOp)
        if mul is None:
            return [value]
        self.replaced.append(mul)
        return self.factors(mul.lhs) + self.factors(mul.rhs)

    def single(self, value: SSAValue, op_type: type[Operation]) -> Operation | None:
        op = _only_use(value, op_type)
        if op is not None:
            self.replaced.append(op)
        return op


def _one_plus(match: _Match, value: SSAValue, like: SSAValue) -> SSAValue | None:
    """t where `value` is `1 + t` or `t + 1` (no other use)."""
    add = match.single(value, nn.AddOp)
    if add is None:
        return None
    for one, term in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if _is(one, like, 1.0):
            return term
    return None


def _scaled_by_inverse_sqrt2(match: _Match, value: SSAValue, x: SSAValue) -> bool:
    """`value` is x / sqrt 2 or x * (1 / sqrt 2), with no other use."""
    div = _only_use(value, nn.DivOp)
    if div is not None:
        match.replaced.append(div)
        return div.lhs is x and _is(div.rhs, x, _SQRT2)
    factors = _Match([])
    parts = factors.factors(value)
    match.replaced += factors.replaced
    return (
        len(parts) == 2
        and x in parts
        and _is(parts[1 - parts.index(x)], x, 1 / _SQRT2)
        and bool(factors.replaced)
    )


def _tanh_argument(match: _Match, value: SSAValue, x: SSAValue) -> bool:
    """`value` is sqrt(2 / pi) * (x + 0.044715 * x^3), products in any grouping."""
    outer = match.factors(value)
    if len(outer) != 2:
        return False
    scale = next((f for f in outer if _is(f, x, _SQRT_2_OVER_PI)), None)
    if scale is None:
        return False
    add = match.single(outer[1 - outer.index(scale)], nn.AddOp)
    if add is None:
        return False
    cube = add.rhs if add.lhs is x else add.lhs if add.rhs is x else None
    if cube is None:
        return False
    terms = match.factors(cube)
    kappa = next((f for f in terms if _is(f, x, _KAPPA)), None)
    if kappa is None:
        return False
    terms.remove(kappa)
    if terms == [x, x, x]:
        return True
    power = match.single(terms[0], nn.PowOp) if len(terms) == 1 else None
    return power is not None and power.input is x and power.exponent.value.data == 3


def _gelu(match: _Match, root: nn.MulOp) -> tuple[SSAValue, str] | None:
    """(x, approximation) where `root` is 0.5 * x * (1 + erf(...)) or (1 + tanh(...))."""
    factors = match.factors(root.lhs) + match.factors(root.rhs)
    if len(factors) != 3:
        return None
    half = next((f for f in factors if _is(f, root.output, 0.5)), None)
    if half is None:
        return None
    rest = [f for f in factors if f is not half]
    for x, bracket in ((rest[0], rest[1]), (rest[1], rest[0])):
        attempt = _Match([])
        term = _one_plus(attempt, bracket, x)
        if term is None:
            continue
        erf = attempt.single(term, nn.ErfOp)
        tanh = attempt.single(term, nn.TanhOp) if erf is None else None
        if erf is not None and _scaled_by_inverse_sqrt2(attempt, erf.input, x):
            approximate = "none"
        elif tanh is not None and _tanh_argument(attempt, tanh.input, x):
            approximate = "tanh"
        else:
            continue
        match.replaced += attempt.replaced
        return x, approximate
    return None


def _replace(
    rewriter: PatternRewriter, root: Operation, new: Operation, replaced: list[Operation]
) -> None:
    """`root` replaced by `new`; then the replaced ops, and constants they alone read."""
    rewriter.replace(root, new)
    constants: list[Operation] = []
    for op in replaced:
        constants += [v.owner for v in op.operands if isinstance(v.owner, nn.ConstantOp)]
        rewriter.erase(op)
    for constant in dict.fromkeys(constants):
        if not constant.results[0].uses:
            rewriter.erase(constant)


class FuseSwishAndHardSwish(RewritePattern):
    """`x * sigmoid(x)` -> `nn.swish x`; `x * hardsigmoid(x)` (1/6, 1/2) -> `nn.hardswish`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        for x, gate in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if x.type != op.output.type:
                continue
            if (sigmoid := _only_use(gate, nn.SigmoidOp)) is not None and sigmoid.input is x:
                _replace(rewriter, op, nn.SwishOp(x), [sigmoid])
                return
            hard = _only_use(gate, nn.HardSigmoidOp)
            if (
                hard is not None
                and hard.input is x
                and math.isclose(hard.alpha.value.data, 1 / 6, rel_tol=_TOLERANCE)
                and math.isclose(hard.beta.value.data, 0.5, rel_tol=_TOLERANCE)
            ):
                _replace(rewriter, op, nn.HardSwishOp(x), [hard])
                return


class FuseGelu(RewritePattern):
    """The exact and the tanh GELU (see the module docstring) -> `nn.gelu`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        match = _Match([])
        found = _gelu(match, op)
        if found is None or found[0].type != op.output.type:
            return
        x, approximate = found
        _replace(rewriter, op, nn.GeluOp(x, approximate), match.replaced)


# The predicates of `compare(x, 0)` under which a leaky ReLU's selection keeps x itself (in
# x's operand position of `where`), and the predicate of `compare(0, x)` that is the same.
_KEEPS_X = {"gt": True, "ge": True, "lt": False, "le": False}
_MIRRORED = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}


def _compared_with_zero(mask: SSAValue) -> tuple[SSAValue, str] | None:
    """(x, predicate of `x <predicate> 0`) where `mask` is such a comparison (either operand
    order) with no other use."""
    compare = _only_use(mask, nn.CompareOp)
    if compare is None or compare.predicate.data not in _KEEPS_X:
        return None
    predicate = compare.predicate.data
    if _is_zero(compare.rhs, compare.lhs):
        return compare.lhs, predicate
    if _is_zero(compare.lhs, compare.rhs):
        return compare.rhs, _MIRRORED[predicate]
    return None


def _is_zero(value: SSAValue, like: SSAValue) -> bool:
    found = _scalar(value, like)
    return found is not None and found == 0


def _slope(value: SSAValue, x: SSAValue) -> tuple[float, Operation] | None:
    """(a, the product) where `value` is `x * a` or `a * x` (no other use), a > 0 finite."""
    mul = _only_use(value, nn.MulOp)
    if mul is None:
        return None
    for factor, other in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        a = _scalar(other, x)
        if factor is x and a is not None and 0 < a < math.inf:
            return a, mul
    return None


class FuseSelectedLeakyRelu(RewritePattern):
    """`where(x > 0, x, a * x)` and its variants (see the module docstring) ->
    `nn.leaky_relu x alpha a`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.WhereOp, rewriter: PatternRewriter) -> None:
        compared = _compared_with_zero(op.mask)
        if compared is None:
            return
        x, predicate = compared
        kept, scaled = (op.x, op.y) if _KEEPS_X[predicate] else (op.y, op.x)
        slope = _slope(scaled, x)
        if kept is not x or slope is None or x.type != op.output.type:
            return
        a, mul = slope
        compare = op.mask.owner
        assert isinstance(compare, Operation)
        _replace(rewriter, op, nn.LeakyReluOp(x, a), [compare, mul])


@dataclass(frozen=True)
class FuseActivationsPass(ModulePass):
    name = "fuse-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FuseGelu(), FuseSwishAndHardSwish(), FuseSelectedLeakyRelu()]
            )
        ).rewrite_module(op)
