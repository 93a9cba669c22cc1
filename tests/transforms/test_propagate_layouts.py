"""propagate-layouts with kernels that take "any" layout for some operands only (oneDNN's
batch norm: data in any layout, parameters plain): the data operand and the result follow the
producer's layout, the other operands keep theirs, and semantics are kept. A user-defined
target and kernel are registered here, as a user would."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects import func

from nnlayout.dialects import nn
from nnlayout.dialects.layout import ReorderOp, encoding_name, layout_of
from nnlayout.kernels.blocked import BlockedOptions
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.providers import registry
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import Kernel, Target
from nnlayout.kernels.targets import get_target, register_target
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    LAYOUT_PIPELINE,
    compile_module,
    parse,
    random_inputs,
)

MIXED = "test-mixed"


def batch_norm_any_data(op: nn.BatchNormOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Data in whatever layout its type says, parameters plain."""
    data_type = op.input.type
    spec = layout_of(data_type)
    logical = inputs[0] if spec is None else spec.unpack(inputs[0], data_type.get_shape())
    result = REFERENCE_KERNELS[nn.BatchNormOp](op, [logical, *inputs[1:]])
    return result if spec is None else spec.pack(result)


if MIXED not in {k.family for k in registry().kernels.values()}:
    registry().register(
        Kernel(
            "batch_norm_any_data",
            nn.BatchNormOp,
            MIXED,
            batch_norm_any_data,
            layouts=lambda op, target: (("*", "", "", "", ""), ("*",)),
            in_place=0,
        )
    )
    register_target(
        Target(
            MIXED,
            "blocked kernels, and a batch norm taking any data layout",
            (MIXED, "blocked", "ref"),
            (BlockedOptions(block=8, min_blocked_macs=0),),
        )
    )

PROGRAM = """
func.func @f(%x: tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32> {
  %w1 = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  %c1 = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  %g = nn.constant dense<[1.0, 2.0, 0.5, 1.5, 1.0, 1.0, 1.0, 3.0]> : tensor<8xf32>
  %b = nn.constant dense<[0.5, -0.5, 1.0, 2.0, -1.0, 0.0, 0.0, 1.0]> : tensor<8xf32>
  %m = nn.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]> : tensor<8xf32>
  %v = nn.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %n = nn.batch_norm %c1, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x8x10x10xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x10x10xf32>
  %s = nn.sigmoid %n : tensor<1x8x10x10xf32>
  %d = nn.mul %s, %n : (tensor<1x8x10x10xf32>, tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %w2 = nn.constant dense<0.2> : tensor<8x8x3x3xf32>
  %c2 = nn.conv2d %d, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  func.return %c2 : tensor<1x8x10x10xf32>
}
"""


def test_any_layout_operand_follows_its_producer_and_the_others_stay() -> None:
    module = parse(PROGRAM)
    compiled = compile_module(module, MIXED, True)
    norm = next(op for op in compiled.walk() if isinstance(op, nn.BatchNormOp))
    assert [encoding_name(v.type) for v in norm.operands] == ["NCHW8c", "", "", "", ""]
    assert encoding_name(norm.output.type) == "NCHW8c"
    activation_reorders = [
        op
        for op in compiled.walk()
        if isinstance(op, ReorderOp) and not isinstance(op.input.owner, nn.ConstantOp)
    ]
    assert len(activation_reorders) == 2  # into the first conv, out of the last
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)[0]
    for pipeline in (LAYOUT_PIPELINE, DEFAULT_PIPELINE):
        program = compile_module(module, MIXED, True, pipeline)
        np.testing.assert_allclose(
            Interpreter(program).run(inputs)[0],
            expected,
            rtol=1e-5,
            atol=1e-5 * float(np.abs(expected).max()),
        )


TWO_LAYOUTS = """
func.func @f(%a: tensor<1x16x4x4xf32, #layout.layout<"NCHW8c">>, %b: tensor<1x16x4x4xf32, #layout.layout<"NHWC">>) -> tensor<1x16x4x4xf32> {
  %pa = layout.reorder %a : tensor<1x16x4x4xf32, #layout.layout<"NCHW8c">> -> tensor<1x16x4x4xf32>
  %pb = layout.reorder %b : tensor<1x16x4x4xf32, #layout.layout<"NHWC">> -> tensor<1x16x4x4xf32>
  %y = nn.add %pa, %pb : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}
"""


def test_operands_reordered_from_two_layouts_meet_in_the_first() -> None:
    """A "*" kernel takes every operand in one layout: the first operand's reorder is
    bypassed and the other's source is reordered into that layout (bypassing both typed the
    add on NCHW8c and NHWC, and the runtime ran the reference kernel instead; found by
    mutation)."""
    module = parse(TWO_LAYOUTS)
    compiled = compile_module(module, "avx2", True)
    add = next(op for op in compiled.walk() if isinstance(op, nn.AddOp))
    assert [encoding_name(v.type) for v in add.operands] == ["NCHW8c", "NCHW8c"]
    inputs = random_inputs(module)
    np.testing.assert_array_equal(
        Interpreter(compiled).run(inputs)[0], Interpreter(module).run(inputs)[0]
    )


def test_a_csr_value_is_not_a_blocked_layout_to_propagate() -> None:
    """A reorder out of CSR storage is not sunk through an element-wise op (it has no
    blocks: treating it as one failed with "layout 'csr': block 'c' needs a factor"; found by
    mutation)."""
    module = parse("""
func.func @f(%x: tensor<8x16xf32, #layout.storage<"csr">>) -> tensor<8x16xf32> {
  %p = layout.reorder %x : tensor<8x16xf32, #layout.storage<"csr">> -> tensor<8x16xf32>
  %y = nn.exp %p : tensor<8x16xf32>
  func.return %y : tensor<8x16xf32>
}
""")
    compiled = compile_module(module, "avx2", True)
    exp = next(op for op in compiled.walk() if isinstance(op, nn.ExpOp))
    assert encoding_name(exp.operands[0].type) == ""


DENSE_LAYER = """
func.func @f(%x: tensor<1x20x6x6xf32>, %y: tensor<1x16x6x6xf32>) -> tensor<1x28x6x6xf32> {
  %w = nn.constant dense<0.1> : tensor<8x16x3x3xf32>
  %c = nn.conv2d %y, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x6x6xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x6x6xf32>
  %r = nn.relu %c : tensor<1x8x6x6xf32>
  %j = nn.concat %x, %r axis 1 : (tensor<1x20x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x28x6x6xf32>
  %s = nn.constant dense<1.5> : tensor<28x1x1xf32>
  %m = nn.mul %j, %s : (tensor<1x28x6x6xf32>, tensor<28x1x1xf32>) -> tensor<1x28x6x6xf32>
  func.return %m : tensor<1x28x6x6xf32>
}
"""


@pytest.mark.parametrize("padding", [True, False])
def test_a_layout_that_pads_is_not_propagated_where_padding_is_off(padding: bool) -> None:
    """A DenseNet layer on avx2: the convolution's 16 and 8 channels run in NCHW8c, its relu
    follows; the concatenation with the 20-channel input (and the per-channel scale after it) would
    pad 20 and 28 channels to whole blocks. With padding off it stays plain, and the planned
    program holds no channel padding (a DenseNet with batch norms as Mul/Add padded 56 KiB)."""
    module = parse(DENSE_LAYER)
    compiled = compile_module(module, "avx2", padding)
    layouts = {
        op.results[0].name_hint: encoding_name(op.results[0].type)
        for op in compiled.walk()
        if isinstance(op, nn.ReluOp | nn.ConcatOp | nn.MulOp)
    }
    blocked = "NCHW8c" if padding else ""
    assert layouts == {"r": "NCHW8c", "j": blocked, "m": blocked}
    planned = compile_module(module, "avx2", padding, DEFAULT_PIPELINE)
    function = next(op for op in planned.walk() if isinstance(op, func.FuncOp))
    figures = {k: v.value.data for k, v in function.attributes.items() if k.startswith("nnlayout.")}
    assert (figures["nnlayout.padding_bytes"] > figures["nnlayout.halo_bytes"]) == padding
    inputs = random_inputs(module)
    np.testing.assert_allclose(
        Interpreter(planned).run(inputs)[0], Interpreter(module).run(inputs)[0], rtol=1e-5
    )


@pytest.mark.parametrize("preferred", [["jit_1x1:avx2"], "jit_1x1:avx2", (1,)])
def test_a_target_names_preferred_implementations_in_a_tuple(preferred: object) -> None:
    """A list would not hash (oneDNN choices are cached by it) and a string would match by
    its prefixes: both are refused when the target is made."""
    with pytest.raises(TypeError, match="preferred_implementations must be a tuple"):
        Target(
            "bad",
            "a target with a malformed preference",
            ("onednn", "ref"),
            (OneDNNOptions(preferred_implementations=preferred),),  # type: ignore[arg-type]
        )


@pytest.mark.parametrize("layout", ["NCHW8c", "NCHW16c"])
def test_a_blocked_onednn_target_falls_back_to_its_own_blocks(layout: str) -> None:
    """What oneDNN does not run falls back to the blocked numpy kernels in the blocks of the
    convolutions around it: otherwise each such op would cost two activation reorders."""
    assert BlockedOptions.of(get_target(f"onednn-{layout.lower()}")).activation_layout == layout


@pytest.mark.parametrize("name", ["avx2", "host"])
def test_a_target_name_is_registered_once(name: str) -> None:
    from nnlayout.kernels.registry import Target
    from nnlayout.kernels.targets import TARGETS, get_target, register_target

    before = get_target(name)
    with pytest.raises(ValueError, match=f"a target named '{name}' is already registered"):
        register_target(Target(name, "a plugin's", ("ref",)))
    assert get_target(name) is before and TARGETS[name] is before
