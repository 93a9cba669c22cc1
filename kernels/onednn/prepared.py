"""oneDNN kernels bound to ops: `run`, the registry's `impl(op, inputs)`, allocates the result
(of oneDNN's byte size) and the scratchpad around `execute(op, inputs, out, scratchpad)`,
which writes into caller-owned buffers; `Prepared`, the registry's `prepare`, binds an op
once (its primitives created, their scratchpad allocated), and `Prepared.on` binds it to the
buffers generated code always passes.

Each bound op runs on primitives with memory objects of its own (`_private`): they are
re-pointed on each call, so ops sharing a primitive, or threads running one op, do not point
each other's at their arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.compute import constant_operands
from nnlayout.dialects.layout import buffer_bytes, encoding_name, layout_of
from nnlayout.dialects.nn import numpy_dtype, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.any_layout import any_compiled
from nnlayout.kernels.onednn.binding import DnnlError
from nnlayout.kernels.onednn.bounds import linked_bounds
from nnlayout.kernels.onednn.common import is_fast
from nnlayout.kernels.onednn.convolution import conv_variants
from nnlayout.kernels.onednn.deconvolution import deconv_compiled
from nnlayout.kernels.onednn.executor import executor
from nnlayout.kernels.onednn.matmul import gemm_compiled
from nnlayout.kernels.onednn.movement import shuffle_reorder_compiled
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.reduction import reduction_compiled
from nnlayout.kernels.onednn.reshape import RESHAPE_OPS, reshape_compiled
from nnlayout.kernels.onednn.softmax import softmax_compiled
from nnlayout.kernels.onednn.transpose import transpose_compiled
from nnlayout.kernels.registry import BindingRefused, BindingSession, FixedCall


def compiled_for(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`op`'s primitive, its finite variant (see `convolution.Epilogue`) if any, and the execution
    arguments of its inputs."""
    if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp):
        return conv_variants(op)
    spec = layout_of(op.operands[0].type) if op.operands else None
    if isinstance(op, nn.ChannelShuffleOp) and (spec is None or not spec.is_blocked):
        compiled, args = shuffle_reorder_compiled(op)  # oneDNN's shuffle is for blocked data
        return compiled, None, args
    build = (
        deconv_compiled
        if isinstance(op, nn.ConvTranspose2dOp)
        else gemm_compiled
        if isinstance(op, nn.GemmOp | nn.MatmulOp | nn.FusedMatmulOp)
        else reduction_compiled
        if isinstance(op, nn.ReduceOp | nn.LayerNormOp | nn.LrnOp)
        else softmax_compiled
        if isinstance(op, nn.SoftmaxOp | nn.LogSoftmaxOp)
        else transpose_compiled
        if isinstance(op, nn.TransposeOp)
        else reshape_compiled
        if isinstance(op, RESHAPE_OPS)
        else any_compiled
    )
    compiled, args = build(op)
    return compiled, None, args


def implementation(op: Operation) -> str:
    """The name of the oneDNN implementation that runs `op` (its primitive, from the cache
    the loaded module filled), e.g. 'brgconv_1x1:avx2'; where oneDNN offers only its
    reference code (a program loaded on a CPU with fewer features), numpy runs the op, and
    the name says so: 'numpy (oneDNN: ref:any)'."""
    name = compiled_for(op)[0].pd.implementation
    return name if is_fast(name) else f"numpy (oneDNN: {name})"


def _constant_args(op: Operation, args: Sequence[int]) -> set[int]:
    """The execution arguments of `op`'s operands that are load-time constants: inputs of
    its nn.compute given as tensors, not buffers (the same read-only array on every call)."""
    constant = constant_operands(op)
    return {arg for index, arg in enumerate(args[: len(op.operands)]) if index in constant}


def _scratchpad(compiled: Compiled, finite: Compiled | None) -> np.ndarray:
    """A scratchpad for either variant."""
    size = max(compiled.scratchpad_bytes, 0 if finite is None else finite.scratchpad_bytes)
    return np.empty(size, dtype=np.uint8)


def _private(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`compiled_for(op)` with memory objects of the caller's own: they are re-pointed on each
    call, and two threads running one op on shared ones pointed each other's at their
    arrays (two interpreters of one program gave garbage)."""
    shared, finite, args = compiled_for(op)
    return shared.private(), None if finite is None else finite.private(), args


def _checked_private(op: Operation) -> tuple[Compiled, Compiled | None, tuple[int, ...]]:
    """`_private(op)`, refused where oneDNN cannot read or write the op's values as typed:
    no primitive for their formats, or buffers of other sizes than its own."""
    try:
        compiled, finite, args = _private(op)
    except DnnlError as error:
        raise BindingRefused(f"oneDNN has no primitive for it as typed: {error}") from None
    _check_buffer_sizes(op, compiled, args)
    return compiled, finite, args


def _as_read(value: SSAValue, compiled: Compiled, arg: int) -> int:
    """The bytes of `value`'s buffer as oneDNN reads it for `arg`: converted to the
    argument's data type on the way in (`calls.OpRun.arrays`) where the two differ, as a
    bf16 batch norm's vectors are widened to oneDNN's f32 ones."""
    nbytes = buffer_bytes(value.type)
    ours = numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]
    theirs = compiled.dtype(arg)
    if arg == b.DNNL_ARG_DST or ours is None or theirs is None or ours == theirs:
        return nbytes
    return nbytes // ours.itemsize * theirs.itemsize


def _check_buffer_sizes(op: Operation, compiled: Compiled, args: Sequence[int]) -> None:
    """Every operand but the weights (repacked at load), and the result, of the byte size
    its type gives (after a conversion of its elements, `_as_read`), as oneDNN's primitive
    will read and write them."""
    values = [
        (f"operand {i}", v, arg)
        for i, (v, arg) in enumerate(zip(op.operands, args, strict=False))
        if arg != b.DNNL_ARG_WEIGHTS
    ]
    for what, value, arg in (*values, ("the result", op.results[0], b.DNNL_ARG_DST)):
        if (nbytes := _as_read(value, compiled, arg)) != compiled.nbytes(arg):
            raise BindingRefused(
                f"{what} takes {nbytes} bytes in layout "
                f"'{encoding_name(value.type) or 'plain'}'; oneDNN's "
                f"{compiled.pd.implementation} takes {compiled.nbytes(arg)}"
            )


def execute(
    op: Operation,
    inputs: Sequence[np.ndarray],
    out: np.ndarray,
    scratchpad: np.ndarray | None = None,
) -> None:
    """Runs `op` on physical arrays in its kernel's layouts, writing its result into `out`
    (a C-contiguous buffer of the result's type and physical size)."""
    compiled, finite, args = _private(op)
    executor(op, compiled, args, finite).run_into(inputs, out, scratchpad)


def run(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """`execute` with a newly allocated result and scratchpad (the registry's signature)."""
    compiled, finite, args = _checked_private(op)
    spec, shape = layout_of(op.results[0].type), shape_of(op.results[0])
    dtype = numpy_dtype(op.results[0].type.element_type)  # type: ignore[attr-defined]
    out = np.empty(shape if spec is None else spec.physical_shape(shape), dtype=dtype)
    executor(op, compiled, args, finite).run_into(inputs, out, _scratchpad(compiled, finite))
    return out


class Prepared:
    """An op bound once (the registry's `prepare`): its primitives created and their
    scratchpad allocated. Each call executes straight into the destination when that is a
    C-contiguous buffer of oneDNN's type and size, else into a new array that is copied;
    `on` binds it to buffers it will always be given."""

    def __init__(self, op: Operation, session: BindingSession | None):
        compiled, finite, args = _checked_private(op)
        linked, self.written = linked_bounds(op, session)
        self.op = op
        self.executor = executor(
            op, compiled, args, finite, linked, self.written, _constant_args(op, args)
        )
        self.scratchpad = _scratchpad(compiled, finite)
        self.size = compiled.nbytes(b.DNNL_ARG_DST)
        self.dtype = compiled.dtype(b.DNNL_ARG_DST)

    def _direct(self, out: np.ndarray) -> bool:
        return out.flags.c_contiguous and out.dtype == self.dtype and out.nbytes == self.size

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self._direct(out):
            self.executor.run_into(inputs, out, self.scratchpad)
        else:
            self.written.value, self.written.where = math.inf, None
            out[...] = run(self.op, inputs)

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if self._direct(out):
            return self.executor.on(inputs, out, self.scratchpad)
        return partial(self, inputs, out)
