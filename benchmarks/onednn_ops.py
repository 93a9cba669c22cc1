"""Single-op latencies of convolutions, one thread, median of repeats (ms): oneDNN through our
ctypes binding (in the formats its primitive chose, as the compiler would feed it),
onnxruntime, the blocked numpy kernel avx2 dispatches (NCHW8c results) and the reference kernel.

    python -m nnlayout.benchmarks.onednn_ops [--repeats N] [--no-reference]

Thread counts are pinned before numpy, onnxruntime or oneDNN load (OMP_NUM_THREADS=1 and the
BLAS variables), so run it as a fresh process.
"""

from __future__ import annotations

from nnlayout.benchmarks.startup import pin_threads

pin_threads(1)

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402

import numpy as np  # noqa: E402
from xdsl.dialects.builtin import NoneAttr, TensorType, f32  # noqa: E402
from xdsl.utils.test_value import create_ssa_value  # noqa: E402

from nnlayout.dialects import nn  # noqa: E402
from nnlayout.dialects.layout import LayoutAttr, LayoutSpec  # noqa: E402
from nnlayout.kernels.providers import registry  # noqa: E402
from nnlayout.kernels.reference import REFERENCE_KERNELS  # noqa: E402
from nnlayout.kernels.targets import TARGETS  # noqa: E402
from nnlayout.tools.driver import description  # noqa: E402

# (name, input channels, output channels, size, kernel, stride, groups)
CONVS = [
    ("3x3 64->64 @224", 64, 64, 224, 3, 1, 1),
    ("3x3 3->64 @224", 3, 64, 224, 3, 1, 1),
    ("dw 3x3 C=144 @56", 144, 144, 56, 3, 1, 144),
]


def conv_op(
    c_in: int,
    c_out: int,
    size: int,
    k: int,
    stride: int,
    groups: int,
    layouts: tuple[str, str, str, str] = ("", "", "", ""),
) -> nn.Conv2dOp:
    """A conv2d op ("same" padding) whose input, weight, bias and output carry `layouts`."""

    def tensor(shape: tuple[int, ...], layout: str) -> TensorType:
        return TensorType(f32, shape, LayoutAttr(layout) if layout else NoneAttr())

    pad = k // 2
    shapes = ((1, c_in, size, size), (c_out, c_in // groups, k, k), (c_out,))
    operands = [
        create_ssa_value(tensor(s, layout)) for s, layout in zip(shapes, layouts, strict=False)
    ]
    plain = nn.Conv2dOp(
        *operands, strides=[stride] * 2, pads=[pad] * 4, dilations=[1, 1], groups=groups
    )
    return nn.Conv2dOp.create(
        operands=operands,
        properties=dict(plain.properties),
        result_types=[tensor(nn.shape_of(plain.output), layouts[3])],
    )


def median_ms(function: Callable[[], object], repeats: int) -> float:
    function()  # warm up: JIT, caches, first-touch pages
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def onednn_ms(
    c_in: int,
    c_out: int,
    size: int,
    k: int,
    stride: int,
    groups: int,
    arrays: list[np.ndarray],
    repeats: int,
) -> tuple[float, str] | None:
    from nnlayout.kernels.onednn.binding import available

    if not available():
        return None
    from nnlayout.kernels.onednn import convolution as onednn
    from nnlayout.kernels.onednn.prepared import execute

    plain = conv_op(c_in, c_out, size, k, stride, groups)
    choice = onednn.conv_choice(onednn.conv_geometry(plain))
    if isinstance(choice, str):
        return None
    src, weights, dst = (f.kernel_layout for f in choice.formats)
    op = conv_op(c_in, c_out, size, k, stride, groups, (src, weights, "", dst))
    inputs = [
        LayoutSpec.parse(layout).pack(a) if layout else a
        for a, layout in zip(arrays, (src, weights, ""), strict=True)
    ]
    shape = nn.shape_of(op.output)
    out = np.empty(LayoutSpec.parse(dst).physical_shape(shape) if dst else shape, np.float32)
    scratchpad = np.empty(choice.scratchpad, np.uint8)
    ms = median_ms(lambda: execute(op, inputs, out, scratchpad), repeats)
    names = "/".join(f.tag for f in choice.formats)
    return ms, f"{choice.implementation} {names}"


def onnxruntime_ms(
    c_in: int,
    c_out: int,
    size: int,
    k: int,
    stride: int,
    groups: int,
    arrays: list[np.ndarray],
    repeats: int,
) -> float | None:
    try:
        import onnx
        import onnxruntime
    except ImportError:
        return None
    from onnx import TensorProto, helper, numpy_helper

    x, w, bias = arrays
    node = helper.make_node(
        "Conv", ["x", "w", "b"], ["y"], strides=[stride] * 2, pads=[k // 2] * 4, group=groups
    )
    graph = helper.make_graph(
        [node],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        onnx._serialize(model) if hasattr(onnx, "_serialize") else model.SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    return median_ms(lambda: session.run(None, {"x": x}), repeats)


def blocked_ms(
    c_in: int,
    c_out: int,
    size: int,
    k: int,
    stride: int,
    groups: int,
    arrays: list[np.ndarray],
    repeats: int,
) -> float:
    """The blocked numpy kernel avx2 dispatches, on operands in the layouts it asks for."""
    geometry = (c_in, c_out, size, k, stride, groups)
    selection = registry().select(conv_op(*geometry), TARGETS["avx2"], padding=True)
    assert selection is not None and selection.kernel.family == "blocked"
    operands, results = selection.kernel.operand_and_result_layouts(
        conv_op(*geometry), TARGETS["avx2"]
    )
    op = conv_op(*geometry, (*operands, *results))
    inputs = [
        LayoutSpec.parse(layout).pack(a) if layout else a
        for a, layout in zip(arrays, operands, strict=True)
    ]
    return median_ms(lambda: selection.kernel.impl(op, inputs), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the (slow) reference kernel"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'op':<20}{'oneDNN':>9}{'onnxrt':>9}{'blocked':>9}{'ref':>9}  oneDNN's choice")
    for name, c_in, c_out, size, k, stride, groups in CONVS:
        arrays = [
            rng.standard_normal(s).astype(np.float32)
            for s in ((1, c_in, size, size), (c_out, c_in // groups, k, k), (c_out,))
        ]
        geometry = (c_in, c_out, size, k, stride, groups)
        dnnl = onednn_ms(*geometry, arrays, args.repeats)
        ort = onnxruntime_ms(*geometry, arrays, args.repeats)
        numpy_blocked = blocked_ms(*geometry, arrays, args.repeats)
        if args.no_reference:
            reference = None
        else:
            reference = median_ms(
                partial(REFERENCE_KERNELS[nn.Conv2dOp], conv_op(*geometry), arrays),
                max(3, args.repeats // 3),
            )

        def cell(ms: float | None) -> str:
            return f"{ms:9.2f}" if ms is not None else f"{'-':>9}"

        print(
            f"{name:<20}{cell(dnnl[0] if dnnl else None)}{cell(ort)}{cell(numpy_blocked)}"
            f"{cell(reference)}  {dnnl[1] if dnnl else 'oneDNN unavailable'}"
        )


if __name__ == "__main__":
    main()
