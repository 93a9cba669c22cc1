"""A ctypes binding to oneDNN v3.2's C API: only the calls nnlayout uses, on the CPU; memory of
f32 (the default), bf16, s32, s8 and u8 (attributes.py sets int8 scales and zero points).

The library comes from the PyPI wheel `onednn-cpu-gomp==2023.2.0` (CPU, OpenMP), or from the
file NNLAYOUT_ONEDNN_LIBRARY names (a user's own oneDNN v3.2 or later: library.py). Enum values
are copied from the headers of `onednn-devel-cpu-gomp` (tests/kernels/test_onednn_binding.py checks
each one against dnnl_types.h / dnnl_common_types.h), since a wrong constant would not fail,
it would compute something else.

Every call that returns a `dnnl_status_t` is checked: a failure raises `DnnlError` naming the
call and the status. `available()` says whether the library loads here; the first time it does
not (no wheel, not x86-64), one `OneDNNUnavailableWarning` explains why, and the compiler uses
its numpy kernels instead (a user's own library that does not load is an error instead).

One CPU engine and one in-order stream serve the whole process; they are made on first use and
live until the process exits (primitives keep references to the engine). Threads (of the
OpenMP build; a TBB or SYCL build's are library.py's): the OpenMP runtime reads
OMP_NUM_THREADS when the library loads, so set it before the first call. It also reads how long
idle threads spin before sleeping. Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, libdnnl
is loaded with GOMP_SPINCOUNT=1000 in the environment (then removed): after each
primitive, idle threads spin about 10 us, long enough to catch the next primitive of the same
run, then sleep. Each of the other choices lost badly somewhere (docs/history-notes.md has
the figures):

- passive (sleep at once): every primitive wakes its threads, which costs tens of
  microseconds each.
- longer spins (libgomp's default, or 10000): no faster idle, but where another process
  takes a core a spinning thread is descheduled and every primitive waits for it.

Small primitives are made and run on one thread (`serially`, thresholds in primitives.py):
for them a parallel region costs more than the work it splits, whether its threads spin or
sleep.

On a machine shared with busy processes, OMP_WAIT_POLICY=passive is the safer choice. The
default takes effect only where libdnnl is the first library to load libgomp (numpy, scipy,
onnx and onnxruntime do not load it; an OpenMP-built BLAS or torch imported before nnlayout
would, with libgomp's own default).

Handles (`MemoryDesc`, `PrimitiveDesc`, `Primitive`, `Memory`, and attributes.Attr) own their
C object and destroy it when collected; a memory descriptor queried from a primitive descriptor
borrows it and keeps its owner alive.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import warnings
from collections.abc import Callable, Sequence
from ctypes import POINTER, c_char_p, c_int, c_int64, c_void_p
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from nnlayout.diagnostics import UserError
from nnlayout.kernels.onednn.library import (
    LIBRARY_VARIABLE,
    DnnlError,
    Version,
    open_library,
    version,
)
from nnlayout.kernels.onednn.prototypes import PROTOTYPES, STATUS, Dims, ExecArg

# ---------------------------------------------------------------- enum values (v3.2)
# dnnl_status_t
STATUS_NAMES = {
    0: "success",
    1: "out_of_memory",
    2: "invalid_arguments",
    3: "unimplemented",
    4: "last_impl_reached",
    5: "runtime_error",
    6: "not_required",
}
dnnl_success = 0
dnnl_last_impl_reached = 4
# dnnl_data_type_t (undef: "the destination's", for a sum post-op), dnnl_engine_kind_t,
# dnnl_stream_flags_t, dnnl_fpmath_mode_t
dnnl_data_type_undef = 0
dnnl_bf16 = 2
dnnl_f32 = 3
dnnl_s32 = 4
dnnl_s8 = 5
dnnl_u8 = 6
dnnl_fpmath_mode_strict = 0
dnnl_fpmath_mode_bf16 = 1
dnnl_cpu = 1
dnnl_stream_default_flags = 1
# dnnl_format_tag_t: tag_any, and the plain weights of a transposed convolution as ONNX stores
# them, (i, o, h, w); formats.py holds the layout tags
dnnl_format_tag_any = 1
dnnl_iohw = 25
dnnl_giohw = 32
# dnnl_format_kind_t
dnnl_blocked = 2
# dnnl_prop_kind_t, dnnl_alg_kind_t
dnnl_forward_inference = 96
dnnl_convolution_direct = 0x1
dnnl_deconvolution_direct = 0xA
dnnl_eltwise_relu = 0x20
dnnl_eltwise_tanh = 0x21
dnnl_eltwise_elu = 0x22
dnnl_eltwise_abs = 0x24
dnnl_eltwise_sqrt = 0x25
dnnl_eltwise_linear = 0x26
dnnl_eltwise_soft_relu = 0x27
dnnl_eltwise_hardsigmoid = 0x28
dnnl_eltwise_logistic = 0x29
dnnl_eltwise_gelu_tanh = 0x2B
dnnl_eltwise_swish = 0x2C
dnnl_eltwise_log = 0x2D
dnnl_eltwise_clip = 0x2E
dnnl_eltwise_clip_v2 = 0x2F
dnnl_eltwise_pow = 0x30
dnnl_eltwise_gelu_erf = 0x31
dnnl_eltwise_round = 0x32  # nearest, ties to even
dnnl_eltwise_mish = 0x33
dnnl_eltwise_hardswish = 0x34
dnnl_pooling_max = 0x1FF
dnnl_pooling_avg_include_padding = 0x2FF
dnnl_pooling_avg_exclude_padding = 0x3FF
dnnl_softmax_accurate, dnnl_softmax_log = 0x30000, 0x30001
dnnl_binary_add = 0x1FFF0
dnnl_binary_mul = 0x1FFF1
dnnl_binary_max = 0x1FFF2
dnnl_binary_min = 0x1FFF3
dnnl_binary_div = 0x1FFF4
dnnl_binary_sub = 0x1FFF5
dnnl_lrn_across_channels = 0xAFF
dnnl_reduction_max = 0x2FFF2
dnnl_reduction_min = 0x2FFF3
dnnl_reduction_sum = 0x2FFF4
dnnl_reduction_mul = 0x2FFF5
dnnl_reduction_mean = 0x2FFF6
dnnl_reduction_norm_lp_sum = 0x2FFF8
dnnl_reduction_norm_lp_power_p_sum = 0x2FFFA
dnnl_resampling_nearest = 0x2FFF0
dnnl_resampling_linear = 0x2FFF1
# dnnl_normalization_flags_t
dnnl_use_global_stats = 0x1
dnnl_use_scale = 0x2
dnnl_use_shift = 0x4
# dnnl_scratchpad_mode_t
dnnl_scratchpad_mode_user = 1
# dnnl_cpu_isa_t (a bit set: each value includes the ones it extends)
dnnl_cpu_isa_avx512_core = 0x27
dnnl_cpu_isa_avx2_vnni = 0xF
dnnl_cpu_isa_avx512_core_vnni = 0x67
dnnl_cpu_isa_avx512_core_bf16 = 0xE7
# dnnl_query_t
dnnl_query_impl_info_str = 8
dnnl_query_src_md = 129
dnnl_query_weights_md = 131
dnnl_query_dst_md = 133
dnnl_query_scratchpad_md = 136
dnnl_query_exec_arg_md = 255
dnnl_query_ndims_s32 = 256
dnnl_query_dims = 257
dnnl_query_format_kind = 262
dnnl_query_padded_dims = 260
dnnl_query_inner_nblks_s32 = 263
dnnl_query_inner_blks = 264
dnnl_query_inner_idxs = 265
dnnl_query_strides = 14
dnnl_query_data_type = 258
# DNNL_ARG_*
DNNL_ARG_SRC = 1
DNNL_ARG_SRC_1 = 2
DNNL_ARG_DST = 17
DNNL_ARG_WEIGHTS = 33
DNNL_ARG_BIAS = 41
DNNL_ARG_MEAN = 49
DNNL_ARG_VARIANCE = 50
DNNL_ARG_SCALE = 51
DNNL_ARG_SHIFT = 52
DNNL_ARG_SCRATCHPAD = 80
DNNL_ARG_MULTIPLE_SRC = 1024
DNNL_ARG_ATTR_SCALES = 4096  # | the argument scaled, at execution: its scales (f32)
DNNL_ARG_ATTR_ZERO_POINTS = 8192  # | the argument: its zero points (s32)
DNNL_ARG_ATTR_POST_OP_DW = 16384  # | the argument: a depthwise post-op's (PostOp.depthwise)
DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE = 32768  # x (post-op index + 1) | DNNL_ARG_SRC_1: a binary's

_R = TypeVar("_R")


class OneDNNUnavailableWarning(RuntimeWarning):
    """oneDNN cannot be loaded here; nnlayout uses its numpy kernels."""


def _check(status: int, function: object, args: tuple[object, ...]) -> int:
    if status != dnnl_success:
        name = getattr(function, "__name__", "oneDNN call")
        raise DnnlError(f"{name} failed: {STATUS_NAMES.get(status, 'unknown')} (status {status})")
    return status


@cache
def _load() -> ctypes.CDLL | DnnlError | UserError:
    """The library with its prototypes set, or the error saying why it cannot load (kept,
    so that the search is not repeated): a UserError for the user's own library (also on a
    machine that is not x86-64, where the binding does not run: the user asked for it)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        if given := os.environ.get(LIBRARY_VARIABLE, ""):
            return UserError(
                f"{LIBRARY_VARIABLE}={given}: this machine is {platform.machine()}; "
                "nnlayout's oneDNN binding runs on x86-64 only"
            )
        return DnnlError(
            f"the oneDNN wheel is built for x86-64, this machine is {platform.machine()}"
        )
    try:
        lib, found = open_library()
    except (DnnlError, UserError) as error:
        return error
    for name, (restype, argtypes) in PROTOTYPES.items():
        if name.startswith("omp_") and not found.openmp:
            continue  # OpenMP's, which a TBB or SYCL build does not load
        function = getattr(lib, name)
        function.argtypes = argtypes
        if restype is STATUS:
            function.restype = c_int
            function.errcheck = _check
        else:
            function.restype = restype
    return lib


_warned = False


def available() -> bool:
    """Whether oneDNN loads here; the first time it does not, one warning says why. The user's
    own library (NNLAYOUT_ONEDNN_LIBRARY) that does not load raises its UserError instead."""
    global _warned
    loaded = _load()
    if isinstance(loaded, UserError):
        raise loaded
    if isinstance(loaded, DnnlError):
        if not _warned:
            _warned = True
            warnings.warn(
                f"oneDNN is not available ({loaded}); using the numpy kernels",
                OneDNNUnavailableWarning,
                stacklevel=2,
            )
        return False
    return True


def lib() -> ctypes.CDLL:
    """The loaded library; raises DnnlError (UserError for the user's own) saying why it
    cannot load."""
    loaded = _load()
    if isinstance(loaded, DnnlError | UserError):
        raise loaded
    return loaded


@cache
def loaded_version() -> Version:
    """The loaded library's version and threading runtime (library.Version)."""
    found = version(lib())
    assert found is not None, "_load refuses a library without dnnl_version"
    return found


def runs_isa(isa: int) -> bool:
    """Whether oneDNN runs the code of `isa` (a dnnl_cpu_isa_t, e.g.
    dnnl_cpu_isa_avx512_core_bf16) or a superset of it here."""
    return lib().dnnl_get_effective_cpu_isa() & isa == isa


def runs_vnni() -> bool:
    """Whether oneDNN runs int8 code with VNNI (or AMX) here: 32-bit sums of u8 x s8 products,
    which its int8 kernels need (quantized.implementation_refusal)."""
    return runs_isa(dnnl_cpu_isa_avx512_core_vnni) or runs_isa(dnnl_cpu_isa_avx2_vnni)


def runs_avx512_core() -> bool:
    """Whether oneDNN runs its avx512_core code here, which chooses other implementations and
    weight formats than its avx2 code (ONEDNN_MAX_CPU_ISA=AVX2 caps it before it loads)."""
    isa = lib().dnnl_get_effective_cpu_isa()
    return isa & dnnl_cpu_isa_avx512_core == dnnl_cpu_isa_avx512_core


def serially(serial: bool, call: Callable[..., _R], *args: object) -> _R:
    """`call(*args)`, on one OpenMP thread where `serial`, else on the calling thread's count.
    oneDNN reads the count when a primitive is made (a convolution partitions its work then)
    and when it runs (element-wise primitives, pooling and reorders split theirs then), so
    both go through here. The count is the user's (OMP_NUM_THREADS, or omp_set_num_threads
    in this thread): it is restored afterwards. (Primitives made before the user changes it
    keep the old one, as every choice oneDNN made then: `kernels.forget_choices()`.) A TBB or
    SYCL build's threads are not OpenMP's: there every call runs on all of them."""
    if not serial or not loaded_version().openmp:
        return call(*args)
    before = lib().omp_get_max_threads()
    lib().omp_set_num_threads(1)
    try:
        return call(*args)
    finally:
        lib().omp_set_num_threads(before)


@cache
def engine() -> c_void_p:
    """The process's CPU engine (made on first use, never destroyed)."""
    handle = c_void_p()
    lib().dnnl_engine_create(ctypes.byref(handle), dnnl_cpu, 0)
    return handle


@cache
def stream() -> c_void_p:
    """The process's in-order stream on `engine()`."""
    handle = c_void_p()
    lib().dnnl_stream_create(ctypes.byref(handle), engine(), dnnl_stream_default_flags)
    return handle


def dims(values: Sequence[int]) -> Dims:
    """A dnnl_dims_t holding `values`."""
    return Dims(*values)


# --------------------------------------------------------------------- handles
class MemoryDesc:
    """A memory descriptor: owned (created here) or borrowed from the primitive descriptor
    `owner`, which it keeps alive."""

    def __init__(self, handle: c_void_p, owner: object = None):
        self.handle = handle
        self._owner = owner

    @classmethod
    def with_tag(cls, shape: Sequence[int], tag: int, data_type: int = dnnl_f32) -> MemoryDesc:
        handle = c_void_p()
        lib().dnnl_memory_desc_create_with_tag(
            ctypes.byref(handle), len(shape), dims(shape), data_type, tag
        )
        return cls(handle)

    @classmethod
    def with_strides(
        cls, shape: Sequence[int], strides: Sequence[int], data_type: int = dnnl_f32
    ) -> MemoryDesc:
        handle = c_void_p()
        lib().dnnl_memory_desc_create_with_strides(
            ctypes.byref(handle), len(shape), dims(shape), data_type, dims(strides)
        )
        return cls(handle)

    def submemory(self, shape: Sequence[int], offsets: Sequence[int]) -> MemoryDesc:
        """The window of `shape` at `offsets` of this memory (the same bytes and size: the
        window's elements at their place in them)."""
        handle = c_void_p()
        lib().dnnl_memory_desc_create_submemory(
            ctypes.byref(handle), self.handle, dims(shape), dims(offsets)
        )
        return MemoryDesc(handle)

    def __del__(self) -> None:
        if self._owner is None and self.handle:
            lib().dnnl_memory_desc_destroy(self.handle)

    @property
    def size(self) -> int:
        """Bytes of the described memory, padding included."""
        return lib().dnnl_memory_desc_get_size(self.handle)

    @property
    def shape(self) -> tuple[int, ...]:
        ndims = c_int()
        lib().dnnl_memory_desc_query(self.handle, dnnl_query_ndims_s32, ctypes.byref(ndims))
        return self._query_dims(dnnl_query_dims, ndims.value)

    @property
    def data_type(self) -> int:
        """Its dnnl_data_type_t (dnnl_f32, dnnl_u8, ...)."""
        kind = c_int()
        lib().dnnl_memory_desc_query(self.handle, dnnl_query_data_type, ctypes.byref(kind))
        return kind.value

    def _query_dims(self, what: int, count: int) -> tuple[int, ...]:
        values = POINTER(c_int64)()
        lib().dnnl_memory_desc_query(self.handle, what, ctypes.byref(values))
        return tuple(values[i] for i in range(count))

    @property
    def blocking(self) -> Blocking:
        """How a blocked descriptor lays out its dims (`Blocking`)."""
        ndims, blocks = c_int(), c_int()
        lib().dnnl_memory_desc_query(self.handle, dnnl_query_ndims_s32, ctypes.byref(ndims))
        lib().dnnl_memory_desc_query(self.handle, dnnl_query_inner_nblks_s32, ctypes.byref(blocks))
        return Blocking(
            self._query_dims(dnnl_query_padded_dims, ndims.value),
            self._query_dims(dnnl_query_strides, ndims.value),
            tuple(
                zip(
                    self._query_dims(dnnl_query_inner_blks, blocks.value),
                    self._query_dims(dnnl_query_inner_idxs, blocks.value),
                    strict=True,
                )
            ),
        )

    @property
    def is_blocked(self) -> bool:
        """False for a format left to the primitive (format_tag::any) or an opaque one."""
        kind = c_int()
        lib().dnnl_memory_desc_query(self.handle, dnnl_query_format_kind, ctypes.byref(kind))
        return kind.value == dnnl_blocked

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryDesc) and bool(
            lib().dnnl_memory_desc_equal(self.handle, other.handle)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Blocking:
    """A blocked descriptor's layout: padded dims, the strides of its outer dims, and its
    inner blocks, outermost first, as (size, index of the dim they split)."""

    padded: tuple[int, ...]
    strides: tuple[int, ...]
    inner: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PostOp:
    """One post-op, made by `eltwise`, `sum`, `depthwise` or `binary`; hashable, so it can key
    a cache (attributes.Attr appends them)."""

    kind: str
    algorithm: int
    alpha: float
    beta: float
    zero_point: int = 0  # a sum's: subtracted from the destination's previous contents
    data_type: int = dnnl_f32  # a sum's: of those contents (undef: the destination's)
    # a depthwise's: its weights', bias' and destination's data types, kernel, stride, padding
    dw_params: tuple[int, ...] = ()
    dims: tuple[int, ...] = ()  # a binary's: its second operand's (f32, plain), broadcast

    @staticmethod
    def binary_arg(index: int) -> int:
        """The execution argument of the second operand of the binary post-op at `index`."""
        return DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE * (index + 1) | DNNL_ARG_SRC_1

    @classmethod
    def eltwise(cls, algorithm: int, alpha: float = 0.0, beta: float = 0.0) -> PostOp:
        """Applies an element-wise function (e.g. relu with slope alpha) to the result."""
        return cls("eltwise", algorithm, alpha, beta)

    @classmethod
    def sum(cls, scale: float = 1.0, zero_point: int = 0, data_type: int = dnnl_f32) -> PostOp:
        """Adds scale times the destination's previous contents (a residual connection),
        minus `zero_point`, read as `data_type` (an int8 destination: dnnl_data_type_undef)."""
        return cls("sum", 0, scale, 0.0, zero_point, data_type)

    @classmethod
    def depthwise(cls, stride: int, data_types: tuple[int, int, int] = (dnnl_f32,) * 3) -> PostOp:
        """A 3x3 depthwise convolution of the result, padded by 1 on the top and left (the only
        kernel and padding oneDNN fuses), with `stride`; `data_types` are its weights', bias'
        and destination's. Only 1x1 convolutions take it; its weights and bias are the
        arguments DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS / BIAS."""
        return cls("depthwise", 0, 0.0, 0.0, dw_params=(*data_types, 3, stride, 1))

    @classmethod
    def binary(cls, algorithm: int, dims: tuple[int, ...]) -> PostOp:
        """Combines the result with a plain f32 tensor of `dims` (e.g. (1, C, 1, 1): one value
        per channel), given at execution as `binary_arg(index)`."""
        return cls("binary", algorithm, 0.0, 0.0, dims=dims)


class PrimitiveDesc:
    """A primitive descriptor: what oneDNN chose (formats, implementation, scratchpad), made
    on one OpenMP thread where `serial` (see `serially`), as its primitive is made and run."""

    def __init__(self, handle: c_void_p, serial: bool):
        self.handle = handle
        self.serial = serial

    def __del__(self) -> None:
        if self.handle:
            lib().dnnl_primitive_desc_destroy(self.handle)

    def md(self, query: int, index: int = 0) -> MemoryDesc:
        """The memory descriptor the primitive uses for `query` (e.g. dnnl_query_src_md)."""
        handle = lib().dnnl_primitive_desc_query_md(self.handle, query, index)
        if not handle:
            raise DnnlError(
                f"the primitive descriptor has no memory descriptor for query {query} #{index}"
            )
        return MemoryDesc(c_void_p(handle), owner=self)

    @property
    def implementation(self) -> str:
        """oneDNN's name of the chosen implementation, e.g. 'brg_conv_fwd:avx2'."""
        text = c_char_p()
        lib().dnnl_primitive_desc_query(
            self.handle, dnnl_query_impl_info_str, 0, ctypes.byref(text)
        )
        return (text.value or b"").decode()

    @property
    def scratchpad_bytes(self) -> int:
        return self.md(dnnl_query_scratchpad_md).size

    def next_implementation(self) -> bool:
        """Moves to oneDNN's next implementation for the same operation (formats left `any`
        are chosen again); False, unchanged, after its last one."""
        status = serially(self.serial, lib().dnnl_primitive_desc_next_impl, self.handle)
        if status == dnnl_last_impl_reached:
            return False
        _check(status, lib().dnnl_primitive_desc_next_impl, ())
        return True


class Memory:
    """A memory object over caller-owned bytes; `point_to` re-points it for each call."""

    def __init__(self, md: MemoryDesc):
        self.md = md
        self.handle = c_void_p()
        lib().dnnl_memory_create(ctypes.byref(self.handle), md.handle, engine(), None)

    def __del__(self) -> None:
        if self.handle:
            lib().dnnl_memory_destroy(self.handle)

    def point_to(self, address: int) -> None:
        lib().dnnl_memory_set_data_handle(self.handle, c_void_p(address))


class _PrimitiveHandle(c_void_p):
    """A primitive's handle, destroyed with the last reference to it: every call `bound`
    made holds it, so the primitive outlives the calls that run it, whoever drops it first
    (two threads creating a lazy primitive at once, one of them discarding its own)."""

    def __del__(self) -> None:
        if self:
            lib().dnnl_primitive_destroy(self)


class Primitive:
    """A primitive made from `pd`, executed on the process's stream."""

    def __init__(self, pd: PrimitiveDesc):
        self.pd = pd
        self.handle = _PrimitiveHandle()
        serially(pd.serial, lib().dnnl_primitive_create, ctypes.byref(self.handle), pd.handle)
        execute = functools.partial(lib().dnnl_primitive_execute, self.handle, stream())
        self._execute = _waiting(execute) if loaded_version().asynchronous else execute

    def execute(self, args: ctypes.Array[ExecArg]) -> None:
        """Runs on `args` (made once by `exec_args`); the result is there on return: a CPU
        stream of the OpenMP build runs primitives synchronously (its wait() returns at once
        unless the runtime is a threadpool, cpu_stream.hpp), a SYCL build's is waited for."""
        serially(self.pd.serial, self._execute, len(args), args)

    def bound(self, args: ctypes.Array[ExecArg]) -> Callable[[], None]:
        """`execute(args)` as a call without arguments: one ctypes call (three more for a
        serial primitive, to set OpenMP's thread count and restore it)."""
        execute = functools.partial(self._execute, len(args), args)
        if not self.pd.serial or not loaded_version().openmp:
            return execute
        # `serially` inlined, its two functions looked up once: this is the path every small
        # primitive runs, and the call through `serially` doubled its cost.
        count, set_count = lib().omp_get_max_threads, lib().omp_set_num_threads

        def run() -> None:
            before = count()
            set_count(1)
            try:
                execute()
            finally:
                set_count(before)

        return run


def _waiting(execute: Callable[..., int]) -> Callable[..., None]:
    """`execute`, then a wait for the stream (a SYCL queue runs primitives asynchronously)."""
    wait = functools.partial(lib().dnnl_stream_wait, stream())

    def run(*args: object) -> None:
        execute(*args)
        wait()

    return run


def exec_args(args: Sequence[tuple[int, Memory]]) -> ctypes.Array[ExecArg]:
    """The dnnl_exec_arg_t array binding each execution argument to its memory object."""
    return (ExecArg * len(args))(*(ExecArg(arg, memory.handle) for arg, memory in args))
