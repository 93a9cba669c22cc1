"""An image convolution (the stem: at most 4 input channels) sums its reduction one input
channel at a time, as onnxruntime's NCHWc stem does: on the numpy targets inside their
kernels (kernels/reference.py: summed_per_channel), on the oneDNN ones (and on every target
for a 7x7 window) as one convolution per channel, summed (transforms/split_image_conv.py).
The first layer's rounding is what a deep network amplifies most: summed as one sequence of 147 terms, fcn_resnet50's stem alone made ours 1.4x farther
from a float64 evaluation than onnxruntime (docs/benchmarks.md, "fcn_resnet50 against
float64").

The data below makes the two orders differ by far more than a rounding: channel 0 contributes
2**24 at one tap, channels 1 and 2 one per tap (49 each). Summed in one sequence after the
large term, each 1 is lost (2**24 + 1 rounds back to 2**24 in float32): the kernels as one
matrix product gave 2**24, 98 short, on every numpy target, padding on and off (measured
before the change), and oneDNN's one convolution gave 2**24 + 2 on `onednn` and `host`
(measured before split-image-conv). Summed per channel, 49 + 49 reach the large sum in two
additions: within 2 of the exact 2**24 + 98.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_to_files
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    onnx_model,
)

EXACT = 2.0**24 + 98
SIZE = 40  # 34 x 34 outputs x 16 channels x 147 taps: enough for the blocked kernels


def stem_model() -> tuple[object, np.ndarray]:
    w = np.zeros((16, 3, 7, 7), np.float32)
    w[:, 0, 3, 3] = 2.0**24
    w[:, 1:] = 1.0
    node = helper.make_node("Conv", ["input", "w"], ["output"], kernel_shape=[7, 7])
    model = onnx_model([node], {"input": [1, 3, SIZE, SIZE]}, ["output"], {"w": w})
    return model, np.ones((1, 3, SIZE, SIZE), np.float32)


# onednn-nchw8c's convolution (jit:avx2) starts its sums from the destination when it has a
# sum post-op, so the per-channel convolutions add their products one by one onto the
# running total: one sequence again, 2**24 here (measured). Its results are checked below.
PER_CHANNEL_TARGETS = [t for t in ALL_TARGETS if t != "onednn-nchw8c"]


@pytest.mark.parametrize("target", PER_CHANNEL_TARGETS)
@pytest.mark.parametrize("padding", [True, False])
def test_the_stem_sums_per_input_channel(target: str, padding: bool, tmp_path: Path) -> None:
    model, x = stem_model()
    path = tmp_path / "stem.onnx"
    path.write_bytes(model.SerializeToString())  # type: ignore[attr-defined]
    module = import_to_files(path)
    compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
    # avx2/avx512: the blocked GEMM of a plain image, not a fallback to the reference
    if target in ("avx2", "avx512"):
        assert any("nchwc" in name for name in chosen_kernels(compiled, nn.Conv2dOp)), (
            chosen_kernels(compiled, nn.Conv2dOp)
        )
    source = str(path.with_suffix(".mlir"))
    for got in (
        Interpreter(compiled, source_path=source).run([x]),
        run_generated(compiled, [x], source_path=source),
    ):
        (y,) = got
        assert y.shape == (1, 16, SIZE - 6, SIZE - 6)
        assert np.abs(y.astype(np.float64) - EXACT).max() <= 2, (target, padding, y.ravel()[:4])


@pytest.mark.parametrize("activation", ["", "Relu"])
@pytest.mark.parametrize("bias", [True, False])
def test_a_split_stem_keeps_its_results(activation: str, bias: bool, tmp_path: Path) -> None:
    """A 7x7 stride-2 stem (split into one convolution per channel, summed; the bias and the
    activation on the last) against onnxruntime, every target, padding on and off."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((24, 3, 7, 7)).astype(np.float32) / 8
    initializers = {"w": w}
    inputs = ["input", "w"]
    if bias:
        initializers["b"] = rng.standard_normal(24).astype(np.float32)
        inputs.append("b")
    conv_out = "conv" if activation else "output"
    nodes = [
        helper.make_node(
            "Conv", inputs, [conv_out], kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3]
        )
    ]
    if activation:
        nodes.append(helper.make_node(activation, ["conv"], ["output"]))
    model = onnx_model(nodes, {"input": [1, 3, 30, 30]}, ["output"], initializers)
    module = check_against_onnxruntime(model, tmp_path, targets=ALL_TARGETS)
    split = compile_module(module, "host", True, DEFAULT_PIPELINE)
    convolutions = [op for op in split.walk() if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp)]
    assert len(convolutions) == 3, [op.name for op in convolutions]
