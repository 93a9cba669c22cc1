"""bufferize: the buffers it creates (shapes, halos, concat slices) and that the bufferized
program computes what the tensor program did, on the cases where halos and in-place concats
interact: consumers with different pads or pad values, average pooling with and without
counted padding, concats of arguments and constants, nested concats, blocked concats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp

from nnlayout.diagnostics import location_of
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.layout import FillBorderOp
from nnlayout.ir.context import make_context
from nnlayout.ir.module import read_module
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    LAYOUT_PIPELINE,
    assert_same,
    compile_module,
    parse,
    random_inputs,
)
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

ROOT = Path(__file__).resolve().parents[2]


def bufferized(module: ModuleOp, target: str = "ref", padding: bool = True) -> ModuleOp:
    return compile_module(module, target, padding, LAYOUT_PIPELINE + ",bufferize")


def check(module: ModuleOp, targets: tuple[str, ...] = ("ref", "avx2", "avx512")) -> None:
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    for target in targets:
        for padding in (True, False):
            assert_same(expected, Interpreter(bufferized(module, target, padding)).run(inputs))


def function_attribute(module: ModuleOp, name: str) -> int:
    function = next(iter(module.ops))
    return function.attributes[name].value.data  # type: ignore[union-attr]


def ops_of(module: ModuleOp, kind: type) -> list:
    return [op for op in module.walk() if isinstance(op, kind)]


TWO_CONSUMERS = """
func.func @f(%x: tensor<1x8x12x12xf32>) -> (tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<1x8x6x6xf32>) {
  %r = nn.relu %x : tensor<1x8x12x12xf32>
  %w1 = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  %a = nn.conv2d %r, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x12x12xf32>
  %w2 = nn.constant dense<-0.2> : tensor<8x8x5x5xf32>
  %b = nn.conv2d %r, %w2 strides [1, 1] pads [2, 2, 2, 2] dilations [1, 1] groups 1 : (tensor<1x8x12x12xf32>, tensor<8x8x5x5xf32>) -> tensor<1x8x12x12xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] : tensor<1x8x12x12xf32> -> tensor<1x8x6x6xf32>
  func.return %a, %b, %p : tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<1x8x6x6xf32>
}
"""


def test_consumers_share_the_widest_halo_of_their_pad_value() -> None:
    module = parse(TWO_CONSUMERS)
    compiled = bufferized(module)
    fills = ops_of(compiled, FillBorderOp)
    assert [tuple(f.halo.get_values()) for f in fills] == [(2, 2, 2, 2)]
    assert fills[0].value.value.data == 0.0  # the convolutions' pad value, not -inf
    halos = [op.halo_values for op in ops_of(compiled, ComputeOp) if op.halo is not None]
    assert sorted(halos) == [(1, 1, 1, 1), (2, 2, 2, 2)]  # the max pool pads for itself
    check(module)


def test_average_pooling_uses_a_halo_only_when_padding_counts() -> None:
    template = """
func.func @f(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32> {{
  %e = nn.exp %x : tensor<1x4x9x9xf32>
  %p = nn.avg_pool2d %e kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1]{flag} : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
  func.return %p : tensor<1x4x5x5xf32>
}}"""
    counting = parse(template.format(flag=" count_include_pad"))
    excluding = parse(template.format(flag=""))
    assert len(ops_of(bufferized(counting), FillBorderOp)) == 1
    assert not ops_of(bufferized(excluding), FillBorderOp)
    check(counting)
    check(excluding)


def test_asymmetric_halo_and_strided_dilated_convolution() -> None:
    module = parse("""
func.func @f(%x: tensor<2x5x11x13xf32>) -> tensor<2x16x4x7xf32> {
  %s = nn.sigmoid %x : tensor<2x5x11x13xf32>
  %w = nn.constant dense<0.05> : tensor<16x5x3x3xf32>
  %y = nn.conv2d %s, %w strides [2, 2] pads [0, 2, 1, 1] dilations [2, 1] groups 1 : (tensor<2x5x11x13xf32>, tensor<16x5x3x3xf32>) -> tensor<2x16x4x7xf32>
  func.return %y : tensor<2x16x4x7xf32>
}""")
    compiled = bufferized(module)
    assert [tuple(f.halo.get_values()) for f in ops_of(compiled, FillBorderOp)] == [(0, 2, 1, 1)]
    assert function_attribute(compiled, "nnlayout.halo_copy_bytes_avoided") == 2 * 5 * 12 * 16 * 4
    check(module)


CONCATS = """
func.func @f(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %a = nn.relu %x : tensor<1x8x6x6xf32>
  %k = nn.constant dense<0.5> : tensor<1x8x6x6xf32>
  %c1 = nn.concat %x, %a axis 1 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32>
  %b = nn.tanh %c1 : tensor<1x16x6x6xf32>
  %c2 = nn.concat %c1, %b, %k axis 1 : (tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x40x6x6xf32>
  %w = nn.constant dense<0.01> : tensor<8x40x3x3xf32>
  %y = nn.conv2d %c2, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x40x6x6xf32>, tensor<8x40x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %y : tensor<1x8x6x6xf32>
}
"""


def test_nested_concats_write_into_one_buffer_and_copy_the_rest() -> None:
    module = parse(CONCATS)
    compiled = bufferized(module)
    allocations = [op.memref.type for op in ops_of(compiled, memref.AllocOp)]
    # The outer concat's buffer (40 channels, with the conv's halo) holds c1, a and b.
    assert MemRefType(allocations[0].element_type, [1, 40, 8, 8]) in allocations
    copies = ops_of(compiled, memref.CopyOp)
    assert len(copies) == 2  # the argument %x and the constant %k are copied in
    assert function_attribute(compiled, "nnlayout.concat_copy_bytes_avoided") == (
        (16 + 8 + 16) * 36 * 4
    )  # c1 (into c2), a (into c1), b (into c2)
    check(module)


def test_blocked_concat_in_place() -> None:
    module = parse("""
func.func @f(%x: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %w1 = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %w2 = nn.constant dense<0.2> : tensor<16x16x3x3xf32>
  %b = nn.conv2d %x, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %c = nn.concat %a, %b axis 1 : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x32x16x16xf32>
  %w3 = nn.constant dense<0.05> : tensor<16x32x1x1xf32>
  %y = nn.conv2d %c, %w3 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x32x16x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x16x16xf32>
  func.return %y : tensor<1x16x16x16xf32>
}""")
    compiled = bufferized(module, "avx2")
    views = [op.result.type for op in ops_of(compiled, memref.SubviewOp)]
    assert any(
        v.get_shape() == (1, 2, 16, 16, 8) and v.get_offset() == 2 * 16 * 16 * 8 for v in views
    )
    assert not [op for op in compiled.walk() if op.name == "nn.concat"]
    check(module, ("avx2", "avx512"))


def test_a_blocked_concat_whose_slot_would_start_inside_a_block_is_not_in_place() -> None:
    """12 + 20 channels in NCHW8c: the second input's slot would start at lane 4 of a block.
    It was copied into the whole block after the first input's, over its last four
    channels (wrong numbers from the generated module)."""
    layout = '#layout.layout<"NCHW8c">'
    module = parse(f"""
func.func @f(%a: tensor<1x12x4x4xf32>, %b: tensor<1x20x4x4xf32>) -> tensor<1x32x4x4xf32> {{
  %a1 = layout.reorder %a : tensor<1x12x4x4xf32> -> tensor<1x12x4x4xf32, {layout}>
  %b1 = layout.reorder %b : tensor<1x20x4x4xf32> -> tensor<1x20x4x4xf32, {layout}>
  %y = nn.concat %a1, %b1 axis 1 : (tensor<1x12x4x4xf32, {layout}>, tensor<1x20x4x4xf32, {layout}>) -> tensor<1x32x4x4xf32, {layout}>
  %y1 = layout.reorder %y : tensor<1x32x4x4xf32, {layout}> -> tensor<1x32x4x4xf32>
  func.return %y1 : tensor<1x32x4x4xf32>
}}""")
    planned = module.clone()
    run_pipeline(parse_pipeline("bufferize,plan-memory", get_all_passes()), make_context(), planned)
    assert not ops_of(planned, memref.SubviewOp)
    assert [op for op in planned.walk() if op.name == "nn.concat"]
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


@pytest.mark.parametrize("second", ['#layout.layout<"NHWC">', '#layout.layout<"NCHW4c">'])
def test_a_concat_of_inputs_in_other_layouts_than_its_result_is_not_in_place(second: str) -> None:
    """An undispatched concat of a plain and an NHWC (or NCHW4c) input: the plain one was
    placed in the result's buffer and the other copied into its slot byte for byte, in its
    own layout (wrong numbers, or an internal error where the sizes differ)."""
    module = parse(f"""
func.func @f(%a: tensor<1x4x4x4xf32>, %b: tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32> {{
  %a1 = nn.relu %a : tensor<1x4x4x4xf32>
  %b1 = layout.reorder %b : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32, {second}>
  %y = nn.concat %a1, %b1 axis 1 : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32, {second}>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}}""")
    planned = module.clone()
    run_pipeline(parse_pipeline("bufferize,plan-memory", get_all_passes()), make_context(), planned)
    assert [op for op in planned.walk() if op.name == "nn.concat"]
    inputs = random_inputs(module)
    expected = Interpreter(module).run(inputs)
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


DENSE_BLOCK = """
func.func @f(%x: tensor<{n}x16x12x12xf32>) -> tensor<{n}x8x12x12xf32> {{
  %w1 = nn.constant dense<0.1> : tensor<16x16x3x3xf32>
  %a = nn.conv2d %x, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<{n}x16x12x12xf32>, tensor<16x16x3x3xf32>) -> tensor<{n}x16x12x12xf32>
  %w2 = nn.constant dense<-0.2> : tensor<16x16x3x3xf32>
  %b = nn.conv2d %a, %w2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<{n}x16x12x12xf32>, tensor<16x16x3x3xf32>) -> tensor<{n}x16x12x12xf32>
  %c1 = nn.concat %a, %b axis 1 : (tensor<{n}x16x12x12xf32>, tensor<{n}x16x12x12xf32>) -> tensor<{n}x32x12x12xf32>
  %w3 = nn.constant dense<0.05> : tensor<8x32x1x1xf32>
  %d = nn.conv2d %c1, %w3 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<{n}x32x12x12xf32>, tensor<8x32x1x1xf32>) -> tensor<{n}x8x12x12xf32>
  %c2 = nn.concat %c1, %d axis 1 : (tensor<{n}x32x12x12xf32>, tensor<{n}x8x12x12xf32>) -> tensor<{n}x40x12x12xf32>
  %w4 = nn.constant dense<0.01> : tensor<8x40x1x1xf32>
  %y = nn.conv2d %c2, %w4 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<{n}x40x12x12xf32>, tensor<8x40x1x1xf32>) -> tensor<{n}x8x12x12xf32>
  func.return %y : tensor<{n}x8x12x12xf32>
}}"""


@pytest.mark.onednn
@pytest.mark.parametrize("batch, in_place", [(1, True), (2, False)])
def test_dense_kernels_write_into_concat_slots_that_are_one_run_of_memory(
    batch: int, in_place: bool
) -> None:
    """oneDNN's convolutions write whole buffers only: with one image, a slot of whole 8c
    channel blocks is one run of the concat's buffer, so DenseNet-like nested concats need no
    copy; with two images a slot is strided, and the concat copies."""
    module = parse(DENSE_BLOCK.format(n=batch))
    compiled = bufferized(module, "onednn-nchw8c")
    concats = [op for op in compiled.walk() if op.name == "nn.concat"]
    assert (not concats) == in_place
    check(module, ("onednn-nchw8c",))


@pytest.mark.parametrize("target", ["ref", "avx2"])
def test_returned_argument_and_constant_get_buffers_of_their_own(target: str) -> None:
    module = parse("""
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %k = nn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  func.return %x, %k : tensor<2x3xf32>, tensor<2x3xf32>
}""")
    compiled = bufferized(module, target)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    first, second = Interpreter(compiled).run([x])
    np.testing.assert_array_equal(first, x)
    np.testing.assert_array_equal(second, [[1, 2, 3], [4, 5, 6]])
    assert len(ops_of(compiled, memref.AllocOp)) == 2


def test_computes_and_buffers_keep_their_ops_source_lines() -> None:
    """Like MLIR's rewrites, bufferize and plan-memory give what they make the location of
    the op it is made for: an error about a buffer or a planned view points at its producer."""
    ctx, module, text = read_module(str(ROOT / "examples" / "small_cnn.mlir"))
    lines = {op: location_of(op) for op in module.walk() if op.name.startswith("nn.")}
    run_pipeline(
        parse_pipeline("default-pipeline{target=avx2}", get_all_passes()), ctx, module, text
    )
    computes = [op for op in module.walk() if isinstance(op, ComputeOp)]
    assert computes and all(location_of(op) == lines[op.inner] for op in computes)
    views = [op for op in module.walk() if isinstance(op, memref.ViewOp)]
    assert views and all(location_of(op) in lines.values() for op in views)
