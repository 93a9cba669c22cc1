"""Data-movement ops on activations: `nn.slice`, `nn.pad`, `nn.resize`,
`nn.channel_shuffle`, `nn.expand`, `nn.gather` and its inverse `nn.scatter`.

Their attributes are static and normalised: a slice names a start, a size and a step for every
axis (ONNX's Slice, Split and Gather on a constant index all become one), a pad its begin and
end amounts for every axis, a resize its result shape (the type), its scale per spatial axis
and ONNX's interpolation modes, a channel shuffle its group count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.nn.base import (
    ARITHMETIC_INTEGER_TYPES,
    INTEGER_TYPES,
    NON_NUMERIC_TYPES,
    NNOp,
    Shape,
    Value,
    _require_len,
    _require_non_negative,
    _require_positive,
    _require_rank,
    broadcast_shapes,
    i64_array,
    integer_range,
    ints,
    is_float_type,
    shape_of,
    tensor_type,
    with_shape,
)
from nnlayout.dialects.nn.constant import ConstantOp

#: The attribute naming the ONNX node whose run-time indices an `nn.gather` checks (the
#: importer's gather from 0..size-1 before a scatter or GatherND): its errors name the node.
ONNX_NODE = "onnx.node"
PAD_MODES = ("constant", "reflect", "edge")
RESIZE_MODES = ("nearest", "linear")
#: The properties of a resize (`ResizeBase`).
RESIZE_ATTRIBUTES = ("mode", "coordinates", "nearest", "scales")
COORDINATE_MODES = (
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "half_pixel_symmetric",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


# ------------------------------------------------------------------------ shape rules
def slice_shape(
    x: Shape, starts: Sequence[int], sizes: Sequence[int], steps: Sequence[int]
) -> Shape:
    """Element i of result axis d is x's element starts[d] + i * steps[d]; every index read
    lies inside the axis."""
    op_name = "nn.slice"
    for name, values in (("starts", starts), ("sizes", sizes), ("steps", steps)):
        _require_len(op_name, name, values, len(x))
    _require_positive(op_name, "sizes", sizes)
    if any(step == 0 for step in steps):
        raise VerifyException(f"{op_name}: steps must be non-zero, got {list(steps)}")
    for axis, (dim, start, size, step) in enumerate(zip(x, starts, sizes, steps, strict=True)):
        last = start + (size - 1) * step
        if not (0 <= start < dim and 0 <= last < dim):
            raise VerifyException(
                f"{op_name}: axis {axis} of size {dim} is read from index {start} to {last} "
                f"(start {start}, size {size}, step {step}); both must lie in [0, {dim})"
            )
    return tuple(sizes)


def pad_shape(x: Shape, pads: Sequence[int], mode: str) -> Shape:
    """pads = [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}], non-negative; reflect
    needs fewer pads than the axis has elements, edge a non-empty axis."""
    op_name = "nn.pad"
    rank = len(x)
    _require_len(op_name, "pads", pads, 2 * rank)
    _require_non_negative(op_name, "pads", pads)
    if mode not in PAD_MODES:
        raise VerifyException(f"{op_name}: mode must be one of {', '.join(PAD_MODES)}, got {mode}")
    if mode == "reflect":
        for axis in range(rank):
            if max(pads[axis], pads[axis + rank]) >= x[axis]:
                raise VerifyException(
                    f"{op_name}: reflect pads {list(pads)} must be smaller than the size "
                    f"{x[axis]} of axis {axis}"
                )
    return tuple(dim + pads[axis] + pads[axis + rank] for axis, dim in enumerate(x))


def resize_check(
    x: Shape, out: Shape, scales: Sequence[float], op_name: str = "nn.resize"
) -> Shape:
    """A 4-D resize keeps N and C and has one positive scale per spatial axis."""
    _require_rank(op_name, "input", x, 4)
    _require_rank(op_name, "result", out, 4)
    _require_len(op_name, "scales", [0] * len(scales), 2)
    if any(not s > 0 for s in scales):
        raise VerifyException(f"{op_name}: scales must be positive, got {list(scales)}")
    if out[:2] != x[:2]:
        raise VerifyException(
            f"{op_name}: result {list(out)} must keep the input's N and C {list(x[:2])}; "
            "only the spatial axes are resized"
        )
    return out


def channel_shuffle_shape(x: Shape, groups: int) -> Shape:
    op_name = "nn.channel_shuffle"
    if len(x) < 2:
        raise VerifyException(f"{op_name}: input must have rank >= 2, got {list(x)}")
    if groups <= 0 or x[1] % groups:
        raise VerifyException(
            f"{op_name}: groups {groups} must be positive and divide the {x[1]} channels"
        )
    return x


# ------------------------------------------------------------------------ ops
@irdl_op_definition
class SliceOp(NNOp):
    """A strided window of the input: result[i_0, ...] = input[starts[0] + i_0 * steps[0],
    ...], with sizes[d] elements along axis d (ONNX Slice, Split's parts, Gather of one
    index); steps may be negative."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.slice"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    starts = prop_def(DenseArrayBase.constr(i64))
    sizes = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    assembly_format = (
        "$input `starts` $starts `sizes` $sizes `steps` $steps attr-dict "
        "`:` type($input) `->` type($output)"
    )

    def __init__(
        self,
        input: Value,
        starts: Sequence[int],
        sizes: Sequence[int],
        steps: Sequence[int] | None = None,
    ):
        steps = [1] * len(starts) if steps is None else steps
        shape = slice_shape(shape_of(input), starts, sizes, steps)
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, shape)],
            properties={
                "starts": i64_array(starts),
                "sizes": i64_array(sizes),
                "steps": i64_array(steps),
            },
        )

    def result_shape(self) -> Shape:
        return slice_shape(
            shape_of(self.input), ints(self.starts), ints(self.sizes), ints(self.steps)
        )

    def sliced_axes(self) -> tuple[int, ...]:
        """The axes the slice does not take whole (in order)."""
        x = shape_of(self.input)
        return tuple(
            axis
            for axis, (dim, start, size, step) in enumerate(
                zip(x, ints(self.starts), ints(self.sizes), ints(self.steps), strict=True)
            )
            if not (start == 0 and size == dim and step == 1)
        )


@irdl_op_definition
class PadOp(NNOp):
    """ONNX Pad: `pads` elements before and after each axis, filled with `value` (constant),
    the mirror image without the edge (reflect) or copies of the edge (edge)."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data

    name = "nn.pad"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    pads = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    value = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure())
    assembly_format = (
        "$input `pads` $pads `mode` $mode `value` $value attr-dict "
        "`:` type($input) `->` type($output)"
    )

    def __init__(
        self, input: Value, pads: Sequence[int], mode: str = "constant", value: float = 0.0
    ):
        shape = pad_shape(shape_of(input), pads, mode)
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, shape)],
            properties={
                "pads": i64_array(pads),
                "mode": StringAttr(mode),
                "value": FloatAttr(value, f32),
            },
        )

    def result_shape(self) -> Shape:
        return pad_shape(shape_of(self.input), ints(self.pads), self.mode.data)

    def verify_(self) -> None:
        super().verify_()
        element_type = tensor_type(self.input).element_type
        value = self.value.value.data
        if not is_float_type(element_type) and self.mode.data == "constant":
            low, high = integer_range(element_type)
            if not (value == int(value) and low <= value <= high):
                raise VerifyException(
                    f"nn.pad: value {value} is not a {element_type} number ({low} to {high}); "
                    "a quantized tensor's pad value is an integer, its zero point for a 0"
                )


class ResizeBase(NNOp):
    """What `nn.resize` and `nn.qresize` share: the operand, result and attributes of ONNX
    Resize, their printed form and their checks."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    mode = prop_def(StringAttr)
    coordinates = prop_def(StringAttr)
    nearest = prop_def(StringAttr)
    scales = prop_def(DenseArrayBase.constr(f64))
    traits = traits_def(Pure())
    assembly_format = (
        "$input `mode` $mode `coordinates` $coordinates `nearest` $nearest `scales` $scales "
        "attr-dict `:` type($input) `->` type($output)"
    )

    @staticmethod
    def resize_properties(
        mode: str, coordinates: str, nearest: str, scales: Sequence[float]
    ) -> dict[str, Attribute]:
        return {
            "mode": StringAttr(mode),
            "coordinates": StringAttr(coordinates),
            "nearest": StringAttr(nearest),
            "scales": DenseArrayBase.from_list(f64, tuple(float(s) for s in scales)),
        }

    @property
    def scale_values(self) -> tuple[float, ...]:
        return tuple(float(s) for s in self.scales.get_values())

    def checked_resize_shape(self) -> Shape:
        """The attributes checked, then the shapes (`resize_check`)."""
        for name, value, allowed in (
            ("mode", self.mode.data, RESIZE_MODES),
            ("coordinates", self.coordinates.data, COORDINATE_MODES),
            ("nearest", self.nearest.data, NEAREST_MODES),
        ):
            if value not in allowed:
                raise VerifyException(
                    f"{self.name}: {name} must be one of {', '.join(allowed)}, got {value}"
                )
        return resize_check(
            shape_of(self.input), shape_of(self.output), self.scale_values, self.name
        )


#: nn.grid_sample's interpolations and the values it reads outside the image.
GRID_SAMPLE_MODES = ("nearest", "linear", "cubic")
GRID_SAMPLE_PADDINGS = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(NNOp):
    """ONNX GridSample (torch's `F.grid_sample`) of NCHW data: each output pixel [n, :, i, j]
    interpolates `input` [N, C, H, W] at the point `grid` [N, Ho, Wo, 2] gives it (x then y,
    -1..1 spanning the image's pixel centres with `align_corners`, its edges without), by
    `mode` nearest (coordinates rounded half to even), linear (2 x 2 taps) or cubic (4 x 4,
    coefficient -0.75), reading `padding` zeros, the border's value or the reflection where a
    tap or point is outside:

        %y = nn.grid_sample %x, %grid mode "linear" padding "zeros" :
             (tensor<1x3x8x8xf32>, tensor<1x5x5x2xf32>) -> tensor<1x3x5x5xf32>
    """

    name = "nn.grid_sample"
    input = operand_def(TensorType)
    grid = operand_def(TensorType)
    output = result_def(TensorType)
    mode = prop_def(StringAttr)
    padding = prop_def(StringAttr)
    align_corners = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $grid `mode` $mode `padding` $padding (`align_corners` $align_corners^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, input: Value, grid: Value, mode: str, padding: str, align_corners: bool
    ) -> None:
        n, c = shape_of(input)[:2]
        properties: dict[str, Attribute] = {
            "mode": StringAttr(mode),
            "padding": StringAttr(padding),
        }
        if align_corners:
            properties["align_corners"] = UnitAttr()
        super().__init__(
            operands=[input, grid],
            result_types=[with_shape(input, (n, c, *shape_of(grid)[1:3]))],
            properties=properties,
        )
        self.verify_()

    def result_shape(self) -> Shape:
        for what, value, allowed in (
            ("mode", self.mode.data, GRID_SAMPLE_MODES),
            ("padding", self.padding.data, GRID_SAMPLE_PADDINGS),
        ):
            if value not in allowed:
                raise VerifyException(
                    f"{self.name}: {what} must be one of {', '.join(allowed)}, got {value}"
                )
        x, grid = shape_of(self.input), shape_of(self.grid)
        _require_rank(self.name, "input", x, 4)
        _require_rank(self.name, "grid", grid, 4)
        if grid[0] != x[0] or grid[3] != 2:
            raise VerifyException(
                f"{self.name}: grid {list(grid)} must be [N, Ho, Wo, 2] with the input's N = {x[0]}"
            )
        return (x[0], x[1], grid[1], grid[2])


@irdl_op_definition
class ResizeOp(ResizeBase):
    """ONNX Resize of the spatial axes of NCHW data to the result's H and W: `mode` nearest
    or linear, `coordinates` (ONNX's coordinate_transformation_mode) mapping each output
    index to an input coordinate with `scales` (the scale per spatial axis ONNX's formulas
    use), `nearest` (ONNX's nearest_mode) rounding it in nearest mode."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data

    name = "nn.resize"

    def __init__(
        self,
        input: Value,
        out_hw: Sequence[int],
        scales: Sequence[float],
        mode: str = "nearest",
        coordinates: str = "half_pixel",
        nearest: str = "round_prefer_floor",
    ):
        n, c = shape_of(input)[:2]
        super().__init__(
            operands=[input],
            result_types=[with_shape(input, (n, c, *out_hw))],
            properties=self.resize_properties(mode, coordinates, nearest, scales),
        )
        self.verify_()  # like the other builders, reject what the verifier would

    def result_shape(self) -> Shape:
        shape = self.checked_resize_shape()
        element_type = tensor_type(self.input).element_type
        if not is_float_type(element_type) and self.mode.data != "nearest":
            raise VerifyException(
                f"nn.resize: {self.mode.data} mode interpolates, which {element_type} data "
                "cannot do exactly; resize quantized data in nearest mode or dequantize first"
            )
        return shape


@irdl_op_definition
class ChannelShuffleOp(NNOp):
    """ShuffleNet's channel shuffle: the C channels seen as a [groups, C / groups] matrix,
    transposed; result channel j * groups + i is input channel i * (C / groups) + j."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data

    name = "nn.channel_shuffle"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$input `groups` $groups attr-dict `:` type($input)"

    def __init__(self, input: Value, groups: int):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties={"groups": IntegerAttr(groups, i64)},
        )
        self.verify_()

    def result_shape(self) -> Shape:
        return channel_shuffle_shape(shape_of(self.input), self.groups.value.data)


@irdl_op_definition
class ExpandOp(NNOp):
    """ONNX Expand: the input broadcast (numpy's rules) to the result's shape, which must be
    the broadcast of the input's shape and itself."""

    ELEMENTS: ClassVar[str] = "any"  # moves or selects: exact on quantized data
    NON_NUMERIC: ClassVar[bool] = True  # masks and indices move like any other data

    name = "nn.expand"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: Value, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[with_shape(input, shape)])
        self.verify_()

    def result_shape(self) -> Shape:
        x, out = shape_of(self.input), shape_of(self.output)
        if broadcast_shapes(self.name, x, out) != out:
            raise VerifyException(
                f"nn.expand: {list(x)} broadcast to {list(out)} gives "
                f"{list(broadcast_shapes(self.name, x, out))}, not the result shape"
            )
        return out


@irdl_op_definition
class GatherOp(NNOp):
    """ONNX Gather with indices known only at run time: `data` indexed along `axis` by every
    element of `indices` (i64 or i32; -size..size-1, negative ones counted from the end). The
    result's shape is data's before `axis`, then indices', then data's after `axis`:

        %x = nn.gather %table, %ids axis 0 : (tensor<1000x128xf32>, tensor<1x32xi64>)
                                             -> tensor<1x32x128xf32>

    An index out of range is an error at run time, named at the op (in inline constant
    indices, the verifier's). The importer makes
    ONNX Gather of floats at constant indices a `nn.slice` (and a concat) instead, which the
    layout passes understand; of masks or indices, and GatherND, this op."""

    ELEMENTS: ClassVar[str] = "any"  # moves elements: exact on quantized data

    name = "nn.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = (
        "$data `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, data: Value, indices: Value, axis: int):
        shape = gather_shape(shape_of(data), shape_of(indices), axis)
        super().__init__(
            operands=[data, indices],
            result_types=[TensorType(tensor_type(data).element_type, shape)],
            properties={"axis": IntegerAttr(axis, i64)},
        )
        self.verify_()

    def result_shape(self) -> Shape:
        return gather_shape(shape_of(self.data), shape_of(self.indices), self.axis.value.data)

    def verify_(self) -> None:
        super().verify_()
        _verify_constant_indices(self, self.indices, self.data)

    def verify_element_types(self) -> None:
        _verify_indexing_types(self.name, self.indices, self.data)
        data, out = tensor_type(self.data).element_type, tensor_type(self.output).element_type
        if out != data:
            raise VerifyException(
                f"nn.gather: the result has the data's element type, {data}; got {out}"
            )


@irdl_op_definition
class ScatterOp(NNOp):
    """`nn.gather`'s inverse, torch's index_copy: `data` with its slices along `axis` at
    `indices` (i64 or i32, a vector computed at run time; negative ones counted from the end)
    replaced by `updates`, whose shape is data's with that axis' size the number of indices:

        %c = nn.scatter %cache, %position, %kv axis 2 : (tensor<1x4x64x16xf32>,
             tensor<1xi64>, tensor<1x4x1x16xf32>) -> tensor<1x4x64x16xf32>

    A key/value cache written at the position of the step (ONNX ScatterND and ScatterElements
    at indices computed at run time). Where an index repeats, the last update is written;
    with a `reduction` (ONNX's add, mul, max, min: torch's index_add and scatter_reduce), each
    update is combined with what is there instead, one after another, so that repeated
    indices accumulate. An index out of range is an error at run time, named at the op. The
    result may be written over `data`."""

    ELEMENTS: ClassVar[str] = "any"  # moves elements: exact on quantized data
    REDUCTIONS: ClassVar[tuple[str, ...]] = ("add", "mul", "max", "min")

    name = "nn.scatter"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    reduction = opt_prop_def(StringAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$data `,` $indices `,` $updates `axis` $axis (`reduction` $reduction^)? attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self, data: Value, indices: Value, updates: Value, axis: int, reduction: str | None = None
    ):
        properties: dict[str, Attribute] = {"axis": IntegerAttr(axis, i64)}
        if reduction is not None:
            properties["reduction"] = StringAttr(reduction)
        super().__init__(
            operands=[data, indices, updates],
            result_types=[tensor_type(data)],
            properties=properties,
        )
        self.verify_()

    def verify_(self) -> None:
        super().verify_()
        _verify_constant_indices(self, self.indices, self.data)

    @property
    def combined(self) -> str | None:
        """The reduction, or None where updates replace the data."""
        return None if self.reduction is None else self.reduction.data

    def result_shape(self) -> Shape:
        data, indices = shape_of(self.data), shape_of(self.indices)
        if len(indices) != 1:
            raise VerifyException(
                f"nn.scatter: the indices are a vector, got shape {list(indices)}"
            )
        axis = self.axis.value.data
        wanted = gather_shape(data, indices, axis, self.name)
        if shape_of(self.updates) != wanted:
            raise VerifyException(
                f"nn.scatter: updates of shape {list(shape_of(self.updates))} for data of shape "
                f"{list(data)} at {indices[0]} indices along axis {axis}; expected "
                f"{list(wanted)}"
            )
        return data

    def verify_element_types(self) -> None:
        _verify_indexing_types(self.name, self.indices, self.data)
        data = tensor_type(self.data).element_type
        if self.combined is not None:
            if self.combined not in self.REDUCTIONS:
                raise VerifyException(
                    f"nn.scatter: unknown reduction '{self.combined}' (add, mul, max or min)"
                )
            if not (is_float_type(data) or data in ARITHMETIC_INTEGER_TYPES):
                raise VerifyException(
                    f"nn.scatter: reduction '{self.combined}' computes on floats, i32 or i64, "
                    f"got {data} data"
                )
        for name, value in (("updates have", self.updates), ("result has", self.output)):
            if tensor_type(value).element_type != data:
                raise VerifyException(
                    f"nn.scatter: the {name} the data's element type, {data}; got "
                    f"{tensor_type(value).element_type}"
                )


def _verify_constant_indices(op: NNOp, indices: SSAValue, data: SSAValue) -> None:
    """Inline constant indices of nn.gather and nn.scatter are checked here, not when the op
    runs: out of range, the IR itself is wrong (a run-time index is checked by the kernels)."""
    owner = indices.owner
    if not isinstance(owner, ConstantOp) or owner.value is None:
        return
    axis = op.properties["axis"].value.data  # type: ignore[attr-defined]
    values, size = owner.inline_array(), shape_of(data)[axis]
    outside = (values < -size) | (values >= size)
    if outside.any():
        where = [int(i) for i in np.argwhere(outside)[0]]
        raise VerifyException(
            f"{op.name}: constant index {int(values[tuple(where)])} at {where} is out of "
            f"range for axis {axis} of size {size} (-{size} to {size - 1})"
        )


def _verify_indexing_types(name: str, indices: SSAValue, data: SSAValue) -> None:
    """nn.gather's and nn.scatter's indices are i64 or i32; their data any type nn holds."""
    index_type = tensor_type(indices).element_type
    if index_type not in (i64, i32):
        raise VerifyException(f"{name}: the indices (operand 1) are i64 or i32, got {index_type}")
    element = tensor_type(data).element_type
    if not (is_float_type(element) or element in (*INTEGER_TYPES, *NON_NUMERIC_TYPES)):
        raise VerifyException(f"{name}: cannot index {element} data")


def gather_shape(data: Shape, indices: Shape, axis: int, name: str = "nn.gather") -> Shape:
    """The shape of `data` gathered along `axis` (0 <= axis < rank) by indices of shape
    `indices`."""
    if not data:
        raise VerifyException(f"{name}: the data is a scalar (rank 0), which has no axis")
    if not 0 <= axis < len(data):
        raise VerifyException(
            f"{name}: axis {axis} is not an axis of the rank-{len(data)} data (0 to "
            f"{len(data) - 1})"
        )
    return (*data[:axis], *indices, *data[axis + 1 :])
