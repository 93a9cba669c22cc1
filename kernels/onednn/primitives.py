"""oneDNN primitives on numpy buffers, with a cache of compiled primitives.

Each `*_pd` function builds a primitive descriptor from memory descriptors (a descriptor made
with `format_tag::any` lets oneDNN choose the format; kernels read the choice back). `compile`
turns a descriptor into a `Compiled` primitive and keeps it under a key of (op kind, shapes,
formats, attributes), so that a network run a second time creates nothing.

A `Compiled` primitive owns one memory object per execution argument, created without a buffer
and re-pointed at the caller's numpy arrays on every call (`dnnl_memory_set_data_handle`): the
caller owns all storage, outputs and the scratchpad included (user-managed scratchpad mode), so
that a memory planner can place them.

oneDNN conventions handled here: a dilation of 1 (ours, ONNX's) is oneDNN's 0; padding is
given per side (`padding_l` = top, left; `padding_r` = bottom, right).
"""

from __future__ import annotations

import ctypes
import math
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from ctypes import c_void_p
from dataclasses import dataclass

import numpy as np

from nnlayout.dialects.nn.base import bf16_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import Attr, Quantization, apply, float_math
from nnlayout.kernels.onednn.binding import MemoryDesc, PostOp, PrimitiveDesc

# Below both, a primitive runs on one thread (a few microseconds of work or less, measured by
# benchmarks/onednn_threads.py): a parallel region costs more than that, far more once
# OpenMP's other threads sleep, and oneDNN splits element-wise work over all threads however
# small. Higher thresholds, nearer where two threads start to win back to back, let them fall
# asleep during runs of serial primitives. Elements count the sources and the destination.
# docs/history-notes.md has the figures.
SERIAL_MACS = 1 << 18


class _NumpyTypes(dict[int, np.dtype]):
    """The numpy type of each oneDNN data type's buffers: bf16 (which numpy lacks) as
    ml_dtypes' bfloat16, the dtype of nn's bf16 values (`nn.numpy_dtype`), looked up on first
    use (`bf16_dtype`: ml_dtypes is slow to import)."""

    def __missing__(self, key: int) -> np.dtype:
        if key != b.dnnl_bf16:
            raise KeyError(key)
        self[key] = bf16_dtype()
        return self[key]

    def get(self, key: int, default: np.dtype | None = None) -> np.dtype | None:  # type: ignore[override]
        return self[key] if key in self or key == b.dnnl_bf16 else default


NUMPY_TYPES = _NumpyTypes(
    {
        b.dnnl_f32: np.dtype(np.float32),
        b.dnnl_s32: np.dtype(np.int32),
        b.dnnl_s8: np.dtype(np.int8),
        b.dnnl_u8: np.dtype(np.uint8),
    }
)
SERIAL_ELEMENTS = 1 << 15


def runs_serially(macs: int, elements: int) -> bool:
    """Whether a primitive of `macs` multiply-adds touching `elements` values (sources and
    destination) is made and run on one thread: below SERIAL_MACS and SERIAL_ELEMENTS."""
    return macs < SERIAL_MACS and elements < SERIAL_ELEMENTS


def _elements(*mds: MemoryDesc | None) -> int:
    return sum(math.prod(md.shape) for md in mds if md is not None)


def created(
    function: Callable[..., int],
    *args: object,
    elements: int,
    macs: int = 0,
    post_ops: Sequence[PostOp] = (),
    quantization: Quantization | None = None,
) -> PrimitiveDesc:
    """Calls a `dnnl_*_primitive_desc_create` function with `args` and then attributes (a
    user-managed scratchpad, `post_ops` and `quantization`), serially where `runs_serially`
    says so, and wraps its result."""
    handle = c_void_p()
    attr = Attr(post_ops)  # a local, so that it outlives the call
    apply(attr, quantization)
    serial = runs_serially(macs, elements)
    b.serially(serial, function, ctypes.byref(handle), *args, attr.handle)
    return PrimitiveDesc(handle, serial)


def onednn_dilations(dilations: Sequence[int]) -> list[int]:
    """Our dilations (1 = dense) as oneDNN's (0 = dense)."""
    return [d - 1 for d in dilations]


# ------------------------------------------------------------- primitive descriptors
def convolution_pd(
    src: MemoryDesc,
    weights: MemoryDesc,
    bias: MemoryDesc | None,
    dst: MemoryDesc,
    strides: Sequence[int],
    dilations: Sequence[int],
    padding_l: Sequence[int],
    padding_r: Sequence[int],
    post_ops: Sequence[PostOp] = (),
    quantization: Quantization | None = None,
) -> PrimitiveDesc:
    """Forward-inference direct convolution; `dilations` in our convention (1 = dense);
    grouped when `weights` is 5-D (g, o, i, h, w); int8 with `quantization`."""
    return created(
        b.lib().dnnl_convolution_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        b.dnnl_convolution_direct,
        src.handle,
        weights.handle,
        None if bias is None else bias.handle,
        dst.handle,
        b.dims(strides),
        b.dims(onednn_dilations(dilations)),
        b.dims(padding_l),
        b.dims(padding_r),
        elements=_elements(src, dst),
        macs=math.prod(dst.shape) * math.prod(weights.shape[-3:]),
        post_ops=post_ops,
        quantization=quantization or float_math(),
    )


def deconvolution_pd(
    src: MemoryDesc,
    weights: MemoryDesc,
    bias: MemoryDesc | None,
    dst: MemoryDesc,
    strides: Sequence[int],
    dilations: Sequence[int],
    padding_l: Sequence[int],
    padding_r: Sequence[int],
) -> PrimitiveDesc:
    """Forward-inference direct transposed convolution, in oneDNN's (o, i, h, w) weight
    terms; `dilations` in our convention; grouped when `weights` is 5-D."""
    return created(
        b.lib().dnnl_deconvolution_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        b.dnnl_deconvolution_direct,
        src.handle,
        weights.handle,
        None if bias is None else bias.handle,
        dst.handle,
        b.dims(strides),
        b.dims(onednn_dilations(dilations)),
        b.dims(padding_l),
        b.dims(padding_r),
        elements=_elements(src, dst),
        macs=math.prod(src.shape) * math.prod(weights.shape[-4:]) // weights.shape[-3],
        quantization=float_math(),
    )


def pooling_pd(
    algorithm: int,
    src: MemoryDesc,
    dst: MemoryDesc,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    padding_l: Sequence[int],
    padding_r: Sequence[int],
) -> PrimitiveDesc:
    """Forward-inference max or average pooling; `dilations` in our convention."""
    return created(
        b.lib().dnnl_pooling_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        algorithm,
        src.handle,
        dst.handle,
        b.dims(strides),
        b.dims(kernel),
        b.dims(onednn_dilations(dilations)),
        b.dims(padding_l),
        b.dims(padding_r),
        elements=_elements(src, dst),
    )


def eltwise_pd(
    algorithm: int, src: MemoryDesc, dst: MemoryDesc, alpha: float = 0.0, beta: float = 0.0
) -> PrimitiveDesc:
    return created(
        b.lib().dnnl_eltwise_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        algorithm,
        src.handle,
        dst.handle,
        alpha,
        beta,
        elements=_elements(src, dst),
    )


def prelu_pd(src: MemoryDesc, weights: MemoryDesc, dst: MemoryDesc) -> PrimitiveDesc:
    return created(
        b.lib().dnnl_prelu_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        src.handle,
        weights.handle,
        dst.handle,
        elements=_elements(src, weights, dst),
    )


def binary_pd(
    algorithm: int,
    src0: MemoryDesc,
    src1: MemoryDesc,
    dst: MemoryDesc,
    post_ops: Sequence[PostOp] = (),
    quantization: Quantization | None = None,
) -> PrimitiveDesc:
    return created(
        b.lib().dnnl_binary_primitive_desc_create,
        b.engine(),
        algorithm,
        src0.handle,
        src1.handle,
        dst.handle,
        elements=_elements(src0, src1, dst),
        post_ops=post_ops,
        quantization=quantization,
    )


def matmul_pd(
    src: MemoryDesc,
    weights: MemoryDesc,
    bias: MemoryDesc | None,
    dst: MemoryDesc,
    post_ops: Sequence[PostOp] = (),
    quantization: Quantization | None = None,
) -> PrimitiveDesc:
    """dst = src @ weights (+ bias broadcast over rows); any strides, so transposes are
    descriptions, not copies."""
    return created(
        b.lib().dnnl_matmul_primitive_desc_create,
        b.engine(),
        src.handle,
        weights.handle,
        None if bias is None else bias.handle,
        dst.handle,
        elements=_elements(src, dst),
        macs=math.prod(dst.shape) * src.shape[-1],
        post_ops=post_ops,
        quantization=quantization or float_math(),
    )


def inner_product_pd(
    src: MemoryDesc,
    weights: MemoryDesc,
    bias: MemoryDesc | None,
    dst: MemoryDesc,
    post_ops: Sequence[PostOp] = (),
) -> PrimitiveDesc:
    """dst = src @ weights^T (+ bias) for src (M, K), weights (N, K), bias (N,): a fully
    connected layer; `post_ops` applied to its result."""
    return created(
        b.lib().dnnl_inner_product_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        src.handle,
        weights.handle,
        None if bias is None else bias.handle,
        dst.handle,
        elements=_elements(src, dst),
        macs=math.prod(dst.shape) * src.shape[-1],
        post_ops=post_ops,
        quantization=float_math(),
    )


def softmax_pd(
    src: MemoryDesc, dst: MemoryDesc, axis: int, algorithm: int | None = None
) -> PrimitiveDesc:
    """exp(x - max) / sum along `axis` (oneDNN's accurate softmax), or `algorithm`
    (`dnnl_softmax_log`: its logarithm)."""
    return created(
        b.lib().dnnl_softmax_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        b.dnnl_softmax_accurate if algorithm is None else algorithm,
        src.handle,
        dst.handle,
        axis,
        elements=_elements(src, dst),
    )


def batch_norm_pd(src: MemoryDesc, dst: MemoryDesc, epsilon: float) -> PrimitiveDesc:
    """Inference batch normalization with given mean and variance, scale and shift."""
    flags = b.dnnl_use_global_stats | b.dnnl_use_scale | b.dnnl_use_shift
    return created(
        b.lib().dnnl_batch_normalization_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        src.handle,
        dst.handle,
        epsilon,
        flags,
        elements=_elements(src, dst),
    )


def reduction_pd(
    algorithm: int, src: MemoryDesc, dst: MemoryDesc, p: float = 0.0, eps: float = 0.0
) -> PrimitiveDesc:
    """A reduction of `src` over the axes where `dst` has size 1 (and `src` not); `p` and
    `eps` are the Lp norms' power and the floor or addend of their sum."""
    return created(
        b.lib().dnnl_reduction_primitive_desc_create,
        b.engine(),
        algorithm,
        src.handle,
        dst.handle,
        p,
        eps,
        elements=_elements(src, dst),
    )


def layer_norm_pd(src: MemoryDesc, dst: MemoryDesc, epsilon: float, shift: bool) -> PrimitiveDesc:
    """Inference layer normalization over the last axis, its statistics computed, with a
    scale (and a shift where `shift`)."""
    flags = b.dnnl_use_scale | (b.dnnl_use_shift if shift else 0)
    return created(
        b.lib().dnnl_layer_normalization_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        src.handle,
        dst.handle,
        None,
        epsilon,
        flags,
        elements=_elements(src, dst),
    )


def lrn_pd(
    src: MemoryDesc, dst: MemoryDesc, size: int, alpha: float, beta: float, k: float
) -> PrimitiveDesc:
    """Local response normalization across channels (oneDNN divides alpha by size, as
    ONNX does)."""
    return created(
        b.lib().dnnl_lrn_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        b.dnnl_lrn_across_channels,
        src.handle,
        dst.handle,
        size,
        alpha,
        beta,
        k,
        elements=_elements(src, dst),
    )


def concat_pd(dst: MemoryDesc, axis: int, srcs: Sequence[MemoryDesc]) -> PrimitiveDesc:
    handles = (c_void_p * len(srcs))(*(s.handle for s in srcs))
    return created(
        b.lib().dnnl_concat_primitive_desc_create,
        b.engine(),
        dst.handle,
        len(srcs),
        axis,
        handles,
        elements=2 * _elements(dst),
    )


def resampling_pd(
    algorithm: int, src: MemoryDesc, dst: MemoryDesc, post_ops: Sequence[PostOp] = ()
) -> PrimitiveDesc:
    """Forward-inference resampling to `dst`'s spatial sizes (the factors oneDNN derives
    from them: none given), then `post_ops`."""
    return created(
        b.lib().dnnl_resampling_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        algorithm,
        None,
        src.handle,
        dst.handle,
        elements=_elements(src, dst),
        post_ops=post_ops,
    )


def shuffle_pd(src: MemoryDesc, dst: MemoryDesc, axis: int, group_size: int) -> PrimitiveDesc:
    return created(
        b.lib().dnnl_shuffle_forward_primitive_desc_create,
        b.engine(),
        b.dnnl_forward_inference,
        src.handle,
        dst.handle,
        axis,
        group_size,
        elements=_elements(src, dst),
    )


def reorder_pd(
    src: MemoryDesc, dst: MemoryDesc, quantization: Quantization | None = None
) -> PrimitiveDesc:
    """Copies `src` into `dst`'s format and data type (f32 <-> bf16 rounds to nearest even);
    with `quantization`, scaled and shifted as oneDNN's reorder attributes say."""
    return created(
        b.lib().dnnl_reorder_primitive_desc_create,
        src.handle,
        b.engine(),
        dst.handle,
        b.engine(),
        elements=_elements(src, dst),
        quantization=quantization,
    )


# ------------------------------------------------------------------- execution
@dataclass
class CreationTime:
    """Primitives this process created, and the seconds that took (oneDNN JIT-compiles the
    code of each): most of what loading a model costs beyond parsing it."""

    count: int = 0
    seconds: float = 0.0


CREATED = CreationTime()


class _Lazy:
    """A primitive created when first asked for (creating one JIT-compiles its code)."""

    def __init__(self, pd: PrimitiveDesc):
        self.pd = pd
        self.created: b.Primitive | None = None
        self._creating = threading.Lock()  # two threads preparing one program create it once

    def get(self) -> b.Primitive:
        if self.created is None:
            with self._creating:
                if self.created is None:
                    start = time.perf_counter()
                    self.created = b.Primitive(self.pd)
                    CREATED.count += 1
                    CREATED.seconds += time.perf_counter() - start
        return self.created


class Compiled:
    """A primitive with one re-pointable memory object per execution argument (those of
    `runtime` described by the caller). The primitive is created now, or with `eager=False`
    at its first execution (for one that may never run, like a guarded kernel's exact
    path)."""

    def __init__(
        self,
        pd: PrimitiveDesc,
        args: Sequence[int],
        primitive: _Lazy | None = None,
        eager: bool = True,
        runtime: Mapping[int, MemoryDesc] | None = None,
    ):
        self.pd = pd
        self._primitive = _Lazy(pd) if primitive is None else primitive
        if eager:
            self._primitive.get()
        self.args = tuple(args)
        # Arguments oneDNN has no descriptor query for (scales and zero points at execution).
        self.runtime = dict(runtime or {})
        self.memories = {
            arg: b.Memory(self.runtime.get(arg) or pd.md(b.dnnl_query_exec_arg_md, arg))
            for arg in (*args, *self.runtime)
        }
        self.scratchpad_bytes = pd.scratchpad_bytes
        if self.scratchpad_bytes:
            self.memories[b.DNNL_ARG_SCRATCHPAD] = b.Memory(pd.md(b.dnnl_query_scratchpad_md))
        self._exec_args = b.exec_args(list(self.memories.items()))
        self._sizes = {arg: memory.md.size for arg, memory in self.memories.items()}
        self._dtypes = {
            arg: NUMPY_TYPES.get(memory.md.data_type) for arg, memory in self.memories.items()
        }

    def private(self) -> Compiled:
        """The same primitive with memory objects of its own: an op bound to it keeps its
        buffers pointed to across runs even where other ops share the primitive."""
        return Compiled(self.pd, self.args, self._primitive, eager=False, runtime=self.runtime)

    @property
    def primitive(self) -> b.Primitive:
        return self._primitive.get()

    def execute(self) -> None:
        """Runs on the buffers the last call pointed its memory objects at (the caller knows
        that they are the ones it means): no per-argument checks."""
        self._primitive.get().execute(self._exec_args)

    def runner(self) -> Callable[[], None]:
        """`execute` as one call without arguments (straight to oneDNN once the primitive
        exists; a deferred one is created at its first execution)."""
        created = self._primitive.created
        return self.execute if created is None else created.bound(self._exec_args)

    def dtype(self, arg: int) -> np.dtype | None:
        """The numpy type of execution argument `arg`'s buffer (f32, bf16, ...)."""
        return self._dtypes.get(arg)

    def nbytes(self, arg: int) -> int:
        """Bytes the buffer of execution argument `arg` must have."""
        return self._sizes[arg]

    def point(self, arrays: Mapping[int, np.ndarray], scratchpad: np.ndarray | None = None) -> None:
        """Points the memory objects at `arrays` (execution argument -> C-contiguous buffer of
        the argument's data type, `NUMPY_TYPES`, of exactly `nbytes(arg)` bytes; oneDNN only
        reads the sources) and a
        scratchpad of at least `scratchpad_bytes` bytes, for `execute`. (A kernel bound to
        the same arrays on every call points once: see `executor`.)"""
        for arg, memory in self.memories.items():
            if arg == b.DNNL_ARG_SCRATCHPAD:
                if scratchpad is None or scratchpad.nbytes < self.scratchpad_bytes:
                    raise ValueError(
                        f"{self.pd.implementation} needs a scratchpad of "
                        f"{self.scratchpad_bytes} bytes"
                    )
                memory.point_to(scratchpad.ctypes.data)
                continue
            array = arrays.get(arg)
            if array is None:
                raise ValueError(f"{self.pd.implementation}: no buffer for argument {arg}")
            if (
                array.dtype != self._dtypes[arg]
                or not array.flags.c_contiguous
                or array.nbytes != self._sizes[arg]
            ):
                raise ValueError(
                    f"{self.pd.implementation}: argument {arg} must be a C-contiguous "
                    f"{self._dtypes[arg]} buffer of {self._sizes[arg]} bytes, got {array.dtype} "
                    f"{'contiguous' if array.flags.c_contiguous else 'strided'} "
                    f"{array.nbytes} bytes"
                )
            if arg == b.DNNL_ARG_DST and not array.flags.writeable:
                raise ValueError(f"{self.pd.implementation}: the destination is read-only")
            memory.point_to(array.ctypes.data)

    def __call__(
        self, arrays: Mapping[int, np.ndarray], scratchpad: np.ndarray | None = None
    ) -> None:
        """Runs on `arrays` and `scratchpad` (see `point`). Not reentrant: the memory
        objects are re-pointed."""
        self.point(arrays, scratchpad)
        self.execute()


_CACHE: dict[Hashable, Compiled] = {}


def get_compiled(
    key: Hashable, build: Callable[[], PrimitiveDesc], args: Sequence[int], eager: bool = True
) -> Compiled:
    """The compiled primitive for `key`, built by `build` the first time; `args` lists the
    execution arguments it takes (the scratchpad is added when it needs one). With
    `eager=False` the primitive itself is created at its first execution."""
    compiled = _CACHE.get(key)
    if compiled is None:
        compiled = _CACHE[key] = Compiled(build(), args, eager=eager)
    elif eager:
        compiled.primitive  # noqa: B018 (created now if it was deferred)
    return compiled


def clear_cache() -> None:
    _CACHE.clear()


def cache_size() -> int:
    """How many compiled primitives the cache holds."""
    return len(_CACHE)
