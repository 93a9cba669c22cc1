"""nn.qlookup (fold-qdq's table for an activation between a dequantize and a quantize): the
reference kernel and the layout-agnostic `qlookup_any`, u8 and s8, plain and in a channel-
blocked layout whose padding lanes must hold y's zero point (a sigmoid table maps x's zero
point to 0.5's image, the padding trap); called and bound into a destination."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import FloatAttr, NoneAttr, StringAttr, TensorType, f32, i8
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.kernels.blocked.quantized import KERNELS
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.reference_quantized import dequantize_array, quantize_array

SHAPE = (1, 20, 3, 3)  # 20 channels: NCHW16c pads 12 lanes
ODD = (1, 3, 5, 3)  # an odd number of bytes: the bound kernel's pairs of bytes do not fit


def sigmoid_lookup(
    element_type: object, layout: str = "", shape: tuple[int, ...] = SHAPE
) -> nn.QLookupOp:
    x_params = nn.QParams.make(0.05, 3 if element_type == nn.ui8 else -7, element_type)
    y_params = nn.QParams.make(1 / 256, 0 if element_type == nn.ui8 else -128, element_type)
    low, high = nn.integer_range(element_type)
    real = dequantize_array(np.arange(low, high + 1), x_params)
    table = quantize_array(1 / (1 + np.exp(-real)), y_params)
    encoding = LayoutAttr(layout) if layout else NoneAttr()
    x = create_ssa_value(TensorType(element_type, shape, encoding))
    op = nn.QLookupOp(x, table.tolist(), (x_params, y_params))
    Rewriter.replace_value_with_new_type(op.output, TensorType(element_type, shape, encoding))
    return op


@pytest.mark.parametrize("element_type", [nn.ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize(
    ("layout", "shape"),
    [("", SHAPE), ("NCHW16c", SHAPE), ("", ODD)],
    ids=["plain", "NCHW16c", "odd"],
)
def test_qlookup_any_is_the_table_and_keeps_padding_at_the_zero_point(
    element_type: object, layout: str, shape: tuple[int, ...]
) -> None:
    op = sigmoid_lookup(element_type, layout, shape)
    op.verify()
    dtype = np.uint8 if element_type == nn.ui8 else np.int8
    info = np.iinfo(dtype)
    x = np.random.default_rng(0).integers(info.min, info.max + 1, shape).astype(dtype)
    want = REFERENCE_KERNELS[nn.QLookupOp](op, [x])
    table = op.values()
    assert np.array_equal(want, table[x.astype(np.intp) - info.min])
    [kernel] = KERNELS
    spec = LayoutSpec.parse(layout) if layout else None
    given = x if spec is None else spec.pack(x)
    y_zp, x_zp = int(op.qparams("y").zero_point), int(op.qparams("x").zero_point)
    if spec is not None:  # padding lanes hold x's zero point, whose image is not y's
        mask = spec.padding_mask(shape)
        given[mask] = x_zp
        assert table[x_zp - info.min] != y_zp
    got = kernel.impl(op, [given])
    out = np.empty_like(given)
    kernel.prepare(op, None)([given], out)
    for result in (got, out):
        if spec is None:
            np.testing.assert_array_equal(result, want)
        else:
            np.testing.assert_array_equal(spec.unpack(result, shape), want)
            assert np.all(result[mask] == y_zp)


def test_the_table_must_have_256_entries_of_the_data_type() -> None:
    op = sigmoid_lookup(nn.ui8)
    op.properties["table"] = type(op.table).from_list(TensorType(nn.ui8, (255,)), [0] * 255)
    with pytest.raises(VerifyException, match="table must be a tensor<256xui8>"):
        op.verify()


def test_a_recorded_function_must_be_an_activation_with_its_attributes() -> None:
    op = sigmoid_lookup(nn.ui8)
    op.properties["activation"] = StringAttr("hardswish")
    op.verify()
    op.properties["alpha"] = FloatAttr(0.5, f32)
    with pytest.raises(VerifyException, match="'alpha' does not apply to activation"):
        op.verify()
