"""The products `fold-qdq` folds (transforms/fold_qdq.py): conv2d, gemm and matmul between
dequantizes and a quantize become `nn.qconv2d` and `nn.qmatmul`, with their bias in the
accumulator's units and the Relu or Clip between as their clamp (another activation: their
activation); and what refuses a fold
(`NoFold`, the remark's text)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, f32, i32
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant
from nnlayout.dialects.nn import QParams

Clamp = tuple[int | None, int | None]


class NoFold(Exception):
    """Why a dequantize -> op -> quantize chain does not fold (the remark's text)."""


def dequantized(
    value: SSAValue, what: str, per_axis: int | None = None
) -> tuple[SSAValue, QParams]:
    """The integers and parameters of a dequantized `value`; per axis only along `per_axis`."""
    owner = value.owner
    if not isinstance(owner, nn.DequantizeOp):
        raise NoFold(f"{what} is not the result of an nn.dequantize")
    params = owner.qparams()
    if params.per_axis and params.axis != per_axis:
        raise NoFold(f"{what} is quantized per axis {params.axis}")
    return owner.input, params


def product_bias(
    value: SSAValue | None, x: QParams, w: QParams
) -> tuple[list[Operation], SSAValue | None]:
    """The bias in the accumulator's units (scale x_scale * w_scale) and the ops making it:
    the i32 behind a dequantized bias of that scale and zero point 0; or an f32 constant (the
    bias torch's pt2e exports keep float) divided by that scale, once, at load."""
    if value is None:
        return [], None
    if not isinstance(value.owner, nn.DequantizeOp):
        if nn.tensor_type(value).element_type != f32 or not is_constant(value):
            raise NoFold("the bias is neither dequantized nor an f32 constant")
        scale = np.float32(x.scale) * np.asarray(w.scale, np.float32)
        units_type = nn.tensor_type(value)
        units = np.broadcast_to(scale, nn.shape_of(value)).astype(np.float32)
        scales = nn.ConstantOp(
            units_type, value=DenseIntOrFPElementsAttr.from_list(units_type, units.tolist())
        )
        divided = nn.DivOp(value, scales.output)
        return [scales, divided], divided.output
    bias, params = dequantized(value, "the bias", 0)
    expected = np.broadcast_to(x.scale * w.scale, (nn.shape_of(bias)[0],))
    scale = np.broadcast_to(params.scale, expected.shape)
    if params.element_type != i32 or np.any(params.zero_point != 0):
        raise NoFold("the bias is not an i32 with zero point 0")
    if not np.allclose(scale, expected, rtol=1e-6, atol=0):
        raise NoFold("the bias's scale is not x_scale * w_scale")
    return [], bias


def clamp_of(activation: Operation | None, y: QParams) -> Clamp:
    """The output range of a Relu or Clip folded into the quantized op: quantization is
    monotonic, so clamping the float result is clamping its quantization."""
    if activation is None:
        return None, None
    zp = int(y.zero_point)
    low, high = nn.integer_range(y.element_type)
    if isinstance(activation, nn.ReluOp):
        return (zp, None) if zp > low else (None, None)  # at the type's least: saturation
    assert isinstance(activation, nn.ClipOp)

    def bound(attr: object, limit: int) -> int | None:
        if attr is None:
            return None
        real = np.float32(attr.value.data)  # type: ignore[attr-defined]
        value = int(np.clip(np.rint(real / y.scale) + zp, low, high))
        return None if value == limit else value

    return bound(activation.min, low), bound(activation.max, high)


def epilogue(activation: Operation | None, y: QParams) -> dict[str, Clamp | nn.UnaryOp | None]:
    """The q-product's clamp (a Relu or Clip) or `activation` (another activation: SiLU,
    HardSwish, GELU, ..., applied to its real result), as its constructor's arguments."""
    if activation is None or isinstance(activation, nn.ReluOp | nn.ClipOp):
        return {"clamp": clamp_of(activation, y), "activation": None}
    assert isinstance(activation, nn.UnaryOp)
    return {"clamp": (None, None), "activation": activation}


def fold_conv(op: nn.Conv2dOp, y: QParams, activation: Operation | None) -> list[Operation]:
    """conv(dq(x), dq(w), b?) [-> activation] -> q  =>  `nn.qconv2d` (`epilogue`)."""
    x, x_params = dequantized(op.input, "the input")
    w, w_params = dequantized(op.weight, "the weight", 0)
    made, bias = product_bias(op.bias, x_params, w_params)
    return made + [
        nn.QConv2dOp(
            x,
            w,
            bias,
            (x_params, w_params, y),
            strides=nn.ints(op.strides),
            pads=nn.ints(op.pads),
            dilations=nn.ints(op.dilations),
            groups=op.groups.value.data,
            **epilogue(activation, y),  # type: ignore[arg-type]
        )
    ]


def convolution_sum(add: nn.AddOp) -> tuple[nn.Conv2dOp, SSAValue] | None:
    """The convolution whose float result `add` adds, read only there, to a dequantized value,
    both of the result's shape (no broadcast), and that value: a residual block as torch's x86
    quantizer writes it (conv -> Add(dq(identity)) -> Relu -> Q, one rounding); None for
    another add."""
    shape = nn.shape_of(add.output)
    for product, addend in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if (
            isinstance(product.owner, nn.Conv2dOp)
            and product.has_one_use()
            and isinstance(addend.owner, nn.DequantizeOp)
            and nn.shape_of(addend) == nn.shape_of(product) == shape
        ):
            return product.owner, addend
    return None


def fold_conv_sum(
    conv: nn.Conv2dOp, addend: SSAValue, y: QParams, activation: Operation | None
) -> list[Operation]:
    """conv(dq(x), dq(w), b) + dq(r) [-> relu | clip] -> q  =>  an `nn.qconv2d_add` without c:
    the convolution's unrounded result plus the dequantized addend, quantized once."""
    r, r_params = dequantized(addend, "the addend")
    if r_params.element_type != y.element_type:
        raise NoFold("the addend and the result have different integer types")
    *made, conv_of_sum = fold_conv(conv, y, activation)
    assert isinstance(conv_of_sum, nn.QConv2dOp)
    fused = nn.QConv2dAddOp(conv_of_sum, r, r_params)
    conv_of_sum.erase()  # only described the convolution: never inserted
    return [*made, fused]


def biased_product(add: nn.AddOp) -> tuple[nn.MatmulOp, SSAValue] | None:
    """The matmul and the f32 constant of one value per column that `add` adds to its result,
    read only there: a Linear layer as the dynamo exporter writes it (MatMul, then Add of the
    bias); None for another add."""
    for product, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        owner = product.owner
        if (
            isinstance(owner, nn.MatmulOp)
            and product.has_one_use()
            and nn.tensor_type(bias).element_type == f32
            and nn.shape_of(bias) == nn.shape_of(product)[-1:]
            and is_constant(bias)
        ):
            return owner, bias
    return None


def transposed_weights(value: SSAValue) -> SSAValue | None:
    """The dequantized 2-D weights whose transpose `value` is (the dynamo exporter's Linear:
    MatMul(x, Transpose(dq(w))), w [N, K] per output channel), else None."""
    owner = value.owner
    if (
        isinstance(owner, nn.TransposeOp)
        and nn.ints(owner.perm) == (1, 0)
        and isinstance(owner.input.owner, nn.DequantizeOp)
    ):
        return owner.input
    return None


def fold_matmul(
    op: nn.MatmulOp | nn.GemmOp,
    y: QParams,
    activation: Operation | None,
    bias_value: SSAValue | None = None,
) -> list[Operation]:
    """gemm/matmul (plus `bias_value`: an add's, `biased_product`) -> `nn.qmatmul`; b
    transposed (gemm's trans_b, a transpose of dequantized weights) is the transpose of the
    integers, a constant expression computed at load."""
    new_ops: list[Operation] = []
    a_value, b_value = (op.lhs, op.rhs) if isinstance(op, nn.MatmulOp) else (op.a, op.b)
    transposed = False
    if isinstance(op, nn.MatmulOp) and (weights := transposed_weights(b_value)) is not None:
        transposed, b_value = True, weights
    if isinstance(op, nn.GemmOp):
        if op.trans_a is not None or op.alpha.value.data != 1 or op.beta.value.data != 1:
            raise NoFold("a gemm with trans_a, alpha or beta")
        transposed, bias_value = op.trans_b is not None, op.c
    a, a_params = dequantized(a_value, "operand a")
    b_rank = len(nn.shape_of(b_value))
    b, b_params = dequantized(b_value, "operand b", 0 if transposed else b_rank - 1)
    if transposed and b_params.per_axis:
        b_params = QParams(b_params.scale, b_params.zero_point, b_params.element_type, 1)
    columns = nn.shape_of(b)[0 if transposed else -1]
    if bias_value is not None and nn.shape_of(bias_value) != (columns,):
        raise NoFold("the bias is not one value per column")
    made, bias = product_bias(bias_value, a_params, b_params)
    new_ops += made
    if transposed:  # made after the last NoFold: a refused fold leaves no op reading b
        new_ops.append(flip := nn.TransposeOp(b, (1, 0)))
        b = flip.output
    params = (a_params, b_params, y)
    new_ops.append(nn.QMatmulOp(a, b, bias, params, **epilogue(activation, y)))  # type: ignore[arg-type]
    return new_ops
