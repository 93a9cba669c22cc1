"""`nn.cast`: ONNX Cast between floats, and from integers (ui8, i8, i32, i64) to f32.

Two uses, one op:
* **bf16**: `convert-to-bf16` puts it at the boundaries of a model's bf16 region: f32 ->
  bf16 where a value enters it (a function argument, the result of an op kept in f32), bf16
  -> f32 where one leaves it (a function result, the operand of an op kept in f32). f32 ->
  bf16 rounds to nearest even, bf16 -> f32 is exact.
* **dynamic quantization**: MatMulInteger's and ConvInteger's i32 sums turned back into
  floats. Exact below 2^24 in magnitude, rounded to nearest even beyond.
* **masks**: an i1 mask as f32 1.0 and 0.0 (torch's `mask.float()`, ONNX Cast of a bool).
* **to a mask**: any other data as i1, true where non-zero (ONNX Cast to bool: transformers casts
  its int64 attention mask so).
* **indices**: i64 data as f32 (a language model's attention mask, given as int64 like its
  token ids, then `(1 - mask.float()) * -10000`). Exact below 2^24 in magnitude.
* **integer arithmetic**: a mask or integers as i32 or i64 (RoBERTa counts its non-padding
  tokens in int32, then makes the count int64 indices). A mask is 1 and 0; i64 -> i32 keeps
  the low 32 bits, as numpy and onnxruntime do.

    %y = nn.cast %x : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xbf16>
    %f = nn.cast %p : tensor<4x3xi32> -> tensor<4x3xf32>

The result has the operand's shape and encoding (layout): a cast is element by element, so
a kernel converts a blocked tensor in its layout, padding lanes included (0 stays 0), and
the layout passes move layouts through it as through any element-wise op.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType, f32, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.layout import encoding_name
from nnlayout.dialects.nn.base import (
    ARITHMETIC_INTEGER_TYPES,
    INTEGER_TYPES,
    NON_NUMERIC_TYPES,
    NNOp,
    Shape,
    Value,
    is_float_type,
    shape_of,
)


@irdl_op_definition
class CastOp(NNOp):
    """A tensor in another element type, same shape and encoding: float to float, or
    integer (ui8, i8, i32, i64) or mask (i1) to f32, or any of these but a mask to a mask
    (i1), or a mask, i32 or i64 to the other integer of i32 and i64."""

    name = "nn.cast"
    NON_NUMERIC: ClassVar[bool] = True  # a mask or indices to f32
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, element_type: Attribute = f32):
        source = SSAValue.get(input).type
        assert isinstance(source, TensorType)
        result = TensorType(element_type, source.get_shape(), source.encoding)
        super().__init__(operands=[input], result_types=[result])

    def result_shape(self) -> Shape:
        return shape_of(self.input)

    def verify_element_types(self) -> None:
        source = self.input.type.element_type  # type: ignore[attr-defined]
        result = self.output.type.element_type  # type: ignore[attr-defined]
        if result == i1 and source == i1:
            raise VerifyException("nn.cast: the input is already a mask (i1)")
        if result == i1:  # a mask: true where non-zero
            if not (is_float_type(source) or source in (*INTEGER_TYPES, i64)):
                raise VerifyException(f"nn.cast: cannot make {source} a mask")
        elif result in ARITHMETIC_INTEGER_TYPES:
            if source not in (i1, *ARITHMETIC_INTEGER_TYPES) or source == result:
                raise VerifyException(
                    f"nn.cast: makes i32 or i64 of a mask (i1) or of the other of i32 and "
                    f"i64 only, got {source} -> {result}"
                )
        elif source in (*INTEGER_TYPES, *NON_NUMERIC_TYPES):
            if result != f32:
                raise VerifyException(
                    f"nn.cast: the result of {source} must be f32, i1, i32 or i64, got {result}"
                )
        elif not is_float_type(source):
            raise VerifyException(
                f"nn.cast: the input must be a float or ui8, i8, i32, i1 or i64, got "
                f"{source}; quantized data needs nn.dequantize"
            )
        elif not is_float_type(result):
            raise VerifyException(
                f"nn.cast: the result has element type {result}; a float converts to "
                "another float (bf16, f16, f32, f64): quantizing needs nn.quantize"
            )
        source, result = encoding_name(self.input.type), encoding_name(self.output.type)
        if source != result:
            raise VerifyException(
                f"nn.cast: the result's layout ({result or 'plain'}) is not the operand's "
                f"({source or 'plain'}); a cast keeps the layout (layout.reorder changes it)"
            )
