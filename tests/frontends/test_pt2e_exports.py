"""Models quantized by torch's pt2e flow (torchao's `prepare_pt2e`/`convert_pt2e`, the one
torch's deprecation notices send users to) and exported by torch's dynamo exporter, built with
onnx.helper the way it writes them: s8 activations with zero points, QuantizeLinear ->
DequantizeLinear with no Cast between, per-channel symmetric weights, and **float biases**
(convolutions and the classifier's Gemm, transB = 1). fold-qdq divides such a bias by x_scale *
w_scale once, at load, so that the products run in int8 (they ran in f32 on dequantized
weights); within one step of onnxruntime on every target, padding on and off, interpreter
and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.tests.frontends.test_quantized_patterns import TorchFxGraph
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    chosen_kernels,
    compile_module,
    output_step,
)

C = 8
VNNI = b.available() and b.runs_vnni()


class Pt2eGraph(TorchFxGraph):
    """A graph as torch's dynamo exporter writes a pt2e-quantized model."""

    def quantize(self, source: str, name: str, scale: float, zero_point: int) -> str:
        """Q then DQ of one s8 parameter pair (the exporter adds axis=1 to per-tensor ones)."""
        s = self.const(f"{name}_s", np.float32(scale))
        z = self.const(f"{name}_z", np.int8(zero_point))
        self.node("QuantizeLinear", [source, s, z], f"{name}_q", axis=1)
        return self.node("DequantizeLinear", [f"{name}_q", s, z], f"{name}_dq", axis=1)

    def weights(self, name: str, shape: tuple[int, ...]) -> str:
        """Per-channel (axis 0) symmetric s8 weights, dequantized."""
        w = self.const(f"{name}_w", self.rng.integers(-60, 61, shape, dtype=np.int8))
        scale = self.const(f"{name}_ws", self.rng.uniform(0.004, 0.01, shape[0]).astype(np.float32))
        zero = self.const(f"{name}_wz", np.zeros(shape[0], np.int8))
        return self.node("DequantizeLinear", [w, scale, zero], f"{name}_wdq", axis=0)

    def bias(self, name: str, n: int) -> str:
        return self.const(f"{name}_b", self.rng.normal(0, 0.3, n).astype(np.float32))

    def conv(self, source: str, name: str) -> str:
        inputs = [source, self.weights(name, (C, C, 3, 3)), self.bias(name, C)]
        return self.node("Conv", inputs, f"{name}_y", pads=[1, 1, 1, 1])

    def model(
        self, output: str, shape: list[int], input_shape: tuple[int, ...] = (1, C, 6, 6)
    ) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "pt2e",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape))],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)],
            [numpy_helper.from_array(v, n) for n, v in self.constants.items()],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


def pt2e_block(gemm_bias: str = "float") -> onnx.ModelProto:
    """ResNet's basic block and classifier as pt2e writes them: conv -> relu, conv, the add
    and its relu, the mean over the image, a reshape (each quantized again with the same
    parameters), a Gemm (transB = 1) with a float bias
    (`gemm_bias` "float"), or with an s8 one dequantized ("s8": the Gemm then stays float,
    its bias not in the accumulator's i32)."""
    g = Pt2eGraph()
    x = g.quantize("x", "input", 0.03, 2)
    first = g.quantize(g.node("Relu", [g.conv(x, "conv1")], "relu1"), "relu1", 0.02, -128)
    second = g.quantize(g.conv(first, "conv2"), "conv2", 0.03, 5)
    g.node("Add", [second, first], "sum")
    out = g.quantize(g.node("Relu", ["sum"], "sum_relu"), "sum_relu", 0.03, -128)
    axes = g.const("axes", np.array([-1, -2], np.int64))
    pooled = g.quantize(g.node("ReduceMean", [out, axes], "mean"), "mean", 0.01, -128)
    shape = g.const("shape", np.array([1, C], np.int64))
    flat = g.quantize(g.node("Reshape", [pooled, shape], "view"), "view", 0.01, -128)
    if gemm_bias == "float":
        bias = g.bias("fc", 10)
    else:
        integers = g.const("fc_bi", g.rng.integers(-90, 90, 10, dtype=np.int8))
        scale = g.const("fc_bs", np.full(10, 0.004, np.float32))
        zero = g.const("fc_bz", np.zeros(10, np.int8))
        bias = g.node("DequantizeLinear", [integers, scale, zero], "fc_bdq", axis=0)
    inputs = [flat, g.weights("fc", (10, C)), bias]
    logits = g.node("Gemm", inputs, "fc_y", transB=1)
    return g.model(g.quantize(logits, "logits", 0.02, 0), [1, 10])


def test_pt2e_float_biases_run_in_int8(tmp_path: Path) -> None:
    """The float biases of the convolutions and the Gemm become f32 biases in the
    accumulator's units (a constant nn.div, computed at load): every product is a q-op."""
    model = pt2e_block()
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert not {"nn.conv2d", "nn.gemm", "nn.add"} & set(names), names
    assert "nn.qmatmul" in names and names.count("nn.div") == 3, names
    products = [op for op in compiled.walk() if isinstance(op, nn.QConv2dOp | nn.QMatmulOp)]
    assert products and all(str(op.bias.type).endswith("xf32>") for op in products)  # type: ignore[union-attr]


def test_a_transposed_gemm_left_float_leaves_no_op_behind(tmp_path: Path) -> None:
    """A Gemm (transB = 1) whose bias does not fold stays float, and leaves no transpose of
    its weights behind: such a detached op still read the weights' constant, so the
    generated module counted one constant more than the planned IR it loads holds, and
    refused to run."""
    model = pt2e_block("s8")
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert "nn.gemm" in names and "nn.qmatmul" not in names, names


def pt2e_linear() -> onnx.ModelProto:
    """A transformer's Linear layer as the dynamo exporter writes it quantized by pt2e:
    MatMul(x, Transpose(dq(w))), then an Add of the float bias, then its quantize; a Relu
    between (folded into the clamp)."""
    g = Pt2eGraph()
    x = g.quantize("x", "input", 0.03, 2)
    weights = g.node("Transpose", [g.weights("fc", (16, C))], "fc_wt", perm=[1, 0])
    product = g.node("MatMul", [x, weights], "fc_mm")
    biased = g.node("Add", [product, g.bias("fc", 16)], "fc_y")
    return g.model(
        g.quantize(g.node("Relu", [biased], "relu"), "out", 0.02, -128), [1, 5, 16], (1, 5, C)
    )


def test_pt2e_linear_layers_run_in_int8(tmp_path: Path) -> None:
    """MatMul + Add of a float bias (the weights transposed by an op) is one nn.qmatmul with
    an f32 bias and the transposed integers as its b, computed at load: no float matmul,
    add or transpose runs."""
    model = pt2e_linear()
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert not {"nn.matmul", "nn.add", "nn.relu", "nn.dequantize"} & set(names[1:-1]), names
    [product] = [op for op in compiled.walk() if isinstance(op, nn.QMatmulOp)]
    assert str(product.bias.type) == "tensor<16xf32>"  # type: ignore[union-attr]
    transposes = [op for op in compiled.walk() if isinstance(op, nn.TransposeOp)]
    assert transposes and all(kernel_of(op) is None for op in transposes)  # computed at load


class X86Graph(Pt2eGraph):
    """A graph as the dynamo exporter writes a model quantized by torchao's
    X86InductorQuantizer: u8 activations."""

    def quantize(self, source: str, name: str, scale: float, zero_point: int) -> str:
        s = self.const(f"{name}_s", np.float32(scale))
        z = self.const(f"{name}_z", np.uint8(zero_point))
        self.node("QuantizeLinear", [source, s, z], f"{name}_q", axis=1)
        return self.node("DequantizeLinear", [f"{name}_q", s, z], f"{name}_dq", axis=1)


def x86_residual_block(bias: bool, conv_first: bool, clip: bool = False) -> onnx.ModelProto:
    """ResNet's basic block as the x86 quantizer writes it: the second convolution's float
    result goes into the Add with the dequantized identity (no quantize between), then the
    Relu (or a Clip) and one quantize. Zero points are not 0 (the identity's, the result's:
    a Relu is a clamp at 9)."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 7)
    first = g.quantize(g.node("Relu", [g.conv(x, "conv1")], "relu1"), "relu1", 0.02, 0)
    inputs = [first, g.weights("conv2", (C, C, 3, 3))] + ([g.bias("conv2", C)] if bias else [])
    second = g.node("Conv", inputs, "conv2_y", pads=[1, 1, 1, 1])
    g.node("Add", [second, x] if conv_first else [x, second], "sum")
    if clip:
        low, high = g.const("low", np.float32(0.1)), g.const("high", np.float32(2.5))
        g.node("Clip", ["sum", low, high], "act")
    else:
        g.node("Relu", ["sum"], "act")
    return g.model(g.quantize("act", "out", 0.035, 9), [1, C, 6, 6])


@pytest.mark.parametrize(
    ("bias", "conv_first", "clip"),
    [(True, True, False), (False, False, False), (True, False, True)],
)
def test_x86_residual_adds_round_once_in_int8(
    tmp_path: Path, bias: bool, conv_first: bool, clip: bool
) -> None:
    """conv -> Add(dq(identity)) -> Relu -> Q is one nn.qconv2d_add without c: the
    convolution's result is not rounded before the add, as in the graph; no float
    convolution or add runs, and on the oneDNN targets the kernel is oneDNN's, in place."""
    model = x86_residual_block(bias, conv_first, clip)
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
        assert not {"nn.conv2d", "nn.add", "nn.relu", "nn.clip"} & set(names), names
        [fused] = [op for op in compiled.walk() if isinstance(op, nn.QConv2dAddOp)]
        assert fused.rounds_once and fused.clamp[0] is not None
        chosen = kernel_of(fused)
        assert chosen is not None
        if target == "onednn" and VNNI:
            assert chosen.kernel_name.data == "qconv2d_add_onednn"
            assert chosen.in_place_operand == fused.addend_index


def x86_linear() -> onnx.ModelProto:
    """A transformer's MLP as the dynamo exporter writes it quantized by the x86 quantizer:
    the Linear's input quantized (u8) and its weights (per channel), its result float:
    MatMul(dq(x), Transpose(dq(w))) + bias -> Gelu -> Q -> DQ -> the second Linear, whose
    float result is added to the float input (the residual)."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 131)
    hidden = g.node("Transpose", [g.weights("fc1", (16, C))], "fc1_wt", perm=[1, 0])
    product = g.node("MatMul", [x, hidden], "fc1_mm")
    act = g.node("Gelu", [g.node("Add", [product, g.bias("fc1", 16)], "fc1_y")], "act")
    act = g.quantize(act, "act", 0.02, 3)
    out = g.node("Transpose", [g.weights("fc2", (C, 16))], "fc2_wt", perm=[1, 0])
    second = g.node("Add", [g.node("MatMul", [act, out], "fc2_mm"), g.bias("fc2", C)], "fc2_y")
    g.node("Add", ["x", second], "y")
    return g.model("y", [1, 5, C], (1, 5, C))


def test_x86_linear_layers_with_float_results_run_in_int8(tmp_path: Path) -> None:
    """A Linear whose inputs are quantized and whose result stays float (the second, into
    the residual add) is nn.matmul_integer_to_float (the integer product scaled to f32 once,
    onnxruntime's MatMulIntegerToFloat); the first, its bias and GELU quantized after them,
    is an nn.qmatmul with that bias and activation (GELU on the real result, then quantized;
    on oneDNN an eltwise post-op). No float matmul or GELU runs; on the oneDNN targets
    oneDNN's int8 matmuls run both."""
    model = x86_linear()
    module = check_against_onnxruntime(model, tmp_path, seed=4, tolerance=1e-5)
    _runs_in_int8(module, nn.MatmulIntegerToFloatOp, 1, {"nn.matmul", "nn.gemm", "nn.gelu"})
    _runs_in_int8(module, nn.QMatmulOp, 1, set())
    compiled = compile_module(module, "ref", True, DEFAULT_PIPELINE)  # type: ignore[arg-type]
    [fc1] = [op for op in compiled.walk() if isinstance(op, nn.QMatmulOp)]
    assert fc1.bias is not None and fc1.activation is not None
    assert fc1.activation.data == "gelu"


def x86_silu_block() -> onnx.ModelProto:
    """EfficientNet's convolutions as the x86 quantizer writes them: the input quantized,
    the convolution's result float into a SiLU (x * sigmoid(x)), quantized after it; the
    squeeze-and-excitation's one-pixel convolution likewise (a Relu after it, then a
    Sigmoid), its gate multiplying the image in float."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 131)
    c1 = g.conv(x, "conv1")
    act = g.node("Mul", [c1, g.node("Sigmoid", [c1], "sig1")], "silu1")
    act = g.quantize(act, "act", 0.02, 3)
    pooled = g.node("GlobalAveragePool", [act], "pool")
    pooled = g.quantize(pooled, "pool", 0.02, 3)
    squeeze = g.node("Conv", [pooled, g.weights("se", (C, C, 1, 1)), g.bias("se", C)], "se_y")
    gate = g.node("Sigmoid", [g.node("Relu", [squeeze], "se_relu")], "gate")
    g.node("Mul", [act, gate], "y")
    return g.model("y", [1, C, 6, 6])


def test_x86_convolutions_with_float_results_run_in_int8(tmp_path: Path) -> None:
    """A convolution whose inputs are quantized and whose result stays float (a Relu then a
    Sigmoid follow, the gate's float result read by a Mul) is nn.qconv2d_to_float: the exact
    sum scaled to f32 once; on the oneDNN targets oneDNN's int8 convolution writes f32, also
    for the one-pixel convolution (its formats were nchw to oneDNN, which has only reference
    code for them). The SiLU's convolution, its SiLU quantized, is an nn.qconv2d with that
    activation (test_x86_activations.py). No float convolution runs."""
    model = x86_silu_block()
    module = check_against_onnxruntime(model, tmp_path, seed=4, tolerance=1e-5)
    _runs_in_int8(module, nn.QConv2dToFloatOp, 1, {"nn.conv2d", "nn.swish"})


def _runs_in_int8(module: object, op_type: type, count: int, float_ops: set[str]) -> None:
    """On `onednn` and `ref`: `count` ops of `op_type`, none of `float_ops`, each on the
    target's kernel (oneDNN's where it runs VNNI code, else the reference)."""
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)  # type: ignore[arg-type]
        names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
        assert not float_ops & set(names) and names.count(op_type.name) == count, names
        family = "onednn" if target == "onednn" and VNNI else "ref"
        expected = f"{op_type.name.removeprefix('nn.')}_{family}"
        assert chosen_kernels(compiled, op_type) == {expected}


def x86_broadcast_add(batch: bool) -> onnx.ModelProto:
    """A convolution's float result that the Add broadcasts against a dequantized tensor of
    the result's shape: over its spatial axes ([1, C, 1, 1] + [1, C, 4, 4]) or its batch
    ([1, C, 4, 4] + [2, C, 4, 4]), then Relu and one quantize."""
    g = X86Graph()
    x = g.quantize("x", "input", 0.03, 7)
    r = g.quantize("r", "addend", 0.04, 100)
    conv = g.node("Conv", [x, g.weights("conv", (C, C, 3, 3)), g.bias("conv", C)], "conv_y")
    g.node("Add", [conv, r], "sum")
    out = g.quantize(g.node("Relu", ["sum"], "act"), "out", 0.035, 9)
    x_shape, r_shape = ([1, C, 6, 6], [2, C, 4, 4]) if batch else ([1, C, 3, 3], [1, C, 4, 4])
    graph = helper.make_graph(
        g.nodes,
        "broadcast",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
            helper.make_tensor_value_info("r", TensorProto.FLOAT, r_shape),
        ],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, r_shape)],
        [numpy_helper.from_array(v, n) for n, v in g.constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


@pytest.mark.parametrize("batch", [False, True], ids=["spatial", "batch"])
def test_a_broadcast_convolution_result_is_no_residual_block(tmp_path: Path, batch: bool) -> None:
    """The add stays float (the one-rounding fold would make an nn.qconv2d_add of the
    convolution's shape, which failed verification: found by a helper's review), the
    convolution is nn.qconv2d_to_float, and the program gives onnxruntime's result."""
    model = x86_broadcast_add(batch)
    module = check_against_onnxruntime(model, tmp_path, seed=4, step=output_step(model))
    compiled = compile_module(module, "host", True, DEFAULT_PIPELINE)
    names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
    assert "nn.qconv2d_add" not in names and "nn.qconv2d_to_float" in names, names
