"""Each convolution and resize of an ONNX model on its own: how much its kernel rounds, on
each target of ours and in onnxruntime, against float64.

    python -m nnlayout.benchmarks.op_rounding fcn_resnet50-classic.onnx --targets ref,host

The model is evaluated in float64 (benchmarks/float64_reference.py) on the zoo's seeded input
(`default_rng(0)`). Then each Conv and Resize node becomes a model of its own (its weights,
attributes and constant inputs), fed that node's input from the float64 evaluation rounded to
float32, and run by onnxruntime (optimised, and with its graph optimisations off), and by the
generated module of `default-pipeline` on each target; each result is compared with the same
node evaluated in float64 on that same float32 input. So each figure is the op's own
rounding, apart from what its input already carries: where a network's output differs from
the exact one, this says which kernels add the most (docs/benchmarks.md, "fcn_resnet50
against float64", found the stem convolution that way).

One line per node: its index, type and name, the reduction length of a convolution (input
channels a group x kernel height x width), then the L2 measure ||got - exact|| / ||exact||
for each runtime. 1 thread, as benchmarks/torchvision_zoo.py runs (run it with
OMP_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.benchmarks.float64_reference import OPERATORS, float64_model, float64_outputs
from nnlayout.benchmarks.torchvision_zoo import compiled, imported
from nnlayout.benchmarks.zoo_int8 import unoptimised_session
from nnlayout.benchmarks.zoo_latency import onnxruntime_session
from nnlayout.lowering.to_numpy import generated_module

OP_TYPES = ("Conv", "Resize")


def l2_relative(exact: np.ndarray, got: np.ndarray) -> float:
    return float(np.linalg.norm(got - exact) / max(float(np.linalg.norm(exact)), 1e-300))


def single_node(
    model: onnx.ModelProto, node: onnx.NodeProto, x: np.ndarray, values: dict[str, np.ndarray]
) -> onnx.ModelProto:
    """`node` alone, reading "input" (shaped as `x`), its other inputs as initializers: the
    model's own (float32), or the float64 evaluation's (a computed shape) in their type."""
    own = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    constants = {}
    for name in node.input[1:]:
        if name:
            value = own[name] if name in own else np.asarray(values[name])
            constants[name] = value.astype(np.float32) if value.dtype == np.float64 else value
    alone = helper.make_node(node.op_type, ["input", *node.input[1:]], ["output"])
    alone.attribute.extend(node.attribute)
    graph = helper.make_graph(
        [alone],
        node.op_type,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=model.opset_import)


def node_figures(path: Path, x: np.ndarray, targets: Sequence[str], scratch: Path) -> list[float]:
    """The L2 rounding of the one-node model at `path` on `x`: onnxruntime, unoptimised, and
    each of `targets`."""
    (exact,) = float64_outputs(path, {"input": x})
    outputs = [
        onnxruntime_session(path, 1).run(None, {"input": x})[0],  # type: ignore[attr-defined]
        unoptimised_session(path).run(None, {"input": x})[0],  # type: ignore[attr-defined]
    ]
    module, source = imported(path, scratch)
    for target in targets:
        with generated_module(compiled(module, target, True), source_path=source) as generated:
            outputs.append(generated.run(x)[0])
    return [l2_relative(exact, np.asarray(out)) for out in outputs]


def rows(path: Path, targets: Sequence[str]) -> list[str]:
    model = onnx.load(str(path))
    feed = model.graph.input[0]
    shape = [d.dim_value for d in feed.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    evaluator = ReferenceEvaluator(float64_model(model), new_ops=OPERATORS)
    values = evaluator.run(None, {feed.name: x.astype(np.float64)}, intermediate=True)
    lines = []
    with tempfile.TemporaryDirectory(prefix="nnlayout-op-rounding-") as folder:
        for index, node in enumerate(model.graph.node):
            if node.op_type not in OP_TYPES:
                continue
            node_input = np.asarray(values[node.input[0]]).astype(np.float32)
            alone = Path(folder) / f"node{index}.onnx"
            onnx.save(single_node(model, node, node_input, values), str(alone))
            figures = node_figures(alone, node_input, targets, Path(folder))
            weights = [t for t in model.graph.initializer if t.name == node.input[1]]
            taps = int(np.prod(weights[0].dims[1:])) if node.op_type == "Conv" and weights else 0
            cells = [f"{index} {node.op_type} {node.name}", str(taps)]
            lines.append(" | ".join(cells + [f"{f:.2e}" for f in figures]))
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", type=Path, help="an .onnx file (external data beside it)")
    parser.add_argument("--targets", default="ref,host", help="targets of ours (default ref,host)")
    args = parser.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    header = ["node", "K", "onnxruntime", "unoptimised", *targets]
    print(" | ".join(header))
    print("|".join("---" for _ in header))
    for line in rows(args.model, targets):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
