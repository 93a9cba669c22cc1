"""benchmarks/transformers_zoo.py (with the `models` extra): two models through both
exporters on every target (its refusals: test_export_census.py)."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import transformers_zoo


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
