"""oneDNN's nn.qlookup (kernels/onednn/quantized_lookup.py): a table fold-qdq computed from a
function oneDNN has, or a requantization, runs as oneDNN's binary primitive with that
function (or none) as a post-op, only where it gives every entry of the table: then bit for
bit the table, u8 and s8, plain and NHWC, called and bound; only piecewise-linear functions
(an exp costs oneDNN more than the table's read). A table it does not reproduce
(one entry changed) and a padded layout are refused with their reasons, and the table runs
in numpy; bound where it would not give the table, the kernel runs the table too."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i8
from xdsl.rewriter import Rewriter
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.reference_quantized import dequantize_array, quantize_array
from nnlayout.kernels.targets import get_target
from nnlayout.tests.helpers import tensor

pytestmark = pytest.mark.onednn
SHAPE = (1, 20, 6, 7)  # 20 channels: NCHW16c pads 12 lanes
ONEDNN = get_target("onednn")


def _function(name: str) -> nn.NNOp | None:
    """The float op of `name`; None for "requantize" (the identity, recorded as no function:
    fold-qdq's table after a movement op between parameters of their own)."""
    x = create_ssa_value(TensorType(f32, SHAPE))
    if name == "requantize":
        return None
    if name == "hardsigmoid":
        return nn.HardSigmoidOp(x, 0.2, 0.5)
    return {"hardswish": nn.HardSwishOp, "swish": nn.SwishOp, "sigmoid": nn.SigmoidOp}[name](x)


def lookup(name: str, element_type: object, layout: str = "", change: int = 0) -> nn.QLookupOp:
    """The table of `name` between parameters with zero points != 0, recorded with it; entry
    17 moved by `change` steps (a table the function no longer gives)."""
    unsigned = element_type == nn.ui8
    x_params = nn.QParams.make(0.047, 131 if unsigned else -9, element_type)
    y_params = nn.QParams.make(0.029, 17 if unsigned else -101, element_type)
    low, high = nn.integer_range(element_type)
    function = _function(name)
    real = dequantize_array(np.arange(low, high + 1), x_params)
    image = real if function is None else REFERENCE_KERNELS[type(function)](function, [real])
    table = quantize_array(image, y_params)
    table = table.astype(np.int64)
    table[17] += change
    x = create_ssa_value(tensor(SHAPE, layout, element_type))
    op = nn.QLookupOp(x, table.tolist(), (x_params, y_params), function)
    Rewriter.replace_value_with_new_type(op.output, tensor(SHAPE, layout, element_type))
    op.verify()
    return op


def _data(element_type: object) -> np.ndarray:
    dtype = np.uint8 if element_type == nn.ui8 else np.int8
    info = np.iinfo(dtype)
    return np.random.default_rng(3).integers(info.min, info.max + 1, SHAPE).astype(dtype)


# Piecewise-linear functions and the identity, which oneDNN computes faster than the table
# is read; functions with an exp it computes slower: their tables stay numpy's.
CHEAPER = ("hardswish", "hardsigmoid", "requantize")


@pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")
@pytest.mark.parametrize("element_type", [nn.ui8, i8], ids=["u8", "s8"])
@pytest.mark.parametrize("layout", ["", "NHWC"], ids=["plain", "NHWC"])
@pytest.mark.parametrize("name", [*CHEAPER, "swish", "sigmoid"])
def test_onednn_computes_the_table_bit_for_bit(name, element_type, layout) -> None:
    op = lookup(name, element_type, layout)
    chosen = registry().select(op, ONEDNN, True)
    assert chosen is not None
    expected = "qlookup_onednn" if name in CHEAPER else "qlookup_any"
    assert chosen.kernel.name == expected, chosen
    assert registry().lookup("qlookup_onednn").applies(op) == (name in CHEAPER)
    x = _data(element_type)
    want = REFERENCE_KERNELS[nn.QLookupOp](op, [x])
    spec = LayoutSpec.parse(layout) if layout else None
    given = x if spec is None else spec.pack(x)
    kernel = chosen.kernel
    got = kernel.impl(op, [given])
    out = np.empty_like(given)
    bound = kernel.prepare(op, None)  # qlookup_any's is called, oneDNN's bound with `on`
    bound.on([given], out)() if hasattr(bound, "on") else bound([given], out)
    for result in (got, out):
        np.testing.assert_array_equal(result if spec is None else spec.unpack(result, SHAPE), want)


@pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")
def test_a_table_onednn_does_not_give_and_a_padded_layout_run_the_table() -> None:
    changed = lookup("hardswish", nn.ui8, change=1)
    kernel = registry().lookup("qlookup_onednn")
    reason = kernel.refusal(changed, ONEDNN, True)
    assert reason == "oneDNN's function gives 1 of the table's 256 entries otherwise"
    assert not kernel.applies(lookup("requantize", nn.ui8, change=1))  # an unknown function
    chosen = registry().select(changed, ONEDNN, True)
    assert chosen is not None and chosen.kernel.name == "qlookup_any"
    x = _data(nn.ui8)
    x.flat[0] = 17  # the changed entry's input
    got = chosen.kernel.impl(changed, [x])
    np.testing.assert_array_equal(got, changed.values()[x])
    padded = lookup("hardswish", nn.ui8, "NCHW16c")
    assert "padding lanes must hold y's zero point" in kernel.accepts_layout(
        padded, LayoutSpec.parse("NCHW16c")
    )
    assert registry().select(padded, ONEDNN, True).kernel.name == "qlookup_any"


@pytest.mark.skipif(not b.available(), reason="oneDNN is not installed")
def test_bound_where_onednn_would_not_give_the_table_the_table_runs() -> None:
    """A program that names qlookup_onednn for a table its oneDNN does not give (compiled on
    another CPU, or written by hand) runs the table in numpy, and says so."""
    changed = lookup("hardswish", nn.ui8, "NHWC", change=1)
    kernel = registry().lookup("qlookup_onednn")
    assert kernel.binding_refusal(changed) is None
    assert kernel.implementation_of(changed).startswith("numpy's table (oneDNN's function")
    x = _data(nn.ui8)
    x.flat[:2] = 17  # the changed entry's input
    nhwc = LayoutSpec.parse("NHWC")
    out = np.empty(nhwc.physical_shape(SHAPE), np.uint8)
    kernel.prepare(changed, None).on([nhwc.pack(x)], out)()
    np.testing.assert_array_equal(nhwc.unpack(out, SHAPE), changed.values()[x])
