"""`fold-qdq{remarks=false}`: the QDQ form's dequantize -> float op -> quantize becomes one
quantized op, so that quantized data stays quantized between kernels.

ONNX's QDQ form (what onnxruntime's `quantize_static` writes by default) keeps every operator
in float and brackets it with DequantizeLinear/QuantizeLinear; the importer keeps that as
`nn.dequantize`/`nn.quantize` around float ops, which run correctly but in f32. This pass
rewrites, for a `nn.quantize` (per tensor) of the result of a float op used by nothing else,
whose float operands are all `nn.dequantize` results:

* conv2d(dq(x), dq(w), dq(b)?) [-> relu | clip] -> q  =>  `nn.qconv2d` (w per tensor or per
  output channel; the bias a dequantized i32 of scale x_scale * w_scale and zero point 0, or
  an f32 constant, which torch's pt2e exports write, divided by x_scale * w_scale at load (a
  constant `nn.div`): an f32 bias in the accumulator's units; a Relu or Clip between becomes
  the output clamp, none where saturation clamps already: a Relu quantized with the type's
  least value as zero point); another activation of `nn.ACTIVATIONS` between (SiLU,
  HardSwish, GELU, ...: torch's x86 quantizer quantizes the activation's result, not the
  convolution's) becomes the qconv2d's `activation`, applied to its real result (likewise
  for the products below: a transformer's Linear -> GELU);
* gemm(dq(a), dq(b), dq(c)?) (alpha = beta = 1, no trans_a) and matmul(dq(a), dq(b))
  [-> relu | clip] -> q  =>  `nn.qmatmul` (trans_b: a transpose of the integer weights,
  folded at compile time; b per tensor or per column; c the bias, as for conv2d); likewise
  matmul(dq(a), transpose(dq(w))) + c, c an f32 constant per column (a Linear layer as the
  dynamo exporter writes it: `fold_qdq_products.py`);
* conv2d(dq(x), dq(w), b?) + dq(r) [-> relu | clip] -> q  =>  `nn.qconv2d_add` without c
  (torch's x86 quantizer leaves a residual block's convolution result float: one rounding,
  of the sum; r of the result's integer type);
* add/mul(dq(a), dq(b)) [-> relu | clip] -> q  =>  `nn.qadd`/`nn.qmul` (torch's quantized
  exports write a residual add's Relu there); global_avg_pool(dq(x)) -> q  =>
  `nn.qglobal_avg_pool`; avg_pool2d(dq(x)) -> q  =>  `nn.qavg_pool2d` (its padding x's zero
  point, a real 0, as the float op's is 0) where that gives the float ops' bytes on every
  input: equal scales, one odd divisor (torch's Inception-v3: 3x3, pads counted); an even
  one (a 2x2 window) lands on half steps, which the f32 ops round by their summation order;
  concat(dq(x1), ...) -> q  =>  `nn.qconcat`;
* relu | clip(dq(c)) -> q with the dequantize's parameters, c a quantized op above read only
  there  =>  c's clamp, narrowed (torch's quantized exports write ReLU6 so);
* f(dq(x)) -> q, f an element-wise function (hardswish, swish, sigmoid, hardsigmoid, gelu,
  tanh, elu, ...) or a chain of them and of add/sub/mul/div by a one-element constant (up to
  `CHAIN_LIMIT` ops, each result read only by the next: a quantized transformer's x / sqrt(2)
  -> erf) and x of the result's 8-bit type  =>  `nn.qlookup` of x: a table of 256 entries,
  f's reference kernels on each dequantized value, quantized (torch's MobileNetV3 and
  EfficientNet exports; what the float ops compute, up to their kernels' float rounding); a
  table of a table's result read only there composes with it into one;
* linear resize(dq(x)) -> q, x of the result's 8-bit type  =>  `nn.qresize` (onnxruntime's
  QDQ Resize, a segmentation head's upsampling: what the float ops compute, quantized once);
* max_pool2d, flatten, reshape, transpose, slice, channel_shuffle, expand or nearest resize
  of dq(x) -> q with the dequantize's parameters  =>  the same op on the integers (exact:
  these ops only move or select values, and quantization is monotonic); with other
  parameters of the same 8-bit type (torch's channel split requantizes each half), followed
  by `nn.qlookup` of the requantization q(dq(v)) (exact too: requantizing is monotonic).
* then, with no quantize after it: matmul(dq(a), dq(w) or transpose(dq(w))), w a constant
  =>  `nn.matmul_integer_to_float`; conv2d(dq(x), dq(w), b?) [-> activation], w a constant
  =>  `nn.qconv2d_to_float` (with the activation that is its only user; torch's x86
  quantizer quantizes a Linear's or a convolution's inputs only where a float op follows:
  transforms/fold_qdq_float.py);
* and, before all of these: batch_norm(dq(x)) -> q, per tensor, x u8 or s8  =>
  `nn.qbatch_norm` (a pre-activation network's normalisation, DenseNet's:
  transforms/fold_qdq_batch_norm.py).

    %x1 = nn.dequantize %xq {x_scale = dense<0.02>, x_zero_point = dense<128> : tensor<ui8>}
    %w1 = nn.dequantize %wq {axis = 0, x_scale = dense<[...]> : tensor<8xf32>, ...}
    %b1 = nn.dequantize %bq {axis = 0, x_scale = dense<[...]> : tensor<8xf32>, ... i32}
    %c = nn.conv2d %x1, %w1, %b1 ... : (...f32...) -> tensor<1x8x8x8xf32>
    %cq = nn.quantize %c {y_scale = dense<0.016>, y_zero_point = dense<0> : tensor<ui8>}
  becomes
    %cq = nn.qconv2d %xq, %wq, %bq ... {x_scale = ..., w_scale = ..., y_scale = ..., ...}
        : (tensor<1x3x8x8xui8>, tensor<8x3x3x3xi8>, tensor<8xi32>) -> tensor<1x8x8x8xui8>

What does not match stays float (a remark says why where a quantize follows a float op):
the parameters differ in type or per axis, an operand is not dequantized (a float
bias), a per-axis activation, a float result used elsewhere. Numerically the q-ops compute
what ONNX's QOperator form specifies (the float op's exact result, quantized once), which
differs from dequantize -> f32 op -> quantize only by the f32 rounding of the float op: within
one quantization step. The pass runs before `select-dispatch` (in `default-pipeline` right
after fuse-activations, before extend-ranks reshapes the add's operands).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

import nnlayout.transforms.remarks as remarks
from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import KERNEL_ATTR
from nnlayout.dialects.nn import QParams
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.reference_quantized import dequantize_array, table_of
from nnlayout.transforms.fold_qdq_batch_norm import FoldQBatchNorm
from nnlayout.transforms.fold_qdq_float import integer_convolution, integer_product
from nnlayout.transforms.fold_qdq_products import (
    NoFold,
    biased_product,
    clamp_of,
    convolution_sum,
    dequantized,
    fold_conv,
    fold_conv_sum,
    fold_matmul,
)
from nnlayout.transforms.stages import require_tensor_level

#: Ops that only move or select elements: exact on the integers when dq and q agree.
MOVEMENT = (
    nn.MaxPool2dOp,
    nn.FlattenOp,
    nn.ReshapeOp,
    nn.TransposeOp,
    nn.SliceOp,
    nn.ChannelShuffleOp,
    nn.ExpandOp,
    nn.ResizeOp,
)
#: The largest window (kH * kW, odd) whose integer average fold-qdq makes an nn.qavg_pool2d.
EXACT_WINDOW = 49
#: Element-wise functions that dequantize -> f -> quantize turns into a table (nn.qlookup);
#: a Relu or Clip after an op that clamps becomes its clamp first.
TABULATED = (
    nn.SigmoidOp,
    nn.TanhOp,
    nn.ReluOp,
    nn.LeakyReluOp,
    nn.ClipOp,
    nn.HardSigmoidOp,
    nn.HardSwishOp,
    nn.SwishOp,
    nn.GeluOp,
    nn.ErfOp,
    nn.EluOp,
    nn.SeluOp,
    nn.SoftplusOp,
    nn.MishOp,
)
#: Element-wise binary ops a table may include where one operand is a one-element constant
#: (torch's GELU: x / sqrt(2), + 1, * 0.5; attention's query scaling).
SCALAR_BINARY = (nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp)
#: The most ops one table stands for.
CHAIN_LIMIT = 8
#: The activations an `nn.qconv2d` or `nn.qmatmul` applies to its real result (a Relu or
#: Clip: its clamp).
PRODUCT_ACTIVATIONS = tuple(
    kind for kind in nn.ACTIVATIONS.values() if kind not in (nn.ReluOp, nn.ClipOp)
)
#: The q-ops whose clamp bounds their result (qconv2d_add's, with c, the convolution's).
CLAMPS_ITS_RESULT = (nn.QConv2dOp, nn.QMatmulOp, nn.QBinaryOp)


def _elementwise(op: Operation, y: QParams, activation: Operation | None) -> Operation:
    if isinstance(op, nn.AddOp | nn.MulOp):
        a, a_params = dequantized(op.lhs, "lhs")
        b, b_params = dequantized(op.rhs, "rhs")
        if not a_params.element_type == b_params.element_type == y.element_type:
            raise NoFold("its operands and result have different integer types")
        q_class = nn.QAddOp if isinstance(op, nn.AddOp) else nn.QMulOp
        return q_class(a, b, (a_params, b_params, y), clamp=clamp_of(activation, y))
    if activation is not None:
        raise NoFold(f"a {activation.name} follows an op that cannot clamp its output")
    if isinstance(op, nn.GlobalAvgPoolOp | nn.AvgPool2dOp):
        x, x_params = dequantized(op.input, "the input")
        if x_params.element_type != y.element_type:
            raise NoFold("its input and result have different integer types")
        if isinstance(op, nn.GlobalAvgPoolOp):
            return nn.QGlobalAvgPoolOp(x, (x_params, y))
        _check_exact_average(op, x_params, y)
        return nn.QAvgPool2dOp.create(  # the window's properties, and the parameters
            operands=[x],
            result_types=[nn.with_shape(x, nn.shape_of(op.output))],
            properties={**op.properties, **x_params.properties("x"), **y.properties("y")},
        )
    assert isinstance(op, nn.ConcatOp)
    parts = [dequantized(v, f"input {i}") for i, v in enumerate(op.inputs)]
    if any(p.element_type != y.element_type for _, p in parts):
        raise NoFold("its inputs and result have different integer types")
    joined = QParams.make(
        [float(p.scale) for _, p in parts], [int(p.zero_point) for _, p in parts], y.element_type
    )
    return nn.QConcatOp([v for v, _ in parts], op.axis.value.data, (joined, y))


def _check_exact_average(op: nn.AvgPool2dOp, x: QParams, y: QParams) -> None:
    """Raises NoFold unless the integer average rounds as the float ops do on every input:
    x's and y's scales equal and every window divided by one odd count K <= `EXACT_WINDOW`.
    Then the average is D / K for an integer D, never a half step and at least 1 / (2K)
    from one, farther than the f32 ops' rounding error (under K * 255 * 2**-24 steps) can
    move it: both round to the same integer. An even count lands on half steps, where the
    f32 ops round either way by their summation order (ONNX's reference evaluator's 2x2
    average of Q -> DQ does)."""
    if not np.array_equal(x.scale, y.scale):
        raise NoFold(
            "x and y have different scales: the integer average rounds a value near a half "
            "step as the f32 ops may not"
        )
    if (varies := nn.varying_divisor(op)) is not None:
        raise NoFold(f"its windows divide by different counts ({varies})")
    count = math.prod(nn.ints(op.kernel))
    if count % 2 == 0 or count > EXACT_WINDOW:
        raise NoFold(
            f"its windows divide by {count}: an average can land on a half step, where the "
            "f32 ops round either way"
            if count % 2 == 0
            else f"its windows divide by {count} (> {EXACT_WINDOW}): the f32 ops' rounding "
            "may move an average across a half step"
        )


def _movement(op: Operation, y: QParams) -> list[Operation]:
    """The op on the integers; where the quantize has other parameters than the dequantize
    (torch's channel split requantizes each half), followed by the requantization's table."""
    x, x_params = dequantized(op.operands[0], "the input")
    if isinstance(op, nn.ResizeOp) and op.mode.data != "nearest":
        if x_params.element_type != y.element_type:
            raise NoFold("the dequantize and the quantize have different integer types")
        return [nn.QResizeOp(x, op, (x_params, y))]
    same = x_params.same_as(y)
    if not same and x_params.element_type != y.element_type:
        raise NoFold("the dequantize and the quantize have different parameters")
    moved = type(op).create(
        operands=[x],
        result_types=[nn.with_shape(x, nn.shape_of(op.results[0]))],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    if same:
        return [moved]
    table = table_of(x_params, y)
    return [moved, nn.QLookupOp(moved.results[0], table.tolist(), (x_params, y))]


def _fold(op: Operation, y: QParams, activation: Operation | None) -> list[Operation]:
    """The ops replacing `op` (and `activation`) followed by a quantize of `y`."""
    if isinstance(op, nn.Conv2dOp):
        return fold_conv(op, y, activation)
    if isinstance(op, nn.MatmulOp | nn.GemmOp):
        return fold_matmul(op, y, activation)
    if isinstance(op, nn.AddOp) and (biased := biased_product(op)) is not None:
        return fold_matmul(biased[0], y, activation, biased[1])
    if isinstance(op, nn.AddOp) and (summed := convolution_sum(op)) is not None:
        return fold_conv_sum(*summed, y, activation)
    if isinstance(op, nn.AddOp) and any(isinstance(v.owner, nn.MatmulOp) for v in op.operands):
        raise NoFold(
            "a matmul's result plus something other than an f32 constant of one value per "
            "column (a Linear's bias), or a matmul result read elsewhere too"
        )
    if isinstance(op, nn.AddOp | nn.MulOp | nn.GlobalAvgPoolOp | nn.AvgPool2dOp | nn.ConcatOp):
        return [_elementwise(op, y, activation)]
    if activation is not None:
        raise NoFold(f"a {activation.name} follows an op that cannot clamp its output")
    if isinstance(op, MOVEMENT):
        return _movement(op, y)
    raise NoFold(f"{op.name} has no quantized form")


@dataclass
class FoldQdq(RewritePattern):
    print_remarks: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.QuantizeOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if not isinstance(producer, Operation) or not isinstance(producer, nn.NNOp):
            return
        if isinstance(producer, nn.DequantizeOp | nn.ConstantOp):
            return
        if KERNEL_ATTR not in op.attributes and KERNEL_ATTR not in producer.attributes:
            if _clamps_a_clamped_op(op, producer):
                _fold_into_clamp(op, producer, rewriter)  # type: ignore[arg-type]
                return
            if (found := _tabulated(op, producer)) is not None:
                _fold_into_table(op, *found, rewriter)
                return
        activation = None
        if isinstance(producer, nn.ReluOp | nn.ClipOp) and producer.output.has_one_use():
            inner = producer.input.owner
            if isinstance(inner, nn.Conv2dOp | nn.MatmulOp | nn.GemmOp | nn.AddOp | nn.MulOp):
                activation, producer = producer, inner
        elif (
            isinstance(producer, PRODUCT_ACTIVATIONS)
            and producer.output.has_one_use()
            and _activated_product(producer.input.owner)
        ):
            activation, producer = producer, producer.input.owner
        y = op.qparams()
        try:
            chosen = (op, producer, *((activation,) if activation else ()))
            if any(KERNEL_ATTR in each.attributes for each in chosen):
                raise NoFold("a kernel was chosen already (fold-qdq runs before select-dispatch)")
            if y.per_axis:
                raise NoFold("the quantize is per axis")
            if not producer.results[0].has_one_use():
                raise NoFold("the float result has other uses")
            new_ops = _fold(producer, y, activation)
        except NoFold as reason:
            _remark(op, f"not folded into a quantized op: {reason}", self.print_remarks)
            return
        _replace_result(op.output, new_ops, producer.location, rewriter)
        dead = [op, *((activation,) if activation else ()), producer]
        if isinstance(producer, nn.AddOp) and (biased := biased_product(producer)) is not None:
            dead.append(biased[0])  # a Linear's matmul, folded with its bias's add
        elif isinstance(producer, nn.AddOp) and (summed := convolution_sum(producer)) is not None:
            dead.append(summed[0])  # a residual block's convolution, folded with its add
        operands = [v for o in dead for v in o.operands]
        for old in dead:
            rewriter.erase(old)
        _erase_unused_dequantizes(operands, rewriter)


def _activated_product(op: object) -> bool:
    """Whether `op` is a product that folds with an activation after it: a convolution, a
    matmul or gemm, or a Linear's bias add (`biased_product`)."""
    if isinstance(op, nn.AddOp):
        return biased_product(op) is not None
    return isinstance(op, nn.Conv2dOp | nn.MatmulOp | nn.GemmOp)


def _remark(op: Operation, text: str, print_remarks: bool) -> None:
    remarks.emit(op, FoldQdqPass.name, text, print_remarks)


def _replace_result(
    result: SSAValue, new_ops: list[Operation], location: object, rewriter: PatternRewriter
) -> None:
    """`new_ops` inserted before `result`'s op, at `location`, their last result named as
    `result` and read where it was."""
    for new_op in new_ops:
        new_op.location = location  # type: ignore[assignment]
    new_ops[-1].results[0].name_hint = result.name_hint
    rewriter.insert(new_ops, InsertPoint.before(result.owner))  # type: ignore[arg-type]
    rewriter.replace_all_uses_with(result, new_ops[-1].results[0])


def _clamps_a_clamped_op(op: nn.QuantizeOp, producer: Operation) -> bool:
    """q(relu | clip(dq(c))), q's parameters dq's and c's, c the result of a quantized op
    that clamps it (a conv, matmul, add or mul already folded), each result read only by the
    next."""
    if not isinstance(producer, nn.ReluOp | nn.ClipOp) or not producer.output.has_one_use():
        return False
    dq = producer.input.owner
    if not isinstance(dq, nn.DequantizeOp) or not dq.output.has_one_use():
        return False
    clamped = dq.input.owner
    return (
        isinstance(clamped, CLAMPS_ITS_RESULT)
        and KERNEL_ATTR not in clamped.attributes
        and KERNEL_ATTR not in dq.attributes
        and dq.input.has_one_use()
        and not op.qparams().per_axis
        and op.qparams().same_as(dq.qparams())
        and clamped.qparams("y").same_as(dq.qparams())
    )


def _fold_into_clamp(
    op: nn.QuantizeOp, activation: nn.ReluOp | nn.ClipOp, rewriter: PatternRewriter
) -> None:
    """The activation between a dequantize and a quantize of the same parameters (torch's
    quantized exports write ReLU6 so) becomes the clamp of the op before: clip(clip(x, a, b),
    c, d) = clip(x, clip(a, c, d), clip(b, c, d))."""
    dq = activation.input.owner
    assert isinstance(dq, nn.DequantizeOp)
    clamped = dq.input.owner
    assert isinstance(clamped, CLAMPS_ITS_RESULT)
    y = op.qparams()
    low, high = nn.integer_range(y.element_type)
    a, b = clamped.clamp_limits(y.element_type)
    c, d = clamp_of(activation, y)
    c, d = low if c is None else c, high if d is None else d
    least, most = min(max(a, c), d), min(max(b, c), d)
    clamped.set_clamp((None if least == low else least, None if most == high else most))
    rewriter.replace_all_uses_with(op.output, dq.input)
    for dead in (op, activation, dq):
        rewriter.erase(dead)


def _scalar_constant(value: SSAValue) -> np.ndarray | None:
    """The f32 value of a one-element constant: an inline `nn.constant`, or the per-tensor
    dequantize of one (quantize_static quantizes constants too); else None."""
    owner = value.owner
    params = None
    if isinstance(owner, nn.DequantizeOp):
        params, owner = owner.qparams(), owner.input.owner
    if not isinstance(owner, nn.ConstantOp) or owner.value is None:
        return None
    if math.prod(nn.shape_of(owner.output)) != 1 or (params is not None and params.per_axis):
        return None
    array = owner.inline_array().reshape(())
    if params is not None:
        return dequantize_array(array, params)
    return array if array.dtype == np.float32 else None


def _function_input(op: Operation) -> SSAValue | None:
    """The one activation an element-wise function of a table reads: a `TABULATED` op's
    input, or the operand of a `SCALAR_BINARY` op beside a one-element constant; None for
    another op, or where the constant would change the shape."""
    if isinstance(op, TABULATED):
        return op.operands[0]
    if not isinstance(op, SCALAR_BINARY):
        return None
    constants = [_scalar_constant(v) is not None for v in op.operands]
    if constants.count(True) != 1:
        return None
    value = op.operands[constants.index(False)]
    return value if nn.shape_of(value) == nn.shape_of(op.results[0]) else None


def _chain(producer: Operation) -> tuple[list[Operation], nn.DequantizeOp] | None:
    """The element-wise functions from a dequantize to `producer` (first to last), each
    result read once, by the next, none with a kernel yet; None where there is no such
    chain of at most `CHAIN_LIMIT` ops."""
    chain: list[Operation] = []
    current: object = producer
    while isinstance(current, Operation) and len(chain) < CHAIN_LIMIT:
        source = _function_input(current)
        if source is None or not current.results[0].has_one_use():
            return None
        if KERNEL_ATTR in current.attributes:
            return None
        chain.append(current)
        if isinstance(source.owner, nn.DequantizeOp):
            return chain[::-1], source.owner
        current = source.owner
    return None


def _tabulated(
    op: nn.QuantizeOp, producer: Operation
) -> tuple[list[Operation], nn.DequantizeOp] | None:
    """The chain and dequantize of q(f(dq(x))), f a chain of element-wise functions
    (`_chain`) ending at `producer`, x and the result of one 8-bit type, both per tensor;
    None where `op` is not that."""
    found = _chain(producer)
    if found is None:
        return None
    x, y = found[1].qparams(), op.qparams()
    same_type = x.element_type == y.element_type
    return found if not x.per_axis and not y.per_axis and same_type else None


def _evaluate(chain: Sequence[Operation], source: SSAValue, real: np.ndarray) -> np.ndarray:
    """The chain's reference kernels on `real`, the values of `source` (the dequantize's
    result) through it; each op's other operand is its one-element constant."""
    for op in chain:
        inputs = [real if v is source else _scalar_constant(v) for v in op.operands]
        real, source = REFERENCE_KERNELS[type(op)](op, inputs), op.results[0]
    return real


def _fold_into_table(
    op: nn.QuantizeOp,
    chain: list[Operation],
    dq: nn.DequantizeOp,
    rewriter: PatternRewriter,
) -> None:
    """q(f(dq(x))) => nn.qlookup of x: f's reference kernels on the 256 dequantized values,
    quantized, is what the float ops compute for each of them; a lone f is recorded on it
    where it is one of `ACTIVATIONS` (a kernel may compute it where it gives the same
    bytes). Where x is itself a lookup's result read only here, the two tables become one."""
    function = chain[-1]
    x, y = dq.qparams(), op.qparams()
    table = table_of(x, y, lambda real: _evaluate(chain, dq.output, real))
    single = len(chain) == 1 and type(function) in nn.ACTIVATIONS.values()
    source, recorded = dq.input, function if single else None
    inner = source.owner
    if (
        isinstance(inner, nn.QLookupOp)
        and KERNEL_ATTR not in inner.attributes
        and source.has_one_use()
        and dq.output.has_one_use()
    ):
        low = nn.integer_range(x.element_type)[0]
        table = table[inner.values().astype(np.int64) - low]
        source, x, recorded = inner.input, inner.qparams("x"), None
    lookup = nn.QLookupOp(source, table.tolist(), (x, y), recorded)  # type: ignore[arg-type]
    lookup.location = function.location
    lookup.output.name_hint = op.output.name_hint
    rewriter.insert(lookup, InsertPoint.before(op))
    rewriter.replace_all_uses_with(op.output, lookup.output)
    operands = [v for f in chain for v in f.operands]
    for dead in (op, *reversed(chain)):
        rewriter.erase(dead)
    _erase_unused_dequantizes([dq.output, *operands], rewriter)
    if source is not dq.input:
        rewriter.erase(inner)  # type: ignore[arg-type]


def _erase_unused_dequantizes(values: list[SSAValue], rewriter: PatternRewriter) -> None:
    """Erases the dequantizes among `values`' producers that nothing reads any more (and a
    transpose of dequantized weights before one: `fold_matmul`), and the one-element
    constants (a table's operands) left unread by that."""
    erased: set[Operation] = set()
    for value in dict.fromkeys(values):
        owner = value.owner
        if isinstance(owner, nn.TransposeOp) and owner not in erased and not owner.output.uses:
            erased.add(owner)  # of dequantized weights (`fold_matmul`)
            rewriter.erase(owner)
            owner = owner.input.owner
        if isinstance(owner, nn.DequantizeOp) and owner not in erased and not owner.output.uses:
            source = owner.input.owner
            erased.add(owner)
            rewriter.erase(owner)
            owner = source
        if (
            isinstance(owner, nn.ConstantOp)
            and owner not in erased
            and not owner.output.uses
            and math.prod(nn.shape_of(owner.output)) == 1
        ):
            erased.add(owner)
            rewriter.erase(owner)


@dataclass
class FoldFloatProduct(RewritePattern):
    """matmul(dq(a), dq(w) or transpose(dq(w))) or conv2d(dq(x), dq(w), b?) whose result
    stays float  =>  `nn.matmul_integer_to_float` or `nn.qconv2d_to_float` (with the
    activation that is the convolution's only user; transforms/fold_qdq_float.py)."""

    print_remarks: bool

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MatmulOp | nn.Conv2dOp) or KERNEL_ATTR in op.attributes:
            return
        if not isinstance(op.operands[0].owner, nn.DequantizeOp):
            return
        activation = None
        try:
            if isinstance(op, nn.MatmulOp):
                new_ops = integer_product(op)
            else:
                activation = _only_activation(op.output)
                new_ops = integer_convolution(op, activation)
        except NoFold as reason:
            _remark(op, f"not an integer product with a float result: {reason}", self.print_remarks)
            return
        result = op.output if activation is None else activation.output
        _replace_result(result, new_ops, op.location, rewriter)
        operands = list(op.operands)
        if activation is not None:
            rewriter.erase(activation)
        rewriter.erase(op)
        _erase_unused_dequantizes(operands, rewriter)


def _only_activation(value: SSAValue) -> nn.UnaryOp | None:
    """The activation of `nn.ACTIVATIONS` that is `value`'s only user (None: another)."""
    if not value.has_one_use():
        return None
    user = next(iter(value.uses)).operation
    kinds = tuple(nn.ACTIVATIONS.values())
    return user if isinstance(user, kinds) and KERNEL_ATTR not in user.attributes else None


@dataclass(frozen=True)
class FoldQdqPass(ModulePass):
    name = "fold-qdq"

    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_tensor_level(op)
        PatternRewriteWalker(FoldQBatchNorm(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(FoldQdq(self.remarks), apply_recursively=False).rewrite_module(op)
        walker = PatternRewriteWalker(FoldFloatProduct(self.remarks), apply_recursively=False)
        walker.rewrite_module(op)
