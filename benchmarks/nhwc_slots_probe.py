"""oneDNN on NHWC channel slices probed: a convolution or pooling whose destination (or
source) is a channel slice of a wider NHWC buffer, as a concat built in place would need.

In NHWC a concat's slot is a channel slice: its W stride is the concat's channel count, not
its own, so the descriptor is `dnnl_memory_desc_create_with_strides` with non-dense strides.
For each layer shape of DenseNet-121 (the dense layers' batch norm + relu reading a channel
prefix of the block's buffer, their 3x3 convolution writing 32 channels into it, the
transitions' average pooling and the stem's max pooling writing the next block's first
channels) and of Inception-v3 (branch convolutions writing their slice of the module's
output), it makes the primitive on dense NHWC descriptors and on the strided ones, prints
the implementation oneDNN chose for each, checks that both compute the same numbers, and
times them taking turns (medians of the thread's CPU time, 1 thread; the copy a concat
makes today is timed too: oneDNN's concat of the layer's inputs).

    OMP_NUM_THREADS=1 python -m nnlayout.benchmarks.nhwc_slots_probe [--runs N]

`--densenet`: every dense layer of DenseNet-121 (batch norm + relu, 1x1, 3x3) in NHWC,
with the concat's copy, against the same in nChw16c, where the concat is in place.
`--network MODEL.onnx`: the whole model on `host` and on `onednn-nchw16c`, each with its
concats flat (default-pipeline without nest-concats) and nested (the default pipeline),
against onnxruntime, in turns.

docs/benchmarks.md ("NHWC concat slots") has the figures.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp

from nnlayout.dialects.compute import ComputeOp
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import MemoryDesc, PostOp
from nnlayout.kernels.onednn.common import reorder_array

S, W, B, D = b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_BIAS, b.DNNL_ARG_DST
ANY, X, NHWC = b.dnnl_format_tag_any, 2, 22  # dnnl_x, dnnl_nhwc
RELU = PostOp.eltwise(b.dnnl_eltwise_relu)


@dataclass(frozen=True)
class Layer:
    """One op on [1, cin, size, size] NHWC data; its source is the first `cin` channels of a
    buffer of `src_total`, its destination channels `dst_offset`.. of one of `dst_total`
    (equal to cin / cout: dense). kind: conv, depthwise (a batch norm + relu), avgpool,
    maxpool."""

    name: str
    kind: str
    cin: int
    cout: int
    size: int
    kernel: tuple[int, int] = (1, 1)
    stride: int = 1
    src_total: int = 0
    dst_total: int = 0
    dst_offset: int = 0

    @property
    def out_size(self) -> int:
        pads = [k // 2 for k in self.kernel] if self.kind != "avgpool" else [0, 0]
        return (self.size + 2 * pads[1] - self.kernel[1]) // self.stride + 1

    @property
    def pads(self) -> tuple[int, int]:
        if self.kind == "avgpool":
            return (0, 0)
        return (self.kernel[0] // 2, self.kernel[1] // 2)


LAYERS = (
    # DenseNet-121: block 1 (56x56, 256 channels), layers 1 and 6; block 3 (14x14, 1024)
    Layer("dn b1 l1 bn+relu, src prefix 64/256", "depthwise", 64, 64, 56, src_total=256),
    Layer("dn b1 l6 bn+relu, src prefix 224/256", "depthwise", 224, 224, 56, src_total=256),
    Layer("dn b1 l1 3x3 128->32, dst slot 64/256", "conv", 128, 32, 56, (3, 3), 1, 0, 256, 64),
    Layer("dn b1 l6 3x3 128->32, dst slot 224/256", "conv", 128, 32, 56, (3, 3), 1, 0, 256, 224),
    Layer("dn b2 l1 3x3 128->32, dst slot 128/512", "conv", 128, 32, 28, (3, 3), 1, 0, 512, 128),
    Layer("dn b3 l1 bn+relu, src prefix 256/1024", "depthwise", 256, 256, 14, src_total=1024),
    Layer("dn b3 l20 bn+relu, src prefix 864/1024", "depthwise", 864, 864, 14, src_total=1024),
    Layer("dn b3 l1 3x3 128->32, dst slot 256/1024", "conv", 128, 32, 14, (3, 3), 1, 0, 1024, 256),
    Layer("dn b4 l1 3x3 128->32, dst slot 512/1024", "conv", 128, 32, 7, (3, 3), 1, 0, 1024, 512),
    Layer("dn stem maxpool 3x3 s2, dst slot 0/256", "maxpool", 64, 64, 112, (3, 3), 2, 0, 256, 0),
    Layer("dn t1 avgpool 2x2 s2, dst slot 0/512", "avgpool", 128, 128, 56, (2, 2), 2, 0, 512, 0),
    Layer("dn t3 avgpool 2x2 s2, dst slot 0/1024", "avgpool", 512, 512, 14, (2, 2), 2, 0, 1024, 0),
    # Inception-v3: Mixed_5b (35x35, 256), Mixed_6b (17x17, 768), Mixed_7b (8x8, 2048)
    Layer("iv3 5b 1x1 192->64, dst slot 0/256", "conv", 192, 64, 35, (1, 1), 1, 0, 256, 0),
    Layer("iv3 5b 5x5 48->64, dst slot 64/256", "conv", 48, 64, 35, (5, 5), 1, 0, 256, 64),
    Layer("iv3 5b 3x3 96->96, dst slot 128/256", "conv", 96, 96, 35, (3, 3), 1, 0, 256, 128),
    Layer("iv3 6b 7x1 160->192, dst slot 192/768", "conv", 160, 192, 17, (7, 1), 1, 0, 768, 192),
    Layer("iv3 6b 1x1 768->192, dst slot 0/768", "conv", 768, 192, 17, (1, 1), 1, 0, 768, 0),
    Layer("iv3 7b 1x3 384->384, dst slot 320/2048", "conv", 384, 384, 8, (1, 3), 1, 0, 2048, 320),
    Layer("iv3 7b 1x1 2048->320, dst slot 0/2048", "conv", 2048, 320, 8, (1, 1), 1, 0, 2048, 0),
    # other primitives that could do a slot's work
    Layer("dn b1 l6 1x1 224->128, src prefix 224/256", "conv", 224, 128, 56, src_total=256),
    Layer("dn b1 l6 1x1 224->128 as matmul, src prefix", "matmul", 224, 128, 56, src_total=256),
    Layer("dn b1 l6 bn+relu as binary mul, src prefix", "binary", 224, 224, 56, src_total=256),
    Layer("dn b1 l6 bn as batch norm, src prefix", "batchnorm", 224, 224, 56, src_total=256),
    Layer("dn b1 l6 32 copied to slot 224/256", "reorder", 32, 32, 56, (1, 1), 1, 0, 256, 224),
    Layer("dn b3 l1 32 copied to slot 256/1024", "reorder", 32, 32, 14, (1, 1), 1, 0, 1024, 256),
    Layer("iv3 5b 1x1 as matmul, dst 0/256", "matmul", 192, 64, 35, (1, 1), 1, 0, 256, 0),
    Layer("iv3 6b 1x1 as matmul, dst 0/768", "matmul", 768, 192, 17, (1, 1), 1, 0, 768, 0),
    Layer("iv3 6b 192 copied to slot 192/768", "reorder", 192, 192, 17, (1, 1), 1, 0, 768, 192),
)


def nhwc(channels: int, size: int, total: int) -> MemoryDesc:
    """[1, channels, size, size] as channels of an NHWC buffer of `total` channels."""
    total = total or channels
    strides = (size * size * total, 1, size * total, total)
    return MemoryDesc.with_strides((1, channels, size, size), strides)


def _window_pd(layer: Layer, src: MemoryDesc, dst: MemoryDesc) -> b.PrimitiveDesc:
    """A convolution (plain or depthwise: a batch norm + relu) or a pooling."""
    one, pads, stride = (1, 1), layer.pads, (layer.stride,) * 2
    if layer.kind in ("maxpool", "avgpool"):
        algorithm = (
            b.dnnl_pooling_max if layer.kind == "maxpool" else b.dnnl_pooling_avg_exclude_padding
        )
        return p.pooling_pd(algorithm, src, dst, layer.kernel, stride, one, pads, pads)
    if layer.kind == "depthwise":
        weights = MemoryDesc.with_tag((layer.cin, 1, 1, 1, 1), ANY)
    else:
        weights = MemoryDesc.with_tag((layer.cout, layer.cin, *layer.kernel), ANY)
    bias = MemoryDesc.with_tag((layer.cout,), X) if _biased(layer) else None
    post_ops = (RELU,) if _biased(layer) else ()
    return p.convolution_pd(src, weights, bias, dst, stride, one, pads, pads, post_ops)


def _biased(layer: Layer) -> bool:
    """Whether `layer` has a bias and a fused relu: a batch norm + relu as a depthwise
    convolution, a 1x1 convolution as a matmul, Inception-v3's convolutions."""
    return layer.kind in ("depthwise", "matmul") or layer.name.startswith("iv3")


def _matrix(rows: int, columns: int, total: int) -> MemoryDesc:
    """[rows, columns] as the first `columns` of rows of `total` (an NHWC channel slice seen
    as a matrix of pixels by channels)."""
    return MemoryDesc.with_strides((rows, columns), (total or columns, 1))


def primitive_desc(layer: Layer, strided: bool) -> b.PrimitiveDesc:
    """`layer`'s primitive on dense NHWC descriptors, or (`strided`) on its slices. Kinds
    beyond the network's ops, each the other primitive that could do a slot's work: matmul
    (a 1x1 convolution), binary (a batch norm's scale, with relu), batchnorm (oneDNN's),
    reorder (a dense result copied into its slot: the copy left where a producer cannot
    write a slot)."""
    h, o = layer.size, layer.out_size
    src_total = layer.src_total if strided else 0
    dst_total = layer.dst_total if strided else 0
    src, dst = nhwc(layer.cin, h, src_total), nhwc(layer.cout, o, dst_total)
    if layer.kind == "matmul":
        weights = MemoryDesc.with_tag((layer.cin, layer.cout), ANY)
        bias = MemoryDesc.with_strides((1, layer.cout), (layer.cout, 1))
        return p.matmul_pd(
            _matrix(h * h, layer.cin, src_total),
            weights,
            bias,
            _matrix(o * o, layer.cout, dst_total),
            (RELU,),
        )
    if layer.kind == "binary":
        scale = MemoryDesc.with_strides((1, layer.cin, 1, 1), (layer.cin, 1, 1, 1))
        return p.binary_pd(b.dnnl_binary_mul, src, scale, dst, (RELU,))
    if layer.kind == "batchnorm":
        return p.batch_norm_pd(src, dst, 1e-5)
    if layer.kind == "reorder":
        return p.reorder_pd(nhwc(layer.cout, o, 0), dst)
    return _window_pd(layer, src, dst)


@dataclass
class Bound:
    """A primitive pointed at its buffers: its call, its destination read back as dense
    [1, H, W, C], and what must stay alive."""

    call: Callable[[], None]
    result: Callable[[], np.ndarray]
    kept: tuple[object, ...]


EXTRA_ARGS = {
    "conv": (W,),
    "depthwise": (W, B),
    "matmul": (W, B),
    "binary": (b.DNNL_ARG_SRC_1,),
    "batchnorm": (b.DNNL_ARG_MEAN, b.DNNL_ARG_VARIANCE, b.DNNL_ARG_SCALE, b.DNNL_ARG_SHIFT),
}


def _point_extras(compiled: p.Compiled, arrays: list[np.ndarray]) -> None:
    """Points every argument but the source and destination at values of its size (weights
    small, the rest in [0.5, 1.5]: a variance must be positive) and the scratchpad."""
    rng = np.random.default_rng(2)
    for arg, memory in compiled.memories.items():
        if arg in (S, D):
            continue
        count = -(-memory.md.size // 4)
        if arg == b.DNNL_ARG_SCRATCHPAD:
            values = np.empty(count, np.float32)
        elif arg == W:  # the same logical weights in whichever format the primitive took
            shape = memory.md.shape
            plain = rng.uniform(-0.1, 0.1, shape).astype(np.float32)
            given = MemoryDesc.with_strides(shape, [s // 4 for s in plain.strides])
            values = reorder_array(plain, given, memory.md)
        else:
            values = rng.uniform(0.5, 1.5, count).astype(np.float32)
        arrays.append(values)
        memory.point_to(values.ctypes.data)


def bind(layer: Layer, strided: bool) -> tuple[b.PrimitiveDesc, Bound]:
    """`layer`'s primitive with buffers: the same source values and weights either way."""
    pd = primitive_desc(layer, strided)
    extras = EXTRA_ARGS.get(layer.kind, ())
    if layer.kind == "conv" and _biased(layer):
        extras = (W, B)
    compiled = p.Compiled(pd, [S, D, *extras])
    cin, size = (layer.cout, layer.out_size) if layer.kind == "reorder" else (layer.cin, layer.size)
    st = (layer.src_total or cin) if strided and layer.kind != "reorder" else cin
    dt = (layer.dst_total or layer.cout) if strided else layer.cout
    o = layer.out_size
    wide = np.zeros((1, size, size, st), np.float32)
    wide[..., :cin] = np.random.default_rng(1).uniform(-1, 2, (1, size, size, cin))
    out = np.full((1, o, o, dt), np.nan, np.float32)
    arrays: list[np.ndarray] = [wide, out]
    compiled.memories[S].point_to(wide.ctypes.data)
    compiled.memories[D].point_to(out.ctypes.data + 4 * (layer.dst_offset if strided else 0))
    _point_extras(compiled, arrays)
    start = layer.dst_offset if strided else 0
    return pd, Bound(
        compiled.runner(),
        lambda: out[..., start : start + layer.cout].copy(),
        (compiled, arrays),
    )


def concat_copy(layer: Layer) -> Bound | None:
    """What the concat a slot replaces costs today: oneDNN's concat of the dense prefix
    (the channels before the slot) and the layer's dense result into a dense buffer."""
    if not layer.dst_total or not layer.dst_offset:
        return None
    o, before = layer.out_size, layer.dst_offset
    srcs = [nhwc(before, o, 0), nhwc(layer.cout, o, 0)]
    dst = nhwc(before + layer.cout, o, 0)
    pd = p.concat_pd(dst, 1, srcs)
    compiled = p.Compiled(pd, [D, b.DNNL_ARG_MULTIPLE_SRC, b.DNNL_ARG_MULTIPLE_SRC + 1])
    arrays = [np.ones(o * o * c, np.float32) for c in (before, layer.cout, before + layer.cout)]
    for arg, array in zip(
        (b.DNNL_ARG_MULTIPLE_SRC, b.DNNL_ARG_MULTIPLE_SRC + 1, D), arrays, strict=True
    ):
        compiled.memories[arg].point_to(array.ctypes.data)
    if compiled.scratchpad_bytes:
        arrays.append(np.empty(compiled.scratchpad_bytes, np.uint8))
        compiled.memories[b.DNNL_ARG_SCRATCHPAD].point_to(arrays[-1].ctypes.data)
    return Bound(compiled.runner(), lambda: arrays[2], (compiled, arrays))


def _timed(call: Callable[[], None]) -> float:
    start = time.thread_time()
    call()
    return time.thread_time() - start


def measure(bounds: Sequence[Bound | None], runs: int) -> list[float]:
    """Median microseconds of each call, taking turns."""
    present = [bound for bound in bounds if bound is not None]
    for bound in present:
        bound.call()
    times: list[list[float]] = [[] for _ in present]
    for _ in range(runs):
        for index, bound in enumerate(present):
            times[index].append(_timed(bound.call))
    medians = iter([float(np.median(t)) * 1e6 for t in times])
    return [next(medians) if bound is not None else float("nan") for bound in bounds]


DENSE_BLOCKS = ((56, 64, 6), (28, 128, 12), (14, 256, 24), (7, 512, 16))  # size, in, layers


def _tagged(layer: Layer, tag: int) -> Bound:
    """`layer` (dense) on source and destination of format `tag`, left to oneDNN."""
    h, o = layer.size, layer.out_size
    src = MemoryDesc.with_tag((1, layer.cin, h, h), tag)
    dst = MemoryDesc.with_tag((1, layer.cout, o, o), tag)
    compiled = p.Compiled(_window_pd(layer, src, dst), [S, D, *EXTRA_ARGS[layer.kind]])
    arrays = [np.ones(src.size // 4, np.float32), np.zeros(dst.size // 4, np.float32)]
    compiled.memories[S].point_to(arrays[0].ctypes.data)
    compiled.memories[D].point_to(arrays[1].ctypes.data)
    _point_extras(compiled, arrays)
    return Bound(compiled.runner(), lambda: arrays[1], (compiled, arrays))


def dense_layers(runs: int) -> None:
    """Every dense layer of DenseNet-121: its batch norm + relu, 1x1 and 3x3 convolutions
    on NHWC with the concat copying its inputs, against the same three on nChw16c, where
    the concat is in place (whole 16-channel blocks at batch 1); medians in turns."""
    nchw16c = 78
    print(
        "| block | layers | NHWC convs us | NHWC concats us | nChw16c convs us | nChw16c / NHWC |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    totals = np.zeros(3)
    for block, (size, first, count) in enumerate(DENSE_BLOCKS, 1):
        sums = np.zeros(3)
        for index in range(count):
            cin = first + 32 * index
            layers = (
                Layer("bn", "depthwise", cin, cin, size),
                Layer("1x1", "conv", cin, 128, size),
                Layer("3x3", "conv", 128, 32, size, (3, 3)),
            )
            nhwc_ops = [_tagged(layer, NHWC) for layer in layers]
            blocked_ops = [_tagged(layer, nchw16c) for layer in layers]
            copy = concat_copy(Layer("", "conv", 0, 32, size, dst_total=cin + 32, dst_offset=cin))
            times = measure([*nhwc_ops, copy, *blocked_ops], runs)
            sums += (sum(times[:3]), times[3], sum(times[4:]))
        totals += sums
        print(
            f"| {block} | {count} | {sums[0]:.0f} | {sums[1]:.0f} | {sums[2]:.0f} "
            f"| {sums[2] / (sums[0] + sums[1]):.3f} |"
        )
    layers = sum(count for *_, count in DENSE_BLOCKS)
    print(
        f"| all | {layers} | {totals[0]:.0f} | {totals[1]:.0f} | {totals[2]:.0f} "
        f"| {totals[2] / (totals[0] + totals[1]):.3f} |"
    )


def planned(module: ModuleOp, target: str, nest: bool) -> ModuleOp:
    """`module` through default-pipeline on `target` (padding on), or (`nest` false) through
    it without nest-concats: the concats flat, as exported."""
    from nnlayout.ir.context import make_context
    from nnlayout.transforms.default_pipeline import DefaultPipelinePass
    from nnlayout.transforms.nest_concats import NestConcatsPass

    result = module.clone()
    for one_pass in DefaultPipelinePass(target=target).passes():
        if nest or not isinstance(one_pass, NestConcatsPass):
            one_pass.apply(make_context(), result)
    return result


VARIANTS = (
    ("host, concats flat", "host", False),
    ("host", "host", True),
    ("onednn-nchw16c, concats flat", "onednn-nchw16c", False),
    ("onednn-nchw16c", "onednn-nchw16c", True),
)


def network(path: Path, runs: int) -> None:
    """The model at `path` on `host` (its format rule's choice) and on onednn-nchw16c, each
    with its concats flat (default-pipeline without nest-concats) and nested (the default
    pipeline), against onnxruntime: one process, in turns, medians of the thread's CPU time."""
    from nnlayout.benchmarks.torchvision_zoo import THREADS, imported
    from nnlayout.benchmarks.zoo_latency import onnxruntime_session
    from nnlayout.dialects.dispatch import recorded_target
    from nnlayout.lowering.to_numpy import generated_module
    from nnlayout.runtime.binding import relative_difference

    with tempfile.TemporaryDirectory(prefix="nnlayout-slots-") as scratch:
        module, source = imported(path, Path(scratch))
        session = onnxruntime_session(path, THREADS)
        feed = session.get_inputs()[0]  # type: ignore[attr-defined]
        x = np.random.default_rng(0).standard_normal(feed.shape).astype(np.float32)
        expected = session.run(None, {feed.name: x})  # type: ignore[attr-defined]
        calls = {"onnxruntime": lambda: session.run(None, {feed.name: x})}  # type: ignore[attr-defined]
        with ExitStack() as stack:
            for name, target, nest in VARIANTS:
                compiled = planned(module, target, nest)
                copies = sum(isinstance(op, memref.CopyOp) for op in compiled.walk())
                concats = sum(
                    isinstance(op, ComputeOp) and "concat" in op.inner.name
                    for op in compiled.walk()
                )
                generated = stack.enter_context(generated_module(compiled, source_path=source))
                difference = relative_difference(expected, generated.run(x))
                print(
                    f"{name} ({recorded_target(compiled)}): {concats} concat kernels, "
                    f"{copies} copies, max rel diff {difference:.2g}"
                )
                calls[name] = lambda generated=generated: generated.run(x)
            times = _in_turns(calls, runs)
    theirs = float(np.median(times["onnxruntime"]))
    print("| variant | median ms | min ms | median / onnxruntime |\n|---|---:|---:|---:|")
    for name, seconds in times.items():
        median = float(np.median(seconds))
        print(f"| {name} | {median * 1e3:.1f} | {min(seconds) * 1e3:.1f} | {median / theirs:.3f} |")


def _in_turns(calls: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Seconds of thread CPU time of each call per run, in turns (the order reversed every
    other run), after two runs each."""
    for call in calls.values():
        call(), call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for run in range(runs):
        for name, call in list(calls.items())[:: 1 if run % 2 == 0 else -1]:
            start = time.thread_time()
            call()
            times[name].append(time.thread_time() - start)
    return times


def main(argv: Sequence[str] | None = None) -> None:
    first_paragraph = (__doc__ or "").split("\n\n", 1)[0]
    parser = argparse.ArgumentParser(description=" ".join(first_paragraph.split()))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--densenet", action="store_true", help="DenseNet-121's dense layers, NHWC vs nChw16c"
    )
    parser.add_argument(
        "--network", type=Path, help="an .onnx model: host and nChw16c, concats flat and nested"
    )
    options = parser.parse_args(argv)
    if options.network:
        network(options.network, options.runs)
        return
    if options.densenet:
        dense_layers(options.runs)
        return
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {options.runs} runs")
    print(
        "| layer | dense implementation | strided implementation | max diff | dense us "
        "| strided us | strided / dense | concat copy us |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for layer in LAYERS:
        dense_pd, dense = bind(layer, False)
        try:
            strided_pd, strided = bind(layer, True)
        except b.DnnlError as error:
            print(f"| {layer.name} | {dense_pd.implementation} | refused: {error} | | | | | |")
            continue
        copy = concat_copy(layer) if layer.kind != "reorder" else None
        slow = strided_pd.implementation.startswith("ref")
        dense_us, strided_us, copy_us = measure(
            [dense, None if slow else strided, copy], options.runs
        )
        if slow:  # the reference code: seconds per hundred runs
            strided_us = measure([strided], 3)[0]
        diff = float(np.max(np.abs(dense.result() - strided.result())))
        print(
            f"| {layer.name} | {dense_pd.implementation} | {strided_pd.implementation} "
            f"| {diff:.2g} | {dense_us:.1f} | {strided_us:.1f} | {strided_us / dense_us:.3f} "
            f"| {copy_us:.1f} |"
        )


if __name__ == "__main__":
    main()
