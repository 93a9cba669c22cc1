"""benchmarks/dw_fusion_probe.py: the fused 1x1 + depthwise primitive it times computes what
the separate pair computes, in f32 and in int8 (whose depthwise scales oneDNN takes only with
mask 3), and its table names both implementations."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.benchmarks import dw_fusion_probe as probe
from nnlayout.kernels.onednn.formats import by_layout

pytestmark = pytest.mark.onednn


@pytest.mark.parametrize("int8", [False, True])
@pytest.mark.parametrize("shape", [probe.Shape(24, 48, 14, 1), probe.Shape(16, 32, 15, 2)])
def test_fused_and_separate_agree(shape: probe.Shape, int8: bool) -> None:
    case = probe.build(shape, by_layout("data", "NHWC").value, int8)
    out = (shape.size - 1) // shape.stride + 1
    assert case.fused.memories[probe.D].md.shape == (1, shape.cmid, out, out)
    bound = probe.bind(case, int8, 2, np.random.default_rng(0))
    diff, fused_us, separate_us = probe.measure(bound, 2)
    assert diff <= (0 if int8 else 1e-5)
    assert fused_us > 0 and separate_us > 0
    result = bound[0][2]
    assert np.count_nonzero(result) > result.size // 4  # not a result left at zero


def test_table(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "SHAPES", (probe.Shape(16, 32, 15, 2),))
    probe.main(["--copies", "2", "--runs", "2"])
    rows = capsys.readouterr().out.splitlines()
    assert rows[-1].startswith("| 16->32 at 15, dw s2 | ")
    assert "refused" not in rows[-1] and rows[-1].count("|") == 8
