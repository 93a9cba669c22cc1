"""nnlayout-import on what it cannot import, through the CLI: one clean `error:` line (never a
traceback) naming the operator, file, dimension, type, output, mode or operand, and
UserErrors from the importer's API; and the CLI's weights (an .npz beside the .mlir, never
with the module on stdout)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects.weights import WEIGHTS_ATTR
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.frontends.test_onnx_import import (
    CASES,
    X4,
    copy,
    make_model,
    node,
    round_trip,
    weight,
)
from nnlayout.tests.helpers import tool_process


# ------------------------------------------------------------------ errors (via the CLI)
def nnlayout_import(*args: str) -> subprocess.CompletedProcess[str]:
    """nnlayout-import in this process (tool_process; tests/tools/test_bad_processes.py
    and test_cli.py start it as a process)."""
    return tool_process("nnlayout-import", args)


def assert_clean_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_unsupported_operator(tmp_path: Path) -> None:
    gather = helper.make_node("NonZero", ["x"], ["y"], name="pick_nonzero")
    model = make_model([gather], {"x": (3, 1, 2)}, ["y"], {})
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "nonzero.onnx"))),
        "node 'pick_nonzero' (NonZero)",
        "unsupported operator",
    )


def test_truncated_file(tmp_path: Path) -> None:
    data = CASES["conv"].SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    assert_clean_error(nnlayout_import(str(path)), "not a valid ONNX model")


def test_missing_file(tmp_path: Path) -> None:
    assert_clean_error(nnlayout_import(str(tmp_path / "absent.onnx")), "cannot read")


def test_symbolic_batch_dimension(tmp_path: Path) -> None:
    model = make_model([node("Relu", ["x"])], {"x": ("batch", 3)}, ["y"])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dyn.onnx"))),
        "graph input 'x'",
        "symbolic dimension 'batch'",
    )


def test_non_float32_tensor(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [node("Relu", ["x"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "f64.onnx"))), "'x'", "DOUBLE", "float32"
    )


def test_maxpool_indices_output_of_a_3d_pool(tmp_path: Path) -> None:
    """A 2-D pool's indices import (nn.max_pool2d_indices); a 3-D pool's are refused."""
    model = make_model(
        [node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2, 2])],
        {"x": (1, 4, 4, 6, 6)},
        ["y", "idx"],
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "mp.onnx"))),
        "node 'maxpool_node' (MaxPool)",
        "Indices output of a 3-D pool",
    )


@pytest.mark.parametrize(
    ("outputs", "train", "message"),
    [
        (["y", "mask"], False, "Dropout's mask output is not supported"),
        (["y"], True, "Dropout in training mode is not supported"),
    ],
    ids=["mask", "training"],
)
def test_dropout_outside_inference_is_refused(
    tmp_path: Path, outputs: list[str], train: bool, message: str
) -> None:
    model = make_model(
        [node("Dropout", ["x", "", "train"], outputs)], X4, outputs, {"train": np.array(train)}
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dropout.onnx"))),
        "node 'dropout_node' (Dropout)",
        message,
    )


def test_batch_norm_statistics_outputs_mean_training_even_unread(tmp_path: Path) -> None:
    """Not so BatchNormalization's statistics outputs: listed, even with nothing reading
    them, they make onnxruntime normalise with the batch's own mean and variance."""
    model = make_model(
        [
            node(
                "BatchNormalization",
                ["x", "s", "b", "m", "v"],
                ["y", "mean", "var", "saved_mean", "saved_var"],
            )
        ],
        X4,
        ["y"],
        {"s": weight(4), "b": weight(4), "m": weight(4), "v": np.abs(weight(4)) + 0.5},
        opset=9,
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "bn.onnx"))),
        "node 'batchnormalization_node' (BatchNormalization)",
        "training-mode BatchNormalization",
    )


def test_an_integer_constant_passed_on_by_an_identity_is_named_as_used(tmp_path: Path) -> None:
    model = make_model(
        [helper.make_node("Identity", ["c"], ["a"])],
        {"x": (2,)},
        ["a"],
        {"c": np.array([1, 2], np.int16)},
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "int.onnx"))),
        "constant 'c' (passed on as 'a' by an Identity) has element type INT16",
    )


@pytest.mark.parametrize("opset", [6, 17])
def test_a_nan_clip_bound_is_refused(tmp_path: Path, opset: int) -> None:
    """ONNX leaves it open: onnxruntime ignores the bound, numpy and ONNX's reference give
    NaN everywhere (nnlayout gave NaN, and oneDNN's fused clip an internal error)."""
    model = (
        make_model([node("Clip", ["x"], max=float("nan"))], X4, ["y"], opset=opset)
        if opset < 11
        else make_model([node("Clip", ["x", "", "hi"])], X4, ["y"], {"hi": np.float32("nan")})
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "clip.onnx"))),
        "node 'clip_node' (Clip)",
        "Clip's max is NaN, which ONNX leaves open",
    )


def test_an_opset_6_dropout_is_in_training_mode_unless_is_test(tmp_path: Path) -> None:
    """(onnxruntime has no Dropout-6 to compare with.)"""
    model = make_model([node("Dropout", ["x"])], X4, ["y"], opset=6)
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dropout6.onnx"))),
        "node 'dropout_node' (Dropout)",
        "Dropout in training mode",
    )
    inference = make_model([node("Dropout", ["x"], is_test=1)], X4, ["y"], opset=6)
    assert "func.return %x :" in round_trip(inference)


def test_non_constant_compile_time_operands(tmp_path: Path) -> None:
    model = make_model([node("Clip", ["x", "lo"])], {**X4, "lo": ()}, ["y"])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "c.onnx"))),
        "node 'clip_node' (Clip)",
        "min 'lo' must be a constant",
    )
    model = make_model([node("Reshape", ["x", "s"])], X4, ["y"])
    model.graph.input.append(helper.make_tensor_value_info("s", TensorProto.INT64, [2]))
    assert_clean_error(  # an int64 graph input is accepted (indices): the shape is not
        nnlayout_import(str(save(model, tmp_path / "r.onnx"))),
        "node 'reshape_node' (Reshape)",
        "shape 's' must be a constant",
    )


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/hostname", "sub/../../x.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    model = copy(CASES["conv"])
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(
        model, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0
    )
    (tmp_path / "outside.bin").write_bytes((folder / "m.data").read_bytes())
    proto = onnx.load(folder / "m.onnx", load_external_data=False)
    for tensor in proto.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    save(proto, folder / "m.onnx")
    assert_clean_error(nnlayout_import(str(folder / "m.onnx")), "outside the model's folder")


def test_stdout_needs_inline_weights(tmp_path: Path) -> None:
    path = save(CASES["conv"], tmp_path / "conv.onnx")
    assert_clean_error(nnlayout_import(str(path)), "-o OUT.mlir")
    inline = nnlayout_import(str(path), "--inline-weights")
    assert inline.returncode == 0, inline.stderr
    assert "nn.conv2d" in inline.stdout and "external" not in inline.stdout


def test_cli_writes_mlir_and_npz(tmp_path: Path) -> None:
    path = save(CASES["conv"], tmp_path / "conv.onnx")
    result = nnlayout_import(str(path), "-o", str(tmp_path / "out.mlir"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.npz").is_file()
    assert f'{WEIGHTS_ATTR} = "out.npz"' in (tmp_path / "out.mlir").read_text()


def test_importer_errors_are_user_errors() -> None:
    """In-process callers get a UserError naming the node, too."""
    model = make_model([node("Conv", ["x", "w"])], X4, ["y"], {"w": weight(6, 5, 3, 3)})
    with pytest.raises(UserError, match=r"node 'conv_node' \(Conv\)"):
        import_model(model)
