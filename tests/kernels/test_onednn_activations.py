"""The activations of dialects/nn/activations.py in oneDNN: as eltwise primitives (on plain and
blocked data, NaN and infinities included) and as convolution post-ops (fused by the default
pipeline), each against the reference interpreter, through the interpreter and the generated
module; and the list of those oneDNN computes as the reference does on finite inputs only
(`eltwise.finite_only`) checked against the primitives themselves."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.eltwise import ELTWISE_OPS, eltwise_params, finite_only
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    TRAP_UNARY,
    assert_same,
    compile_module,
    dense,
    parse,
    random_inputs,
)

pytestmark = pytest.mark.onednn

ONEDNN_TARGETS = ["onednn", "onednn-nchw8c", "onednn-nchw16c"]
SPECIAL = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 100.0, -100.0, 3.0, -3.0, 0.5, -0.5]
    + [1e-8, -1e-8, 88.8, -88.8, 20.0, -20.0, 2.0, -2.0, 1e-30],
    np.float32,
)
# (op, its attributes as printed): every activation oneDNN runs.
ACTIVATIONS = [
    ("nn.hardswish", ""),
    ("nn.hardsigmoid", "alpha 0.2 beta 0.5 "),
    ("nn.gelu", ""),
    ("nn.gelu", 'approximate "tanh" '),
    ("nn.elu", "alpha 0.5 "),
    ("nn.softplus", ""),
    ("nn.mish", ""),
    ("nn.swish", ""),
    ("nn.pow", "exponent 2.0 "),
    ("nn.pow", "exponent 0.5 "),
    ("nn.pow", "exponent -1.5 "),
    ("nn.reciprocal", ""),
    ("nn.log", ""),
]
FUSED = [
    (name, attributes)
    for name, attributes in ACTIVATIONS
    if name.removeprefix("nn.") in nn.ACTIVATIONS
]


def one_op(name: str, attributes: str) -> Operation:
    module = parse(
        f"func.func @f(%x: tensor<{SPECIAL.size}xf32>) -> tensor<{SPECIAL.size}xf32> {{\n"
        f"  %y = {name} %x {attributes}: tensor<{SPECIAL.size}xf32>\n"
        f"  func.return %y : tensor<{SPECIAL.size}xf32>\n}}"
    )
    return next(op for op in module.walk() if op.name == name)


def onednn_eltwise(op: Operation, x: np.ndarray) -> np.ndarray:
    """oneDNN's eltwise primitive for `op` (unguarded) on the 1-D `x`."""
    md = MemoryDesc.with_tag(x.shape, by_layout("vector", "").value)
    compiled = p.Compiled(p.eltwise_pd(*_pd_args(op, md)), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))
    out = np.zeros_like(x)
    compiled({b.DNNL_ARG_SRC: x, b.DNNL_ARG_DST: out})
    return out


def _pd_args(op: Operation, md: MemoryDesc) -> tuple:
    algorithm, alpha, beta = eltwise_params(op)
    return algorithm, md, md, alpha, beta


def test_every_activation_has_an_eltwise_kernel() -> None:
    assert {type(one_op(name, attributes)) for name, attributes in ACTIVATIONS} <= set(ELTWISE_OPS)


@pytest.mark.parametrize(("name", "attributes"), ACTIVATIONS)
def test_finite_only_names_the_activations_onednn_gets_wrong_on_special_values(
    name: str, attributes: str
) -> None:
    """An op not `finite_only` runs unguarded: its primitive must give the reference's NaN
    and infinities (finite values to rounding). hardsigmoid, which maps NaN to 1, must be
    guarded, or the test of the guard means nothing."""
    op = one_op(name, attributes)
    with np.errstate(all="ignore"):
        want = REFERENCE_KERNELS[type(op)](op, [SPECIAL])
    got = onednn_eltwise(op, SPECIAL)
    same = (
        np.array_equal(np.isnan(got), np.isnan(want))
        and np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
        and np.allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-4, atol=1e-5)
    )
    if not finite_only(op):
        assert same, (SPECIAL, got, want)
    if name == "nn.hardsigmoid":
        assert not same and finite_only(op)


@pytest.mark.parametrize(("name", "attributes"), ACTIVATIONS)
def test_activation_runs_in_onednn_as_the_reference(name: str, attributes: str) -> None:
    """On NaN, infinities and saturating values, plain and blocked (5 channels: padded)."""
    module = parse(f"""
func.func @f(%x: tensor<2x5x3x3xf32>) -> tensor<2x5x3x3xf32> {{
  %y = {name} %x {attributes}: tensor<2x5x3x3xf32>
  func.return %y : tensor<2x5x3x3xf32>
}}""")
    inputs = [np.resize(SPECIAL, (2, 5, 3, 3)).astype(np.float32)]
    expected = Interpreter(module).run(inputs)
    for target in ONEDNN_TARGETS:
        compiled = compile_module(module, target, True)
        chosen = [kernel_of(op).kernel_name.data for op in compiled.walk() if kernel_of(op)]
        assert chosen == [name.removeprefix("nn.") + "_onednn"], chosen
        assert_same(expected, Interpreter(compiled).run(inputs))
        planned = compile_module(module, target, True, DEFAULT_PIPELINE)
        assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize(
    ("name", "attributes"), [*ACTIVATIONS, ("nn.relu", ""), ("nn.clip", "min 0.0 max 6.0 ")]
)
@pytest.mark.parametrize("shape", ["2x7x5", "22"])
def test_activation_on_tokens_runs_in_onednn_as_the_reference(
    name: str, attributes: str, shape: str
) -> None:
    """On data that is not 4-D (a transformer's [N, T, D] tokens, a vector), plain: the same
    eltwise kernel, on NaN, infinities and saturating values (the finite-input guard too)."""
    module = parse(f"""
func.func @f(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
  %y = {name} %x {attributes}: tensor<{shape}xf32>
  func.return %y : tensor<{shape}xf32>
}}""")
    dims = tuple(int(d) for d in shape.split("x"))
    inputs = [np.resize(SPECIAL, dims).astype(np.float32)]
    expected = Interpreter(module).run(inputs)
    planned = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    chosen = [kernel_of(op).kernel_name.data for op in planned.walk() if kernel_of(op)]
    assert chosen == [name.removeprefix("nn.") + "_onednn"], chosen
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize(("name", "attributes"), FUSED)
def test_activation_fused_into_a_convolution_matches_the_reference(
    name: str, attributes: str
) -> None:
    """conv(3 -> 5) -> activation -> conv(5 -> 7) with a NaN and an inf in the input: the
    activation becomes the first convolution's post-op, and the results, padding lanes
    included (f(0) != 0 for hardsigmoid and softplus), are the reference's."""
    module = parse(
        TRAP_UNARY.format(
            unary=name, attributes=attributes, w1=dense((5, 3, 3, 3), 7), w2=dense((7, 5, 3, 3), 8)
        )
    )
    inputs = random_inputs(module)
    inputs[0][0, 1, 4, 4] = np.nan
    inputs[0][1, 2, 0, 0] = np.inf
    expected = Interpreter(module).run(inputs)
    activation = name.removeprefix("nn.")
    for target in ONEDNN_TARGETS:
        for padding in (True, False):
            planned = compile_module(module, target, padding, DEFAULT_PIPELINE)
            fused = [op for op in planned.walk() if isinstance(op, nn.FusedConv2dOp)]
            assert [op.activation.data for op in fused] == [activation], target
            assert not any(op.name == name for op in planned.walk())
            assert_same(expected, Interpreter(planned).run(inputs))
            assert_same(expected, run_generated(planned, inputs))
