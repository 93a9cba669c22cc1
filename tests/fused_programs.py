"""Small programs for the fusion tests: a convolution block whose adds and activations
`fuse-post-ops` fuses, the pipeline prefix that fuses them, and inputs with NaN and Inf."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.nn import FusedConv2dOp
from nnlayout.kernels.onednn import bounds as onednn_bounds
from nnlayout.tests.helpers import dense

FUSE = (
    "select-dispatch{{target={target} padding={padding}}},"
    "fuse-post-ops{{target={target} padding={padding}}}"
)
T = "tensor<2x{c}x9x9xf32>"


def block(c: int, activation: str, attributes: str = "") -> str:
    """conv -> add (residual) -> activation, then conv -> activation, both results returned."""
    t = T.format(c=c)
    w = f"tensor<{c}x{c}x3x3xf32>"
    conv = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
    return f"""
func.func @f(%x: {t}, %r: {t}) -> ({t}, {t}) {{
  %w = nn.constant dense<{dense((c, c, 3, 3), 1)}> : {w}
  %b = nn.constant dense<{dense((c,), 2)}> : tensor<{c}xf32>
  %c1 = nn.conv2d %x, %w, %b {conv} : ({t}, {w}, tensor<{c}xf32>) -> {t}
  %s = nn.add %c1, %r : ({t}, {t}) -> {t}
  %a1 = {activation} %s {attributes}: {t}
  %c2 = nn.conv2d %a1, %w {conv} : ({t}, {w}) -> {t}
  %a2 = {activation} %c2 {attributes}: {t}
  func.return %a1, %a2 : {t}, {t}
}}"""


def fused_ops(module: ModuleOp) -> list[FusedConv2dOp]:
    return [op for op in module.walk() if isinstance(op, FusedConv2dOp)]


def with_specials(inputs: list[np.ndarray]) -> list[np.ndarray]:
    inputs[0][0, 0, 4, :4] = [np.nan, np.inf, -np.inf, -0.0]
    inputs[-1][-1, 2, 3, :3] = [np.nan, -np.inf, np.inf]
    return inputs


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the arrays `bounds.norm` measures from now on."""
    sizes: list[int] = []
    norm = onednn_bounds.norm

    def counted(x: np.ndarray) -> float:
        sizes.append(x.size)
        return norm(x)

    monkeypatch.setattr(onednn_bounds, "norm", counted)
    return sizes
