"""Fully connected layers at batch 1: the classifiers of alexnet (9216 -> 4096 -> 4096 ->
1000) and vgg11_bn (25088 -> 4096 -> 4096 -> 1000), relu between, as torch's classic exporter
writes them (Gemm, transB=1) and as its dynamo exporter does (MatMul on the transposed
weights, then Add), compiled for `onednn` and timed against onnxruntime, interleaved, on the
same input (zoo_latency's `measure`), one thread.

    python -m nnlayout.benchmarks.fully_connected [--repeats N] [--models alexnet,vgg11_bn]

Run it as a fresh process: thread counts are pinned before numpy, onnxruntime or oneDNN load.
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

CLASSIFIERS = {"alexnet": (9216, 4096, 4096, 1000), "vgg11_bn": (25088, 4096, 4096, 1000)}


def classifier(widths: Sequence[int], dynamo: bool) -> onnx.ModelProto:
    """Linear layers of `widths`, relu between, batch 1: Gemm(transB=1), or MatMul + Add."""
    rng = np.random.default_rng(0)
    nodes, initializers, x = [], [], "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:], strict=False)):
        w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        initializers.append(numpy_helper.from_array(bias, f"b{i}"))
        out = f"fc{i}" if i < len(widths) - 2 else "y"
        if dynamo:
            initializers.append(numpy_helper.from_array(np.ascontiguousarray(w.T), f"w{i}"))
            nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"]))
            nodes.append(helper.make_node("Add", [f"mm{i}", f"b{i}"], [out]))
        else:
            initializers.append(numpy_helper.from_array(w, f"w{i}"))
            nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [out], transB=1))
        if out != "y":
            nodes.append(helper.make_node("Relu", [out], [f"relu{i}"]))
            x = f"relu{i}"
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, widths[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, widths[-1]])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18 if dynamo else 17)])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--models", default=",".join(CLASSIFIERS))
    args = parser.parse_args(argv)
    print("| classifier | exporter | ours ms | onnxruntime ms | ratio | kernels (oneDNN's) |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        for dynamo in (False, True):
            model = classifier(CLASSIFIERS[name], dynamo)
            x = np.random.default_rng(1).standard_normal((1, CLASSIFIERS[name][0]))
            result = measure_model(name, model, x, args.repeats)
            kernels = ", ".join(f"{k} {v}" for k, v in sorted(result.implementations.items()))
            print(
                f"| {name} | {'dynamo' if dynamo else 'classic'} | {result.ours_ms:.2f} | "
                f"{result.ort_ms:.2f} | {result.ours_ms / result.ort_ms:.2f} | {kernels} |",
                flush=True,
            )
            assert result.difference <= 1e-4, result.difference


if __name__ == "__main__":
    main()
