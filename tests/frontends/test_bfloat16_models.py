"""Models exported in bfloat16 (torch's `model.to(torch.bfloat16)`, at opset 22, from which
ONNX's Conv, pooling and HardSwish take bfloat16): imported as float16 models are, their
inputs and outputs bfloat16 and every value between computed in float32 (the weights widened
exactly, the result rounded to bfloat16 once on the way out). onnxruntime's CPU refuses such
models, so the oracle is onnxruntime's float32 run of the same model with its bfloat16
tensors widened, rounded to bfloat16: the small CNN and attention block of the float16 tests,
on every target, padding on and off, interpreter and generated module. A model at an older
opset (torch's default) is converted to opset 22 by onnx's version converter first, and
refused with the opset to export at where that fails; a Cast to or from bfloat16 inside is
no rounding."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.frontends.test_float16_models import attention, cnn, results_everywhere
from nnlayout.tests.helpers import onnxruntime_outputs, typed_model

BF16, H16, F32 = TensorProto.BFLOAT16, TensorProto.FLOAT16, TensorProto.FLOAT
RNG = np.random.default_rng(17)


def _retyped(model: onnx.ModelProto, old: int, new: int, opset: int) -> onnx.ModelProto:
    """`model` with its tensors of element type `old` made `new` (initializers converted,
    graph inputs and outputs retyped) at `opset`."""
    dtype = ml_dtypes.bfloat16 if new == BF16 else np.float32
    result = onnx.ModelProto()
    result.CopyFrom(model)
    graph = result.graph
    for init in graph.initializer:
        if init.data_type == old:
            array = numpy_helper.to_array(init).astype(np.float32).astype(dtype)
            init.CopyFrom(numpy_helper.from_array(array, init.name))
    for value in (*graph.input, *graph.output):
        if value.type.tensor_type.elem_type == old:
            value.type.tensor_type.elem_type = new
    result.opset_import[0].version = opset
    return result


def bfloat16(build, opset: int = 22) -> onnx.ModelProto:  # noqa: ANN001
    """The float16 test model `build` makes, in bfloat16 at `opset`."""
    return _retyped(build(H16), H16, BF16, opset)


@pytest.mark.parametrize("build", [cnn, attention], ids=["cnn", "attention"])
def test_a_bfloat16_model_is_float32_rounded_once(build) -> None:  # noqa: ANN001
    model = bfloat16(build)
    wide = _retyped(model, BF16, F32, 22)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = RNG.standard_normal(shape).astype(ml_dtypes.bfloat16)
    (exact,) = onnxruntime_outputs(wide, [x.astype(np.float32)])
    want = exact.astype(ml_dtypes.bfloat16).astype(np.float32)
    for where, got in results_everywhere(model, x, "bf16"):
        assert got.dtype == ml_dtypes.bfloat16, where
        # float32 inside, rounded once: onnxruntime's float32 result rounded, or a bfloat16
        # step from it where float32's order of summation lands on the other side of a tie
        step = np.spacing(np.abs(want).astype(ml_dtypes.bfloat16)).astype(np.float32)
        np.testing.assert_array_less(np.abs(got.astype(np.float32) - want), step + 1e-30)
        assert np.mean(got.astype(np.float32) == want) > 0.9, where


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("build", [cnn, attention], ids=["cnn", "attention"])
def test_a_bfloat16_model_at_an_older_opset_is_converted_first(build, opset: int) -> None:  # noqa: ANN001
    """torch's exporters default to opsets 17 to 20, whose Conv (and pooling, HardSwish, ...)
    have no bfloat16: the model does not check as written. onnx's version converter brings it
    to opset 22 first, and it computes what the same model exported at 22 does, bit for bit
    (that one is checked against onnxruntime above)."""
    x = RNG.standard_normal(
        [d.dim_value for d in bfloat16(build).graph.input[0].type.tensor_type.shape.dim]
    ).astype(ml_dtypes.bfloat16)
    (want,) = Interpreter(import_model(bfloat16(build), inline_limit=1 << 20).module).run([x])
    older = import_model(bfloat16(build, opset=opset), inline_limit=1 << 20).module
    (got,) = Interpreter(older).run([x])
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got, want)


def test_where_the_converter_fails_the_opset_to_export_at_is_named(monkeypatch) -> None:  # noqa: ANN001
    """Where onnx's version converter cannot bring the model to opset 22, the checker refuses
    it as written, naming the node and the opset that takes bfloat16; an error that is not
    about bfloat16 has no such hint."""
    from nnlayout.frontends.onnx import inference

    def fails(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
        raise RuntimeError("no adapter")

    monkeypatch.setattr(inference.version_converter, "convert_version", fails)
    with pytest.raises(UserError) as error:
        import_model(bfloat16(cnn, opset=18))
    message = str(error.value)
    assert "invalid ONNX model" in message and "op_type:Conv" in message, message
    assert "takes bfloat16 from opset 22 (the model's is 18)" in message, message
    assert "opset_version=22" in message, message
    with pytest.raises(UserError) as error:  # an error that is not about bfloat16: no hint
        import_model(_retyped(bfloat16(cnn), BF16, TensorProto.DOUBLE, 18))
    assert "opset" not in str(error.value), str(error.value)


def test_a_bfloat16_model_below_opset_13_is_not_converted() -> None:
    """Below opset 13 the converter changes meanings (opset 10's linear Resize becomes
    half_pixel): such a model is refused as written, with the opset to export at."""
    with pytest.raises(UserError) as error:
        import_model(bfloat16(cnn, opset=12))
    assert "takes bfloat16 from opset 22 (the model's is 12)" in str(error.value)


def _broken(case: str) -> onnx.ModelProto:
    """A bfloat16 model at opset 18 that onnx's version converter cannot convert."""
    x = helper.make_tensor_value_info("x", BF16, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", BF16, [1, 3, 8, 8])
    nodes = {
        "undefined input": [helper.make_node("Conv", ["x", "w"], ["y"])],
        "unknown operator": [helper.make_node("NoSuchOp", ["x"], ["y"])],
        "no producer": [],
        "reshape of opset 1": [helper.make_node("Reshape", ["x"], ["y"], shape=[1, -1])],
    }[case]
    graph = helper.make_graph(nodes, "broken", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    "case", ["undefined input", "unknown operator", "no producer", "reshape of opset 1"]
)
def test_a_model_the_converter_cannot_convert_is_refused_in_one_line(case: str) -> None:
    """The converter's own errors (ConvertError, a failed assertion, an inference error) are
    not shown: the model is checked as written, which names what is wrong."""
    with pytest.raises(UserError) as error:
        import_model(_broken(case))
    message = str(error.value)
    assert "\n" not in message.strip() and "Traceback" not in message, message


def test_casts_between_bfloat16_and_float32_inside_are_no_rounding() -> None:
    """float32 in and out, bfloat16 between two Casts: computed in float32 throughout, so the
    result is the float32 model's to the last bit; a mask made bfloat16 (torch's
    `mask.to(x.dtype)`) is float32 here."""
    nodes = [
        helper.make_node("Cast", ["x"], ["h"], to=BF16),
        helper.make_node("Sigmoid", ["h"], ["s"]),
        helper.make_node("Greater", ["x", "zero"], ["m"]),
        helper.make_node("Cast", ["m"], ["f"], to=BF16),
        helper.make_node("Mul", ["s", "f"], ["p"]),
        helper.make_node("Cast", ["p"], ["y"], to=F32),
    ]
    model = typed_model(nodes, {"x": (F32, [2, 8])}, {"y": (F32, [2, 8])}, {})
    model.graph.initializer.append(numpy_helper.from_array(np.zeros((), np.float32), "zero"))
    model.opset_import[0].version = 22
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    module = import_model(model).module
    assert not any(
        op.name == "nn.cast" and "bf16" in str(op.results[0].type) for op in module.walk()
    )
    (got,) = Interpreter(module).run([x])
    want = (1 / (1 + np.exp(-x.astype(np.float64)))) * (x > 0)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=0)


def test_bfloat16_quantization_scales_are_widened_exactly() -> None:
    """QuantizeLinear and DequantizeLinear with bfloat16 scales (and x, and y) at opset 21:
    the scale widened exactly, ONNX's formulas computed in float32, y rounded once."""
    scale = np.array(0.0123, ml_dtypes.bfloat16)
    zero = np.array(3, np.uint8)
    constants = {"s": scale, "z": zero}
    dq = typed_model(
        [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
        {"q": (TensorProto.UINT8, [1, 4])},
        {"y": (BF16, [1, 4])},
        constants,
    )
    q = typed_model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
        {"x": (BF16, [1, 4])},
        {"y": (TensorProto.UINT8, [1, 4])},
        constants,
    )
    for model in (dq, q):
        model.opset_import[0].version = 21
    codes = np.array([[0, 10, 200, 255]], np.uint8)
    wide = np.float32(scale)
    (got,) = Interpreter(import_model(dq).module).run([codes])
    want = ((codes.astype(np.float32) - 3) * wide).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got, want)
    x = np.array([[1.0, -0.1, 3.1, 0.3]], ml_dtypes.bfloat16)
    (got,) = Interpreter(import_model(q).module).run([x])
    expected = np.clip(np.rint(x.astype(np.float32) / wide) + 3, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got, expected)


def test_no_opset_hint_for_an_operator_without_bfloat16() -> None:
    """TopK has no bfloat16 at opset 22 either: its refusal says no more than onnx's."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"])]
    model = typed_model(
        nodes,
        {"x": (BF16, [1, 8])},
        {"v": (BF16, [1, 2]), "i": (TensorProto.INT64, [1, 2])},
        {"k": np.array([2], np.int64)},
    )
    model.opset_import[0].version = 18
    with pytest.raises(UserError) as error:
        import_model(model)
    assert "op_type:TopK" in str(error.value) and "opset_version" not in str(error.value)
