"""benchmarks/export_census.py, through the two censuses built on it (transformers_zoo.py,
timm_zoo.py): one line where their packages are missing, and their argument checks."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from nnlayout.benchmarks import export_census, timm_zoo, torch_ops, transformers_zoo


@pytest.mark.parametrize(
    ("census", "missing", "model", "expected"),
    [
        (
            transformers_zoo,
            ["torch"],
            "bert",
            "exporting the transformers models needs torch, transformers",
        ),
        (timm_zoo, [], "resnet18", "exporting the timm models needs timm, which is not installed"),
        (torch_ops, ["torch"], "argmax", "exporting the torch models needs torch"),
    ],
    ids=["transformers", "timm", "torch"],
)
def test_without_its_packages_a_census_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    census: ModuleType,
    missing: list[str],
    model: str,
    expected: str,
) -> None:
    monkeypatch.setattr(export_census, "missing_packages", lambda: missing)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit) as exit_:
        census.main(["--models", model])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert expected in err


@pytest.mark.parametrize(
    ("census", "argv", "expected"),
    [
        (transformers_zoo, ["--models", "gpt5"], "unknown: gpt5 (known: bert, distilbert, roberta"),
        (
            timm_zoo,
            ["--models", "resnet1000"],
            "unknown: resnet1000 (known: resnet18, efficientnet_b0",
        ),
        (torch_ops, ["--models", "fft"], "unknown: fft (known: argmax, argmax_keepdim"),
        (transformers_zoo, ["--exporters", "jit"], "unknown: jit (known: classic, dynamo)"),
        (
            transformers_zoo,
            ["--targets", "gpu"],
            "unknown: gpu (known: ref, avx2, avx512, onednn, host)",
        ),
    ],
    ids=["transformers model", "timm model", "torch case", "exporter", "target"],
)
def test_bad_arguments_are_refused(
    capsys: pytest.CaptureFixture[str], census: ModuleType, argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        export_census.arguments(argv, "", census.MODELS)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err
