"""benchmarks/transformers_zoo.py: one line where its packages are missing, its argument
checks, and (with the `models` extra) two models through both exporters on every target."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import export_census, transformers_zoo


def test_without_transformers_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(export_census, "missing_packages", lambda: ["torch"])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit) as exit_:
        transformers_zoo.main(["--models", "bert"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "exporting the transformers models needs torch, transformers" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--models", "gpt5"], "unknown: gpt5 (known: bert, distilbert, roberta"),
        (["--exporters", "jit"], "unknown: jit (known: classic, dynamo)"),
        (["--targets", "gpu"], "unknown: gpu (known: ref, avx2, avx512, onednn, host)"),
    ],
)
def test_bad_arguments_are_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        export_census.arguments(argv, "", transformers_zoo.MODELS)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(n) for n in ("torch", "onnxscript", "transformers")),
    reason="needs the models extra",
)
def test_roberta_and_bart_match_onnxruntime_everywhere(capfd: pytest.CaptureFixture[str]) -> None:
    """RoBERTa (position ids from its ids) and BART (decoder ids shifted by scatters), both
    exporters, every target, padding on and off."""
    assert transformers_zoo.main(["--models", "roberta,bart", "--child"]) == 0
    out = capfd.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("roberta", "bart"))]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (m, e, "yes") for m in ("roberta", "bart") for e in ("classic", "dynamo")
    ], out
    assert all(float(r[4]) <= 1e-4 and float(r[5]) > 0.1 for r in rows), out
