"""fold-scatter-transposes (transforms/fold_scatter_transposes.py) on an attention step as
torch's dynamo exporter writes it: the key cache written at the step's position (transposed to
put the position axis first, ScatterND, transposed back), then read by the query's product.
Before and after the pass give the same bits on every target, padding on and off,
interpreter and generated module, and onnxruntime's result; after it no transpose of the
cache is left and the arena is no larger."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects import nn
from nnlayout.dialects.plan import ARENA_BYTES
from nnlayout.frontends.onnx import import_model
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
from nnlayout.transforms.fold_scatter_transposes import FoldScatterTransposesPass

F, I64 = TensorProto.FLOAT, TensorProto.INT64
H, S, D = 2, 16, 8
RNG = np.random.default_rng(4)


def attention_step(heads_first: bool, reduction: str = "none") -> onnx.ModelProto:
    """keys = cache with position `pos` replaced by k (dynamo's index_put); scores = q @ keys^T.
    k is [1, H, 1, D] (`heads_first`: transposed as the cache is) or, as the dynamo exporter
    writes a projection not yet split into heads, [1, 1, H, D] (transposed otherwise). With a
    `reduction`, k is combined with the cache's row instead."""
    perm, k_shape = ([2, 0, 1, 3], [1, H, 1, D]) if heads_first else ([1, 0, 2, 3], [1, 1, H, D])
    nodes = [
        helper.make_node("Unsqueeze", ["pos", "axes"], ["at"]),
        helper.make_node("Transpose", ["cache"], ["moved"], perm=[2, 0, 1, 3]),
        helper.make_node("Transpose", ["k"], ["rows"], perm=perm),
        helper.make_node("ScatterND", ["moved", "at", "rows"], ["written"], reduction=reduction),
        helper.make_node("Transpose", ["written"], ["keys"], perm=[1, 2, 0, 3]),
        helper.make_node("Transpose", ["keys"], ["keys_t"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "keys_t"], ["scores"]),
    ]
    inputs = {
        "cache": (F, [1, H, S, D]),
        "k": (F, k_shape),
        "q": (F, [1, H, 1, D]),
        "pos": (I64, [1]),
    }
    outputs = {"scores": (F, [1, H, 1, S])}
    return typed_model(nodes, inputs, outputs, {"axes": np.array([1], np.int64)})


def _interpreted(module: ModuleOp, inputs: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    return Interpreter(module).run(inputs)


@pytest.mark.parametrize(
    ("heads_first", "reduction"), [(True, "none"), (False, "none"), (True, "add")]
)
def test_the_folded_cache_write_computes_the_same_bits_everywhere(
    heads_first: bool, reduction: str
) -> None:
    """One transpose fewer than without the pass, the bits the same. (Before sink-movement
    made a transpose that moves only axes of size 1 a reshape, k's [1, H, 1, D] ->
    [1, 1, H, D] counted too: two fewer where heads come first.)"""
    model = attention_step(heads_first, reduction)
    module = import_model(model, inline_limit=1 << 20).module
    k_shape = (1, H, 1, D) if heads_first else (1, 1, H, D)
    for position in (0, 9, -1):
        inputs = [
            RNG.standard_normal((1, H, S, D)).astype(np.float32),
            RNG.standard_normal(k_shape).astype(np.float32),
            RNG.standard_normal((1, H, 1, D)).astype(np.float32),
            np.array([position], np.int64),
        ]
        (want,) = onnxruntime_outputs(model, inputs)
        key = f"{heads_first} {reduction} {position}".encode()
        for target, padding in swept(ALL_TARGETS, key):
            before = compiled_without(module, target, padding, FoldScatterTransposesPass)
            after = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert count_ops(before, nn.TransposeOp) - count_ops(after, nn.TransposeOp) == 1, target
            assert plan_figure(after, ARENA_BYTES) <= plan_figure(before, ARENA_BYTES), (
                target,
                padding,
            )
            for run in (_interpreted, run_generated):
                (got_before,), (got_after,) = run(before, inputs), run(after, inputs)
                np.testing.assert_array_equal(got_after, got_before)
                assert_close(want, got_after)
