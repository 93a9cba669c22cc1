"""Run-time values and applying a kernel to them.

A value whose tensor type carries `#layout.layout<...>` is its *physical* array
(`LayoutSpec.pack`, zero padding); a `#layout.storage<"csr">` value is a
`scipy.sparse.csr_array`; any other value is its logical array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import (
    layout_of,
    storage_of,
)
from nnlayout.dialects.nn import numpy_dtype
from nnlayout.kernels.registry import (
    BindingRefused,
    Implementation,
)

if TYPE_CHECKING:
    from scipy.sparse import csr_array

    RuntimeValue = np.ndarray | csr_array  # a physical array, or the CSR array of a value


def value_dtype(element_type: Attribute) -> np.dtype | None:
    """The numpy dtype of run-time values of `element_type` (f16, f32, f64; ui8, i8 signed,
    i32 for quantized data), None for others."""
    return numpy_dtype(element_type)


# ------------------------------------------------------------- representation
def to_physical(array: np.ndarray, value_type: Attribute) -> RuntimeValue:
    """The run-time value of a logical array whose type is `value_type`."""
    if storage_of(value_type) == "csr":
        from scipy.sparse import csr_array  # imported on first use: it is slow to import

        return csr_array(array)
    spec = layout_of(value_type)
    return array if spec is None or spec.is_identity else spec.pack(array)


def to_logical(value: RuntimeValue, value_type: Attribute) -> np.ndarray:
    """The logical array of a run-time value whose type is `value_type`."""
    if storage_of(value_type) == "csr":
        return value.toarray()
    spec = layout_of(value_type)
    if spec is None or spec.is_identity:
        return value
    assert isinstance(value_type, TensorType)
    return spec.unpack(value, value_type.get_shape())


def element_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of a buffer's elements (the arena, memref<Nxi8>, is int8 bytes)."""
    dtype = value_dtype(element_type)
    if dtype is None:
        raise ValueError(f"no run-time values of element type {element_type}")
    return dtype


def located_refusal(op: Operation, error: BindingRefused) -> DiagnosticError:
    """A kernel's refusal to compute `op` as typed, located at `op`."""
    chosen = kernel_of(op)
    name = "" if chosen is None else f'#nn.kernel<"{chosen.kernel_name.data}">: '
    return DiagnosticError(op, f"{name}{error}")


def apply_kernel(
    op: Operation,
    implementation: Implementation,
    on_physical: bool,
    operands: Sequence[RuntimeValue],
) -> RuntimeValue:
    """Runs `implementation` on `op`'s operand values (unpacked first unless it works on
    physical values); returns the result in the result type's layout, checked against it."""
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    if on_physical:
        try:
            result = implementation(op, operands)
        except BindingRefused as error:
            raise located_refusal(op, error) from None
        spec = layout_of(result_type)
        shape = (
            result_type.get_shape()
            if spec is None
            else spec.physical_shape(result_type.get_shape())
        )
    else:
        result = implementation(
            op,
            [to_logical(v, operand.type) for v, operand in zip(operands, op.operands, strict=True)],
        )
        shape = result_type.get_shape()
    expected = (tuple(shape), value_dtype(result_type.element_type))
    if (result.shape, result.dtype) != expected:
        raise DiagnosticError(
            op,
            f"kernel returned {list(result.shape)} {result.dtype}, "
            f"but the result type is {result_type}",
        )
    return result if on_physical else to_physical(result, result_type)
