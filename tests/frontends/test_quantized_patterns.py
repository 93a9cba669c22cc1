"""Quantized ONNX models: a small CNN quantized by onnxruntime's `quantize_static` (QDQ and
QOperator forms, per-channel s8 weights, u8 activations) imported and run within one
quantization step of onnxruntime's int8 output; the import of each quantized operator; and
the schemes the importer refuses, in one line naming the node and what is missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import i8

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.binding import available, runs_vnni
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    output_step,
    quantize_with_onnxruntime,
    small_cnn,
)


@pytest.mark.parametrize("qoperator", [False, True], ids=["qdq", "qoperator"])
def test_quantized_cnn_imports_and_runs_like_onnxruntime(tmp_path: Path, qoperator: bool) -> None:
    model = quantize_with_onnxruntime(small_cnn(), tmp_path, qoperator)
    module = check_against_onnxruntime(model, tmp_path, seed=3, step=output_step(model))
    names = {op.name for op in module.walk()}
    # Both forms compile to the q-ops (fold-qdq makes them of the QDQ form), run by kernels.
    compiled = {op.name for op in compile_module(module, "host", True, DEFAULT_PIPELINE).walk()}
    assert {"nn.qconv2d", "nn.qglobal_avg_pool", "nn.qmatmul"} <= compiled
    # The residual add: a qadd, or (oneDNN with VNNI or AMX) the convolution's sum post-op.
    assert compiled & {"nn.qadd", "nn.qconv2d_add"}
    assert not compiled & {"nn.conv2d", "nn.add", "nn.gemm", "nn.global_avg_pool"}
    if qoperator:
        assert {"nn.qconv2d", "nn.qadd", "nn.qglobal_avg_pool", "nn.qmatmul"} <= names
        assert "nn.conv2d" not in names
    else:
        assert {"nn.quantize", "nn.dequantize", "nn.conv2d", "nn.gemm"} <= names
        # the weights stay i8 constants, dequantized by an op (not folded to f32 at import)
        weights = [
            op for op in module.walk() if isinstance(op, nn.ConstantOp) and op.external is not None
        ]
        assert weights and all(nn.tensor_type(w.output).element_type == i8 for w in weights)


def q_model(
    nodes: list[onnx.NodeProto],
    constants: dict[str, np.ndarray],
    opset: int = 21,
    out_type: int = TensorProto.FLOAT,
    out_shape: list[int] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 2, 2])],
        [helper.make_tensor_value_info(nodes[-1].output[0], out_type, out_shape)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def qdq(zp: np.ndarray, **attrs: object) -> onnx.ModelProto:
    return q_model(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant", **attrs),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant", **attrs),
        ],
        {"s": np.float32(0.1) if zp.ndim == 0 else np.full(zp.shape, 0.1, np.float32), "z": zp},
    )


def test_per_axis_asymmetric_and_symmetric_qdq_import() -> None:
    for zp in (np.array([1, 2, 3, 250], np.uint8), np.zeros(4, np.int8), np.int8(-3)):
        module = import_model(qdq(zp, axis=1)).module
        quantize = next(op for op in module.walk() if isinstance(op, nn.QuantizeOp))
        params = quantize.qparams()
        assert params.zero_point.tolist() == zp.tolist()
        assert params.axis == (1 if zp.ndim else None)


REFUSED = [
    (
        lambda: q_model(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q", axis=1)],
            {"s": np.full(4, 0.1, np.float32), "z": np.uint8(3)},
        ),
        "node 'q' (QuantizeLinear): zero point 'z' has shape [] and scale 's' shape [4]: ONNX "
        "requires a zero point of the scale's shape",
    ),
    (
        lambda: q_model(
            [
                helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                helper.make_node("DequantizeLinear", ["q", "s", "z1"], ["y"], name="dq"),
            ],
            {"s": np.float32(0.1), "z": np.uint8(3), "z1": np.array([3], np.uint8)},
        ),
        None,  # one scale, one zero point of another rank: both per tensor (onnxruntime too)
    ),
    (
        lambda: qdq(np.uint8(0), block_size=2),
        "node 'quant' (QuantizeLinear): block_size 2: block-wise quantization is not supported",
    ),
    (
        lambda: q_model(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q4")],
            {"s": np.float32(0.1), "z": np.uint8(0)},
        ),
        None,  # sanity: u8 imports
    ),
    (
        lambda: q_model(
            [
                helper.make_node(
                    "QuantizeLinear", ["x", "s"], ["y"], name="q4", output_dtype=TensorProto.UINT4
                )
            ],
            {"s": np.float32(0.1)},
            out_type=TensorProto.UINT4,
        ),
        "node 'q4' (QuantizeLinear): the quantized type is UINT4; nnlayout imports quantization "
        "to UINT8, INT8 only",
    ),
    (
        lambda: q_model(
            [
                helper.make_node(
                    "QuantizeLinear",
                    ["x", "s"],
                    ["y"],
                    name="f8",
                    output_dtype=TensorProto.FLOAT8E4M3FN,
                )
            ],
            {"s": np.float32(0.1)},
            out_type=TensorProto.FLOAT8E4M3FN,
        ),
        "node 'f8' (QuantizeLinear): the quantized type is FLOAT8E4M3FN",
    ),
    (
        lambda: q_model(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="blocks")],
            {"s": np.full((1, 4), 0.1, np.float32), "z": np.zeros((1, 4), np.uint8)},
        ),
        "node 'blocks' (QuantizeLinear): scale 's' has shape [1, 4]: block-wise scales are not "
        "supported",
    ),
    (
        lambda: q_model(
            [
                helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                helper.make_node(
                    "QLinearGlobalAveragePool",
                    ["q", "s", "z", "s", "z"],
                    ["p"],
                    name="pool",
                    domain="com.microsoft",
                    channels_last=1,
                ),
                helper.make_node("DequantizeLinear", ["p", "s", "z"], ["y"]),
            ],
            {"s": np.float32(0.1), "z": np.uint8(3)},
            out_shape=[1, 4, 1, 1],
        ),
        "node 'pool' (QLinearGlobalAveragePool): channels_last = 1 is not supported",
    ),
]


@pytest.mark.parametrize(("make", "expected"), REFUSED)
def test_unsupported_schemes_are_refused_in_one_line(make, expected) -> None:  # type: ignore[no-untyped-def]
    model = make()
    if expected is None:
        import_model(model)
        return
    with pytest.raises(UserError) as error:
        import_model(model)
    assert error.value.message.startswith(expected), error.value.message
    assert "\n" not in error.value.message


def test_signed_activations_per_tensor_weights(tmp_path: Path) -> None:
    """s8 activations (asymmetric, so zero points other than 0 in i8) and per-tensor weights,
    QDQ form: through default-pipeline on every target within one step of onnxruntime."""
    model = quantize_with_onnxruntime(
        small_cnn(), tmp_path, qoperator=False, signed_activations=True, per_channel=False
    )
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    convs = [op for op in compiled.walk() if isinstance(op, nn.QConv2dOp)]
    assert convs and all(not op.qparams("w").per_axis for op in convs)
    assert all(nn.tensor_type(op.x).element_type == i8 for op in convs)


def test_quantized_arena_holds_one_byte_buffers(tmp_path: Path) -> None:
    """plan-memory with 1-byte buffers: the QDQ model's arena is at its lower bound, with every
    planned activation a ui8 view, and under 0.3x the float model's (4-byte) arena."""
    from nnlayout.frontends.onnx import import_to_files

    float_model = small_cnn()
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "model.onnx").write_bytes(float_model.SerializeToString())
    float_module = import_to_files(tmp_path / "f" / "model.onnx")
    quantized = quantize_with_onnxruntime(float_model, tmp_path, qoperator=False)
    (tmp_path / "q.onnx").write_bytes(quantized.SerializeToString())
    module = import_to_files(tmp_path / "q.onnx")
    pipeline = "default-pipeline{{target={target} padding={padding} verify=true}}"
    arenas = []
    for one in (float_module, module):
        compiled = compile_module(one, "avx512", False, pipeline)
        function = next(op for op in compiled.walk() if op.name == "func.func")
        arena = function.attributes["nnlayout.arena_bytes"].value.data  # type: ignore[attr-defined]
        assert arena == function.attributes["nnlayout.lower_bound_bytes"].value.data  # type: ignore[attr-defined]
        arenas.append(arena)
    views = [op for op in compiled.walk() if op.name == "memref.view"]
    assert views and all(str(v.results[0].type.element_type) == "ui8" for v in views)
    assert arenas[1] <= 0.3 * arenas[0], arenas


def pre_activation_block() -> onnx.ModelProto:
    """conv -> relu -> BatchNormalization -> relu -> conv: DenseNet's pre-activation batch
    norm, which quantize_static leaves in float between a dequantize and a quantize."""
    rng = np.random.default_rng(27)
    c = 8

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)

    constants = {
        "w1": weights(c, 3, 3, 3),
        "w2": weights(c, c, 1, 1),
        "scale": rng.uniform(0.5, 2, c).astype(np.float32),
        "shift": weights(c),
        "mean": weights(c),
        "var": rng.uniform(0.5, 2, c).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["a1"]),
        helper.make_node("BatchNormalization", ["a1", "scale", "shift", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["a2"]),
        helper.make_node("Conv", ["a2", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "pre_activation",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_batch_norm_between_dequantize_and_quantize_runs_in_nhwc(tmp_path: Path) -> None:
    """The batch norm between a dequantize and a quantize becomes one `nn.qbatch_norm`
    (fold-qdq) on the int8 side's NHWC, u8 to u8 in oneDNN's binary primitive (no float
    batch norm, no reorder: DenseNet-121 int8's 62 normalisations), within one step of
    onnxruntime's int8 output on every target; the model's own input and output stay
    plain."""
    model = quantize_with_onnxruntime(pre_activation_block(), tmp_path, qoperator=False)
    module = check_against_onnxruntime(model, tmp_path, seed=3, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    assert not [op for op in compiled.walk() if isinstance(op, nn.BatchNormOp)]
    [norm] = [op for op in compiled.walk() if isinstance(op, nn.QBatchNormOp)]
    assert str(norm.results[0].type).count('"NHWC"') == 1
    assert chosen_kernels(compiled, nn.QBatchNormOp) == {"qbatch_norm_onednn"}
    assert not [op for op in compiled.walk() if op.name == "layout.reorder"]


class TorchFxGraph:
    """An ONNX graph written as torch's classic exporter writes a model quantized by
    `torch.ao.quantization.quantize_fx`: a Cast to UINT8 after every QuantizeLinear; biases as
    i32 dequantized by x_scale * w_scale; weights per channel, symmetric."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(5)
        self.nodes: list[onnx.NodeProto] = []
        self.constants: dict[str, np.ndarray] = {}

    def const(self, name: str, value: np.ndarray) -> str:
        self.constants[name] = value
        return name

    def node(self, op_type: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op_type, inputs, [output], **attributes))
        return output

    def quantize(self, source: str, name: str, scale: float, zero_point: int) -> str:
        """Q, Cast, DQ (torch's pattern): the dequantized name."""
        s = self.const(f"{name}_s", np.float32(scale))
        z = self.const(f"{name}_z", np.uint8(zero_point))
        self.node("QuantizeLinear", [source, s, z], f"{name}_q", name=name)
        self.node("Cast", [f"{name}_q"], f"{name}_c", name=f"{name}_cast", to=TensorProto.UINT8)
        return self.node("DequantizeLinear", [f"{name}_c", s, z], f"{name}_dq")

    def conv(self, source: str, name: str, x_scale: float, k: int = 3, channels: int = 8) -> str:
        w_scale = self.rng.uniform(0.005, 0.01, channels).astype(np.float32)
        shape = (channels, channels, k, k)
        w = self.const(f"{name}_w", self.rng.integers(-20, 21, shape, dtype=np.int8))
        b = self.const(f"{name}_b", self.rng.integers(-300, 300, channels, dtype=np.int32))
        zeros = self.const(f"{name}_wz", np.zeros(channels, np.int8))
        bias_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        ws, bs = self.const(f"{name}_ws", w_scale), self.const(f"{name}_bs", bias_scale)
        bz = self.const(f"{name}_bz", np.zeros(channels, np.int32))
        self.node("DequantizeLinear", [w, ws, zeros], f"{name}_wdq", axis=0)
        self.node("DequantizeLinear", [b, bs, bz], f"{name}_bdq", axis=0)
        inputs = [source, f"{name}_wdq", f"{name}_bdq"]
        return self.node("Conv", inputs, f"{name}_y", pads=[k // 2] * 4)

    def model(self, output: str, shape: list[int]) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "torch_fx",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)],
            [numpy_helper.from_array(v, n) for n, v in self.constants.items()],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def torch_fx_block(add_zero_point: int, squeeze: bool = False) -> onnx.ModelProto:
    """Two convolutions and a residual add as torch exports them quantized (`TorchFxGraph`:
    resnet18's, mobilenet_v2's): a ReLU6 as Clip between a DequantizeLinear and a
    QuantizeLinear of the same parameters; the residual add's Relu between the Add and its
    QuantizeLinear. With `squeeze`, a MobileNetV3-like tail: HardSwish, global average
    pooling, a 1x1 convolution of that one pixel, HardSigmoid, each between a dequantize and
    a quantize, and the HardSwish's image times that gate (squeeze-and-excitation)."""
    g = TorchFxGraph()
    x = g.quantize("x", "input", 0.02, 128)
    first = g.quantize(g.conv(x, "conv1", 0.02), "conv1_out", 0.02, 70)
    lo, hi = g.const("lo", np.float32(0)), g.const("hi", np.float32(2))
    clipped = g.quantize(g.node("Clip", [first, lo, hi], "relu6"), "relu6_out", 0.02, 70)
    second = g.quantize(g.conv(clipped, "conv2", 0.02), "conv2_out", 0.03, 90)
    g.node("Add", [second, clipped], "sum")
    out = g.quantize(g.node("Relu", ["sum"], "sum_relu"), "add_out", 0.03, add_zero_point)
    if squeeze:
        pooled = g.quantize(g.node("HardSwish", [out], "hswish"), "hswish_out", 0.03, 20)
        g.node("GlobalAveragePool", [pooled], "pool")
        pixel = g.quantize("pool", "pool_out", 0.02, 10)
        pixel = g.quantize(g.conv(pixel, "fc", 0.02, 1), "fc", 0.01, 60)
        gate = g.node("HardSigmoid", [pixel], "gate", alpha=1 / 6)
        gate = g.quantize(gate, "gate_out", 1 / 255, 0)
        out = g.quantize(g.node("Mul", [pooled, gate], "excited"), "excited_out", 0.02, 25)
    return g.model(out, [1, 8, 6, 6])


def torch_fx_shuffle_block() -> onnx.ModelProto:
    """ShuffleNetV2's unit as torch exports it quantized: the channels split by two Slices,
    each half requantized (its QuantizeLinear has parameters of its own), a convolution of
    one half, the Concat, and the channel shuffle as Reshape, Transpose, Reshape, each
    between a dequantize and a quantize of the same parameters."""
    g = TorchFxGraph()
    x = g.quantize("x", "input", 0.02, 128)
    axes, one = g.const("axes", np.int64([1])), g.const("one", np.int64([1]))
    halves = []
    for i, (start, zero_point) in enumerate(((0, 126), (4, 131))):
        bounds = [
            g.const(f"start{i}", np.int64([start])),
            g.const(f"end{i}", np.int64([start + 4])),
        ]
        half = g.node("Slice", [x, *bounds, axes, one], f"half{i}")
        halves.append(g.quantize(half, f"half{i}_out", 0.021 + 0.002 * i, zero_point))
    right = g.quantize(g.conv(halves[1], "conv", 0.023, 1, 4), "conv_out", 0.03, 0)
    joined = g.quantize(g.node("Concat", [halves[0], right], "joined", axis=1), "cat", 0.03, 100)
    out = joined
    for i, (op, attributes) in enumerate(
        (("Reshape", [1, 2, 4, 6, 6]), ("Transpose", [0, 2, 1, 3, 4]), ("Reshape", [1, 8, 6, 6]))
    ):
        if op == "Reshape":
            g.node(op, [out, g.const(f"shape{i}", np.int64(attributes))], f"shuffle{i}")
        else:
            g.node(op, [out], f"shuffle{i}", perm=attributes)
        out = g.quantize(f"shuffle{i}", f"shuffle{i}_out", 0.03, 100)
    return g.model(out, [1, 8, 6, 6])


def torch_pool_block() -> onnx.ModelProto:
    """Inception-v3's and DenseNet's average poolings as torch exports them quantized (eager
    mode), each between a dequantize and a quantize: a 3x3 window whose pads count (torch's
    default) of a value with zero point 70, whose padding must hold 70, not 0, quantized with
    x's scale and another zero point; a 3x3 window whose pads do not count; a 2x2 window of
    stride 2."""
    g = TorchFxGraph()
    x = g.quantize("x", "input", 0.02, 128)
    first = g.quantize(g.conv(x, "conv1", 0.02), "conv1_out", 0.02, 70)
    window = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    pooled = g.node("AveragePool", [first], "pool1", count_include_pad=1, **window)
    pooled = g.quantize(pooled, "pool1_out", 0.02, 60)
    pooled = g.quantize(g.node("AveragePool", [pooled], "pool2", **window), "pool2_out", 0.02, 60)
    second = g.quantize(g.conv(pooled, "conv2", 0.02), "conv2_out", 0.03, 90)
    halved = g.node("AveragePool", [second], "pool3", kernel_shape=[2, 2], strides=[2, 2])
    return g.model(g.quantize(halved, "pool3_out", 0.03, 90), [1, 8, 3, 3])


def test_torch_average_pooling_runs_in_int8(tmp_path: Path) -> None:
    """Average pooling between a dequantize and a quantize of x's scale, every window
    divided by one odd count (3x3, pads counted), becomes `nn.qavg_pool2d`, run by oneDNN's
    int8 depthwise convolution of a window of ones; where the pads do not count or the
    window is even it stays float (an average can land on a half step, which the f32 ops
    round by their order). Within one step of onnxruntime on every target, padding on and
    off (the padding holds the zero point)."""
    model = torch_pool_block()
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert names.count("nn.qavg_pool2d") == 1 and names.count("nn.avg_pool2d") == 2, names
    if available() and runs_vnni():
        assert chosen_kernels(compiled, nn.QAvgPool2dOp) == {"qavg_pool2d_onednn"}


def ort_gelu_block() -> onnx.ModelProto:
    """A transformer's exact GELU as onnxruntime's quantize_static writes it: x / sqrt(2) ->
    Erf -> Q/DQ -> + 1 (a quantized constant) -> Q/DQ -> x * that -> Q/DQ -> * 0.5 -> Q/DQ,
    each constant a one-element initializer."""
    g = TorchFxGraph()
    x = g.quantize("x", "input", 0.03, 120)
    root = g.const("root2", np.float32(np.sqrt(2)))
    erf = g.node("Erf", [g.node("Div", [x, root], "scaled")], "erf")
    erf = g.quantize(erf, "erf_out", 2 / 255, 128)
    one = g.quantize(g.const("one", np.float32(1.0)), "one_q", 1 / 255, 0)
    shifted = g.quantize(g.node("Add", [erf, one], "shifted"), "shifted_out", 2 / 255, 0)
    product = g.quantize(g.node("Mul", [x, shifted], "product"), "product_out", 0.05, 40)
    half = g.const("half", np.float32(0.5))
    return g.model(
        g.quantize(g.node("Mul", [product, half], "gelu"), "out", 0.02, 50), [1, 8, 6, 6]
    )


def test_a_quantized_gelu_runs_as_one_table(tmp_path: Path) -> None:
    """fold-qdq tabulates chains of element-wise functions with one-element constants between
    a dequantize and a quantize (x / sqrt(2) -> Erf: one table), composes a table of a
    table's result (+ 1), and tabulates * 0.5; tabulate-qbinary makes the qmul of x by the
    first table one table of x, which the * 0.5 table composes with: one nn.qlookup; within
    two steps of onnxruntime on every target, padding on and off (its
    optimised session is two steps from its unoptimised one, the ops as written, at one
    value of this input; the interpreter on the imported model is 0 from the latter)."""
    model = ort_gelu_block()
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=2 * output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert names.count("nn.qlookup") == 1 and "nn.qmul" not in names, names
    assert not {"nn.erf", "nn.div", "nn.add", "nn.mul", "nn.constant"} & set(names), names


def ort_attention_block() -> onnx.ModelProto:
    """A transformer's attention products as onnxruntime's quantize_static writes them: the
    scores x . x^T of two u8 activations (the transpose quantized with its own parameters),
    then the scores times x, batched over the 8 channels as heads, each between
    dequantizes and a quantize."""
    g = TorchFxGraph()
    x = g.quantize("x", "input", 0.03, 120)
    kt = g.quantize(g.node("Transpose", [x], "kt", perm=[0, 1, 3, 2]), "kt_out", 0.03, 131)
    scores = g.quantize(g.node("MatMul", [x, kt], "scores"), "scores_out", 0.05, 100)
    return g.model(g.quantize(g.node("MatMul", [scores, x], "mix"), "out", 0.2, 128), [1, 8, 6, 6])


def test_attention_products_of_two_activations_run_in_int8(tmp_path: Path) -> None:
    """Both products fold to nn.qmatmul with b computed at run time (u8: oneDNN is given it
    as s8 with its zero point moved), within one step of onnxruntime on every target,
    padding on and off."""
    model = ort_attention_block()
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert names.count("nn.qmatmul") == 2 and "nn.matmul" not in names, names
    if available() and runs_vnni():
        assert chosen_kernels(compiled, nn.QMatmulOp) == {"qmatmul_runtime_b_onednn"}


@pytest.mark.parametrize("add_zero_point", [0, 50], ids=["relu-by-saturation", "relu-clamps"])
def test_torch_quantize_fx_exports_run_in_int8(tmp_path: Path, add_zero_point: int) -> None:
    """torch's quantized exports import (a Cast to a value's own type is the value) and run
    in int8 end to end, within one step of onnxruntime on every target: the ReLU6 becomes
    the first convolution's clamp, the add's Relu the qadd's (none where its zero point is
    0: saturation is the Relu; then the add fuses into the second convolution)."""
    model = torch_fx_block(add_zero_point)
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert not {"nn.conv2d", "nn.add", "nn.clip", "nn.relu"} & set(names), names
    assert names.count("nn.quantize") == names.count("nn.dequantize") == 1  # the model's own
    [first] = [op for op in compiled.walk() if isinstance(op, nn.QConv2dOp) and op.clamp_min]
    assert (first.clamp_min.value.data, first.clamp_max.value.data) == (70, 170)  # type: ignore[union-attr]
    if add_zero_point:
        [add] = [op for op in compiled.walk() if isinstance(op, nn.QAddOp)]
        assert add.clamp_min is not None and add.clamp_min.value.data == 50
    else:
        assert "nn.qconv2d_add" in names or "nn.qadd" in names
        assert not [op for op in compiled.walk() if isinstance(op, nn.QAddOp) and op.clamp_min]


def test_torch_activations_and_one_pixel_convolutions_run_in_int8(tmp_path: Path) -> None:
    """MobileNetV3's squeeze-and-excitation pattern as torch exports it quantized: HardSwish
    and HardSigmoid between a dequantize and a quantize become tables (nn.qlookup), which
    oneDNN computes; the 1x1 convolution of the pooled pixel runs oneDNN's int8 matmul (its
    convolution has only reference code there), the image times the gate oneDNN's binary mul
    (zero points != 0); within one step of onnxruntime on every target, padding on and
    off."""
    model = torch_fx_block(0, squeeze=True)
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert not {"nn.hardswish", "nn.hardsigmoid", "nn.conv2d"} & set(names), names
    assert names.count("nn.qlookup") == 2
    if available() and runs_vnni():  # else oneDNN's int8 kernels refuse (no VNNI)
        kernels = [
            str(op.attributes["kernel"]) for op in compiled.walk() if op.name == "nn.qconv2d"
        ]
        assert len(kernels) == 2 and all('"qconv2d_onednn"' in k for k in kernels), kernels
        assert chosen_kernels(compiled, nn.QLookupOp) == {"qlookup_onednn"}
        assert chosen_kernels(compiled, nn.QMulOp) == {"qmul_gate_onednn"}


def test_torch_channel_split_and_shuffle_run_in_int8(tmp_path: Path) -> None:
    """ShuffleNetV2's unit as torch exports it quantized: each half of the channel split
    requantized becomes a slice of the integers (a view) and the requantization's table,
    which oneDNN computes; the shuffle moves u8 data in NHWC (oneDNN's reorder), with no
    layout change around either; within one step of onnxruntime on every target, padding on
    and off."""
    model = torch_fx_shuffle_block()
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert names.count("nn.quantize") == names.count("nn.dequantize") == 1, names
    assert names.count("nn.qlookup") == 2 and "nn.channel_shuffle" in names, names
    if available() and runs_vnni():
        assert chosen_kernels(compiled, nn.QLookupOp) == {"qlookup_onednn"}
        assert chosen_kernels(compiled, nn.ChannelShuffleOp) == {"channel_shuffle_reorder_onednn"}
        # The quantize and dequantize of the model's input and output change its layout.
        assert not [op for op in compiled.walk() if op.name == "layout.reorder"]
