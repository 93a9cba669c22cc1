"""benchmarks/memory_report.py's table: TVM 0.27's arenas, measured on the full-size zoo,
stand beside the full-size models only; with --small the table has no TVM columns and says
why, so that no small-model arena is read against a full-size TVM figure."""

from __future__ import annotations

import pytest

from nnlayout.benchmarks import memory_report
from nnlayout.benchmarks.memory_report import TVM, Row, format_row, header


def row(model: str) -> Row:
    return Row(model, "avx2", True, 3 << 20, 1 << 20, 1 << 20, 4096, 1024, 0.1)


def test_tvm_figures_only_beside_full_size_models() -> None:
    full, small = format_row(row("resnet50")), format_row(row("resnet50_small"))
    assert f"{TVM['resnet50'][0]:.2f}" in full and "TVM arena" in header(small=False)
    assert f"{TVM['resnet50'][0]:.2f}" not in small and "TVM" not in header(small=True)
    assert len(small.split()) == 10 and len(full.split()) == 13  # 3 columns of TVM figures


def test_small_run_says_the_figures_are_not_comparable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(memory_report, "load", lambda *args: (None, ""))
    monkeypatch.setattr(memory_report, "measure", lambda name, *args: row(name))
    assert memory_report.main(["--small", "resnet50", "--targets", "avx2"]) == 0
    out = capsys.readouterr().out
    assert "not comparable" in out and f"{TVM['resnet50'][0]:.2f}" not in out
