"""Recurrent layers as torch's exporters write nn.LSTM, nn.GRU and nn.RNN (one ONNX node a
layer: GRU with linear_before_reset=1, zero initial states, Y read), batch 1, compiled for
`onednn` (oneDNN's RNN primitive, kernels/onednn/recurrent.py) and timed against
onnxruntime, interleaved, on the same input (zoo_latency's `measure`), one thread.

    python -m nnlayout.benchmarks.recurrent [--repeats N] [--layers LSTM,GRU,RNN]

Columns: layer, steps, direction, input -> hidden size, ours ms, onnxruntime ms, ratio, max
rel diff. Run it as a fresh process: thread counts are pinned before numpy, onnxruntime or
oneDNN load.
"""

from __future__ import annotations

from nnlayout.benchmarks.startup import pin_threads

pin_threads(1)

import argparse  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from nnlayout.benchmarks.zoo_latency import measure_model  # noqa: E402
from nnlayout.tools.driver import description  # noqa: E402

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# (steps, direction, input size, hidden size)
SHAPES = [
    (10, "forward", 32, 64),
    (100, "forward", 32, 64),
    (100, "bidirectional", 32, 64),
    (50, "forward", 256, 512),
]


def layer(op_type: str, steps: int, direction: str, size: int, hidden: int) -> onnx.ModelProto:
    """x [steps, 1, size] -> `op_type` -> Y, weights seeded."""
    rng = np.random.default_rng(0)
    d, rows = 2 if direction == "bidirectional" else 1, GATES[op_type] * hidden
    scale = 1 / np.sqrt(hidden)
    weights = {
        "w": rng.uniform(-scale, scale, (d, rows, size)),
        "r": rng.uniform(-scale, scale, (d, rows, hidden)),
        "b": rng.uniform(-scale, scale, (d, 2 * rows)),
    }
    extra = {"linear_before_reset": 1} if op_type == "GRU" else {}
    node = helper.make_node(
        op_type, ["x", "w", "r", "b"], ["y"], hidden_size=hidden, direction=direction, **extra
    )
    graph = helper.make_graph(
        [node],
        "recurrent",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--layers", default=",".join(GATES))
    args = parser.parse_args(argv)
    print("| layer | steps | direction | sizes | ours ms | onnxruntime ms | ratio | max rel diff |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for op_type in args.layers.split(","):
        if op_type not in GATES:
            parser.error(f"unknown layer '{op_type}' (known: {', '.join(GATES)})")
        for steps, direction, size, hidden in SHAPES:
            model = layer(op_type, steps, direction, size, hidden)
            x = np.random.default_rng(1).standard_normal((steps, 1, size))
            result = measure_model(op_type, model, x, args.repeats)
            print(
                f"| {op_type} | {steps} | {direction} | {size} -> {hidden} | "
                f"{result.ours_ms:.3f} | {result.ort_ms:.3f} | "
                f"{result.ours_ms / result.ort_ms:.2f} | {result.difference:.1e} |",
                flush=True,
            )
            assert result.difference <= 1e-4, result.difference


if __name__ == "__main__":
    main()
