"""What every oneDNN kernel family shares: the format of a value's layout, the f32-only rule,
the key of an op's primitive, and oneDNN's choices (implementation names and scratchpad
sizes) remembered per key, so that dispatch, layout queries and workspace queries ask oneDNN
once per op kind, shape and format.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
from xdsl.dialects.builtin import TensorType, bf16, f32
from xdsl.ir import Attribute, Operation, SSAValue

from nnlayout.dialects.layout import LayoutSpec, encoding_name, layout_of
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc
from nnlayout.kernels.onednn.formats import Format, by_layout, names
from nnlayout.kernels.onednn.primitives import NUMPY_TYPES, Compiled
from nnlayout.kernels.registry import BindingRefused

Layouts = tuple[tuple[str, ...], tuple[str, ...]]
ANY = b.dnnl_format_tag_any
NOT_F32 = "not float32 (nor all bf16 where the kernel has bf16 code); the oneDNN kernels are f32"
MAX_RANK = 6  # the most dims a oneDNN memory descriptor of these kernels takes


def format_of(value: SSAValue, role: str, dims: tuple[int, ...] = ()) -> Format:
    """The format of a value's layout, of oneDNN's `dims` (needed for grouped weights, whose
    group size decides whether our layout names oneDNN's format); raises naming it when
    oneDNN has none."""
    assert dims or role != "grouped", "grouped weights need oneDNN's dims (g, o, i, h, w)"
    layout = encoding_name(value.type)
    found = by_layout(role, layout)
    if found is None or not names(found, dims):
        raise BindingRefused(
            f"layout '{layout or 'plain'}' has no oneDNN format ({role}"
            f"{f' {dims}' if dims else ''})"
        )
    return found


@cache
def padded_layout(value_type: Attribute) -> LayoutSpec | None:
    """The layout of a tensor type when it has padding lanes (asked by every unbound run)."""
    spec = layout_of(value_type)
    if (
        spec is None
        or not isinstance(value_type, TensorType)
        or not spec.padding_elements(value_type.get_shape())
    ):
        return None
    return spec


def is_f32(op: Operation) -> bool:
    return all(getattr(v.type, "element_type", None) == f32 for v in (*op.operands, *op.results))


def rank_reason(op: Operation) -> str | None:
    """Why oneDNN cannot take `op`'s result as data of any rank: a rank outside 1 to
    `MAX_RANK` (None when inside)."""
    rank = len(shape_of(op.results[0]))
    if 1 <= rank <= MAX_RANK:
        return None
    return f"rank {rank}; the oneDNN kernel takes ranks 1 to {MAX_RANK}"


def f32_rank_reason(op: Operation) -> str | None:
    """The first acceptance check of the kernels that run on plain data of any rank (slice,
    transpose): float32 throughout, then `rank_reason`."""
    return NOT_F32 if not is_f32(op) else rank_reason(op)


def moved_data_type(op: Operation) -> int | None:
    """f32, u8 or s8 where every operand and result is of that type (an op that only moves
    values, which oneDNN's reorder moves of any of them alike: a shuffle, a transpose), else
    None."""
    types = {getattr(v.type, "element_type", None) for v in (*op.operands, *op.results)}
    element = types.pop() if len(types) == 1 else None
    return {"f32": b.dnnl_f32, "ui8": b.dnnl_u8, "i8": b.dnnl_s8}.get(str(element))


def data_type(value: SSAValue) -> int:
    """oneDNN's data type of a float value: dnnl_bf16 for bf16, else dnnl_f32 (what the kernels
    accept: `float_refusal`)."""
    return b.dnnl_bf16 if getattr(value.type, "element_type", None) == bf16 else b.dnnl_f32


def float_refusal(op: Operation) -> str | None:
    """Why the kernels of ops that compute in bf16 as well as f32 (convolutions, matrix
    products, pooling, element-wise, binary, concat, batch norm) cannot take `op`'s element
    types: all f32 is fine, all bf16 where the CPU runs bf16 natively (`bf16_refusal`)."""
    types = {getattr(v.type, "element_type", None) for v in (*op.operands, *op.results)}
    if types == {f32}:
        return None
    if types == {bf16}:
        return bf16_refusal()
    return NOT_F32


def bf16_refusal() -> str | None:
    """Why this machine cannot run oneDNN's bf16 code fast (None: it can). Without
    AVX512_BF16 (or AMX) oneDNN would emulate bf16, or run its reference code."""
    if not b.available():
        return "oneDNN is not available here"
    if not b.runs_isa(b.dnnl_cpu_isa_avx512_core_bf16):
        return "the CPU has no AVX512_BF16 (or oneDNN is capped below it): bf16 would be emulated"
    return None


def op_key(op: Operation) -> tuple[object, ...]:
    """What determines an op's primitive besides its format: kind, shapes, element types,
    attributes."""
    properties = tuple(sorted((k, _text(v)) for k, v in op.properties.items()))
    values = (*op.operands, *op.results)
    types = tuple(_text(getattr(v.type, "element_type", "")) for v in values)
    return (op.name, tuple(shape_of(v) for v in values), types, properties)


_TEXTS: dict[object, str] = {}
_TEXTS_LIMIT = 4096


def _text(attribute: object) -> str:
    """`str(attribute)`, remembered: xDSL prints an attribute through its printer, and a
    model repeats a few element types and properties thousands of times."""
    try:
        return _TEXTS[attribute]
    except KeyError:
        pass
    except TypeError:  # an attribute that cannot be hashed
        return str(attribute)
    if len(_TEXTS) >= _TEXTS_LIMIT:
        _TEXTS.clear()
    text = _TEXTS[attribute] = str(attribute)
    return text


def row_major_strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


def axis_strides(value: SSAValue) -> list[int] | None:
    """The element stride of each logical axis of `value`'s buffer: row-major for plain data,
    the axes' places in memory for a layout that only orders them (NHWC); None for a blocked
    layout (an axis split in two has no one stride)."""
    shape = shape_of(value)
    spec = layout_of(value.type)
    if spec is None:
        return row_major_strides(shape)
    if spec.is_blocked:
        return None
    physical = spec.physical_strides(shape)
    return [physical[spec.axes.index(axis)] for axis in spec.logical_axes]


def unblocked_refusal(op: Operation, spec: LayoutSpec) -> str | None:
    """For kernels reading and writing any layout but a blocked one (`axis_strides`)."""
    if spec.is_blocked:
        return f"layout '{spec.text}' is blocked; the reorder needs one stride per axis"
    return None


def contiguous_md(shape: tuple[int, ...], data_type: int = b.dnnl_f32) -> MemoryDesc:
    """A descriptor of plain row-major data of `shape`, of any rank."""
    return MemoryDesc.with_strides(shape, row_major_strides(shape), data_type)


def is_fast(implementation: str) -> bool:
    """Not oneDNN's reference code, alone or inside another (conv:any+ref:any)."""
    return not any(part.startswith(("ref", "none")) for part in implementation.split("+"))


def weights_md(compiled: Compiled) -> MemoryDesc:
    return compiled.pd.md(b.dnnl_query_weights_md)


# Implementation names and scratchpad bytes of the primitives built only to be asked (the
# non-convolution ones, a convolution's finite variant), by what determines them (op kind,
# shapes, attributes, format).
CHOICES: dict[tuple[object, ...], tuple[str, int]] = {}


def remembered(key: tuple[object, ...], build: Callable[[], b.PrimitiveDesc]) -> tuple[str, int]:
    """The implementation of the primitive `build` describes and its scratchpad bytes,
    remembered by `key`; ("none (why)", 0) when oneDNN has none."""
    if key not in CHOICES:
        try:
            pd = build()
            CHOICES[key] = (pd.implementation, pd.scratchpad_bytes)
        except DnnlError as error:
            CHOICES[key] = (f"none ({error})", 0)
    return CHOICES[key]


def reorder_array(array: np.ndarray, given: MemoryDesc, wanted: MemoryDesc) -> np.ndarray:
    """`array` (bytes as `given` describes them) in `wanted`'s format and data type: a new
    array of `wanted`'s bytes (f32 -> bf16 rounds to nearest even, f32 -> int8 saturates)."""
    reorder = Compiled(p.reorder_pd(given, wanted), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))
    dtype = NUMPY_TYPES[wanted.data_type]
    out = np.empty(wanted.size // dtype.itemsize, dtype=dtype)
    reorder(
        {b.DNNL_ARG_SRC: np.ascontiguousarray(array).reshape(-1), b.DNNL_ARG_DST: out},
        np.empty(reorder.scratchpad_bytes, np.uint8),
    )
    return out
