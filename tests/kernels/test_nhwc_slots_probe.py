"""benchmarks/nhwc_slots_probe.py: a primitive on an NHWC channel slice (a strided
destination, a prefix of a wider source) computes what it computes on dense NHWC and writes
only its slot, whichever implementation oneDNN takes; and the network mode's flat and nested
(nest-concats) variants keep a network's results, nested leaving bufferize nothing to copy
in nChw16c."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref

from nnlayout.benchmarks import nhwc_slots_probe as probe
from nnlayout.kernels.onednn.binding import runs_avx512_core
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import parse, random_inputs

pytestmark = pytest.mark.onednn

LAYERS = [
    probe.Layer("slot", "conv", 16, 8, 7, (3, 3), 1, 0, 32, 8),
    probe.Layer("prefix", "depthwise", 16, 16, 7, src_total=48),
    probe.Layer("pool slot", "maxpool", 16, 16, 9, (3, 3), 2, 0, 48, 16),
    probe.Layer("matmul slot", "matmul", 24, 16, 5, (1, 1), 1, 0, 40, 24),
    probe.Layer("copy", "reorder", 16, 16, 5, (1, 1), 1, 0, 48, 32),
]


@pytest.mark.parametrize("layer", LAYERS, ids=[layer.name for layer in LAYERS])
def test_strided_agrees_with_dense(layer: probe.Layer) -> None:
    _, dense = probe.bind(layer, False)
    strided_pd, strided = probe.bind(layer, True)
    assert strided_pd.implementation  # named (ref:any for most: the probe's finding)
    dense.call()
    strided.call()
    want, got = dense.result(), strided.result()
    assert np.isfinite(want).all() and np.count_nonzero(want) > want.size // 4
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    out = strided.kept[1][1]  # the wide destination, NaN before the call
    outside = np.delete(out, np.s_[layer.dst_offset : layer.dst_offset + layer.cout], axis=-1)
    assert np.isnan(outside).all()  # nothing written beside the slot


FLAT = """
func.func @f(%x: tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %w = nn.constant dense<0.25> : tensor<16x16x1x1xf32>
  %v = nn.constant dense<0.5> : tensor<16x32x1x1xf32>
  %u = nn.constant dense<0.125> : tensor<16x48x1x1xf32>
  %y = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1
       : (tensor<1x16x6x6xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x6x6xf32>
  %a = nn.conv2d %y, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1
       : (tensor<1x16x6x6xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x6x6xf32>
  %c1 = nn.concat %y, %a axis 1 : (tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>) -> tensor<1x32x6x6xf32>
  %b = nn.conv2d %c1, %v strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1
       : (tensor<1x32x6x6xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x6x6xf32>
  %c2 = nn.concat %y, %a, %b axis 1
       : (tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>) -> tensor<1x48x6x6xf32>
  %r = nn.conv2d %c2, %u strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1
       : (tensor<1x48x6x6xf32>, tensor<16x48x1x1xf32>) -> tensor<1x16x6x6xf32>
  func.return %r : tensor<1x16x6x6xf32>
}
"""


def test_flat_and_nested_variants() -> None:
    """The probe's variants: default-pipeline without nest-concats leaves the concat flat
    (its inputs copied again, in nChw16c), with it nothing is copied; the same results."""
    flat = parse(FLAT)
    inputs = random_inputs(flat)
    want = Interpreter(flat).run(inputs)
    for nest in (False, True):
        planned = probe.planned(flat, "onednn-nchw16c", nest)
        copies = sum(isinstance(op, memref.CopyOp) for op in planned.walk())
        if runs_avx512_core():  # nChw16c data (else oneDNN's convolutions want nChw8c)
            assert copies == (0 if nest else 2)  # y and a, copied again into c2
        np.testing.assert_allclose(
            Interpreter(planned).run(inputs)[0], want[0], rtol=1e-5, atol=1e-5
        )


def test_tables(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "LAYERS", (LAYERS[0],))
    probe.main(["--runs", "2"])
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("| slot | ") and "refused" not in row and row.count("|") == 9
    monkeypatch.setattr(probe, "DENSE_BLOCKS", ((7, 32, 2),))
    probe.main(["--densenet", "--runs", "2"])
    rows = capsys.readouterr().out.splitlines()
    assert rows[-2].startswith("| 1 | 2 | ") and rows[-1].startswith("| all | 2 | ")
