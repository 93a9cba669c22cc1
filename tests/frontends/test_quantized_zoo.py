"""The zoo's small variants (ResNet-50, MobileNetV2, DenseNet-121, UNet) quantized by
onnxruntime's `quantize_static` as `benchmarks/zoo_int8.py` does (pre-processed, QDQ form,
per-channel s8 weights, u8 activations, seeded calibration), imported, compiled by
`default-pipeline` on every target, padding on and off, and run by the interpreter and the
generated module: within one output step of onnxruntime's int8 output (or of onnxruntime's own
spread, where its unoptimised session is further than that from its optimised one on the same
input); the quantized ops folded, the arenas at their lower bound with 1-byte buffers; and the
reference kernels within one step of onnx's ReferenceEvaluator."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
import onnx.version_converter
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.benchmarks.zoo_int8 import (
    output_steps,
    quantize,
    steps_apart,
    time_in_turn,
    unoptimised_session,
    without_softmax,
)
from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model, import_to_files
from nnlayout.runtime.interpreter import Interpreter, find_entry
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    onnxruntime_outputs,
    random_inputs,
    tiered,
)

ZOO_INT8 = ["resnet50", "mobilenet_v2", "densenet121", "unet"]
SEED = 0
#: Models with float ops left between a dequantize and a quantize (DenseNet-121's
#: pre-activation batch norms and average pooling, UNet's ConvTranspose: neither onnxruntime
#: nor nnlayout has an integer kernel for them): computed in another order on another target,
#: a value within float rounding of a half step rounds the other way, one step that the
#: layers after can make two at the output (onnxruntime's own unoptimised session is up to 2
#: steps from its optimised one on the small UNet, 7 on the full one).
FLOAT_BETWEEN = {"densenet121": 2.0, "unet": 2.0}


def quantized_zoo_model(name: str, folder: Path) -> onnx.ModelProto:
    """The small variant of zoo model `name`, its Softmax output dropped, quantized."""
    onnx.save(without_softmax(build(name, small=True)), folder / "float.onnx")
    return quantize(folder / "float.onnx", folder / "quantized.onnx")


def allowed_steps(
    model: onnx.ModelProto, folder: Path, inputs: list[np.ndarray], least: float = 1.0
) -> float:
    """`least` steps, or onnxruntime's own spread on `inputs` (its unoptimised session against
    its optimised one, in output steps) where that is more."""
    want = onnxruntime_outputs(model, inputs)
    plain = unoptimised_session(folder / "quantized.onnx")
    names = [i.name for i in plain.get_inputs()]  # type: ignore[attr-defined]
    unoptimised = plain.run(None, dict(zip(names, inputs, strict=True)))  # type: ignore[attr-defined]
    return max(least, steps_apart(want, unoptimised, output_steps(model)))


def arena_at_lower_bound(compiled: ModuleOp) -> bool:
    function = find_entry(compiled)
    arena = function.attributes["nnlayout.arena_bytes"].value.data  # type: ignore[attr-defined]
    return arena == function.attributes["nnlayout.lower_bound_bytes"].value.data  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", tiered(ZOO_INT8, ["resnet50"]))
def test_quantized_zoo_model_runs_like_onnxruntime(tmp_path: Path, name: str) -> None:
    model = quantized_zoo_model(name, tmp_path)
    inputs = random_inputs(import_model(model).module, SEED)  # check_against_onnxruntime's
    least = FLOAT_BETWEEN.get(name, 1.0)
    step = output_steps(model)[0] * allowed_steps(model, tmp_path, inputs, least)
    module = check_against_onnxruntime(model, tmp_path, seed=SEED, step=step)
    compiled = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    names = {op.name for op in compiled.walk()}
    # Every convolution and matmul folded into a quantized op (UNet's ConvTranspose has none
    # and stays float, as in onnxruntime); activations are 1-byte buffers in an arena at its
    # lower bound.
    assert "nn.qconv2d" in names
    assert not names & {"nn.conv2d", "nn.gemm", "nn.matmul"}, names
    assert arena_at_lower_bound(compiled)
    views = [op for op in compiled.walk() if op.name == "memref.view"]
    one_byte = [v for v in views if str(v.results[0].type.element_type) in ("ui8", "i8")]
    assert len(one_byte) > len(views) // 2, (len(one_byte), len(views))


def test_reference_kernels_match_onnx_reference_evaluator(tmp_path: Path) -> None:
    """The quantized MobileNetV2 (depthwise and pointwise convolutions, clipped ReLU6,
    residual adds, global average pooling, a Gemm) on the ref target, where fold-qdq's q-ops
    run the reference kernels: within one output step of onnx's ReferenceEvaluator, which
    runs the QDQ form as written (dequantize, float op, quantize)."""
    from onnx.reference import ReferenceEvaluator

    model = quantized_zoo_model("mobilenet_v2", tmp_path)
    module = import_to_files(tmp_path / "quantized.onnx")
    inputs = random_inputs(module, SEED)
    compiled = compile_module(module, "ref", False, DEFAULT_PIPELINE)
    assert {"nn.qconv2d", "nn.qadd", "nn.qmatmul"} <= {op.name for op in compiled.walk()}
    # onnx's reference QuantizeLinear/DequantizeLinear start at opset 19 (the same for 8 bits)
    evaluator = ReferenceEvaluator(onnx.version_converter.convert_version(model, 21))
    names = [i.name for i in model.graph.input]
    want = evaluator.run(None, dict(zip(names, inputs, strict=True)))
    got = Interpreter(compiled, source_path=str(tmp_path / "quantized.mlir")).run(inputs)
    assert steps_apart(want, got, output_steps(model)) <= 1.001


def test_the_compared_pair_swaps_places_every_other_round() -> None:
    """`time_in_turn`: the first two runs (ours and onnxruntime's) swap places every other
    round, so each comes after the other as often as after the last run; one median per
    run, in the order given."""
    calls: list[str] = []
    runs = [lambda name=name: calls.append(name) for name in "abc"]
    times = time_in_turn(runs, 4)
    assert "".join(calls) == "abcbacabcbac"
    assert len(times) == 3 and all(t >= 0 for t in times)


def test_warm_up_rounds_take_the_same_turns_and_are_not_timed() -> None:
    """`time_in_turn`'s `warmup` rounds come first, in the turns of the timed ones; only
    the timed rounds make the medians."""
    calls: list[str] = []
    slow = iter([0.05, 0.05, 0.0])

    def first() -> None:
        calls.append("a")
        time.sleep(next(slow))

    times = time_in_turn([first, lambda: calls.append("b")], 1, warmup=2)
    assert "".join(calls) == "abbaab"
    assert times[0] < 10  # ms: the 50 ms warm-up calls left out
