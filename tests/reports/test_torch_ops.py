"""benchmarks/torch_ops.py (with the `models` extra): a few of torch's operations through
both exporters on every target (its refusals and arguments: test_export_census.py)."""

from __future__ import annotations

import importlib.util

import pytest

from nnlayout.benchmarks import torch_ops


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(n) for n in ("torch", "onnxscript")),
    reason="needs the models extra",
)
def test_operations_users_write_match_onnxruntime_everywhere(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """argmax, topk, pixel shuffle, log-softmax, grid sampling, bicubic resizing,
    rounding and an LSTM, both exporters, every target, padding on and off."""
    cases = ("argmax", "topk", "pixel_shuffle", "log_softmax", "grid_sample", "bicubic")
    cases += ("floor_round", "lstm")
    assert torch_ops.main(["--models", ",".join(cases), "--child"]) == 0
    out = capfd.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(cases)]
    assert sorted((r[0], r[1], r[2]) for r in rows) == sorted(
        (c, e, "yes") for c in cases for e in ("classic", "dynamo")
    ), out
    assert all(float(r[4]) <= 1e-4 for r in rows), out
