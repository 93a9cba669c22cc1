"""oneDNN's nn.qadd and integer max pooling (kernels/onednn/quantized_eltwise.py) against
nnlayout's reference kernels, on NHWC data as dispatch lays it out: qadd within one step
(exact on these data), max pooling exact; refusals named."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, NoneAttr, TensorType, f32
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec
from nnlayout.dialects.nn.base import ui8
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.targets import get_target

pytestmark = pytest.mark.onednn
i8 = IntegerType(8)
NHWC = LayoutSpec.parse("NHWC")
SHAPE = (1, 24, 10, 10)


def _tensor(element_type: object, shape: tuple[int, ...], layout: str = "") -> TensorType:
    return TensorType(element_type, shape, LayoutAttr(layout) if layout else NoneAttr())


def _typed(op: nn.NNOp, layout: str) -> nn.NNOp:
    if layout:
        result = op.results[0]
        Rewriter.replace_value_with_new_type(
            result, _tensor(result.type.element_type, result.type.get_shape(), layout)
        )
    return op


def qadd(
    element_type: object = ui8, layout: str = "", rhs_shape: tuple[int, ...] = SHAPE
) -> nn.QAddOp:
    zero = (120, 130, 110) if element_type == ui8 else (-8, 5, 3)
    op = nn.QAddOp(
        create_ssa_value(_tensor(element_type, SHAPE, layout)),
        create_ssa_value(_tensor(element_type, rhs_shape, layout)),
        tuple(
            nn.QParams.make(scale, z, element_type)
            for scale, z in zip((0.05, 0.07, 0.09), zero, strict=True)
        ),
    )
    return _typed(op, layout)


def max_pool(element_type: object = ui8, layout: str = "") -> nn.MaxPool2dOp:
    x = create_ssa_value(_tensor(element_type, SHAPE, layout))
    op = nn.MaxPool2dOp(x, kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    return _typed(op, layout)


def _data(element_type: object, seed: int) -> np.ndarray:
    dtype = np.uint8 if element_type == ui8 else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, SHAPE).astype(dtype)


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("build", [qadd, max_pool], ids=["qadd", "max_pool"])
def test_dispatch_picks_the_int8_kernel_in_nhwc(build, element_type) -> None:
    op = build(element_type)
    chosen = registry().select(op, get_target("onednn"), True)
    assert chosen is not None and chosen.kernel.name.endswith("onednn"), chosen
    assert chosen.kernel.name in ("qadd_onednn", "max_pool2d_int8_onednn")
    assert chosen.rejected == ()
    layouts = chosen.kernel.operand_and_result_layouts(op, get_target("onednn"))
    assert layouts == (("NHWC",) * len(op.operands), ("NHWC",))


@pytest.mark.parametrize("element_type", [ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("build", [qadd, max_pool], ids=["qadd", "max_pool"])
def test_the_int8_kernels_compute_the_reference(build, element_type) -> None:
    plain, typed = build(element_type), build(element_type, "NHWC")
    inputs = [_data(element_type, seed) for seed in range(len(plain.operands))]
    want = REFERENCE_KERNELS[type(plain)](plain, inputs)
    kernel = registry().lookup(registry().select(typed, get_target("onednn"), True).kernel.name)
    got = kernel.impl(typed, [NHWC.pack(x) for x in inputs])
    got = NHWC.unpack(got, want.shape)
    assert got.dtype == want.dtype
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    assert np.mean(got != want) < 1e-3
    if build is max_pool:
        np.testing.assert_array_equal(got, want)
    bound = kernel.prepare(typed, None)
    out = np.empty(NHWC.physical_shape(want.shape), want.dtype)
    bound.on([NHWC.pack(x) for x in inputs], out)()
    np.testing.assert_array_equal(NHWC.unpack(out, want.shape), got)


def test_what_the_int8_kernels_refuse_is_named() -> None:
    kernel = registry().lookup("qadd_onednn")
    broadcast = qadd(rhs_shape=(1, 24, 1, 1))
    assert "broadcasting" in kernel.refusal(broadcast, get_target("onednn"), True)
    f32_pool = nn.MaxPool2dOp(create_ssa_value(_tensor(f32, SHAPE)), kernel=(3, 3), strides=(2, 2))
    assert not registry().lookup("max_pool2d_int8_onednn").applies(f32_pool)
