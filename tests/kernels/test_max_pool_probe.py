"""benchmarks/max_pool_probe.py: both forms of each pooling it times (one primitive, two
separable ones) compute the numpy max pooling on every format, padding and ceil_mode's
overhang included, and its table has a row per shape."""

from __future__ import annotations

import numpy as np
import pytest

from nnlayout.benchmarks import max_pool_probe as probe

pytestmark = pytest.mark.onednn

SMALL = (
    probe.Shape("ceil", 24, 11, 3, 2, 0, 1),
    probe.Shape("pad 1", 40, 9, 3, 1, 1, 1),
)


@pytest.mark.parametrize("layout", probe.LAYOUTS)
@pytest.mark.parametrize("shape", SMALL)
def test_forms_compute_the_max_pooling(shape: probe.Shape, layout: str) -> None:
    # All inputs negative: a padding read as 0 instead of -inf would show at the borders.
    x = -1.0 - np.random.default_rng(0).random((1, shape.channels, shape.size, shape.size))
    x = x.astype(np.float32)
    expected = probe.reference(x, shape)
    assert expected.shape == (1, shape.channels, shape.out, shape.out)
    assert np.all(expected < 0)
    for form in probe.forms(shape, layout, x).values():
        form.run()
        got = probe.from_layout(form.result, layout, expected.shape)
        np.testing.assert_array_equal(got, expected)


def test_layouts_round_trip() -> None:
    x = np.arange(2 * 20 * 3 * 3, dtype=np.float32).reshape(2, 20, 3, 3)[:1]
    for layout in probe.LAYOUTS:
        np.testing.assert_array_equal(
            probe.from_layout(probe.to_layout(x, layout), layout, x.shape), x
        )


def test_table(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "SHAPES", SMALL)
    assert probe.main(["--runs", "2", "--evict", "1"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 3 + len(SMALL)
    assert rows[-1].startswith("| pad 1: 40x9, 3x3 s1 | ")
    assert rows[-1].count("|") == 2 + 2 * len(probe.LAYOUTS)
