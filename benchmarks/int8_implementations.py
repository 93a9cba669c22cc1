"""Every fast, exact implementation oneDNN offers for each int8 convolution of a zoo model
quantized as `zoo_int8` quantizes it, timed: where the int8 kernels' preferences over
oneDNN's first choice (`kernels/onednn/quantized.py`, `preferred_implementation`) come
from, to re-measure on another machine.

    python -m nnlayout.benchmarks.int8_implementations [MODEL ...] [--repeats N] [--small]

The model (default: MobileNetV2) is quantized by onnxruntime's `quantize_static` (QDQ,
per-channel s8 weights, u8 activations, 8 seeded calibration inputs) and compiled by
`default-pipeline{target=onednn}`; each distinct `nn.qconv2d` / `nn.qconv2d_add` (shapes,
strides, post-ops, scales and zero points as compiled) is bound once per implementation
oneDNN lists for its source and destination formats, weights of the implementation's
choice, up to its reference code (the kernels' `implementation_refusal` leaves out code
that is slow or not exact). The implementations run in turns, `--repeats` rounds, "warm"
(each right after the others' calls, whose weights may have evicted its own on large layers)
and cold (after writing 8 MiB, as a network's other layers would have evicted them); medians
in ms, "warm / cold". Marks: `*` oneDNN's first choice, `>` the kernels' (after their
preferences). Totals weight each convolution by how often the model has it (convolutions of
the same shapes but other scales count apart). Code of other instruction sets called in
between (AMX, AVX-512 and AVX2 VNNI) may cost each some of its speed, so confirm a preference
on the whole model (docs/benchmarks-int8.md, AMX or VNNI per primitive). One OpenMP thread,
pinned before oneDNN loads: run it as a fresh process, on a quiet machine where you can.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nnlayout.benchmarks.startup import check_names, pin_threads
from nnlayout.tools.driver import description

if TYPE_CHECKING:
    from nnlayout.kernels.onednn.quantized import QConvParams, QuantParams

Key = tuple["QConvParams", "QuantParams", tuple[int, int, int], str]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("models", nargs="*", default=["mobilenet_v2"])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--small", action="store_true", help="the small zoo (a quick check)")
    args = parser.parse_args(argv)
    pin_threads(1)
    from nnlayout.examples.make_models import ZOO
    from nnlayout.kernels.onednn.binding import available, runs_vnni

    check_names(parser, args.models, ZOO)
    if not (available() and runs_vnni()):
        print("oneDNN has no int8 code with VNNI or AMX on this machine", file=sys.stderr)
        return 1
    for name in args.models:
        report(name, args.small, args.repeats)
    return 0


def convolutions(name: str, small: bool) -> Counter[Key]:
    """The distinct int8 convolutions of zoo model `name` as compiled for `onednn`: their
    parameters, source/weights/destination format tags and a short description."""
    import onnx

    from nnlayout.benchmarks.zoo_int8 import quantize, without_softmax
    from nnlayout.dialects import nn
    from nnlayout.examples.make_models import MODELS_DIR, write_model
    from nnlayout.frontends.onnx import import_to_files
    from nnlayout.ir.context import make_context
    from nnlayout.kernels.onednn.common import format_of
    from nnlayout.kernels.onednn.quantized import ANY
    from nnlayout.kernels.onednn.quantized_kernels import qconv_spec
    from nnlayout.tools.driver import parse_pipeline, run_pipeline
    from nnlayout.transforms import get_all_passes

    source = write_model(name, small, MODELS_DIR)
    with tempfile.TemporaryDirectory(prefix="nnlayout-int8-impl-") as scratch:
        f32, int8 = Path(scratch) / "model.f32.onnx", Path(scratch) / "model.int8.onnx"
        onnx.save(without_softmax(onnx.load(source)), f32)
        quantize(f32, int8)
        module = import_to_files(int8)
    pipeline = parse_pipeline("default-pipeline{target=onednn}", get_all_passes())
    run_pipeline(pipeline, make_context(), module)
    found: Counter[Key] = Counter()
    for op in module.walk():
        if isinstance(op, nn.QConv2dOp | nn.QConv2dAddOp):
            q, params = qconv_spec(op)
            formats = (format_of(op.x, "data").value, ANY, format_of(op.output, "data").value)
            g = q.geometry
            what = (
                f"{g.src[1]}->{g.dst[1]} {'x'.join(map(str, g.weights[-2:]))}"
                f"{' depthwise' if g.weights_role == 'depthwise' else ''} @{g.dst[2]}x{g.dst[3]}"
                f" s{g.strides[0]}{' +add' if isinstance(op, nn.QConv2dAddOp) else ''}"
            )
            found[(q, params, formats, what)] += 1
    return found


def report(name: str, small: bool, repeats: int) -> None:
    from nnlayout.kernels.onednn.quantized import first_qconv_pd, qconv_pd

    found = convolutions(name, small)
    print(
        f"\n{name}: {sum(found.values())} int8 convolutions, {len(found)} distinct; 1 thread; "
        f"ms warm / cold, medians of {repeats} rounds in turns; * oneDNN's first choice, "
        "> the kernels'"
    )
    totals: Counter[str] = Counter()
    for (q, params, formats, what), count in found.items():
        first = first_qconv_pd(q, *formats).implementation
        chosen = qconv_pd(q, *formats).implementation
        timed = in_turns(q, params, formats, offered(q, formats), repeats)
        cold = {implementation: ms[1] for implementation, ms in timed.items()}
        totals["oneDNN's first, cold"] += count * cold[first]
        totals["the kernels', cold"] += count * cold[chosen]
        totals["fastest cold"] += count * min(cold.values())
        cells = "  ".join(
            f"{'*' if i == first else ''}{'>' if i == chosen else ''}{i} {w:.4f} / {c:.4f}"
            for i, (w, c) in timed.items()
        )
        print(f"{count} x {what}: {cells}", flush=True)
    print("total, ms: " + ", ".join(f"{what} {ms:.3f}" for what, ms in totals.items()))


def offered(q: QConvParams, formats: tuple[int, int, int]) -> list[str]:
    """The names of the implementations oneDNN lists for `q` on these formats, in its order,
    up to its reference code, less those the kernels refuse (slow or not exact)."""
    from nnlayout.kernels.onednn.quantized import first_qconv_pd, implementation_refusal

    pd, names = first_qconv_pd(q, *formats), []
    while not pd.implementation.startswith("ref"):
        name = pd.implementation
        if name not in names and implementation_refusal(name) is None:
            names.append(name)
        if not pd.next_implementation():
            break
    return names


def in_turns(
    q: QConvParams,
    params: QuantParams,
    formats: tuple[int, int, int],
    names: list[str],
    repeats: int,
) -> dict[str, tuple[float, float]]:
    """(warm ms, cold ms) of `q` at each of `names`, on random data, called in turns."""
    import numpy as np

    calls = [bound_at(q, params, formats, name) for name in names]
    evict = np.ones(8 << 20, np.uint8)
    medians: list[list[float]] = [[] for _ in names]
    for cold in (False, True):
        times: list[list[float]] = [[] for _ in names]
        for call in calls:
            call()  # first touch, the JIT
        for _ in range(repeats):
            for call, spent in zip(calls, times, strict=True):
                if cold:
                    evict += 1
                start = time.perf_counter()
                call()
                spent.append(time.perf_counter() - start)
        for median, spent in zip(medians, times, strict=True):
            median.append(1e3 * float(np.median(spent)))
    return {name: (ms[0], ms[1]) for name, ms in zip(names, medians, strict=True)}


def bound_at(
    q: QConvParams, params: QuantParams, formats: tuple[int, int, int], implementation: str
) -> Callable[[], None]:
    """The convolution at `implementation`, bound to random source and destination bytes,
    its random s8 weights packed."""
    import numpy as np

    from nnlayout.kernels.onednn.quantized import NUMPY_TYPES, QConv, qconv_pd_at

    g = q.geometry
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, g.weights).astype(np.int8)
    bias = rng.integers(-1000, 1000, g.dst[1]).astype(np.int32) if g.bias else None
    pd = qconv_pd_at(q, implementation, formats)
    if pd is None:  # `offered` lists only what oneDNN offers
        raise ValueError(f"oneDNN lists no {implementation} for this convolution")
    conv = QConv(q, weights, bias, params, pd=pd)
    source_type = NUMPY_TYPES[q.src_type]
    x = rng.integers(0, 128, conv.src_md.size // source_type.itemsize).astype(source_type)
    return conv.bind(x, conv.new_output())


if __name__ == "__main__":
    sys.exit(main())
