"""The README's main command: the bundled example compiles, runs as a generated module, matches
the unoptimised program (and onnxruntime) and says what the compiler did."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nnlayout.examples.run_example import main
from nnlayout.kernels.onednn.binding import available


@pytest.mark.parametrize("target", ["host", "avx2"])
def test_main_job_on_the_small_resnet(
    target: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On avx2, onnxruntime is hidden (as where it is not installed): a line says the
    comparison is skipped. The files go where --output-dir says, and the job says where."""
    if target == "avx2":
        monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` fails
    assert main(["--target", target, "--repeats", "1", "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "OK"
    written = sorted(path.name for path in tmp_path.iterdir())
    assert written == [
        "resnet50_small.mlir",
        "resnet50_small.npz",
        "resnet50_small.onnx",
        "resnet50_small_generated.planned.mlir",
        "resnet50_small_generated.py",
        "resnet50_small_generated.weights.npz",
    ]
    assert out.splitlines()[-2] == f"wrote into {tmp_path.resolve()}: {', '.join(written)}"
    ort_line = "generated module vs onnxruntime: relative difference "
    skipped = "onnxruntime comparison skipped: onnxruntime is not installed\n"
    assert (ort_line in out) == (target == "host") and (skipped in out) == (target == "avx2")
    for line in (
        "kernels: ",
        "activation reorders: ",
        "arena ",
        "generated module vs unoptimised: relative difference ",
        "latency (median of 1): unoptimised (interpreter) ",
    ):
        assert line in out
    if target == "host" and available():  # oneDNN's softmax, the flatten a view
        assert "fallback" not in out and "flatten" not in out, out
    else:
        assert (
            "fallback x1: softmax_ref: no sparse or blocked kernel implements nn.softmax\n" in out
        )
    if target == "host" and available():  # oneDNN here: 4 residual adds and the 7x7 stem's
        # per-channel sums (split-image-conv) fused
        assert "fused_conv2d_sum_onednn x6" in out and "batch_norm" not in out
        (implementations,) = [
            line for line in out.splitlines() if line.startswith("oneDNN implementations: ")
        ]
        assert "jit" in implementations and "ref" not in implementations
    else:
        assert "oneDNN implementations" not in out


def test_fallback_reasons_hold_for_every_op_they_count() -> None:
    """Two matmuls fall back to matmul_ref on avx2: the dense one because no sparse kernel
    applies, the CSR one because the sparse kernel refused it (select-dispatch's remark says
    why). The census's reason is true of both: no blocked kernel implements nn.matmul."""
    from nnlayout.kernels.targets import get_target
    from nnlayout.reports.census import kernel_census
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module, parse
    from nnlayout.transforms import remarks

    rows = ", ".join(["[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"] * 4)
    module = parse(f"""
func.func @f(%a: tensor<4x8xf32>, %d: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {{
  %s = nn.constant dense<[{rows}]> : tensor<4x8xf32, #layout.storage<"csr">>
  %0 = nn.matmul %s, %d : (tensor<4x8xf32, #layout.storage<"csr">>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = nn.matmul %a, %d : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}}""")
    with remarks.collecting() as emitted:
        compiled = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    census = kernel_census(compiled, get_target("avx2"))
    assert census.fallbacks == {"matmul_ref": 2}
    assert census.reasons == {("matmul_ref", "no blocked kernel implements nn.matmul"): 2}
    assert [r.message for r in emitted if r.pass_name == "select-dispatch"] == [
        "32 elements < 1024: too small for sparse, not supported by matmul_csr; using matmul_ref"
    ]
