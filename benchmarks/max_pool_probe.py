"""oneDNN's max pooling probed per activation format and as two separable passes: which
form of googlenet's and squeezenet1_1's max poolings is the fastest on this machine.

For each pooling shape it makes oneDNN's max pooling on nhwc, nChw8c and nChw16c, and the
same window as two primitives (a kx1 pooling then a 1xk one: max is separable, -inf
padding included), checks every result against a numpy max pooling of the same input, and
times each form "hot" (its source in cache from the previous call) and "cold" (a buffer of
`--evict` MB written before each call, which evicts source and destination).

    OMP_NUM_THREADS=1 python -m nnlayout.benchmarks.max_pool_probe [--runs N] [--evict MB]

docs/benchmarks.md ("max pooling and the 1x1 convolutions on Zen 4") has the figures.
"""

from __future__ import annotations

from nnlayout.benchmarks.startup import pin_threads

pin_threads(1)

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from nnlayout.kernels.onednn import binding as b  # noqa: E402
from nnlayout.kernels.onednn.formats import by_layout  # noqa: E402
from nnlayout.kernels.onednn.primitives import Compiled, pooling_pd  # noqa: E402
from nnlayout.tools.driver import description  # noqa: E402


@dataclass(frozen=True)
class Shape:
    """A square max pooling of a 1 x channels x size x size source; `pad_r` includes
    ceil_mode's overhang."""

    name: str
    channels: int
    size: int
    kernel: int
    stride: int
    pad_l: int
    pad_r: int

    @property
    def out(self) -> int:
        return (self.size + self.pad_l + self.pad_r - self.kernel) // self.stride + 1


SHAPES = (
    Shape("googlenet maxpool1, ceil", 64, 112, 3, 2, 0, 1),
    Shape("googlenet maxpool2, ceil", 192, 56, 3, 2, 0, 1),
    Shape("googlenet branch 4, pad 1", 192, 28, 3, 1, 1, 1),
    Shape("googlenet branch 4, pad 1", 480, 14, 3, 1, 1, 1),
    Shape("googlenet maxpool3, ceil", 480, 28, 3, 2, 0, 1),
    Shape("squeezenet1_1 maxpool, ceil", 64, 111, 3, 2, 0, 1),
)
LAYOUTS = ("NHWC", "NCHW8c", "NCHW16c")
ARGS = [b.DNNL_ARG_SRC, b.DNNL_ARG_DST]


def to_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """NCHW `x` (batch 1) in `layout`'s element order, blocked channels padded with zeros."""
    if layout == "NHWC":
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).ravel()
    block = 16 if layout == "NCHW16c" else 8
    n, c, h, w = x.shape
    padded = np.zeros((n, -(-c // block) * block, h, w), x.dtype)
    padded[:, :c] = x
    blocked = padded.reshape(n, -1, block, h, w).transpose(0, 1, 3, 4, 2)
    return np.ascontiguousarray(blocked).ravel()


def from_layout(flat: np.ndarray, layout: str, shape: tuple[int, int, int, int]) -> np.ndarray:
    """The NCHW array of `shape` that `flat` holds in `layout` (the inverse of `to_layout`)."""
    n, c, h, w = shape
    if layout == "NHWC":
        return flat.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    block = 16 if layout == "NCHW16c" else 8
    blocks = -(-c // block)
    return flat.reshape(n, blocks, h, w, block).transpose(0, 1, 4, 2, 3).reshape(n, -1, h, w)[:, :c]


def reference(x: np.ndarray, s: Shape) -> np.ndarray:
    """Max pooling of NCHW `x` with -inf padding, in numpy."""
    padded = np.pad(
        x, ((0, 0), (0, 0), (s.pad_l, s.pad_r), (s.pad_l, s.pad_r)), constant_values=-np.inf
    )
    span = (s.out - 1) * s.stride + 1
    return np.max(
        [
            padded[:, :, i : i + span : s.stride, j : j + span : s.stride]
            for i in range(s.kernel)
            for j in range(s.kernel)
        ],
        axis=0,
    )


def _pool(
    tag: int,
    src: Sequence[int],
    dst: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    pad_l: Sequence[int],
    pad_r: Sequence[int],
) -> Compiled:
    pd = pooling_pd(
        b.dnnl_pooling_max,
        b.MemoryDesc.with_tag(src, tag),
        b.MemoryDesc.with_tag(dst, tag),
        kernel,
        stride,
        [1, 1],
        pad_l,
        pad_r,
    )
    return Compiled(pd, ARGS)


@dataclass
class Form:
    """One way to compute a pooling: the primitives run in turn, their buffers bound (and
    kept alive here: oneDNN holds only their addresses)."""

    implementation: str
    run: Callable[[], None]
    result: np.ndarray
    buffers: tuple[np.ndarray, ...]


def forms(s: Shape, layout: str, x: np.ndarray) -> dict[str, Form]:
    """The pooling as one primitive ("direct") and as a kx1 then 1xk pooling ("separable"),
    on `layout`, reading NCHW `x`."""
    tag = by_layout("data", layout).value
    c, k, st, pl, pr = s.channels, s.kernel, s.stride, s.pad_l, s.pad_r
    src, mid, dst = (1, c, s.size, s.size), (1, c, s.out, s.size), (1, c, s.out, s.out)
    direct = _pool(tag, src, dst, [k, k], [st, st], [pl, pl], [pr, pr])
    first = _pool(tag, src, mid, [k, 1], [st, 1], [pl, 0], [pr, 0])
    second = _pool(tag, mid, dst, [1, k], [1, st], [0, pl], [0, pr])
    source = to_layout(x, layout)
    middle = np.empty(first.nbytes(b.DNNL_ARG_DST) // 4, np.float32)
    out_direct = np.empty(direct.nbytes(b.DNNL_ARG_DST) // 4, np.float32)
    out_separable = np.empty_like(out_direct)
    direct.point({b.DNNL_ARG_SRC: source, b.DNNL_ARG_DST: out_direct})
    first.point({b.DNNL_ARG_SRC: source, b.DNNL_ARG_DST: middle})
    second.point({b.DNNL_ARG_SRC: middle, b.DNNL_ARG_DST: out_separable})

    def separable() -> None:
        first.execute()
        second.execute()

    return {
        "direct": Form(direct.pd.implementation, direct.execute, out_direct, (source,)),
        "separable": Form(
            f"{first.pd.implementation} twice", separable, out_separable, (source, middle)
        ),
    }


def median_ms(run: Callable[[], None], runs: int, evict: np.ndarray | None) -> float:
    """Median ms of `runs` calls of `run`, `evict` overwritten before each if given."""
    run()
    times = []
    for _ in range(runs):
        if evict is not None:
            evict.fill(1.0)
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--evict", type=int, default=64, help="MB written before a cold call")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.evict < 0:
        parser.error("--runs must be at least 1 and --evict not negative")
    evict = np.empty(args.evict << 18, np.float32)
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.2f}; ms, hot / cold")
    print("| max pooling | " + " | ".join(f"{lay} | {lay} separable" for lay in LAYOUTS) + " |")
    print("|---|" + "---:|" * (2 * len(LAYOUTS)))
    for s in SHAPES:
        x = rng.standard_normal((1, s.channels, s.size, s.size)).astype(np.float32)
        expected = reference(x, s)
        cells = []
        for layout in LAYOUTS:
            for form in forms(s, layout, x).values():
                form.run()
                got = from_layout(form.result, layout, expected.shape)
                if not np.array_equal(got, expected):
                    raise AssertionError(f"{s.name} {layout} {form.implementation}: wrong result")
                hot = median_ms(form.run, args.runs, None)
                cold = median_ms(form.run, args.runs, evict)
                cells.append(f"{hot:.3f} / {cold:.3f} ({form.implementation})")
        label = f"{s.name}: {s.channels}x{s.size}, {s.kernel}x{s.kernel} s{s.stride}"
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
