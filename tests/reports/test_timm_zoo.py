"""benchmarks/timm_zoo.py (with the `models` extra): two models through both exporters on
every target (its refusals: test_export_census.py)."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import timm_zoo


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
