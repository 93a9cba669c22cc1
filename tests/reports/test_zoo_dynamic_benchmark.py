"""benchmarks/zoo_dynamic.py end to end on a small model (no torch needed): quantized by
quantize_dynamic, compiled, compared with onnxruntime and timed, one row of the table."""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx

from nnlayout.benchmarks import zoo_dynamic
from nnlayout.tests.helpers import small_cnn


def test_a_small_model_measured_end_to_end(tmp_path: Path) -> None:
    source = tmp_path / "small.onnx"
    onnx.save(small_cnn(), source)
    args = argparse.Namespace(target="host", inputs=2, repeats=2, warmup=1, seed=1, markdown=True)
    row = zoo_dynamic.measure("small", source, args, tmp_path)
    operators = {n.op_type for n in onnx.load(tmp_path / "small-dynamic.onnx").graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= operators
    assert row.passed and row.difference < 1e-4, row
    assert row.at_bound and row.arena > 0 and row.total == 2
    assert min(row.ours_ms, row.ort_ms, row.f32_ms) > 0
    table = zoo_dynamic.report([row], args)
    assert "| small |" in table and "from onnxruntime" in table
