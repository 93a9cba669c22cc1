"""Models exported in float16 (`model.half()`): their inputs and outputs stay float16, and
every value between is computed in float32 (the weights widened exactly, the result rounded
to float16 once on the way out). A small CNN and an attention block built as torch writes
them in float16, against onnxruntime's float16 run and against the same model computed in
float32, on every target, padding on and off, interpreter and generated module; a Cast to
or from float16 inside is no rounding."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import everywhere, onnxruntime_outputs, typed_model

H16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT
RNG = np.random.default_rng(16)


def _halves(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def cnn(element: int) -> onnx.ModelProto:
    """conv 3x3 -> relu -> conv 1x1 + residual -> HardSwish -> global pool -> Gemm, with
    float16 weights (`element` FLOAT16) or the same weights widened (FLOAT)."""
    rng = np.random.default_rng(1)  # the same weights for either element type
    constants = {
        "w1": _halves(rng, 8, 3, 3, 3, scale=0.3),
        "b1": _halves(rng, 8, scale=0.1),
        "w2": _halves(rng, 8, 8, 1, 1, scale=0.3),
        "fc": _halves(rng, 5, 8, scale=0.3),
        "fcb": _halves(rng, 5, scale=0.1),
    }
    if element == F32:
        constants = {name: value.astype(np.float32) for name, value in constants.items()}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"]),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("HardSwish", ["s"], ["h"]),
        helper.make_node("GlobalAveragePool", ["h"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
    ]
    return typed_model(nodes, {"x": (element, [1, 3, 9, 9])}, {"y": (element, [1, 5])}, constants)


def attention(element: int) -> onnx.ModelProto:
    """LayerNormalization -> q @ k^T / 4 -> Softmax -> @ v, over [1, 6, 16]."""
    rng = np.random.default_rng(2)
    constants = {
        "gamma": _halves(rng, 16, scale=0.5) + np.float16(1),
        "beta": _halves(rng, 16, scale=0.1),
        "scale": np.array(0.25, np.float16),
    }
    if element == F32:
        constants = {name: value.astype(np.float32) for name, value in constants.items()}
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], axis=-1),
        helper.make_node("Transpose", ["n"], ["nt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["n", "nt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["weights"], axis=-1),
        helper.make_node("MatMul", ["weights", "n"], ["y"]),
    ]
    return typed_model(nodes, {"x": (element, [1, 6, 16])}, {"y": (element, [1, 6, 16])}, constants)


def results_everywhere(
    model: onnx.ModelProto, x: np.ndarray, element: str
) -> list[tuple[str, np.ndarray]]:
    """`model` imported, its function typed `element` (f16, bf16) at its boundary: its first
    result on `x` by the interpreter, then on every target, padding on and off, interpreter
    and generated module (`everywhere`), each with where it came from."""
    module = import_model(model, inline_limit=1 << 20).module
    (function,) = [op for op in module.walk() if op.name == "func.func"]
    assert element in str(function.function_type), function.function_type
    results = [("imported", Interpreter(module).run([x])[0])]
    return results + [(f"{t} {p}", got[0]) for t, p, _, got in everywhere(module, [x])]


@pytest.mark.parametrize("build", [cnn, attention], ids=["cnn", "attention"])
def test_a_float16_model_runs_in_float32_between_float16_inputs_and_outputs(build) -> None:  # noqa: ANN001
    model, wide = build(H16), build(F32)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = _halves(RNG, *shape)
    (half,) = onnxruntime_outputs(model, [x])
    (exact,) = onnxruntime_outputs(wide, [x.astype(np.float32)])
    scale = float(np.abs(exact).max())
    for where, got in results_everywhere(model, x, "f16"):
        assert got.dtype == np.float16, where
        # float32 inside, rounded once: within half a float16 step of the float32 model ...
        ulp = float(np.spacing(np.float16(scale)))
        np.testing.assert_allclose(got.astype(np.float32), exact, rtol=0, atol=ulp, err_msg=where)
        # ... and near onnxruntime's float16 run (which rounds between its ops)
        np.testing.assert_allclose(got, half, rtol=0, atol=4 * ulp, err_msg=where)


def test_casts_between_float16_and_float32_inside_are_no_rounding() -> None:
    """float32 in and out, float16 between two Casts (torch's autocast regions): computed in
    float32 throughout, so the result is the float32 model's to the last bit."""
    nodes = [
        helper.make_node("Cast", ["x"], ["h"], to=H16),
        helper.make_node("Sigmoid", ["h"], ["s"]),
        helper.make_node("Cast", ["s"], ["y"], to=F32),
    ]
    model = typed_model(nodes, {"x": (F32, [2, 8])}, {"y": (F32, [2, 8])}, {})
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    module = import_model(model).module
    assert not any(op.name == "nn.cast" for op in module.walk())
    plain = [helper.make_node("Sigmoid", ["x"], ["y"])]
    wide = typed_model(plain, {"x": (F32, [2, 8])}, {"y": (F32, [2, 8])}, {})
    (got,), (want,) = (Interpreter(import_model(m).module).run([x]) for m in (model, wide))
    np.testing.assert_array_equal(got, want)


def test_a_mask_made_float16_and_an_untyped_float16_output() -> None:
    """torch's `mask.to(x.dtype)` in a half model is Cast(bool -> FLOAT16): float32 here; a
    graph output whose type is not declared but inferred float16 is rounded on exit too."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["m"]),
        helper.make_node("Cast", ["m"], ["f"], to=H16),
        helper.make_node("Mul", ["x", "f"], ["y"]),
    ]
    model = typed_model(nodes, {"x": (H16, [2, 8])}, {"y": (H16, [2, 8])}, {})
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros((), np.float16), "zero"))
    untyped = onnx.ModelProto()
    untyped.CopyFrom(model)
    untyped.graph.output[0].ClearField("type")
    x = _halves(RNG, 2, 8)
    (want,) = onnxruntime_outputs(model, [x])
    for m in (model, untyped):
        module = import_model(m).module
        results = [
            Interpreter(module).run([x])[0],
            *(got[0] for *_, got in everywhere(module, [x])),
        ]
        for got in results:
            assert got.dtype == np.float16
            np.testing.assert_array_equal(got, want)
