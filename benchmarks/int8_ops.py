"""ResNet-50's convolutions in f32, bf16 and int8 through nnlayout's oneDNN binding, side by
side, one thread: per distinct convolution shape (batch 1, 224 x 224 input), the median
milliseconds of a call of each, the speed-ups over f32, and the sum over ResNet-50's 53
convolutions (each shape times how often the network has it).

    python -m nnlayout.benchmarks.int8_ops [--repeats N] [--calls N] [--threads N]
                                           [--statistic median|min] [--s8]
                                           [--implementations] [--only TEXT]

Each kernel runs as the compiler would feed it: activations already in the format its
primitive chose (format_tag::any), weights packed once, its scratchpad allocated once, its
memory objects pointed at its arrays once (a call is the primitive's execution alone).
f32: f32 source, weights, bias and result. fpmath: the same f32 convolution with
NNLAYOUT_ONEDNN_FPMATH=bf16 (oneDNN computes it in bf16, f32 in memory). bf16
(kernels/onednn/bf16.py): bf16 source, weights and result, f32 bias. int8
(kernels/onednn/quantized.py): u8 source with a zero point (s8 with --s8), s8 weights
with per-output-channel scales, u8 result with a zero point, prescaled f32 bias, i.e.
QLinearConv as ORT's quantize_static makes it. The kernels run in turn within each round
(the same machine load for all), --calls calls each, every call timed alone; the figure
is the median (--statistic min: the least) of those times. Where the machine has no
AVX512_BF16 the fpmath and bf16 columns say why they are missing. Run it as a fresh
process; on a shared machine say it was busy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import FPMATH_VARIABLE
from nnlayout.kernels.onednn.bf16 import Bf16Conv, bf16_refusal
from nnlayout.kernels.onednn.convolution import ConvGeometry
from nnlayout.kernels.onednn.quantized import QConv, QConvParams, QuantParams
from nnlayout.kernels.onednn.quantized_call import BoundCall


@dataclass(frozen=True)
class Shape:
    """One of ResNet-50's convolutions (torchvision's v1.5: the stride on the 3x3)."""

    c: int
    o: int
    size: int
    k: int
    stride: int
    count: int

    @property
    def name(self) -> str:
        s = f" s{self.stride}" if self.stride > 1 else ""
        return f"{self.k}x{self.k}{s} {self.c}->{self.o} @{self.size}"

    def geometry(self) -> ConvGeometry:
        pad, out = self.k // 2, (self.size + 2 * (self.k // 2) - self.k) // self.stride + 1
        return ConvGeometry(
            (1, self.c, self.size, self.size),
            (self.o, self.c, self.k, self.k),
            True,
            (1, self.o, out, out),
            (self.stride, self.stride),
            (1, 1),
            (pad, pad),
            (pad, pad),
        )


RESNET50 = (
    Shape(3, 64, 224, 7, 2, 1),
    Shape(64, 64, 56, 1, 1, 1),
    Shape(64, 64, 56, 3, 1, 3),
    Shape(64, 256, 56, 1, 1, 4),
    Shape(256, 64, 56, 1, 1, 2),
    Shape(256, 128, 56, 1, 1, 1),
    Shape(128, 128, 56, 3, 2, 1),
    Shape(256, 512, 56, 1, 2, 1),
    Shape(128, 512, 28, 1, 1, 4),
    Shape(512, 128, 28, 1, 1, 3),
    Shape(128, 128, 28, 3, 1, 3),
    Shape(512, 256, 28, 1, 1, 1),
    Shape(256, 256, 28, 3, 2, 1),
    Shape(512, 1024, 28, 1, 2, 1),
    Shape(256, 1024, 14, 1, 1, 6),
    Shape(1024, 256, 14, 1, 1, 5),
    Shape(256, 256, 14, 3, 1, 5),
    Shape(1024, 512, 14, 1, 1, 1),
    Shape(512, 512, 14, 3, 2, 1),
    Shape(1024, 2048, 14, 1, 2, 1),
    Shape(512, 2048, 7, 1, 1, 3),
    Shape(2048, 512, 7, 1, 1, 2),
    Shape(512, 512, 7, 3, 1, 2),
)


# Column, data type in memory, fpmath mode (attributes.float_math) of the float kernels.
FLOAT_COLUMNS = (
    ("f32", b.dnnl_f32, "strict"),
    ("fpmath", b.dnnl_f32, "bf16"),
    ("bf16", b.dnnl_bf16, "strict"),
)
COLUMNS = ("f32", "fpmath", "bf16", "int8")


@contextmanager
def _fpmath(mode: str) -> Iterator[None]:
    """NNLAYOUT_ONEDNN_FPMATH=`mode` while a primitive is made (restored after)."""
    before = os.environ.get(FPMATH_VARIABLE)
    os.environ[FPMATH_VARIABLE] = mode
    try:
        yield
    finally:
        if before is None:
            del os.environ[FPMATH_VARIABLE]
        else:
            os.environ[FPMATH_VARIABLE] = before


def kernels(shape: Shape, s8: bool) -> dict[str, tuple[Callable[[], None], str] | str]:
    """Per column, a call of the kernel on arrays of its own and its implementation's name,
    or why the column is empty."""
    rng = np.random.default_rng(0)
    g = shape.geometry()
    w = (rng.standard_normal(g.weights) * 0.05).astype(np.float32)
    bias = rng.standard_normal(shape.o).astype(np.float32)
    found: dict[str, tuple[Callable[[], None], str] | str] = {}
    for name, data_type, fpmath in FLOAT_COLUMNS:
        why = bf16_refusal() if name != "f32" else None
        if why is not None:
            found[name] = why
            continue
        with _fpmath(fpmath):
            conv = Bf16Conv(g, w, bias, dst_type=data_type, data_type=data_type)
        x = np.zeros(
            conv.src_md.size // (4 if data_type == b.dnnl_f32 else 2), conv.new_output().dtype
        )
        found[name] = (_bound(conv, x, conv.new_output()), conv.implementation)
    src_type, x_zp = (b.dnnl_s8, 0) if s8 else (b.dnnl_u8, 128)
    q = QConvParams(g, src_type, b.dnnl_u8, True, x_zp != 0, True)
    scales = tuple(float(s) for s in rng.uniform(0.002, 0.02, shape.o))
    weights = rng.integers(-127, 128, g.weights).astype(np.int8)
    int8 = QConv(
        q,
        weights,
        rng.integers(-999, 999, shape.o).astype(np.int32),
        QuantParams(0.02, scales, 0.5, x_zp, 7),
    )
    x = rng.integers(0, 128, int8.src_md.size).astype(np.uint8 if not s8 else np.int8)
    found["int8"] = (_bound(int8, x, int8.new_output()), int8.implementation)
    return found


def _bound(conv: Bf16Conv | QConv, x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
    """The kernel's call on `x` and `out` with its memory objects pointed at them once, as
    a generated module runs it (quantized_call.py): the primitive's execution alone."""
    if isinstance(conv, QConv):
        return conv.bind(x, out)
    arrays = {**conv.arrays, b.DNNL_ARG_SRC: x, b.DNNL_ARG_DST: out}
    return BoundCall(conv.compiled.private(), arrays, conv.scratchpad)


def measure(
    calls: dict[str, Callable[[], None]], repeats: int, per: int, statistic: str
) -> dict[str, float]:
    """The median (or least) ms of single calls of each: `repeats` rounds in which the
    kernels take turns, each running `per` calls timed one by one. On a busy machine a call
    is now and then preempted for a whole time slice; single calls keep such outliers out
    of the others, and the median out of the figure."""
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            for _ in range(per):
                start = time.perf_counter()
                call()
                times[name].append((time.perf_counter() - start) * 1e3)
    pick = statistics.median if statistic == "median" else min
    return {name: pick(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__,
        epilog="Columns: ms per call; fpmathx, bf16x and int8x = f32 ms / their ms.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repeats", type=int, default=7, help="rounds of the kernels in turn")
    parser.add_argument("--calls", type=int, default=5, help="calls timed per kernel per round")
    parser.add_argument(
        "--statistic", choices=("median", "min"), default="median", help="of the call times"
    )
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads (default 1)")
    parser.add_argument("--s8", action="store_true", help="int8 with s8 activations, no zero point")
    parser.add_argument(
        "--implementations", action="store_true", help="add oneDNN's implementation names"
    )
    parser.add_argument("--only", default="", help="only shapes whose name contains TEXT")
    args = parser.parse_args()
    if not b.available():
        parser.exit(1, "oneDNN is not available here\n")
    b.lib().omp_set_num_threads(args.threads)
    rows, totals, notes, convolutions = [], dict.fromkeys(COLUMNS, 0.0), {}, 0
    for shape in RESNET50:
        if args.only not in shape.name:
            continue
        found = kernels(shape, args.s8)
        calls = {k: v[0] for k, v in found.items() if not isinstance(v, str)}
        notes.update({k: v for k, v in found.items() if isinstance(v, str)})
        ms = measure(calls, args.repeats, args.calls, args.statistic)
        for name in totals:
            totals[name] += ms.get(name, float("nan")) * shape.count
        convolutions += shape.count
        names = " ".join(f"{k}={v[1]}" for k, v in found.items() if not isinstance(v, str))
        rows.append((shape.name, str(shape.count), ms, names))
    rows.append(("ResNet-50 total" if not args.only else "total", str(convolutions), totals, ""))
    header = ("convolution", "n", *(f"{c} ms" for c in COLUMNS), "fpmathx", "bf16x", "int8x")
    print(f"{header[0]:<22} {header[1]:>2} " + " ".join(f"{h:>9}" for h in header[2:]))
    for name, count, ms, implementations in rows:
        print(_row(name, count, ms) + (f"  {implementations}" if args.implementations else ""))
    for column, why in notes.items():
        print(f"{column}: {why}")


def _row(name: str, count: str, ms: dict[str, float]) -> str:
    times = [ms.get(k, float("nan")) for k in COLUMNS]
    figures = (*times, *(times[0] / t for t in times[1:]))
    return f"{name:<22} {count:>2} " + " ".join(f"{v:9.3f}" for v in figures)


if __name__ == "__main__":
    main()
