"""benchmarks/language_models.py: one line where torch is missing, its argument checks, and
(with torch, the `models` extra) a small GPT, BERT and GPT decoding step with a static
key/value cache (both ways of writing it) through both exporters, its table
within 1e-4 of onnxruntime on every target."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import language_models
from nnlayout.tests.frontends.test_torchvision_zoo import without


def test_without_torch_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(language_models, "missing_packages", lambda: ["torch", "onnxscript"])
    with pytest.raises(SystemExit) as exit_:
        language_models.main(["--models", "gpt"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "exporting the models needs torch, onnxscript, which are not installed" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--models", "llama"],
            "unknown: llama (known: gpt, bert, gpt-step, gpt-step-put, hf-gpt2, hf-bert, hf-roberta, "
            "hf-llama)",
        ),
        (["--exporters", "jit"], "unknown: jit (known: classic, dynamo)"),
        (["--width", "100"], "--width a multiple of 12"),
        (["--length", "0"], "--layers, --length and --vocabulary are positive"),
    ],
)
def test_bad_arguments_are_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        language_models.arguments(argv)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err


def _installed(*names: str) -> bool:
    return all(importlib.util.find_spec(name) is not None for name in names)


def test_transformers_models_need_transformers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(language_models, "missing_packages", lambda: [])
    without(monkeypatch, "transformers")
    with pytest.raises(SystemExit) as exit_:
        language_models.main(["--models", "hf-bert"])
    assert exit_.value.code == 2
    assert "exporting transformers' models needs transformers" in capsys.readouterr().err


SMALL = ["--layers", "1", "--width", "48", "--length", "8", "--vocabulary", "97"]
SMALL += ["--check-targets", "ref,avx2,avx512,onednn,host", "--repeats", "2", "--child"]


@pytest.mark.slow
@pytest.mark.skipif(
    not _installed("torch", "onnxscript"), reason="exporting needs the models extra"
)
def test_small_models_through_both_exporters(capsys: pytest.CaptureFixture[str]) -> None:
    models = ("gpt", "bert", "gpt-step", "gpt-step-put")
    assert language_models.main(["--models", ",".join(models), *SMALL]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(models)]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (m, e, "yes") for m in models for e in ("classic", "dynamo")
    ]
    assert all(float(r[4]) <= 1e-4 for r in rows), out


@pytest.mark.slow
@pytest.mark.skipif(
    not _installed("torch", "onnxscript", "transformers"), reason="needs the models extra"
)
def test_transformers_models_import_or_say_why_torch_could_not_export(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """transformers' BERT and RoBERTa through both exporters, GPT-2 and Llama through dynamo
    import and match onnxruntime; torch's classic exporter refuses GPT-2 and Llama
    (aten::diff), said in their rows, and the graph it prints then is not on standard
    output, where the table is."""
    models = "hf-gpt2,hf-bert,hf-roberta,hf-llama"
    assert language_models.main(["--models", models, *SMALL]) == 0
    out = capfd.readouterr().out
    assert "Torch IR graph" not in out
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("hf-")}
    assert "export failed" in rows[("hf-gpt2", "classic")]
    assert "export failed" in rows[("hf-llama", "classic")]
    imported = [("hf-gpt2", "dynamo"), ("hf-llama", "dynamo")]
    imported += [(m, e) for m in ("hf-bert", "hf-roberta") for e in ("classic", "dynamo")]
    for key in imported:
        cells = rows[key].split()
        assert cells[2] == "yes" and float(cells[4]) <= 1e-4, out
