"""The README's main command: the bundled example compiles, runs as a generated module, matches
the unoptimised program (and onnxruntime) and says what the compiler did."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnlayout.examples.run_example import main
from nnlayout.kernels.onednn.binding import available


@pytest.mark.parametrize("target", ["host", "avx2"])
def test_main_job_on_the_small_resnet(target: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--target", target, "--repeats", "1", "-d", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "OK"
    assert (tmp_path / "resnet50_small_generated.py").exists()
    for line in ("kernels: ", "activation reorders: ", "arena ",
                 "generated module vs unoptimised: relative difference ",
                 "generated module vs onnxruntime: relative difference ",
                 "latency (median of 1): unoptimised (interpreter) "):
        assert line in out
    faster = "sparse, onednn or blocked" if target == "host" and available() else \
        "sparse or blocked"
    assert f"fallback x1: softmax_ref: no {faster} kernel applies to this nn.softmax\n" in out
    if target == "host" and available():  # host is oneDNN here: residual adds fused
        assert "fused_conv2d_sum_onednn x4" in out and "batch_norm" not in out
        (implementations,) = [line for line in out.splitlines()
                              if line.startswith("oneDNN implementations: ")]
        assert "jit" in implementations and "ref" not in implementations
    else:
        assert "oneDNN implementations" not in out
