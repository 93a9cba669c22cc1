"""Where a network's time goes by kind of op, ours against onnxruntime's, run by run.

    python -m nnlayout.benchmarks.op_kinds MODEL.onnx [--target host] [--runs 60]

Ours: the generated module's ops, timed by reports/profile.py one run at a time;
onnxruntime's: its own profiler (`enable_profiling`, per node), one run after each of ours,
so that both see the same machine load. Each op counts in one kind: a grouped convolution
with one input channel per group and a window over 1x1 is "conv depthwise", another grouped
one over more than 4 input channels a group "conv grouped", one over at most 4 input channels
the stem, a 1x1 convolution of one pixel "conv 1x1 (1 pixel)" (a squeeze-and-excitation
block's), the others "conv 1x1" or "conv kxk" by their kernel (onnxruntime's quantized
convolutions as its optimised graph has them, saved beside the profile: its profile leaves out
the prepacked weights); pooling, concat and gemm by their ONNX name; the quantized ops by the
name onnxruntime's QDQ fusion gives them (QuantizeLinear, QLinearAdd, QGemm, ...), our
convolution with the residual add fused as "... + add" (onnxruntime's add is its own
QLinearAdd); layout changes (our `layout.reorder`s, onnxruntime's ReorderInput/ReorderOutput
and Transpose) as "reorder". Each kind's time is summed per run;
the table shows the medians over the runs, ms, 1 thread (wall time on both sides: a busy
machine's preemptions land in single runs, which the medians leave out). A kind that one
side lacks is work the other does not do: onnxruntime's Concat where ours writes each part
in place, our reorders where it keeps the layout. oneDNN and OpenBLAS fix their thread
counts when they load, so the script runs itself again in a child process on 1 thread.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nnlayout.tools.driver import description

THREADS = 1
KINDS = {  # our op's class name -> the ONNX name onnxruntime's profile uses for it
    "MaxPool2dOp": "MaxPool",
    "AvgPool2dOp": "AveragePool",
    "GlobalAvgPoolOp": "GlobalAveragePool",
    "ConcatOp": "Concat",
    "GemmOp": "Gemm",
    "FlattenOp": "Flatten",
    "ReorderOp": "reorder",
    "QuantizeOp": "QuantizeLinear",
    "DequantizeOp": "DequantizeLinear",
    "QAddOp": "QLinearAdd",
    "QMulOp": "QLinearMul",
    "QConcatOp": "QLinearConcat",
    "QGlobalAvgPoolOp": "QLinearGlobalAveragePool",
    "QAvgPool2dOp": "QLinearAveragePool",
    "QMatmulOp": "QGemm",
}
THEIR_CONVS = {"Conv": 1, "QLinearConv": 3}  # onnxruntime's convolutions: index of the weights
THEIR_REORDERS = ("ReorderInput", "ReorderOutput", "Transpose")
THEIR_NAMES = {"NhwcMaxPool": "MaxPool"}  # onnxruntime's NHWC u8 max pooling


def conv_kind(weights: Sequence[int], groups: int = 1, pixel: bool = False) -> str:
    """The kind of a convolution by its OIHW weight shape and its groups; `pixel`: its input
    is one pixel."""
    one_by_one = tuple(weights[2:]) == (1, 1)
    if groups > 1 and weights[1] == 1 and not one_by_one:
        return "conv depthwise"
    if groups > 1 and weights[1] > 4:
        return "conv grouped"
    if weights[1] <= 4:
        return "stem conv"
    if one_by_one:
        return "conv 1x1 (1 pixel)" if pixel else "conv 1x1"
    return "conv kxk"


def our_kind(op: Any) -> str:
    """The kind of one of the planned function's `nn.compute`s."""
    from nnlayout.dialects import nn
    from nnlayout.dialects.nn import shape_of

    inner = op.inner
    if isinstance(inner, nn.Conv2dOp | nn.FusedConv2dOp | nn.QConv2dOp | nn.QConv2dAddOp):
        pixels = math.prod(shape_of(inner.operands[0])[2:])  # the logical NCHW shape
        kind = conv_kind(shape_of(inner.operands[1]), inner.groups.value.data, pixels == 1)
        return kind + " + add" if isinstance(inner, nn.QConv2dAddOp) else kind
    name = type(inner).__name__
    return KINDS.get(name, name.removesuffix("Op"))


def their_conv_kinds(optimized: Any) -> dict[str, str]:
    """The kind of each convolution node of onnxruntime's optimised graph (an onnx
    ModelProto), by node name, where its weights are an OIHW initializer."""
    from onnx import helper

    weights = {t.name: list(t.dims) for t in optimized.graph.initializer}
    kinds = {}
    for node in optimized.graph.node:
        index = THEIR_CONVS.get(node.op_type)
        if (
            index is None
            or len(node.input) <= index
            or len(weights.get(node.input[index], [])) != 4
        ):
            continue
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        kinds[node.name] = conv_kind(weights[node.input[index]], attributes.get("group", 1))
    return kinds


def their_kind(event: dict[str, Any], convs: dict[str, str] | None = None) -> str:
    """The kind of one node event of onnxruntime's profile; `convs`: the kinds of the
    convolutions by node name (`their_conv_kinds`), where known."""
    args = event["args"]
    name = args["op_name"]
    if name in ("Conv", "FusedConv"):
        x, weights = (next(iter(shape.values())) for shape in args["input_type_shape"][:2])
        return conv_kind(weights, max(1, x[1] // weights[1]), math.prod(x) == x[1])
    node = event.get("name", "").removesuffix("_kernel_time")
    if convs and node in convs:
        return convs[node]
    return "reorder" if name in THEIR_REORDERS else THEIR_NAMES.get(name, name)


def their_runs(profile_path: str, convs: dict[str, str] | None = None) -> list[dict[str, float]]:
    """Each `model_run` of onnxruntime's profile: ms per kind of the nodes inside it
    (`convs` as `their_kind`'s)."""
    with open(profile_path, encoding="utf-8") as handle:
        events = json.load(handle)
    runs = [e for e in events if e.get("cat") == "Session" and e["name"] == "model_run"]
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    kinds: list[dict[str, float]] = []
    for run in runs:
        per: dict[str, float] = defaultdict(float)
        for node in nodes:
            if run["ts"] <= node["ts"] <= run["ts"] + run["dur"]:
                per[their_kind(node, convs)] += node["dur"] / 1e3
        kinds.append(per)
    return kinds


def measure(path: Path, target: str, runs: int) -> str:
    """The table for the ONNX model at `path`."""
    import numpy as np
    import onnx
    import onnxruntime

    from nnlayout.benchmarks.torchvision_zoo import compiled, imported
    from nnlayout.dialects.compute import ComputeOp
    from nnlayout.lowering.to_numpy import generated_module
    from nnlayout.reports.profile import profile

    with tempfile.TemporaryDirectory(prefix="nnlayout-op-kinds-") as scratch:
        module, source = imported(path, Path(scratch))
        planned = compiled(module, target, True)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(scratch) / "onnxruntime")
        options.optimized_model_filepath = str(Path(scratch) / "optimized.onnx")
        options.log_severity_level = 3  # not the warning that the saved graph is this CPU's
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        feed = session.get_inputs()[0]
        x = np.random.default_rng(0).standard_normal(feed.shape).astype(np.float32)
        ours: list[dict[str, float]] = []
        ours_whole: list[float] = []
        with generated_module(planned, source_path=source) as generated:
            computes = [
                op for op in generated.PROGRAM.function.body.block.ops if isinstance(op, ComputeOp)
            ]
            kinds = [our_kind(op) for op in computes]
            generated.run(x)
            session.run(None, {feed.name: x})  # the warm-up, left out below
            for _ in range(runs):
                timed = profile(generated, [x], 1, warm_up=False)
                per: dict[str, float] = defaultdict(float)
                for kind, op in zip(kinds, timed.ops, strict=True):
                    per[kind] += 1e3 * op.seconds[0]
                ours.append(per)
                ours_whole.append(1e3 * timed.runs[0])
                session.run(None, {feed.name: x})
        convs = their_conv_kinds(onnx.load(options.optimized_model_filepath))
        theirs = their_runs(session.end_profiling(), convs)[1:]
    return table(path.stem, target, ours, ours_whole, theirs)


def table(
    name: str,
    target: str,
    ours: list[dict[str, float]],
    ours_whole: list[float],
    theirs: list[dict[str, float]],
) -> str:
    def median(runs: list[dict[str, float]], kind: str) -> float:
        return statistics.median(run.get(kind, 0.0) for run in runs)

    kinds = sorted(
        {kind for run in ours + theirs for kind in run},
        key=lambda kind: -max(median(ours, kind), median(theirs, kind)),
    )
    lines = [
        f"{name}, target {target}, {len(ours)} runs each, {THREADS} thread; whole runs "
        f"(ours profiled) {statistics.median(ours_whole):.2f} ms",
        "",
        "| kind of op | ours ms | onnxruntime ms | difference |",
        "|---|---:|---:|---:|",
    ]
    for kind in kinds:
        mine, other = median(ours, kind), median(theirs, kind)
        lines.append(f"| {kind} | {mine:.3f} | {other:.3f} | {mine - other:+.3f} |")
    mine = sum(median(ours, kind) for kind in kinds)
    other = sum(median(theirs, kind) for kind in kinds)
    lines.append(f"| sum of the medians | {mine:.3f} | {other:.3f} | {mine - other:+.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("models", nargs="+", type=Path, help="ONNX models")
    parser.add_argument("--target", default="host")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.models if not path.is_file()]
    if missing or args.runs < 1:
        print(
            f"error: no such file: {', '.join(missing)}" if missing else "error: --runs < 1",
            file=sys.stderr,
        )
        return 1
    if not args.child:
        from nnlayout.benchmarks.startup import run_with_threads

        return run_with_threads(
            "nnlayout.benchmarks.op_kinds", [*argv, "--child"], THREADS
        ).returncode
    for path in args.models:
        print(measure(path, args.target, args.runs), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
