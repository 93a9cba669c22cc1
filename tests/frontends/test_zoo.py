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


def test_the_latency_benchmark_says_it_needs_onnxruntime(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Installed without the test extra (the README's main command), the zoo benchmark ended
    in a traceback from its worker process; it says what is missing instead."""
    import importlib.util

    from nnlayout.benchmarks import zoo_latency

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "onnxruntime" else found(name, *rest),
    )
    with pytest.raises(SystemExit) as exit_:
        zoo_latency.main(["resnet50", "--small"])
    assert exit_.value.code == 2
    assert "onnxruntime, which is not installed: pip install -e '.[test]'" in (
        capsys.readouterr().err
    )
