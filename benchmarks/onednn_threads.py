"""When a oneDNN primitive should run on one thread: single primitives of growing work, made
and run on one thread and on the process's count, back to back and after an idle gap (in
which OpenMP's spinning threads fall asleep, as between the Python-side steps of a run).
The thresholds in kernels/onednn/primitives.py (SERIAL_MACS, SERIAL_ELEMENTS) come from it.

    OMP_NUM_THREADS=2 python -m nnlayout.benchmarks.onednn_threads [--repeats N] [--gap-us G]

Prints, per primitive, the median microseconds of a call on 1 thread and on all threads
(back to back, and after the gap), and which is faster; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc
from nnlayout.kernels.onednn.formats import by_layout
from nnlayout.tools.driver import description

NCHW, OIHW, NC = (by_layout(role, "").value for role in ("data", "weights", "matrix"))


def conv_1x1(channels: int, size: int) -> Callable[[], p.PrimitiveDesc]:
    def build() -> p.PrimitiveDesc:
        shape = (1, channels, size, size)
        return p.convolution_pd(
            MemoryDesc.with_tag(shape, NCHW),
            MemoryDesc.with_tag((channels, channels, 1, 1), OIHW),
            None,
            MemoryDesc.with_tag(shape, NCHW),
            (1, 1),
            (1, 1),
            (0, 0),
            (0, 0),
        )

    return build


def relu(elements: int) -> Callable[[], p.PrimitiveDesc]:
    def build() -> p.PrimitiveDesc:
        md = MemoryDesc.with_tag((1, elements), NC)
        return p.eltwise_pd(b.dnnl_eltwise_relu, md, md)

    return build


def forced(build: Callable[[], p.PrimitiveDesc], serial: bool) -> p.Compiled:
    """The primitive made on one thread (`serial`) or on the process's count, whatever its
    work (the thresholds set around the call)."""
    saved = p.SERIAL_MACS, p.SERIAL_ELEMENTS
    p.SERIAL_MACS, p.SERIAL_ELEMENTS = (1 << 62, 1 << 62) if serial else (0, 0)
    try:
        pd = build()
    finally:
        p.SERIAL_MACS, p.SERIAL_ELEMENTS = saved
    args = [b.DNNL_ARG_SRC, b.DNNL_ARG_DST]
    if pd.md(b.dnnl_query_weights_md).size:
        args.insert(1, b.DNNL_ARG_WEIGHTS)
    return p.Compiled(pd, args)


def median_us(compiled: p.Compiled, repeats: int, gap_us: float) -> float:
    arrays = {arg: np.zeros(compiled.nbytes(arg) // 4, np.float32) for arg in compiled.args}
    scratchpad = np.zeros(compiled.scratchpad_bytes, np.uint8)
    compiled.point(arrays, scratchpad)
    run = compiled.runner()
    times = []
    for _ in range(repeats):
        if gap_us:
            until = time.perf_counter() + gap_us * 1e-6
            while time.perf_counter() < until:
                pass
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--gap-us", type=float, default=100.0)
    args = parser.parse_args()
    cases: list[tuple[str, int, int, Callable[[], p.PrimitiveDesc]]] = []
    for channels, size in (
        (16, 4),
        (32, 4),
        (32, 8),
        (64, 8),
        (64, 16),
        (128, 16),
        (128, 28),
        (256, 28),
    ):
        macs, elements = channels * channels * size * size, 2 * channels * size * size
        cases.append(
            (f"conv 1x1 {channels}->{channels} @{size}", macs, elements, conv_1x1(channels, size))
        )
    for elements in (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20):
        cases.append((f"relu {elements}", 0, 2 * elements, relu(elements)))
    threads = b.lib().omp_get_max_threads()
    print(f"threads {threads}, gap {args.gap_us:g} us, medians of {args.repeats} (us)")
    header = (
        "primitive",
        "MACs",
        "elements",
        "now",
        "1 thread",
        f"{threads} back to back",
        f"{threads} after gap",
        "1 after gap",
    )
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for name, macs, elements, build in cases:
        serial, parallel = forced(build, True), forced(build, False)
        row = [
            name,
            f"{macs:,}",
            f"{elements:,}",
            "1" if p.runs_serially(macs, elements) else str(threads),
            f"{median_us(serial, args.repeats, 0):.1f}",
            f"{median_us(parallel, args.repeats, 0):.1f}",
            f"{median_us(parallel, args.repeats, args.gap_us):.1f}",
            f"{median_us(serial, args.repeats, args.gap_us):.1f}",
        ]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
