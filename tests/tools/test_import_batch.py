"""`nnlayout-import --batch N`: every graph input's symbolic (or unknown) first size becomes N,
initializers aside; a first size stated by the model or by --input-shape must be N; an input
with other symbolic sizes is refused, naming --input-shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from nnlayout.frontends.onnx import import_model
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import assert_one_clean_error, onnx_model, run_in_process
from nnlayout.tools.import_onnx import with_batch


def two_inputs(second: list) -> onnx.ModelProto:
    return onnx_model(
        [
            onnx.helper.make_node("Add", ["x", "y"], ["s"]),
            onnx.helper.make_node("Relu", ["s"], ["z"]),
        ],
        {"x": ["N", 4], "y": second},
        ["z"],
    )


def test_batch_fixes_every_symbolic_first_size(tmp_path: Path, capsys, monkeypatch) -> None:
    model = two_inputs([None, 4])  # an unknown first size too
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    status, out, err = run_in_process(
        "nnlayout-import", [str(tmp_path / "m.onnx"), "--batch", "5"], capsys, monkeypatch
    )
    assert status == 0, err
    assert "func.func @main(%x: tensor<5x4xf32>, %y: tensor<5x4xf32>) -> tensor<5x4xf32>" in out
    module = import_model(model, input_shapes=with_batch(model, {}, 5)).module
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((5, 4)).astype(np.float32) for _ in range(2))
    (z,) = Interpreter(module).run([x, y])
    np.testing.assert_array_equal(z, np.maximum(x + y, 0))


def test_batch_leaves_a_stated_first_size_that_agrees() -> None:
    model = two_inputs([5, 4])
    assert with_batch(model, {}, 5) == {"x": [5, 4], "y": [5, 4]}
    assert with_batch(model, {"x": [5, 4]}, 5) == {"x": [5, 4], "y": [5, 4]}


@pytest.mark.parametrize(
    ("second", "args", "expected"),
    [
        (
            [3, 4],
            ["--batch", "5"],
            "error: --batch 5: graph input 'y' has batch size 3 in the model",
        ),
        (
            ["N", 4],
            ["--batch", "5", "--input-shape", "y=2x4"],
            "error: --batch 5 and --input-shape y=2x4 disagree on the first size of 'y'",
        ),
        (
            ["N", "M"],
            ["--batch", "5"],
            "error: --batch 5 fixes the first size of graph input 'y', but its size on axis 1 "
            "is symbolic too: give all its sizes with --input-shape (e.g. y=5x1)",
        ),
    ],
)
def test_batch_refusals_are_one_clean_error(
    second: list, args: list[str], expected: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "m.onnx").write_bytes(two_inputs(second).SerializeToString())
    status, out, err = run_in_process(
        "nnlayout-import", [str(tmp_path / "m.onnx"), *args], capsys, monkeypatch
    )
    assert_one_clean_error(status, out, err, expected)
