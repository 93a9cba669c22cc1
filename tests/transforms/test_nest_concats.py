"""nest-concats (transforms/nest_concats.py) on a dense block as torchvision's DenseNet
exports it (every layer's input the concat of the block input and all features so far):
the concats become a chain of two-input ones, the results are onnxruntime's before and after
on every target, padding on and off, interpreter and generated module, and after it no
feature is copied into a later concat and the arena stays at its lower bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects import nn
from nnlayout.dialects.plan import ARENA_BYTES, LOWER_BOUND_BYTES
from nnlayout.frontends.onnx.importer import import_to_files
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    assert_close,
    compile_module,
    compiled_without,
    onnx_model,
    onnxruntime_outputs,
    random_inputs,
    swept,
)
from nnlayout.transforms.nest_concats import NestConcatsPass

RNG = np.random.default_rng(0)


def _batch_norm(name: str, source: str, channels: int) -> tuple[list, dict[str, np.ndarray]]:
    names = [f"{name}.{part}" for part in ("scale", "shift", "mean", "var")]
    values = [
        RNG.uniform(0.5, 1.5, channels),
        RNG.uniform(-0.5, 0.5, channels),
        RNG.uniform(-0.5, 0.5, channels),
        RNG.uniform(0.5, 1.5, channels),
    ]
    node = helper.make_node("BatchNormalization", [source, *names], [f"{name}.bn"])
    relu = helper.make_node("Relu", [f"{name}.bn"], [f"{name}.r"])
    return [node, relu], {n: v.astype(np.float32) for n, v in zip(names, values, strict=True)}


def _conv(name: str, source: str, cin: int, cout: int, kernel: int) -> tuple[list, dict]:
    pad = kernel // 2
    node = helper.make_node(
        "Conv", [source, f"{name}.w"], [name], kernel_shape=[kernel] * 2, pads=[pad] * 4
    )
    w = (RNG.standard_normal((cout, cin, kernel, kernel)) * 0.2).astype(np.float32)
    return [node], {f"{name}.w": w}


def dense_block(layers: int = 3, first: int = 32, growth: int = 16) -> onnx.ModelProto:
    """A max pooling, then `layers` dense layers (batch norm, relu, 1x1 to 32, batch norm,
    relu, 3x3 to `growth`), each reading the flat concat of the pooling and the features
    before it, as torchvision's DenseNet writes `torch.cat(features, 1)`; then the
    transition (batch norm, relu, 1x1, average pooling)."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1] * 4)]
    weights: dict[str, np.ndarray] = {}
    features, channels = ["p"], first
    for layer in range(layers):
        source = "p"
        if len(features) > 1:
            source = f"cat{layer}"
            nodes.append(helper.make_node("Concat", list(features), [source], axis=1))
        for part_nodes, part_weights in (
            _batch_norm(f"l{layer}a", source, channels),
            _conv(f"l{layer}b", f"l{layer}a.r", channels, 32, 1),
            _batch_norm(f"l{layer}c", f"l{layer}b", 32),
            _conv(f"l{layer}d", f"l{layer}c.r", 32, growth, 3),
        ):
            nodes += part_nodes
            weights |= part_weights
        features.append(f"l{layer}d")
        channels += growth
    nodes.append(helper.make_node("Concat", list(features), ["out"], axis=1))
    for part_nodes, part_weights in (
        _batch_norm("t", "out", channels),
        _conv("tc", "t.r", channels, 16, 1),
    ):
        nodes += part_nodes
        weights |= part_weights
    nodes.append(
        helper.make_node("AveragePool", ["tc"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    )
    return onnx_model(nodes, {"x": [1, first, 8, 8]}, ["y"], weights)


def imported(model: onnx.ModelProto, folder: Path) -> tuple[ModuleOp, str]:
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return import_to_files(path), str(path.with_suffix(".mlir"))


def _concat_arities(module: ModuleOp) -> list[int]:
    return [len(op.inputs) for op in module.walk() if isinstance(op, nn.ConcatOp)]


def test_the_block_becomes_a_chain_with_the_same_values(tmp_path: Path) -> None:
    module, source = imported(dense_block(), tmp_path)
    assert _concat_arities(module) == [2, 3, 4]
    nested = compile_module(module, "ref", True, "nest-concats")
    assert _concat_arities(nested) == [2, 2, 2]
    inputs = random_inputs(module)
    before = Interpreter(module, source_path=source).run(inputs)
    after = Interpreter(nested, source_path=source).run(inputs)
    np.testing.assert_array_equal(before[0], after[0])  # the same values, moved only


def _copies(module: ModuleOp) -> int:
    return sum(isinstance(op, memref.CopyOp) for op in module.walk())


def test_before_and_after_on_every_target(tmp_path: Path) -> None:
    """The flat block (the default pipeline without nest-concats) and the nested one (the
    default pipeline) give onnxruntime's results on every target, padding on and off
    (`swept`: all under --runslow), through the interpreter and the generated module; nested, no feature is copied into a
    later concat (the flat block copies some wherever its concats go in place) and the
    arena is at its lower bound."""
    model = dense_block()
    module, source = imported(model, tmp_path)
    inputs = random_inputs(module)
    (want,) = onnxruntime_outputs(model, inputs)
    pairs = swept(ALL_TARGETS, b"nest-concats")
    for target, padding in pairs + [("avx512", True)] * (("avx512", True) not in pairs):
        flat = compiled_without(module, target, padding, NestConcatsPass)
        nested = compile_module(module, target, padding, DEFAULT_PIPELINE)
        for compiled in (flat, nested):
            for got in (
                Interpreter(compiled, source_path=source).run(inputs),
                run_generated(compiled, inputs, source_path=source),
            ):
                assert_close(want, got[0])
        (function,) = [op for op in nested.walk() if op.name == "func.func"]
        arena = function.attributes[ARENA_BYTES].value.data  # type: ignore[attr-defined]
        bound = function.attributes[LOWER_BOUND_BYTES].value.data  # type: ignore[attr-defined]
        assert arena == bound, (target, padding, arena, bound)
        assert _copies(nested) == 0, (target, padding)
        if target == "avx512":  # blocked, the concats in place: flat, the features copied
            assert _copies(flat) == 5  # p and c1 copied into two later concats, c2 into one
