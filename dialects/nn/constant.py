"""`nn.constant`: a tensor known at compile time, inline or named in the weights file."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    StringAttr,
    TensorType,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import ParseError, VerifyException

from nnlayout.dialects.nn.base import NNOp, Shape, numpy_dtype, shape_of, tensor_type, ui8

_INTEGER_ELEMENT_TYPES: dict[str, Attribute] = {
    "uint8": ui8,
    "int8": i8,
    "int32": i32,
    "bool": i1,
    "int64": i64,
}


@irdl_op_definition
class ConstantOp(NNOp):
    """A constant tensor, either inline or stored in the module's weights file.

        %w = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
        %w = nn.constant external "conv1.weight" : tensor<64x3x7x7xf32>
        %b = nn.constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<2xf32, #layout.layout<"C8c">>

    The last form is a constant stored in a layout (after `fold-constants` packed it): the value
    is given logically and materialised in the result type's layout when the program is loaded.

        An external constant names an array in the weights file that the enclosing module's
        `nn.weights` attribute points to (see `nnlayout.dialects.weights`).
    """

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # a mask (nn.where's operand 0), indices (nn.gather's 1)

    name = "nn.constant"
    value = opt_prop_def(DenseIntOrFPElementsAttr)
    external = opt_prop_def(StringAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        result_type: TensorType[Attribute],
        *,
        value: DenseIntOrFPElementsAttr | None = None,
        external: str | None = None,
    ):
        properties: dict[str, Attribute] = {}
        if value is not None:
            properties["value"] = value
        if external is not None:
            properties["external"] = StringAttr(external)
        super().__init__(result_types=[result_type], properties=properties)

    @staticmethod
    def element_type_of(dtype: np.dtype) -> Attribute:
        """The element type a constant of numpy `dtype` has (see `from_array`)."""
        return _INTEGER_ELEMENT_TYPES.get(dtype.name, f32)

    @staticmethod
    def from_array(array: np.ndarray) -> ConstantOp:
        """An inline constant holding `array`: ui8, i8 or i32 for an array of uint8, int8 or
        int32 (quantized data, biases), i1 for bool (a mask), i64 for int64 (indices), f32
        for any other."""
        element_type = ConstantOp.element_type_of(np.asarray(array).dtype)
        dtype = "<f4" if element_type == f32 else np.asarray(array).dtype.newbyteorder("<")
        data = np.array(array, dtype=dtype, order="C")  # a 0-d array stays 0-d
        if element_type == i1:  # as xDSL holds a parsed dense<true>: one byte, -1
            data = -data.astype(np.int8)
        result_type = TensorType(element_type, data.shape)
        return ConstantOp(
            result_type, value=DenseIntOrFPElementsAttr(result_type, BytesAttr(data.tobytes()))
        )

    def inline_array(self) -> np.ndarray:
        """The inline value as a numpy array (splats expanded)."""
        assert self.value is not None
        result_type = tensor_type(self.output)
        element_type = result_type.element_type
        dtype = numpy_dtype(element_type)
        assert dtype is not None
        dtype = dtype.newbyteorder("<")
        if element_type == i1:  # xDSL's bytes of dense<true> are -1 (or 1 if built so)
            flat = np.frombuffer(self.value.data.data, dtype=np.int8) != 0
        else:
            flat = np.frombuffer(self.value.data.data, dtype=dtype)
        shape = result_type.get_shape()
        if flat.size == 1 and math.prod(shape) != 1:
            return np.full(shape, flat[0], dtype=dtype)
        return flat.reshape(shape).copy()

    def result_shape(self) -> Shape:
        if (self.value is None) == (self.external is None):
            raise VerifyException(
                'nn.constant: needs exactly one of an inline dense<...> value or external "name"'
            )
        result = shape_of(self.output)
        if self.value is not None:
            value_type = self.value.type
            if tuple(value_type.get_shape()) != result or (
                value_type.get_element_type() != tensor_type(self.output).element_type
            ):
                raise VerifyException(
                    f"nn.constant: value of type {value_type} does not match the result type "
                    f"{self.output.type}"
                )
        return result

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        if parser.parse_optional_keyword("external") is not None:
            name = parser.parse_str_literal(" for the name of the external constant")
            attributes = parser.parse_optional_attr_dict()
            parser.parse_punctuation(":")
            start = parser.pos
            result_type = parser.parse_type()
            if not isinstance(result_type, TensorType):
                parser.raise_error(
                    f"nn.constant: expected a tensor type, got {result_type}", start, parser.pos
                )
            op = cls(result_type, external=name)
        else:
            start = parser.pos
            try:
                value = parser.parse_attribute()
            except ParseError as error:
                # xDSL reports a literal that does not fit its type (`dense<[1.0, 2.0]> :
                # tensor<3xf32>`) at the next token, often on the next line: point at the literal.
                if "\n" not in parser.lexer.input.content[start : error.span.start]:
                    raise
                parser.raise_error(error.msg, start, start + len("dense"))
            if not isinstance(value, DenseIntOrFPElementsAttr):
                parser.raise_error(
                    'nn.constant: expected dense<...> : tensor<...> or external "name"',
                    start,
                    parser.pos,
                )
            result_type = value.type
            if parser.parse_optional_punctuation("->") is not None:
                result_type = parser.parse_type()
            attributes = parser.parse_optional_attr_dict()
            op = cls(result_type, value=value)  # type: ignore[arg-type]
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if self.external is not None:
            printer.print_string("external ")
            printer.print_string_literal(self.external.data)
            printer.print_op_attributes(self.attributes)
            printer.print_string(" : ")
            printer.print_attribute(self.output.type)
        else:
            assert self.value is not None
            printer.print_attribute(self.value)
            if self.output.type != self.value.type:
                printer.print_string(" -> ")
                printer.print_attribute(self.output.type)
            printer.print_op_attributes(self.attributes)
