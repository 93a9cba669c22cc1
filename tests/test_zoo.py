"""The small zoo variants through the same end-to-end comparison as scripts/compare_zoo.py:
ONNX file -> nnlayout-import's files -> interpreter, against onnxruntime."""

from pathlib import Path

import pytest

from nnlayout.dialects.weights import WEIGHTS_ATTR
from nnlayout.examples.make_models import ZOO
from nnlayout.scripts.compare_zoo import TOLERANCE, compare


@pytest.mark.parametrize("name", sorted(ZOO))
def test_small_zoo_model_matches_onnxruntime(name: str, tmp_path: Path) -> None:
    result = compare(name, small=True, folder=tmp_path)
    assert result.relative_diff <= TOLERANCE, result
    assert result.nn_ops >= result.onnx_nodes * 0.9  # one nn op per node (Identity aside)
    text = (tmp_path / f"{name}_small.mlir").read_text()
    assert f'{WEIGHTS_ATTR} = "{name}_small.npz"' in text
    assert (tmp_path / f"{name}_small.npz").is_file()
