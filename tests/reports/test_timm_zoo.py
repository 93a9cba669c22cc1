"""benchmarks/timm_zoo.py: one line where its packages are missing, its argument checks, and
(with the `models` extra) two models through both exporters on every target."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import export_census, timm_zoo


def test_without_timm_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(export_census, "missing_packages", lambda: [])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit) as exit_:
        timm_zoo.main(["--models", "resnet18"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "exporting the timm models needs timm, which is not installed" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--models", "resnet1000"], "unknown: resnet1000 (known: resnet18, efficientnet_b0"),
        (["--exporters", "jit"], "unknown: jit (known: classic, dynamo)"),
        (["--targets", "gpu"], "unknown: gpu (known: ref, avx2, avx512, onednn, host)"),
    ],
)
def test_bad_arguments_are_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        export_census.arguments(argv, "", timm_zoo.MODELS)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(n) for n in ("torch", "onnxscript", "timm")),
    reason="needs the models extra",
)
def test_lcnet_and_levit_match_onnxruntime_everywhere(capfd: pytest.CaptureFixture[str]) -> None:
    """A hard-swish mobile CNN and LeViT (attention with learned biases), both exporters,
    every target, padding on and off."""
    models = ("lcnet_050", "levit_128s")
    assert timm_zoo.main(["--models", ",".join(models), "--child"]) == 0
    out = capfd.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(models)]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (m, e, "yes") for m in models for e in ("classic", "dynamo")
    ], out
    assert all(float(r[4]) <= 1e-4 and float(r[5]) > 0.01 for r in rows), out
