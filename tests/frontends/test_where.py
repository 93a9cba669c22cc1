"""Comparisons and Where computed at run time (`nn.compare`, `nn.where`): torch's
`masked_fill` of attention scores with a constant causal mask, as both exporters write it
(the classic one: Where(Equal(mask, 0), -inf, scores), the Equal folded at import; the dynamo
one: a bool mask initializer), `torch.where(x > 0, x, 0.1 * x)` after a convolution with
padded channels, every comparison with broadcasting and NaN, a bool graph input, and
onnxruntime's QLinearWhere. Each against onnxruntime on every target, padding on and off,
interpreter and generated module; the padding trap: a Where that writes 0.5 where its mask is
false must not put 0.5 in padding lanes that a sum over channels then reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp, i1

from nnlayout.dialects import nn
from nnlayout.dialects.layout import encoding_name
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    check_against_onnxruntime,
    everywhere,
    onnx_file,
    onnxruntime_outputs,
    random_inputs,
    tool_process,
    typed_model,
)

T = 8  # sequence length


def masked_attention(exporter: str) -> onnx.ModelProto:
    """x [1, 2, T, 4]: softmax(masked(x @ x^T * 0.5)) @ x, the mask causal, -inf above the
    diagonal, written as `exporter` writes masked_fill."""
    causal = np.tril(np.ones((T, T), np.float32)).reshape(1, 1, T, T)
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["x", "xt"], ["s"]),
        helper.make_node("Mul", ["s", "half"], ["scores"]),
    ]
    constants: dict[str, np.ndarray] = {"half": np.float32(0.5), "minf": np.float32(-np.inf)}
    if exporter == "classic":
        nodes.append(helper.make_node("Equal", ["causal", "zero"], ["mask"]))
        constants |= {"causal": causal, "zero": np.float32(0)}
    else:
        constants["mask"] = causal == 0
    nodes += [
        helper.make_node("Where", ["mask", "minf", "scores"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "x"], ["y"]),
    ]
    x = [1, 2, T, 4]
    return typed_model(
        nodes, {"x": (TensorProto.FLOAT, x)}, {"y": (TensorProto.FLOAT, x)}, constants
    )


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_masked_attention_runs_like_onnxruntime(tmp_path: Path, exporter: str) -> None:
    module = check_against_onnxruntime(masked_attention(exporter), tmp_path)
    wheres = [op for op in module.walk() if isinstance(op, nn.WhereOp)]
    assert len(wheres) == 1
    mask = wheres[0].mask.owner
    assert isinstance(mask, nn.ConstantOp)  # the classic Equal folded at import
    assert nn.tensor_type(mask.output).element_type == i1


def everywhere_close(
    module: ModuleOp, inputs: list[np.ndarray], want: np.ndarray, channel: int | None = None
) -> Iterator[tuple[str, bool, ModuleOp]]:
    """`module` on every target, padding on and off, interpreter and generated module: each
    result (its `channel` alone, if given) within 1e-4 of `want`'s largest magnitude; yields
    (target, padding, compiled module) after each check."""
    pick = (lambda a: a) if channel is None else (lambda a: a[:, channel])
    for target, padding, compiled, (got,) in everywhere(module, inputs):
        np.testing.assert_allclose(
            pick(got),
            pick(want),
            rtol=0,
            atol=1e-4 * np.abs(want).max(),
            err_msg=f"{target} {padding}",
        )
        yield target, padding, compiled


def leaky_by_where(fill: str) -> onnx.ModelProto:
    """conv(3 -> 5, padded to the block) -> where(c > 0, c, `fill`) -> ReduceSum over the
    channels and conv(5 -> 4), concatenated: `fill` is 0.1 * c (torch.where's leaky ReLU) or
    the constant 0.5, which padding lanes must not hold when the sum over channels reads."""
    rng = np.random.default_rng(3)
    constants = {
        "w1": rng.standard_normal((5, 3, 3, 3)).astype(np.float32),
        "w2": rng.standard_normal((4, 5, 1, 1)).astype(np.float32),
        "zero": np.float32(0),
        "tenth": np.float32(0.1),
        "half": np.float32(0.5),
        "axes": np.array([1], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Greater", ["c", "zero"], ["positive"]),
        helper.make_node("Mul", ["c", "tenth"], ["scaled"]),
        helper.make_node(
            "Where", ["positive", "c", "scaled" if fill == "leaky" else "half"], ["a"]
        ),
        helper.make_node("ReduceSum", ["a", "axes"], ["sum"], keepdims=1),
        helper.make_node("Conv", ["a", "w2"], ["d"]),
        helper.make_node("Concat", ["d", "sum"], ["y"], axis=1),
    ]
    return typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 3, 6, 6])},
        {"y": (TensorProto.FLOAT, [1, 5, 6, 6])},
        constants,
    )


@pytest.mark.parametrize("fill", ["leaky", "half"])
def test_where_between_padded_convolutions_runs_like_onnxruntime(tmp_path: Path, fill: str) -> None:
    module = check_against_onnxruntime(leaky_by_where(fill), tmp_path, seed=1)
    assert any(isinstance(op, nn.CompareOp) for op in module.walk())


def test_where_of_a_constant_never_leaks_into_padding_lanes() -> None:
    """The sum over channels of where(c > 0, c, 0.5) on every target, padding on and off:
    the same as the interpreter's on the imported module, within rounding."""
    from nnlayout.frontends.onnx import import_model
    from nnlayout.runtime.interpreter import Interpreter

    model = leaky_by_where("half")
    module = import_model(model, inline_limit=1 << 20).module
    inputs = random_inputs(module, 2)
    (want,) = Interpreter(module).run(inputs)
    (ort,) = onnxruntime_outputs(model, inputs)
    np.testing.assert_allclose(want, ort, rtol=0, atol=1e-4 * np.abs(ort).max())
    for _ in everywhere_close(module, inputs, want, channel=4):
        pass


def infinite_fill() -> onnx.ModelProto:
    """conv(8 -> 20, padded to the block) -> relu -> + 1 -> where(a > 0.5, a, -inf) -> conv
    (20 -> 16): every real lane is at least 1, so the mask is true on each, and the
    padding lanes' 0 compares false: a where computed blocked writes -inf into them, and the
    convolution's zero weights there make 0 * -inf = NaN of every output unless the padding
    lanes are zeroed again."""
    rng = np.random.default_rng(5)
    constants = {
        "w1": rng.standard_normal((20, 8, 3, 3)).astype(np.float32) * 0.2,
        "w2": rng.standard_normal((16, 20, 3, 3)).astype(np.float32) * 0.2,
        "one": np.float32(1),
        "half": np.float32(0.5),
        "minf": np.float32(-np.inf),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Add", ["r", "one"], ["a"]),
        helper.make_node("Greater", ["a", "half"], ["m"]),
        helper.make_node("Where", ["m", "a", "minf"], ["f"]),
        helper.make_node("Conv", ["f", "w2"], ["y"], pads=[1, 1, 1, 1]),
    ]
    return typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 8, 6, 6])},
        {"y": (TensorProto.FLOAT, [1, 16, 6, 6])},
        constants,
    )


def test_an_infinite_fill_never_reaches_padding_lanes() -> None:
    """`infinite_fill` on every target, padding on and off: finite, as onnxruntime's."""
    from nnlayout.frontends.onnx import import_model

    model = infinite_fill()
    module = import_model(model, inline_limit=1 << 20).module
    inputs = random_inputs(module, 3)
    (want,) = onnxruntime_outputs(model, inputs)
    assert np.isfinite(want).all()
    for _ in everywhere_close(module, inputs, want):
        pass


def blocked_selection() -> onnx.ModelProto:
    """Two convolutions (8 -> 20, padded to the block) -> where(p >= q, p, q), a max written
    as a selection, -> conv (20 -> 16): every operand has the result's shape, so the
    comparison and the selection run in the convolutions' blocked layout, where two padding
    zeros compare true."""
    rng = np.random.default_rng(6)
    constants = {
        name: rng.standard_normal(shape).astype(np.float32) * 0.2
        for name, shape in (("w1", (20, 8, 3, 3)), ("w2", (20, 8, 3, 3)), ("w3", (16, 20, 3, 3)))
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["p"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["q"], pads=[1, 1, 1, 1]),
        helper.make_node("GreaterOrEqual", ["p", "q"], ["m"]),
        helper.make_node("Where", ["m", "p", "q"], ["f"]),
        helper.make_node("Conv", ["f", "w3"], ["y"], pads=[1, 1, 1, 1]),
    ]
    return typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 8, 6, 6])},
        {"y": (TensorProto.FLOAT, [1, 16, 6, 6])},
        constants,
    )


def test_a_selection_between_blocked_convolutions_runs_blocked() -> None:
    """`blocked_selection` on every target, padding on and off, as onnxruntime's; on avx512
    the comparison and the selection run in NCHW16c (no reorder to plain between the
    convolutions), on host in NHWC."""
    from nnlayout.frontends.onnx import import_model

    model = blocked_selection()
    module = import_model(model, inline_limit=1 << 20).module
    inputs = random_inputs(module, 4)
    (want,) = onnxruntime_outputs(model, inputs)
    layouts = {}
    for target, padding, compiled in everywhere_close(module, inputs, want):
        for op in compiled.walk():
            if isinstance(op, nn.CompareOp | nn.WhereOp):
                layouts[target, padding, op.name] = encoding_name(op.results[0].type)
    assert layouts["avx512", True, "nn.where"] == "NCHW16c", layouts
    assert layouts["avx512", True, "nn.compare"] == "NCHW16c", layouts
    assert layouts["host", True, "nn.where"] == "NHWC", layouts


PREDICATES = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]


def comparison(op_type: str) -> onnx.ModelProto:
    """where(a <op> b, a, -b): a [1, 4, 3, 3] against b [4, 1, 1] (broadcast) holding a NaN
    (every comparison with it false) and a value of a (equality holds)."""
    nodes = [
        helper.make_node("Add", ["b0", "shift"], ["b"]),
        helper.make_node(op_type, ["a", "b"], ["m"]),
        helper.make_node("Neg", ["b"], ["nb"]),
        helper.make_node("Where", ["m", "a", "nb"], ["y"]),
    ]
    b0 = np.array([0.0, np.nan, 0.5, -0.25], np.float32).reshape(4, 1, 1)
    return typed_model(
        nodes,
        {"a": (TensorProto.FLOAT, [1, 4, 3, 3]), "shift": (TensorProto.FLOAT, [1])},
        {"y": (TensorProto.FLOAT, [1, 4, 3, 3])},
        {"b0": b0},
    )


@pytest.mark.parametrize("op_type", PREDICATES)
def test_each_comparison_runs_like_onnxruntime(tmp_path: Path, op_type: str) -> None:
    model = comparison(op_type)
    module = check_against_onnxruntime(model, tmp_path, seed=4)
    (compare,) = [op for op in module.walk() if isinstance(op, nn.CompareOp)]
    assert nn.PREDICATES[compare.predicate.data] == op_type
    # Equality is hit: a's inputs equal to b's values (shift 0) give the same as ORT's.
    from nnlayout.runtime.interpreter import Interpreter

    a = np.zeros((1, 4, 3, 3), np.float32)
    a[0, 2] = 0.5
    a[0, 3, 0] = -0.25
    shift = np.zeros(1, np.float32)
    (want,) = onnxruntime_outputs(model, [a, shift])
    (got,) = Interpreter(module).run([a, shift])
    np.testing.assert_array_equal(got, want)


def test_a_bool_graph_input_selects(tmp_path: Path) -> None:
    model = typed_model(
        [helper.make_node("Where", ["m", "a", "b"], ["y"])],
        {
            "m": (TensorProto.BOOL, [1, 1, 5]),
            "a": (TensorProto.FLOAT, [2, 3, 5]),
            "b": (TensorProto.FLOAT, [3, 1]),
        },
        {"y": (TensorProto.FLOAT, [2, 3, 5])},
        {},
    )
    module = check_against_onnxruntime(model, tmp_path, seed=6)
    inputs = random_inputs(module, 6)
    assert inputs[0].dtype == np.bool_ and 0 < inputs[0].sum() < 5  # both ways


def test_a_mask_is_a_graph_output() -> None:
    """Greater's mask returned as it is: bool, exact on every target."""
    from nnlayout.frontends.onnx import import_model

    model = typed_model(
        [helper.make_node("Greater", ["a", "b"], ["m"])],
        {"a": (TensorProto.FLOAT, [1, 4, 3, 3]), "b": (TensorProto.FLOAT, [4, 1, 1])},
        {"m": (TensorProto.BOOL, [1, 4, 3, 3])},
        {},
    )
    module = import_model(model).module
    inputs = random_inputs(module, 7)
    (want,) = onnxruntime_outputs(model, inputs)
    for target, padding, _, (got,) in everywhere(module, inputs):
        assert got.dtype == np.bool_, (target, padding)
        np.testing.assert_array_equal(got, want)


def moved_mask() -> onnx.ModelProto:
    """A run-time mask transposed, reshaped and sliced before its Where, and cast to float
    (torch's `mask.float()`) for a product: x [1, 2, 4, 6]."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["m"]),
        helper.make_node("Transpose", ["m"], ["mt"], perm=[0, 1, 3, 2]),
        helper.make_node("Reshape", ["mt", "shape"], ["mr"]),
        helper.make_node("Slice", ["mr", "starts", "ends", "axes"], ["ms"]),
        helper.make_node("Transpose", ["x"], ["xt0"], perm=[0, 1, 3, 2]),
        helper.make_node("Reshape", ["xt0", "shape"], ["xr"]),
        helper.make_node("Slice", ["xr", "starts", "ends", "axes"], ["xt"]),
        helper.make_node("Where", ["ms", "xt", "zero"], ["w"]),
        helper.make_node("Cast", ["m"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "mf"], ["p"]),
        helper.make_node("ReduceSum", ["p", "axes3"], ["s"], keepdims=0),
        helper.make_node("Reshape", ["s", "flat"], ["sf"]),
        helper.make_node("Reshape", ["w", "flat"], ["wf"]),
        helper.make_node("Concat", ["sf", "wf"], ["y"], axis=0),
    ]
    constants = {
        "zero": np.float32(0),
        "shape": np.array([2, 6, 4], np.int64),
        "starts": np.array([1], np.int64),
        "ends": np.array([5], np.int64),
        "axes": np.array([1], np.int64),
        "axes3": np.array([3], np.int64),
        "flat": np.array([-1], np.int64),
    }
    return typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 2, 4, 6])},
        {"y": (TensorProto.FLOAT, [8 + 32])},
        constants,
    )


def test_a_moved_and_cast_mask_runs_like_onnxruntime(tmp_path: Path) -> None:
    module = check_against_onnxruntime(moved_mask(), tmp_path, seed=9)
    casts = [op for op in module.walk() if isinstance(op, nn.CastOp)]
    assert [nn.tensor_type(op.input).element_type for op in casts] == [i1]


def qlinear_where(zp_type: type) -> onnx.ModelProto:
    """QLinearWhere(a > 0, q(a), q(b)) with three scales and zero points not 0."""
    zps = [zp_type(v if zp_type is np.uint8 else v - 128) for v in (131, 97, 60)]
    constants = {
        "zero": np.float32(0),
        "as": np.float32(0.03),
        "az": zps[0],
        "bs": np.float32(0.05),
        "bz": zps[1],
        "ys": np.float32(0.04),
        "yz": zps[2],
    }
    nodes = [
        helper.make_node("Greater", ["a", "zero"], ["m"]),
        helper.make_node("QuantizeLinear", ["a", "as", "az"], ["qa"]),
        helper.make_node("QuantizeLinear", ["b", "bs", "bz"], ["qb"]),
        helper.make_node(
            "QLinearWhere",
            ["m", "qa", "as", "az", "qb", "bs", "bz", "ys", "yz"],
            ["qy"],
            domain="com.microsoft",
        ),
        helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y"]),
    ]
    shape = [1, 4, 5, 6]
    return typed_model(
        nodes,
        {"a": (TensorProto.FLOAT, shape), "b": (TensorProto.FLOAT, shape)},
        {"y": (TensorProto.FLOAT, shape)},
        constants,
        domains=("com.microsoft",),
    )


@pytest.mark.parametrize("zp_type", [np.uint8, np.int8], ids=["u8", "s8"])
def test_qlinear_where_runs_like_onnxruntime(tmp_path: Path, zp_type: type) -> None:
    module = check_against_onnxruntime(qlinear_where(zp_type), tmp_path, seed=8, step=0.04)
    assert sum(isinstance(op, nn.WhereOp) for op in module.walk()) == 1


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        (
            [
                helper.make_node("Greater", ["x", "zero"], ["m"]),
                helper.make_node("Equal", ["m", "m"], ["n"]),
                helper.make_node("Where", ["n", "x", "zero"], ["y"]),
            ],
            "nn.compare: compares two floats or two i64 (indices) of one type, got i1 and i1; "
            "masks combine with nn.logical",
        ),
        (
            [
                helper.make_node("QuantizeLinear", ["x", "s"], ["q"]),
                helper.make_node("Greater", ["q", "qz"], ["m"]),
                helper.make_node("Where", ["m", "x", "zero"], ["y"]),
            ],
            "nn.compare: compares two floats or two i64 (indices) of one type, got ui8 and ui8",
        ),
    ],
    ids=["mask_comparison", "quantized_comparison"],
)
def test_what_nn_does_not_define_is_refused_in_one_line(
    tmp_path: Path, nodes: list[onnx.NodeProto], expected: str
) -> None:
    model = typed_model(
        nodes,
        {"x": (TensorProto.FLOAT, [1, 2, 3, 3])},
        {"y": (TensorProto.FLOAT, [1, 2, 3, 3])},
        {"zero": np.float32(0), "s": np.float32(0.1), "qz": np.uint8(3)},
    )
    done = tool_process("nnlayout-import", onnx_file(model)(tmp_path))
    assert_one_clean_error(done.returncode, done.stdout, done.stderr, expected)


@pytest.mark.parametrize("op_type", ["QLinearWhere", "QLinearSigmoid"])
def test_names_a_qlinear_import_makes_up_never_stand_for_graph_tensors(
    tmp_path: Path, op_type: str
) -> None:
    """A graph tensor named as the importer names a QLinear op's intermediate values
    ('qy.float', 'qy.X.dequantized', 'qy.dequantized') keeps its own value: each is read
    after the QLinear op."""
    names = ["qy.float", "qy.X.dequantized", "qy.Y.dequantized", "qy.dequantized"]
    nodes = [helper.make_node("Relu", ["a"], [names[0]])]
    nodes += [helper.make_node("Neg", ["a"], [name]) for name in names[1:]]
    nodes += [
        helper.make_node("Greater", ["a", "zero"], ["m"]),
        helper.make_node("QuantizeLinear", ["a", "as", "az"], ["qa"]),
        helper.make_node("QuantizeLinear", ["b", "bs", "bz"], ["qb"]),
    ]
    inputs = (
        ["m", "qa", "as", "az", "qb", "bs", "bz", "ys", "yz"]
        if op_type == "QLinearWhere"
        else ["qa", "as", "az", "ys", "yz"]
    )
    nodes.append(helper.make_node(op_type, inputs, ["qy"], domain="com.microsoft"))
    nodes.append(helper.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y0"]))
    nodes.append(helper.make_node("Sum", ["y0", *names], ["y"]))
    constants = {
        "zero": np.float32(0),
        "as": np.float32(0.03),
        "az": np.uint8(131),
        "bs": np.float32(0.05),
        "bz": np.uint8(97),
        "ys": np.float32(0.04),
        "yz": np.uint8(60),
    }
    shape = [1, 2, 3, 3]
    model = typed_model(
        nodes,
        {"a": (TensorProto.FLOAT, shape), "b": (TensorProto.FLOAT, shape)},
        {"y": (TensorProto.FLOAT, shape)},
        constants,
        domains=("com.microsoft",),
    )
    check_against_onnxruntime(model, tmp_path, seed=10, step=0.04, targets=["ref", "host"])


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({3: ""}, "takes 9 inputs (condition, X, X_scale, X_zero_point, Y, Y_scale"),
        ({6: "bz8"}, "X, Y and Z_zero_point have one type (onnxruntime's T), got ui8, i8"),
        ({8: "yz8"}, "X, Y and Z_zero_point have one type (onnxruntime's T), got ui8, ui8 and i8"),
    ],
    ids=["missing_zero_point", "mixed_y", "mixed_z"],
)
def test_qlinear_where_onnxruntime_refuses_is_refused(change: dict, expected: str) -> None:
    """What onnxruntime's schema refuses (an input left out, X, Y and Z of different
    types) is refused in one line naming the node."""
    from nnlayout.diagnostics import UserError
    from nnlayout.frontends.onnx import import_model

    model = qlinear_where(np.uint8)
    node = next(n for n in model.graph.node if n.op_type == "QLinearWhere")
    if "bz8" in change.values():
        model.graph.node.insert(0, helper.make_node("QuantizeLinear", ["b", "bs", "bz8"], ["qb8"]))
        node.input[4] = "qb8"
    for index, name in change.items():
        node.input[index] = name
    model.graph.initializer.extend(
        [numpy_helper.from_array(np.int8(-3), "bz8"), numpy_helper.from_array(np.int8(5), "yz8")]
    )
    with pytest.raises(UserError) as error:
        import_model(model)
    assert expected in error.value.message and "\n" not in error.value.message, error.value


def test_generated_code_names_a_mask_dtype_numpy_1_26_has() -> None:
    """`np.bool_` (numpy 1.x and 2.x), not `np.bool` (removed in 1.24, back in 2.0): the
    project supports numpy 1.26."""
    import re

    from nnlayout.frontends.onnx import import_model
    from nnlayout.lowering.to_numpy import generate
    from nnlayout.runtime.interpreter import find_entry
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module

    module = import_model(comparison("Greater")).module
    compiled = compile_module(module, "ref", True, DEFAULT_PIPELINE)
    source = generate(find_entry(compiled), "m.mlir")
    assert "np.bool_" in source
    assert not re.search(r"np\.bool\b(?!_)", source)


def test_random_inputs_make_a_rank_0_mask_an_array() -> None:
    from nnlayout.tests.helpers import parse

    module = parse(
        "func.func @main(%m: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %y = nn.where %m, %x, %x : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> "
        "tensor<3xf32>\n  func.return %y : tensor<3xf32>\n}"
    )
    mask, _ = random_inputs(module, 0)
    assert isinstance(mask, np.ndarray) and mask.shape == () and mask.dtype == np.bool_
