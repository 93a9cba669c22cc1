"""The profiler of generated modules: every op timed on each run, the module left as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.lowering.to_numpy import generated_module
from nnlayout.reports.profile import profile
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.mlir"


def test_profile_times_each_op_once_per_run_and_restores_the_module() -> None:
    ctx = make_context()
    module = parse_module(ctx, EXAMPLE.read_text(), str(EXAMPLE))
    run_pipeline(parse_pipeline("default-pipeline{target=avx2}", get_all_passes()), ctx, module)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    with generated_module(module, source_path=str(EXAMPLE)) as generated:
        expected = generated.run(x)
        program = generated.PROGRAM
        kernels, bound = list(program.kernels), dict(program.bound)
        assert bound, "the example binds kernels at load"
        result = profile(generated, [x], 4)
        assert len(result.runs) == 4
        assert [op.index for op in result.ops] == list(range(len(kernels)))
        assert all(len(op.seconds) == 4 for op in result.ops)
        assert sum(op.median_ms for op in result.ops) <= 1e3 * max(result.runs)
        # The module runs its own kernels again, untimed, with the same results.
        assert program.kernels == kernels
        assert all(getattr(generated, f"k{index}") is call for index, call in bound.items())
        for want, got in zip(expected, generated.run(x), strict=True):
            np.testing.assert_array_equal(want, got)
        assert all(len(op.seconds) == 4 for op in result.ops)
    report = result.report()
    assert report.splitlines()[0].startswith("profile of @net: 4 run(s)")


BLOCKED = """func.func @f(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %b = layout.reorder %x : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32, #layout.layout<"NCHW8c">>
  %n = nn.neg %b : tensor<1x3x4x4xf32, #layout.layout<"NCHW8c">>
  %p = layout.reorder %n : tensor<1x3x4x4xf32, #layout.layout<"NCHW8c">> -> tensor<1x3x4x4xf32>
  func.return %p : tensor<1x3x4x4xf32>
}
"""


def test_the_table_per_kernel_tells_reorders_from_ops_without_a_kernel() -> None:
    """nn.neg has no kernel attribute (no select-dispatch): it runs the reference kernel."""
    ctx = make_context()
    module = parse_module(ctx, BLOCKED, "blocked.mlir")
    run_pipeline(parse_pipeline("bufferize,plan-memory", get_all_passes()), ctx, module)
    with generated_module(module) as generated:
        report = profile(generated, [np.ones((1, 3, 4, 4), np.float32)], 2).report()
    ops, kernels = report.split("\n\n")
    assert [line.split(None, 3)[3] for line in ops.splitlines()[2:]] == [
        "layout.reorder 1x3x4x4 -> NCHW8c",
        "nn.neg (reference) 1x3x4x4 NCHW8c",
        "layout.reorder 1x3x4x4 NCHW8c -> plain",
    ]
    counts = {line.split(None, 3)[3]: int(line.split()[2]) for line in kernels.splitlines()[1:]}
    assert counts == {"(reorder)": 2, "reference": 1}
