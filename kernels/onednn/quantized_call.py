"""What the int8 kernels (quantized.py, quantized_matmul.py, quantized_eltwise.py) share: the
scale and zero-point memories oneDNN takes at execution, and a primitive call bound once to
the arrays generated code always passes.

Scales and zero points (attributes.py): oneDNN v3 takes them at execution as f32 (scales)
and s32 (zero points) memories, `DNNL_ARG_ATTR_SCALES | arg` and `DNNL_ARG_ATTR_ZERO_POINTS
| arg`, for the arguments the primitive's `Quantization` names. `runtime_values` makes
them from the values per argument, `runtime_descriptors` their descriptors.

Binding (`PrimitiveCall.bind`): `__call__(arrays)` points every memory object of the
primitive at its arrays on each call (eight or so ctypes calls, each checked: about 0.15 ms
in all, measured on a 1x1 convolution of a 7x7 image whose execution takes 0.016 ms), which
on a small network costs as much as the convolutions. A generated module passes the same
arena views on every run, so `bind` points a private copy of the primitive's memory objects
(`Compiled.private`: other callers of the kernel do not re-point them) at those arrays once
and returns the primitive's execution alone; the constant arrays (packed weights, scales)
are kept alive by the bound call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects.layout import layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.dialects.nn.base import numpy_dtype
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.attributes import Quantization, runtime_md
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import Kernel, layouts_refusal


def runtime_values(
    quantization: Quantization,
    scales: Mapping[int, Sequence[float]],
    zero_points: Mapping[int, int],
) -> dict[int, np.ndarray]:
    """The execution arguments of the scales and zero points `quantization` names, their
    values taken from `scales` (per argument: one, or one per channel) and `zero_points`
    (per argument, one per tensor)."""
    values = {
        b.DNNL_ARG_ATTR_SCALES | arg: np.asarray(scales[arg], np.float32)
        for arg, _ in quantization.scales
    }
    values.update(
        {
            b.DNNL_ARG_ATTR_ZERO_POINTS | arg: np.asarray([zero_points[arg]], np.int32)
            for arg, _ in quantization.zero_points
        }
    )
    return values


class Bound(Protocol):
    """An int8 kernel bound to its op: called on inputs and a destination in the layouts
    the op's types carry, or `on` them, fixed (BoundKernel's protocol)."""

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None: ...

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> Callable[[], None]: ...


def run_bound(
    bound: Callable[[Operation], Bound], op: Operation, inputs: Sequence[np.ndarray]
) -> np.ndarray:
    """`bound(op)` run once on `inputs` into a new array of the result's physical shape (in
    its layout) and element type."""
    value = op.results[0]
    spec, shape = layout_of(value.type), shape_of(value)  # type: ignore[arg-type]
    dtype = numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]
    out = np.empty(shape if spec is None else spec.physical_shape(shape), dtype)
    bound(op)(inputs, out)
    return out


def int8_kernel_fields(bound: Callable[[Operation], Bound], **fields: Any) -> dict[str, Any]:
    """The `Kernel` fields every oneDNN int8 kernel of quantized_eltwise.py,
    quantized_reorder.py and quantized_concat.py shares: `impl` and `prepare` from its op's
    `bound` kernel; it computes on integer data, pads itself and writes whole buffers (no
    halo, no strided destination); and `fields` (its accepts, layouts, workspace,
    implementation_of)."""

    def prepare(op: Operation, session: object = None) -> Bound:
        return bound(op)

    return {
        "impl": partial(run_bound, bound),
        "prepare": prepare,
        "reads_halo": False,
        "writes_strided": False,
        "integer_data": True,
        **fields,
    }


def int8_kernel(
    name: str,
    op: type[Operation],
    family: str,
    bound: Callable[[Operation], Bound],
    **fields: Any,
) -> Kernel:
    """The oneDNN int8 kernel `name` for ops of type `op`: `int8_kernel_fields` of its op's
    `bound` kernel, and `fields`."""
    return Kernel(name, op, family, **int8_kernel_fields(bound, **fields))


def maps_fill(call: PrimitiveCall, fill: float, expected: float) -> bool:
    """Whether `call` (a reorder) maps a source whose every element is `fill` to a destination
    whose every element is `expected`. oneDNN v3.2's `jit:uni` reorder drops its zero points
    on some shapes (u8 NHWC 1x64x7x7 or 1x64x5x5 to f32 NCHW, but not 1x64x6x6 or 1x48x7x7; a
    slot of 7 channels of 28 in a strided destination), so the int8 kernels try each reorder
    with zero points once, when it is built, with its source holding the zero point."""
    compiled = call.compiled
    types = [compiled.dtype(arg) for arg in (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)]
    assert types[0] is not None and types[1] is not None
    source = np.full(compiled.nbytes(b.DNNL_ARG_SRC) // types[0].itemsize, fill, types[0])
    out = np.empty(compiled.nbytes(b.DNNL_ARG_DST) // types[1].itemsize, types[1])
    call.call_on({b.DNNL_ARG_SRC: source}, out)
    return bool(np.all(out == np.asarray(expected, types[1])))


def typed_as(layout: str) -> Callable[[Operation], str | None]:
    """The `accepts_types` of a kernel that reads and writes every value in `layout` (plain,
    NHWC): where a value's type carries another (hand-written IR), why it cannot bind."""

    def reason(op: Operation) -> str | None:
        return layouts_refusal(op, [(layout,)] * len(op.operands), [(layout,)] * len(op.results))

    return reason


def all_finite(x: np.ndarray) -> bool:
    """Whether f32 `x` holds no NaN and no infinity, tested as x . x (BLAS's dot: a quarter
    of numpy's sum's time); a finite x whose squares overflow counts as not finite (the int8
    kernels then run their reference, which is right either way)."""
    flat = x.reshape(-1)
    with np.errstate(all="ignore"):  # an overflow is what it looks for
        return bool(np.isfinite(np.dot(flat, flat)))


def runtime_descriptors(values: Mapping[int, np.ndarray]) -> dict[int, b.MemoryDesc]:
    """The descriptors of `runtime_values`' memories (f32 scales, s32 zero points)."""
    return {
        arg: runtime_md(array, b.dnnl_f32 if array.dtype == np.float32 else b.dnnl_s32)
        for arg, array in values.items()
    }


class BoundCall:
    """A primitive's execution on arrays pointed at once; it holds them and its scratchpad
    (so that they live while it may run, whoever else drops them: the constants it was
    bound with, the kernel that made it) and the memory objects pointing at them
    (destroyed with their Python objects)."""

    __slots__ = ("arrays", "compiled", "execute", "scratchpad")

    def __init__(
        self, compiled: Compiled, arrays: Mapping[int, np.ndarray], scratchpad: np.ndarray
    ):
        self.compiled, self.arrays, self.scratchpad = compiled, arrays, scratchpad
        compiled.point(arrays, scratchpad)
        self.execute = compiled.runner()

    def __call__(self) -> None:
        self.execute()


class PrimitiveCall:
    """A primitive with its constant arguments (`arrays`: packed weights, bias, scales and
    zero points) and its scratchpad: `__call__(x, out)` runs it on a source and a
    destination given on each call, `bind(x, out)` on those very arrays."""

    def __init__(self, compiled: Compiled, arrays: dict[int, np.ndarray]):
        self.compiled = compiled
        self.arrays = arrays
        self.scratchpad = np.empty(compiled.scratchpad_bytes, np.uint8)

    def feeds(self, sources: Mapping[int, np.ndarray], out: np.ndarray) -> dict[int, np.ndarray]:
        return {**self.arrays, **sources, b.DNNL_ARG_DST: out}

    def call_on(self, sources: Mapping[int, np.ndarray], out: np.ndarray) -> None:
        """Runs on `sources` (execution argument -> array) and `out`."""
        self.compiled(self.feeds(sources, out), self.scratchpad)

    def bind_to(self, sources: Mapping[int, np.ndarray], out: np.ndarray) -> BoundCall:
        """`call_on(sources, out)` as a call without arguments, its memory objects (private)
        pointed now: for arrays whose contents change between calls, never their place."""
        return BoundCall(self.compiled.private(), self.feeds(sources, out), self.scratchpad)


class PackedFrom:
    """Which arrays (weights, and a bias packed with them) a kernel packed last, for an op
    whose packed operands are `constant` (load-time constants: `constant_operands`, the same
    read-only array on every call): `stale(*arrays)` is False only for those very arrays.
    Operands that are not constants may hold new contents in the same array (an arena
    buffer, a caller's view) and are always stale. Weak: once constant weights are packed
    the loaded program frees the plain arrays (`lowering/program.py`)."""

    def __init__(self, constant: bool) -> None:
        self.constant = constant
        self._seen: list[weakref.ref[np.ndarray]] = []

    def stale(self, *arrays: np.ndarray) -> bool:
        if not self.constant or len(arrays) != len(self._seen):
            return True
        return any(array is not seen() for array, seen in zip(arrays, self._seen, strict=True))

    def packed(self, *arrays: np.ndarray) -> None:
        self._seen = [weakref.ref(array) for array in arrays]
