"""The ONNX importer's names, constants and weights files: value names as name hints, hostile
and non-ASCII names sanitized and round-tripped, non-finite and every f32 constant through
printed IR, omitted clip bounds, scalar initializers, large initializers in the weights file
(none when all is inline), external data inside the model's folder."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper

from nnlayout.dialects import nn
from nnlayout.dialects.weights import WEIGHTS_ATTR, load_weights
from nnlayout.frontends.onnx import import_model, load_model, sanitize_name, write_imported
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.runtime.interpreter import run_function
from nnlayout.tests.frontends.test_onnx_import import (
    CASES,
    CONV_W,
    X4,
    copy,
    make_model,
    node,
    round_trip,
    run_both,
    weight,
)


# ------------------------------------------------------------------ names
def test_value_names_become_name_hints() -> None:
    model = make_model(
        [node("Relu", ["input:x"], ["layer1/relu.out"])], {"input:x": (2, 3)}, ["layer1/relu.out"]
    )
    text = round_trip(model)
    assert "func.func @main(%input_x: tensor<2x3xf32>)" in text
    assert "%layer1_relu.out = nn.relu %input_x" in text


HOSTILE = [
    'a"b',
    "new\nline",
    "ünïcødé→名前",
    "%percent",
    "@at",
    "{braces}",
    "0digit",
    "back\\slash",
    "",
    "sp ace",
    "-dash",
    "a/b",
    "a:b",
    "_1",
    "../up",
    "file",
]


def test_sanitized_names_are_valid() -> None:
    for name in HOSTILE:
        clean = sanitize_name(name)
        assert clean and not clean[0].isdigit()
        assert all(c.isascii() and (c.isalnum() or c in "_$.-") for c in clean)


# Printed IR spells NaN, ±Inf and some large floats as their bits (0xFF800000 is -inf).
NON_FINITE_CONSTANTS: dict[str, onnx.ModelProto] = {
    "softmax-with-minus-inf-mask": make_model(
        [node("Add", ["x", "mask"], ["m"]), node("Softmax", ["m"], axis=-1)],
        {"x": (2, 4)},
        ["y"],
        {"mask": np.array([0.0, 0.0, -np.inf, -np.inf], np.float32)},
    ),
    "clip-unbounded-above": make_model(
        [node("Clip", ["x", "lo", "hi"])],
        {"x": (2, 4)},
        ["y"],
        {"lo": np.float32(0.0), "hi": np.float32(np.inf)},
    ),
    "add-non-finite-and-large": make_model(
        [node("Add", ["x", "c"])],
        {"x": (6,)},
        ["y"],
        {"c": np.array([1.0, np.inf, -np.inf, np.nan, 16777216.0, -1234567.0], np.float32)},
    ),
}


@pytest.mark.parametrize("model", NON_FINITE_CONSTANTS.values(), ids=NON_FINITE_CONSTANTS)
def test_non_finite_constants_keep_their_values_through_printed_ir(model: onnx.ModelProto) -> None:
    for ours, expected in zip(*run_both(model), strict=True):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)


@given(st.lists(st.floats(width=32), min_size=1, max_size=16))
@settings(max_examples=200, deadline=None)
def test_every_f32_constant_survives_print_and_parse(values: list[float]) -> None:
    array = np.array(values, np.float32)
    model = make_model([node("Add", ["x", "c"])], {"x": (len(values),)}, ["y"], {"c": array})
    module = parse_module(make_context(), round_trip(model), "test")
    constant = next(op for op in module.walk() if isinstance(op, nn.ConstantOp))
    parsed = np.array(constant.value.get_values(), np.float32)
    np.testing.assert_array_equal(parsed, array)  # NaN where NaN, -0.0 == 0.0 aside


def test_hostile_names_round_trip_with_weights(tmp_path: Path) -> None:
    """Every hostile name as a large initializer and (with a suffix) as a value: the IR
    prints and parses back, and the weights file maps every constant."""
    names = [n for n in HOSTILE if n] + ["allow_pickle"]  # np.savez's own parameters too
    source = '%in"put\n'
    nodes, inits, current = [], {}, source
    for name in names:
        inits[name] = weight(2, 3, 4)
        nodes.append(helper.make_node("Add", [current, name], [f"{name}\n/out"], name=f"n{name}"))
        current = f"{name}\n/out"
    nodes.append(helper.make_node("Identity", [current], ["out"]))
    model = make_model(nodes, {source: (2, 3, 4)}, ["out"], inits)
    imported = import_model(model)
    assert len(imported.weights) == len(inits)
    mlir = tmp_path / "hostile.mlir"
    write_imported(imported, mlir)
    text = mlir.read_text(encoding="utf-8")
    assert f'{WEIGHTS_ATTR} = "hostile.npz"' in text
    module = parse_module(make_context(), text, str(mlir))
    module.verify()
    again = io.StringIO()
    print_module(module, again)
    assert again.getvalue() == text
    assert 'onnx.name = "new\\0Aline"' in text  # the original ONNX name is kept, escaped
    x = weight(2, 3, 4)
    (ours,) = run_function(module, [x], source_path=str(mlir))
    np.testing.assert_allclose(ours, x + sum(inits.values()), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [6, 17])
def test_an_omitted_clip_bound_is_the_float_range(opset: int) -> None:
    """ONNX: a bound not given is the lowest or largest float, so inf becomes 3.4e38, as in
    onnxruntime (nnlayout left it unbounded)."""
    model = (
        make_model([node("Clip", ["x"], min=-0.2)], {"x": (6,)}, ["y"], opset=opset)
        if opset < 11
        else make_model([node("Clip", ["x", "lo"])], {"x": (6,)}, ["y"], {"lo": np.float32(-0.2)})
    )
    x = np.array([np.inf, -np.inf, 1.0, 5.0, -1.0, np.nan], np.float32)
    (ours,) = run_function(parse_module(make_context(), round_trip(model), "clip"), [x])
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    np.testing.assert_array_equal(ours, session.run(None, {"x": x})[0])
    assert ours[0] == np.finfo(np.float32).max


@pytest.mark.parametrize("inline_limit", [0, 16])
def test_a_scalar_initializer_stays_a_scalar(tmp_path: Path, inline_limit: int) -> None:
    """A 0-d initializer is a tensor<f32>, inline or in the weights file: it became
    tensor<1xf32> (np.ascontiguousarray makes 0-d arrays 1-d), so a scalar dot product plus
    a scalar was refused ('nn computes shape [1] ... ONNX infers []'), and with
    --inline-limit 0 a scalar bias could not be loaded (stored as [1])."""
    model = make_model(
        [node("MatMul", ["a", "b"], ["d"]), node("Add", ["d", "k"])],
        {"a": (3,), "b": (3,)},
        ["y"],
        {"k": np.array(0.5, np.float32)},
    )
    mlir = tmp_path / "dot.mlir"
    write_imported(import_model(model, inline_limit=inline_limit), mlir)
    module = parse_module(make_context(), mlir.read_text(encoding="utf-8"), str(mlir))
    a, b = weight(3), weight(3)
    (ours,) = run_function(module, [a, b], source_path=str(mlir))
    assert ours.shape == ()
    np.testing.assert_allclose(ours, float(a @ b) + 0.5, rtol=1e-5)


def test_non_ascii_names_survive_print_and_parse(tmp_path: Path) -> None:
    """xDSL prints a string's non-ASCII characters as escaped UTF-8 bytes, and read such a
    literal back as bytes: IR naming its weights file modèle.npz, or a weight wé, could not
    be read back by any tool."""
    model = make_model(
        [node("Conv", ["x", "wé", "b"])], X4, ["y"], {"wé": weight(6, 4, 3, 3), "b": weight(6)}
    )
    mlir = tmp_path / "modèle.mlir"
    write_imported(import_model(model), mlir)
    module = parse_module(make_context(), mlir.read_text(encoding="utf-8"), str(mlir))
    printed = io.StringIO()
    print_module(module, printed)
    assert '"mod\\C3\\A8le.npz"' in printed.getvalue()  # as xDSL and MLIR print it
    again = parse_module(make_context(), printed.getvalue(), str(mlir))
    assert again.attributes[WEIGHTS_ATTR].data == "modèle.npz"
    x = weight(1, 4, 9, 9)
    np.testing.assert_array_equal(
        run_function(again, [x], source_path=str(mlir))[0],
        run_function(module, [x], source_path=str(mlir))[0],
    )


# ------------------------------------------------------------------ weights
def test_large_initializers_go_to_the_weights_file(tmp_path: Path) -> None:
    big, small = weight(6, 4, 3, 3), weight(6)
    model = make_model([node("Conv", ["x", "w", "b"])], X4, ["y"], {"w": big, "b": small})
    imported = import_model(model)
    assert list(imported.weights) == ["w"]
    write_imported(imported, tmp_path / "conv.mlir")
    text = (tmp_path / "conv.mlir").read_text()
    assert 'nn.constant external "w" : tensor<6x4x3x3xf32>' in text
    assert "nn.constant dense<" in text  # the bias, inline
    module = parse_module(make_context(), text, str(tmp_path / "conv.mlir"))
    stored = load_weights(module, str(tmp_path / "conv.mlir"))
    np.testing.assert_array_equal(stored["w"], big)


def test_no_weights_file_when_everything_is_inline(tmp_path: Path) -> None:
    write_imported(import_model(CASES["leaky-relu"]), tmp_path / "a.mlir")
    assert WEIGHTS_ATTR not in (tmp_path / "a.mlir").read_text()
    assert not (tmp_path / "a.npz").exists()


def test_external_data_inside_the_folder_is_loaded(tmp_path: Path) -> None:
    model = copy(CASES["conv"])
    onnx.save(
        model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0
    )
    loaded = load_model(tmp_path / "m.onnx")
    ours = import_model(loaded)
    np.testing.assert_array_equal(ours.weights["w"], CONV_W["w"])
