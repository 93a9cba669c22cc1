"""Shape arithmetic folded at import, reshape-only data ops on activations, and fixed input
shapes: ONNX models built the way torch's exporters write them (classic opset 17, dynamo
opset 18, and the ONNX model zoo's opset 9), each checked against onnxruntime through every
target, padding on and off, interpreter and generated module; and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    check_against_onnxruntime,
    everywhere,
    onnx_file,
    run_in_process,
)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(3)


def model_of(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "exported",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name))


def weight(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def ops_of(model: onnx.ModelProto) -> list[str]:
    function = import_model(model).module.body.block.first_op
    return [op.name for op in function.body.block.ops]


# ------------------------------------------------------------------ exporter patterns
def channel_shuffle_classic() -> onnx.ModelProto:
    """torchvision's channel_shuffle as the classic exporter writes it (opset 17):
    x.size() as Shape -> Gather, channels // groups as Div, view() shapes as Unsqueeze ->
    Concat, then Reshape -> Transpose -> Reshape."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[1, 1])]
    for axis, name in enumerate(["n", "c", "h", "width"]):
        nodes += [
            const(f"i{name}", np.array(axis, np.int64)),
            helper.make_node("Gather", ["s", f"i{name}"], [name], axis=0),
            helper.make_node("Unsqueeze", [name, "zero"], [f"{name}1"]),
        ]
    nodes = [
        nodes[0],
        helper.make_node("Shape", ["a"], ["s"]),
        const("zero", ints(0)),
        *nodes[1:],
        const("groups", np.array(2, np.int64)),
        helper.make_node("Div", ["c", "groups"], ["per_group"]),
        helper.make_node("Unsqueeze", ["per_group", "zero"], ["per_group1"]),
        const("groups1", ints(2)),
        helper.make_node(
            "Concat", ["n1", "groups1", "per_group1", "h1", "width1"], ["shape5"], axis=0
        ),
        helper.make_node("Reshape", ["a", "shape5"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
        const("minus_one", ints(-1)),
        helper.make_node("Concat", ["n1", "minus_one", "h1", "width1"], ["shape4"], axis=0),
        helper.make_node("Reshape", ["t", "shape4"], ["y"]),
    ]
    return model_of(nodes, {"x": [1, 3, 5, 4]}, ["y"], {"w": weight(10, 3, 1, 1)})


def flatten_dynamo() -> onnx.ModelProto:
    """torch.flatten(x, 1) as the dynamo exporter writes it (opset 18): Shape with start/end,
    Concat with -1, Reshape, then a linear layer."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Shape", ["a"], ["batch"], start=0, end=1),
        helper.make_node("Concat", ["batch", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["a", "shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w", "b"], ["y"], transB=1),
    ]
    inits = {"minus_one": ints(-1), "w": weight(7, 60), "b": weight(7)}
    return model_of(nodes, {"x": [2, 5, 3, 4]}, ["y"], inits, opset=18)


def flatten_dynamo_slice() -> onnx.ModelProto:
    """The same through Shape -> Slice (older dynamo traces), with Squeeze/Unsqueeze."""
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["a"]),
        helper.make_node("Shape", ["a"], ["s"]),
        helper.make_node("Slice", ["s", "start", "end", "axis"], ["batch"]),
        helper.make_node("Concat", ["batch", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["a", "shape"], ["y"]),
    ]
    inits = {"start": ints(0), "end": ints(1), "axis": ints(0), "minus_one": ints(-1)}
    return model_of(nodes, {"x": [3, 5, 2]}, ["y"], inits, opset=18)


def class_token_classic() -> onnx.ModelProto:
    """vit_b_16's class token, classic exporter: class_token.expand(n, -1, -1) as
    Shape -> Gather -> Unsqueeze -> Concat, then ConstantOfShape / Mul / Equal / Where to
    replace -1 by 1, Expand of the parameter, Concat with the patch embeddings."""
    one = numpy_helper.from_array(ints(1), "one")
    nodes = [
        helper.make_node("Relu", ["x"], ["patches"]),
        helper.make_node("Shape", ["patches"], ["s"]),
        helper.make_node("Gather", ["s", "zero_scalar"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one", "minus_one"], ["shape"], axis=0),
        helper.make_node("Shape", ["shape"], ["rank"]),
        helper.make_node("ConstantOfShape", ["rank"], ["ones"], value=one),
        helper.make_node("Mul", ["ones", "minus_one"], ["minus_ones"]),
        helper.make_node("Equal", ["shape", "minus_ones"], ["is_minus_one"]),
        helper.make_node("Where", ["is_minus_one", "ones", "shape"], ["expand_shape"]),
        helper.make_node("Expand", ["class_token", "expand_shape"], ["tokens"]),
        helper.make_node("Concat", ["tokens", "patches"], ["y"], axis=1),
    ]
    inits = {
        "zero_scalar": np.array(0, np.int64),
        "zero": ints(0),
        "minus_one": ints(-1),
        "class_token": weight(1, 1, 6),
    }
    return model_of(nodes, {"x": [2, 4, 6]}, ["y"], inits)


def constant_of_shape_weights_opset9() -> onnx.ModelProto:
    """The ONNX model zoo's opset-9 models: weights as Constant nodes, a zero bias as
    ConstantOfShape, Unsqueeze/Squeeze with axes attributes."""
    bias_value = numpy_helper.from_array(np.array([0.25], np.float32), "v")
    nodes = [
        const("w", weight(9, 3, 3, 3)),
        const("bias_shape", ints(9)),
        helper.make_node("ConstantOfShape", ["bias_shape"], ["bias"], value=bias_value),
        helper.make_node("Conv", ["x", "w", "bias"], ["c"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Unsqueeze", ["r"], ["u"], axes=[0]),
        helper.make_node("Squeeze", ["u"], ["y"], axes=[0]),
    ]
    return model_of(nodes, {"x": [1, 3, 6, 6]}, ["y"], opset=9)


def squeeze_unsqueeze(opset: int) -> onnx.ModelProto:
    """Squeeze/Unsqueeze of activations: axes attributes before opset 13, inputs from 13."""
    if opset >= 13:
        nodes = [
            helper.make_node("Unsqueeze", ["a", "axes_u"], ["u"]),
            helper.make_node("Squeeze", ["u2", "axes_s"], ["s"]),
            helper.make_node("Squeeze", ["s"], ["y"]),  # every axis of size 1
        ]
        inits = {"axes_u": ints(1, -1), "axes_s": ints(1)}
    else:
        nodes = [
            helper.make_node("Unsqueeze", ["a"], ["u"], axes=[1, -1]),
            helper.make_node("Squeeze", ["u2"], ["s"], axes=[1]),
            helper.make_node("Squeeze", ["s"], ["y"]),
        ]
        inits = {}
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        nodes[0],
        helper.make_node("Cast", ["u"], ["uc"], to=F),
        helper.make_node("Identity", ["uc"], ["u2"]),
        *nodes[1:],
    ]
    return model_of(nodes, {"x": [5, 3]}, ["y"], inits, opset=opset)


def batched_matmul_reshape() -> onnx.ModelProto:
    """Reshape with a shape computed from two Shapes and arithmetic (Mul of dims), and a
    Range / ReduceProd / Tile chain folded into a float constant added to the result."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["hw"], axis=0),
        helper.make_node("ReduceProd", ["hw"], ["area"], keepdims=1),
        helper.make_node("Slice", ["s", "zero", "two", "zero"], ["nc"]),
        helper.make_node("Concat", ["nc", "area"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["flat"]),
        helper.make_node("Range", ["start", "area_scalar", "step"], ["positions"]),
        helper.make_node("Cast", ["positions"], ["positions_f"], to=F),
        helper.make_node("Tile", ["positions_f", "reps"], ["tiled"]),
        helper.make_node("Add", ["flat", "tiled"], ["y"]),
    ]
    inits = {
        "idx": ints(2, 3),
        "zero": ints(0),
        "two": ints(2),
        "start": np.array(0.0, np.float32),
        "area_scalar": np.array(12.0, np.float32),
        "step": np.array(1.0, np.float32),
        "reps": ints(1),
    }
    return model_of(nodes, {"x": [1, 5, 3, 4]}, ["y"], inits)


def shifted_window_mask() -> onnx.ModelProto:
    """swin_t's attention mask as the exporters write it: Range -> Mod -> Equal -> Not ->
    Where of two float constants, added to the attention scores."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["scores"]),
        helper.make_node("Range", ["zero", "six", "one"], ["positions"]),
        helper.make_node("Mod", ["positions", "three"], ["window"]),
        helper.make_node("Equal", ["window", "zero"], ["first"]),
        helper.make_node("Not", ["first"], ["masked"]),
        helper.make_node("Where", ["masked", "minus_hundred", "nothing"], ["mask"]),
        helper.make_node("Add", ["scores", "mask"], ["y"]),
    ]
    inits = {
        "w": weight(5, 6),
        **{
            k: np.array(v, np.int64) for k, v in [("zero", 0), ("six", 6), ("one", 1), ("three", 3)]
        },
        "minus_hundred": np.array(-100.0, np.float32),
        "nothing": np.array(0.0, np.float32),
    }
    return model_of(nodes, {"x": [2, 3, 5]}, ["y"], inits)


def pooled_head(dynamo: bool) -> onnx.ModelProto:
    """A classifier head: the classic exporter's x.view(x.size(0), -1) after global pooling
    (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, opset 17), or dynamo's Squeeze of the
    pooled axes (axes an input, opset 18), then the linear layer."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
        helper.make_node("GlobalAveragePool", ["c"], ["p"]),
    ]
    if dynamo:
        nodes += [
            helper.make_node("Squeeze", ["p", "axes"], ["flat"]),
            helper.make_node("MatMul", ["flat", "fc"], ["m"]),
            helper.make_node("Add", ["m", "b"], ["y"]),
        ]
        inits = {"axes": ints(2, 3), "fc": weight(20, 6), "b": weight(6)}
    else:
        nodes += [
            helper.make_node("Shape", ["p"], ["s"]),
            helper.make_node("Gather", ["s", "zero_scalar"], ["n"], axis=0),
            helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
            helper.make_node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
            helper.make_node("Reshape", ["p", "shape"], ["flat"]),
            helper.make_node("Gemm", ["flat", "fc"], ["y"], transB=1),
        ]
        inits = {
            "zero_scalar": np.array(0, np.int64),
            "zero": ints(0),
            "minus_one": ints(-1),
            "fc": weight(6, 20),
        }
    inits["w"] = weight(20, 3, 3, 3)
    return model_of(nodes, {"x": [2, 3, 6, 6]}, ["y"], inits, opset=18 if dynamo else 17)


def buffered_token_types(indices: np.ndarray | None = None) -> onnx.ModelProto:
    """transformers' BERT, ALBERT and ELECTRA called without token type ids: their buffer of
    512 type ids, expanded to the batch, gathered at the positions (GatherElements on axis 1,
    all constants), cast to float here and added. 40 positions, more than the 32 where onnx's
    own reference GatherElements gives a wrong shape; -1 counts from the end."""
    positions = np.arange(40, dtype=np.int64)[None] if indices is None else indices
    positions[0, 5] = -1
    nodes = [
        helper.make_node("Expand", ["buffer", "shape"], ["types"]),
        helper.make_node("GatherElements", ["types", "positions"], ["picked"], axis=1),
        helper.make_node("Cast", ["picked"], ["pf"], to=F),
        helper.make_node("Add", ["x", "pf"], ["y"]),
    ]
    inits = {
        "buffer": (np.arange(512, dtype=np.int64) % 3)[None],
        "shape": ints(1, 1),
        "positions": positions,
    }
    return model_of(nodes, {"x": [1, 40]}, ["y"], inits)


PATTERNS = {
    "buffered_token_types": buffered_token_types,
    "pooled_head_classic": lambda: pooled_head(dynamo=False),
    "pooled_head_dynamo": lambda: pooled_head(dynamo=True),
    "shifted_window_mask": shifted_window_mask,
    "channel_shuffle_classic": channel_shuffle_classic,
    "flatten_dynamo": flatten_dynamo,
    "flatten_dynamo_slice": flatten_dynamo_slice,
    "class_token_classic": class_token_classic,
    "constant_of_shape_weights_opset9": constant_of_shape_weights_opset9,
    "squeeze_unsqueeze_opset11": lambda: squeeze_unsqueeze(11),
    "squeeze_unsqueeze_opset13": lambda: squeeze_unsqueeze(13),
    "reshape_with_computed_shape": batched_matmul_reshape,
}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_exporter_pattern_matches_onnxruntime(pattern: str, tmp_path: Path) -> None:
    check_against_onnxruntime(PATTERNS[pattern](), tmp_path)


def test_shape_arithmetic_leaves_only_tensor_ops() -> None:
    """The shuffle's 20-odd shape nodes fold: what is left is the tensor computation."""
    assert ops_of(channel_shuffle_classic()) == [
        "nn.constant",
        "nn.conv2d",
        "nn.reshape",
        "nn.transpose",
        "nn.reshape",
        "func.return",
    ]


def test_class_token_is_one_folded_constant() -> None:
    assert ops_of(class_token_classic()) == [
        "nn.relu",
        "nn.constant",
        "nn.concat",
        "func.return",
    ]


# ------------------------------------------------------------------ refusals
def refusal(model: onnx.ModelProto, **kwargs: object) -> str:
    with pytest.raises(UserError) as error:
        import_model(model, **kwargs)
    message = error.value.message
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("nodes", "what"),
    [
        ([helper.make_node("ConstantOfShape", ["huge"], ["c"])], "ConstantOfShape"),
        ([helper.make_node("Range", ["zero", "limit", "one"], ["c"])], "Range"),
    ],
)
def test_too_large_folded_constant_is_refused(nodes: list[onnx.NodeProto], what: str) -> None:
    inits = {
        "huge": ints(100_000, 100_000),
        "zero": np.array(0, np.int64),
        "limit": np.array(10**12, np.int64),
        "one": np.array(1, np.int64),
    }
    nodes = [nodes[0], helper.make_node("Shape", ["c"], ["n"]), *nodes[1:]]
    nodes += [helper.make_node("Cast", ["n"], ["nf"], to=F)]
    nodes += [helper.make_node("Add", ["x", "nf"], ["y"])]
    message = refusal(model_of(nodes, {"x": [2]}, ["y"], inits))
    assert message.startswith(f"node #0 ({what}) producing 'c': folding it at import")
    assert "a folded constant may take" in message


def test_folded_gather_elements_is_numpy_take_along_axis() -> None:
    """The 40 gathered type ids are the buffer's at the positions, the last for -1."""
    model = import_model(buffered_token_types(), inline_limit=1 << 20)
    function = model.module.body.block.first_op
    (constant,) = (op for op in function.body.block.ops if isinstance(op, nn.ConstantOp))
    expected = np.arange(40) % 3
    expected[5] = 511 % 3
    np.testing.assert_array_equal(constant.inline_array().ravel(), expected)


def test_folded_gather_elements_out_of_range_is_refused() -> None:
    """onnx's reference wraps such an index around the axis; the fold refuses it."""
    positions = np.arange(40, dtype=np.int64)[None]
    positions[0, 7] = 512
    message = refusal(buffered_token_types(positions))
    assert "(GatherElements)" in message
    assert "an index is out of range for axis 1 of size 512" in message


def test_fold_that_shape_inference_cannot_size_is_refused() -> None:
    """onnx's shape inference does not size a float16 Range (a type of recent opsets): it is
    not evaluated."""
    halves = {k: np.array(v, np.float16) for k, v in [("a", 0), ("b", 1e4), ("d", 1)]}
    nodes = [
        helper.make_node("Range", ["a", "b", "d"], ["r"], name="positions"),
        helper.make_node("Cast", ["r"], ["rf"], to=F),
        helper.make_node("Add", ["x", "rf"], ["y"]),
    ]
    model = model_of(nodes, {"x": [1]}, ["y"], halves, opset=onnx.defs.onnx_opset_version())
    assert refusal(model) == (
        "node 'positions' (Range): cannot fold it at import: onnx's shape inference does not "
        "tell the size of its result before it is computed"
    )


def test_operator_without_converter_on_activations_is_refused() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Hardmax", ["a"], ["y"], name="pick"),
    ]
    message = refusal(model_of(nodes, {"x": [2, 5]}, ["y"]))
    assert message.startswith(
        "node 'pick' (Hardmax): unsupported operator 'Hardmax' (not folded at import: "
        "its input 'a' is computed at run time); nnlayout imports "
    )


def test_random_operator_is_not_folded() -> None:
    nodes = [
        helper.make_node("RandomNormal", [], ["noise"], shape=[2], name="noise"),
        helper.make_node("Add", ["x", "noise"], ["y"]),
    ]
    message = refusal(model_of(nodes, {"x": [2]}, ["y"]))
    assert message.startswith(
        "node 'noise' (RandomNormal): unsupported operator 'RandomNormal' "
        "(not folded at import: its result is random)"
    )


def test_integer_folded_constant_returned_is_an_index_constant() -> None:
    """A shape the graph returns is an i64 constant (int64 tensors are indices), returned
    as int64 by every target."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Concat", ["a", "a"], ["y"], axis=0),
    ]
    model = model_of(nodes, {"x": [2]}, ["y", "s"])
    model.graph.output[1].type.tensor_type.elem_type = I64
    module = import_model(model).module
    x = np.array([1.0, -2.0], np.float32)
    for target, padding, _, (y, shape) in everywhere(module, [x]):
        assert shape.dtype == np.int64 and shape.tolist() == [2], (target, padding)
        np.testing.assert_array_equal(y, [1, 0, 1, 0])


def test_cast_of_activation_to_integer_is_refused() -> None:
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32, name="to_int")]
    model = model_of(nodes, {"x": [2]}, ["y"])
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT32
    assert refusal(model) == (
        "node 'to_int' (Cast): Cast of 'x', computed at run time, from f32 to INT32; nnlayout "
        "computes on float32 (quantized data: a cast keeps a value's type, or makes an "
        "integer float32), on masks and on int32 and int64 indices (a cast makes a mask or "
        "either of them int32 or int64)"
    )


@pytest.mark.parametrize("to", ["UINT8", "INT8"])
def test_cast_of_quantized_data_to_its_own_type_is_the_value(to: str) -> None:
    """torch's quantized exports cast every QuantizeLinear's result to its own type: the
    value itself; a cast to another integer type is refused, naming both types."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("Cast", ["q"], ["c"], to=getattr(TensorProto, to), name="cast"),
        helper.make_node("DequantizeLinear", ["c", "s", "z"], ["y"]),
    ]
    if to == "INT8":
        nodes.pop()  # the cast's result is the output
    model = model_of(nodes, {"x": [2]}, ["y" if to == "UINT8" else "c"])
    if to == "INT8":
        model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT8
    model.graph.initializer.extend(
        [numpy_helper.from_array(np.float32(0.5), "s"), numpy_helper.from_array(np.uint8(3), "z")]
    )
    if to == "UINT8":
        module = import_model(model).module
        assert [op.name for op in module.walk() if op.name.startswith("nn.")] == [
            "nn.quantize",
            "nn.dequantize",
        ]
    else:
        assert refusal(model) == (
            "node 'cast' (Cast): Cast of 'q', computed at run time, from ui8 to INT8; nnlayout "
            "computes on float32 (quantized data: a cast keeps a value's type, or makes an "
            "integer float32), on masks and on int32 and int64 indices (a cast makes a mask or "
            "either of them int32 or int64)"
        )


def test_squeeze_of_a_non_unit_axis_is_refused() -> None:
    nodes = [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")]
    model = model_of(nodes, {"x": [2, 1]}, ["y"], {"axes": ints(0)})
    # onnx's shape inference refuses it first, or the converter does: one line either way
    assert "sq" in refusal(model) or "invalid ONNX model" in refusal(model)


# ------------------------------------------------------------------ input shapes
def dynamic_batch() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
        helper.make_node("Shape", ["c"], ["batch"], start=0, end=1),
        helper.make_node("Concat", ["batch", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["c", "shape"], ["y"]),
    ]
    inits = {"w": weight(5, 3, 1, 1), "minus_one": ints(-1)}
    return model_of(nodes, {"x": ["batch", 3, 4, None]}, ["y"], inits, opset=18)


def test_input_shapes_fix_symbolic_dimensions() -> None:
    module = import_model(dynamic_batch(), input_shapes={"x": [2, 3, 4, 4]}).module
    function = module.body.block.first_op
    assert nn.shape_of(function.body.block.args[0]) == (2, 3, 4, 4)
    assert function.function_type.outputs.data[0].get_shape() == (2, 80)


def test_symbolic_input_refusal_names_the_option() -> None:
    message = refusal(dynamic_batch())
    assert message.startswith("graph input 'x' has a symbolic dimension 'batch' (axis 0)")
    assert "--input-shape (e.g. x=1x3x4x1;" in message


@pytest.mark.parametrize(
    ("shapes", "expected"),
    [
        ({"y": [1]}, "an input shape is given for 'y', which is not an input of the model"),
        ({"x": [2, 5, 4, 4]}, "has size 5 on axis 1, but the model's input has size 3 there"),
        ({"x": [2, 3, 4]}, "has rank 3, but the model's input has rank 4"),
        ({"x": [0, 3, 4, 4]}, "is [0, 3, 4, 4]; it must be a list of positive integers"),
        ({"x": "2x3x4x4"}, "it must be a list of positive integers"),
        ({"x": [2.0, 3, 4, 4]}, "it must be a list of positive integers"),
        ({"x": [2**62, 3, 4, 2**62]}, "graph input 'x'"),
    ],
)
def test_bad_input_shapes_are_refused(shapes: dict, expected: str) -> None:
    assert expected in refusal(dynamic_batch(), input_shapes=shapes)


def test_cli_input_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = onnx_file(dynamic_batch())(tmp_path)
    status, _, err = run_in_process(
        "nnlayout-import", [*args, "--input-shape", "x=2x3x4x4"], capsys, monkeypatch
    )
    assert status == 0, err
    assert "tensor<2x3x4x4xf32>" in (tmp_path / "m.mlir").read_text()
    status, out, err = run_in_process(
        "nnlayout-import", [*args, "--input-shape", "image=2x3x4x4"], capsys, monkeypatch
    )
    assert_one_clean_error(status, out, err, "error: an input shape is given for 'image'")


def test_cli_refuses_a_too_large_fold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = [
        helper.make_node("ConstantOfShape", ["huge"], ["c"], name="fill"),
        helper.make_node("Shape", ["c"], ["n"]),
        helper.make_node("Cast", ["n"], ["nf"], to=F),
        helper.make_node("Add", ["x", "nf"], ["y"]),
    ]
    model = model_of(nodes, {"x": [2]}, ["y"], {"huge": ints(10**5, 10**5)})
    status, out, err = run_in_process(
        "nnlayout-import", onnx_file(model)(tmp_path), capsys, monkeypatch
    )
    assert_one_clean_error(
        status, out, err, "error: node 'fill' (ConstantOfShape): folding it at import would make"
    )


@pytest.mark.parametrize("value", ["x=1x3xNx4", "x=", "=1x3", "x=1x0x4x4", "x:1x3x4x4"])
def test_cli_input_shape_syntax(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit) as exit_status:
        run_in_process("nnlayout-import", ["m.onnx", "--input-shape", value], capsys, monkeypatch)
    assert exit_status.value.code == 2  # argparse's status for a malformed option
    assert (
        "error: argument --input-shape: expected NAME=DIMS with positive sizes separated by "
        f"'x' (e.g. images=1x3x224x224), got '{value}'"
    ) in capsys.readouterr().err


def test_cli_help_documents_input_shape(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit):
        run_in_process("nnlayout-import", ["--help"], capsys, monkeypatch)
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--input-shape NAME=DIMS give graph input NAME the sizes DIMS" in help_text
