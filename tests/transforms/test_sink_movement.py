"""sink-movement (transforms/sink_movement.py) on a video network's blocks as torch exports
them (3-D Conv -> ReLU -> 3-D Conv -> Add of the block's input -> ReLU; two 3-D Conv branches
-> Concat -> MaxPool -> ReLU), imported as 2-D convolutions and pools between transposes:
frontends/onnx/volumes.py). Before and after the pass agree
on every target, padding on and off, interpreter and generated module, within float32
rounding (the ReLUs and the add become the convolutions' post-ops, which round once), and
with onnxruntime; after it the transposes between the layers are gone and the arena is at
its lower bound (the values the convolutions now keep in their layouts may take more bytes
than plain ones: padded channels, a residual kept for a convolution's sum post-op). A model whose element-wise op reads a transpose that something else also reads keeps
its transposes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects import nn
from nnlayout.dialects.plan import ARENA_BYTES, LOWER_BOUND_BYTES
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    assert_close,
    compile_module,
    compiled_without,
    count_ops,
    onnxruntime_outputs,
    plan_figure,
    swept,
    typed_model,
)
from nnlayout.transforms.sink_movement import SinkMovementPass

F = TensorProto.FLOAT
C = 5  # pads in every blocked layout
RNG = np.random.default_rng(54)


def residual_block() -> onnx.ModelProto:
    weights = {
        name: (RNG.standard_normal((C, C, 3, 3, 3)) / 8).astype(np.float32) for name in ("w1", "w2")
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 6),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1] * 6),
        helper.make_node("Add", ["c2", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    return typed_model(nodes, {"x": (F, [1, C, 4, 6, 6])}, {"y": (F, [1, C, 4, 6, 6])}, weights)


def inception_block() -> onnx.ModelProto:
    """Two 3-D convolution branches of one clip concatenated along the channels, a max pool,
    a ReLU: s3d's mixed blocks."""
    weights = {
        "w1": (RNG.standard_normal((3, C, 1, 1, 1)) / 2).astype(np.float32),
        "w2": (RNG.standard_normal((4, C, 3, 3, 3)) / 8).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["b1"]),
        helper.make_node("Conv", ["x", "w2"], ["b2"], pads=[1] * 6),
        helper.make_node("Concat", ["b1", "b2"], ["cat"], axis=1),
        helper.make_node("MaxPool", ["cat"], ["pool"], kernel_shape=[3, 3, 3], pads=[1] * 6),
        helper.make_node("Relu", ["pool"], ["y"]),
    ]
    return typed_model(nodes, {"x": (F, [1, C, 4, 6, 6])}, {"y": (F, [1, 7, 4, 6, 6])}, weights)


def transposes(module: ModuleOp) -> int:
    return count_ops(module, nn.TransposeOp)


@pytest.mark.parametrize(("make", "left"), [(residual_block, 2), (inception_block, 3)])
def test_3d_blocks_compute_the_same_without_their_transposes(
    make: Callable[[], onnx.ModelProto], left: int
) -> None:
    """A residual block; branches concatenated, then max-pooled. Left: the transposes of the
    input into frames (one per convolution reading it) and of the result back."""
    model = make()
    module = import_model(model, inline_limit=1 << 20).module
    inputs = [RNG.standard_normal((1, C, 4, 6, 6)).astype(np.float32)]
    (want,) = onnxruntime_outputs(model, inputs)
    for target, padding in swept(ALL_TARGETS, make.__name__.encode()):
        before = compiled_without(module, target, padding, SinkMovementPass)
        after = compile_module(module, target, padding, DEFAULT_PIPELINE)
        assert transposes(before) > left and transposes(after) == left, target
        assert plan_figure(after, ARENA_BYTES) == plan_figure(after, LOWER_BOUND_BYTES), (
            target,
            padding,
        )
        for run in (lambda m, i: Interpreter(m).run(i), run_generated):
            (got_before,), (got_after,) = run(before, inputs), run(after, inputs)
            assert_close(got_before, got_after, 1e-5)
            assert_close(want, got_after)


def test_a_transpose_read_twice_stays() -> None:
    """The ReLU's transpose is also an output: it stays, and so does the ReLU's reading it."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
        helper.make_node("Relu", ["t"], ["y"]),
    ]
    model = typed_model(
        nodes, {"x": (F, [2, 3, 4])}, {"y": (F, [3, 2, 4]), "t": (F, [3, 2, 4])}, {}
    )
    module = import_model(model, inline_limit=1 << 20).module
    after = compile_module(module, "ref", True, DEFAULT_PIPELINE)
    assert transposes(after) == 1
    inputs = [RNG.standard_normal((2, 3, 4)).astype(np.float32)]
    for want, got in zip(
        onnxruntime_outputs(model, inputs), run_generated(after, inputs), strict=True
    ):
        np.testing.assert_array_equal(want, got)


def test_a_transpose_of_unit_axes_becomes_a_view() -> None:
    """torch's batch-first LSTM at batch 1: its Y [steps, 1, 1, hidden] transposed to ONNX's
    order moves no element; sink-movement makes both transposes reshapes (a view of the
    recurrent layer's buffer; bufferize makes such a transpose a view too, so the compiled
    programs have none either way), and every target computes what it did before, padding on
    and off."""
    hidden, steps = 5, 6
    nodes = [
        helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=hidden),
        helper.make_node("Transpose", ["y"], ["t"], perm=[2, 0, 1, 3]),
        helper.make_node("Relu", ["t"], ["z"]),
    ]
    weights = {
        "w": RNG.standard_normal((1, 4 * hidden, 3)).astype(np.float32),
        "r": RNG.standard_normal((1, 4 * hidden, hidden)).astype(np.float32),
    }
    model = typed_model(
        nodes, {"x": (F, [steps, 1, 3])}, {"z": (F, [1, steps, 1, hidden])}, weights
    )
    module = import_model(model, inline_limit=1 << 20).module
    inputs = [RNG.standard_normal((steps, 1, 3)).astype(np.float32)]
    (want,) = onnxruntime_outputs(model, inputs)
    sunk = module.clone()
    SinkMovementPass().apply(make_context(), sunk)
    assert transposes(module) == 2 and transposes(sunk) == 0
    for target, padding in swept(ALL_TARGETS, b"unit axes"):
        before = compiled_without(module, target, padding, SinkMovementPass)
        after = compile_module(module, target, padding, DEFAULT_PIPELINE)
        assert transposes(before) == transposes(after) == 0, target
        for run in (lambda m, i: Interpreter(m).run(i), run_generated):
            (got_before,), (got_after,) = run(before, inputs), run(after, inputs)
            assert_close(got_before, got_after, 1e-6)
            assert_close(want, got_after)
