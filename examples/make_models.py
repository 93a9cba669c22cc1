"""Builds a small model zoo as ONNX files, with seeded random weights (nothing is downloaded).

    python -m nnlayout.examples.make_models                 # all of them, full size
    python -m nnlayout.examples.make_models --small resnet50 unet

ResNet-50 (v1.5 bottlenecks), ResNeXt-50 32x4d (the same with twice as wide a grouped 3x3
convolution: 4 to 32 channels in each of 32 groups), SE-ResNet-50 (ResNet-50 with
squeeze-and-excitation: a per-channel scale broadcast over each block's output), MobileNetV2
(inverted residuals, depthwise convolutions with groups, ReLU6 as Clip), a UNet
(ConvTranspose upsampling, Concat skips) and DenseNet-121 (dense-block concats,
average-pooling transitions), also as `densenet121_zoo`, with each BatchNormalization written
as a Mul and an Add of [C, 1, 1] constants, as the ONNX model zoo's older export does: opset
17, batch 1, float32. Classifiers end in Gemm and output
both the logits and their Softmax.

Weights keep activations in a sane range, so a 1e-4 relative comparison means something:
convolutions use He initialisation, and every BatchNormalization gets running statistics near
those of its input (mean ~0, variance ~1 up to noise); the last BatchNormalization of each
residual branch has a small scale, so residual sums grow slowly with depth. Value names follow
PyTorch's exporter (`/layer1/layer1.0/conv1/Conv_output_0`), so the importer's name sanitising
is exercised too.

`build(name, small=True)` gives reduced variants (fewer blocks, fewer channels, smaller images)
for fast tests. Files go to the current directory, or to the folder `-o DIR` names (never commit
.onnx files); each path written is printed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from nnlayout.tools.driver import description

OPSET = 17
# The checkout's folder of built models, where the benchmarks keep theirs (git-ignored); the
# main job and `make_models` write into the current directory unless told otherwise.
MODELS_DIR = Path(__file__).resolve().parent / "models"


class GraphBuilder:
    """Accumulates nodes and initializers; every method returns the name of its output."""

    def __init__(self, seed: int, affine_batch_norm: bool = False):
        self.rng = np.random.default_rng(seed)
        # Batch norms as Mul and Add of per-channel [C, 1, 1] constants (older exports).
        self.affine_batch_norm = affine_batch_norm
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self.channels: dict[str, int] = {}

    def _weight(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def _node(
        self, op_type: str, scope: str, inputs: Sequence[str], channels: int, **attrs: object
    ) -> str:
        output = f"{scope}/{op_type}_output_0"
        self.nodes.append(
            helper.make_node(op_type, list(inputs), [output], name=f"{scope}/{op_type}", **attrs)
        )
        self.channels[output] = channels
        return output

    def conv(
        self,
        x: str,
        scope: str,
        out_channels: int,
        kernel: int,
        stride: int = 1,
        groups: int = 1,
        bias: bool = False,
    ) -> str:
        in_channels = self.channels[x]
        fan_in = in_channels // groups * kernel * kernel
        weight = self.rng.normal(
            0, np.sqrt(2.0 / fan_in), (out_channels, in_channels // groups, kernel, kernel)
        )
        inputs = [x, self._weight(f"{scope}.weight", weight)]
        if bias:
            inputs.append(self._weight(f"{scope}.bias", self.rng.normal(0, 0.01, out_channels)))
        return self._node(
            "Conv",
            scope,
            inputs,
            out_channels,
            kernel_shape=[kernel, kernel],
            strides=[stride, stride],
            pads=[kernel // 2] * 4,
            group=groups,
        )

    def conv_transpose(self, x: str, scope: str, out_channels: int) -> str:
        """A 2x2, stride-2 upsampling (UNet's up-convolution)."""
        in_channels = self.channels[x]
        weight = self.rng.normal(0, np.sqrt(1.0 / in_channels), (in_channels, out_channels, 2, 2))
        inputs = [
            x,
            self._weight(f"{scope}.weight", weight),
            self._weight(f"{scope}.bias", self.rng.normal(0, 0.01, out_channels)),
        ]
        return self._node(
            "ConvTranspose", scope, inputs, out_channels, kernel_shape=[2, 2], strides=[2, 2]
        )

    def batch_norm(self, x: str, scope: str, scale: float = 1.0) -> str:
        c = self.channels[x]
        params = [
            self.rng.uniform(0.8, 1.2, c) * scale,  # gamma
            self.rng.normal(0, 0.05, c),  # beta
            self.rng.normal(0, 0.1, c),  # running mean
            self.rng.uniform(0.8, 1.2, c),  # running variance
        ]
        if self.affine_batch_norm:
            gamma, beta, mean, variance = params
            factor = gamma / np.sqrt(variance + 1e-5)
            scale = self._weight(f"{scope}.scale", factor.reshape(c, 1, 1))
            shift = self._weight(f"{scope}.shift", (beta - mean * factor).reshape(c, 1, 1))
            scaled = self._node("Mul", scope, [x, scale], c)
            return self._node("Add", scope, [scaled, shift], c)
        names = [
            self._weight(f"{scope}.{part}", array)
            for part, array in zip(
                ("weight", "bias", "running_mean", "running_var"), params, strict=True
            )
        ]
        return self._node("BatchNormalization", scope, [x, *names], c, epsilon=1e-5)

    def relu(self, x: str, scope: str) -> str:
        return self._node("Relu", scope, [x], self.channels[x])

    def relu6(self, x: str, scope: str) -> str:
        bounds = [
            self._weight(f"{scope}.min", np.array(0.0)),
            self._weight(f"{scope}.max", np.array(6.0)),
        ]
        return self._node("Clip", scope, [x, *bounds], self.channels[x])

    def add(self, a: str, b: str, scope: str) -> str:
        return self._node("Add", scope, [a, b], self.channels[a])

    def concat(self, xs: Sequence[str], scope: str) -> str:
        return self._node("Concat", scope, xs, sum(self.channels[x] for x in xs), axis=1)

    def max_pool(self, x: str, scope: str, kernel: int, stride: int, pad: int) -> str:
        return self._node(
            "MaxPool",
            scope,
            [x],
            self.channels[x],
            kernel_shape=[kernel] * 2,
            strides=[stride] * 2,
            pads=[pad] * 4,
        )

    def avg_pool(self, x: str, scope: str, kernel: int, stride: int) -> str:
        return self._node(
            "AveragePool",
            scope,
            [x],
            self.channels[x],
            kernel_shape=[kernel] * 2,
            strides=[stride] * 2,
        )

    def classifier(self, x: str, classes: int) -> list[str]:
        """GlobalAveragePool, Flatten, Gemm (logits) and Softmax (probabilities)."""
        c = self.channels[x]
        pooled = self._node("GlobalAveragePool", "/avgpool", [x], c)
        flat = self._node("Flatten", "/flatten", [pooled], c, axis=1)
        weight = self._weight("fc.weight", self.rng.normal(0, np.sqrt(1.0 / c), (classes, c)))
        bias = self._weight("fc.bias", self.rng.normal(0, 0.01, classes))
        logits = self._node("Gemm", "/fc", [flat, weight, bias], classes, transB=1)
        return [logits, self._node("Softmax", "/softmax", [logits], classes, axis=-1)]

    def model(
        self, name: str, input_name: str, input_shape: Sequence[int], outputs: Sequence[str]
    ) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(input_shape))],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            self.initializers,
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="nnlayout.examples.make_models",
        )
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model)
        return model


def _conv_bn(
    g: GraphBuilder,
    x: str,
    scope: str,
    out_channels: int,
    kernel: int,
    stride: int = 1,
    groups: int = 1,
    act: str | None = "relu",
    bn_scale: float = 1.0,
) -> str:
    y = g.conv(x, f"{scope}/conv", out_channels, kernel, stride, groups)
    y = g.batch_norm(y, f"{scope}/bn", bn_scale)
    if act == "relu":
        y = g.relu(y, f"{scope}/relu")
    elif act == "relu6":
        y = g.relu6(y, f"{scope}/relu6")
    return y


def resnet50(
    *,
    width: int = 64,
    blocks: Sequence[int] = (3, 4, 6, 3),
    size: int = 224,
    classes: int = 1000,
    seed: int = 0,
    groups: int = 1,
    group_width: int = 64,
    squeeze_excitation: int = 0,
    name: str = "resnet50",
) -> onnx.ModelProto:
    """ResNet-50 v1.5: bottleneck blocks, stride in the 3x3 conv, projection shortcuts. With
    `groups`, ResNeXt: the 3x3 convolution has `groups` groups of `group_width` channels in
    the first stage (torchvision's width = planes * group_width / 64 * groups). With
    `squeeze_excitation` (a reduction ratio), SENet: each block's last batch norm is scaled
    per channel by sigmoid(fc(relu(fc(global_avg_pool)))), the fcs 1x1 convolutions with
    bias, as `scale * x` (torchvision's order)."""
    g = GraphBuilder(seed)
    g.channels["input"] = 3
    x = _conv_bn(g, "input", "/stem", width, 7, stride=2)
    x = g.max_pool(x, "/maxpool", 3, 2, 1)
    for stage, count in enumerate(blocks):
        planes = width * 2**stage
        for index in range(count):
            scope = f"/layer{stage + 1}/layer{stage + 1}.{index}"
            stride = 2 if index == 0 and stage > 0 else 1
            inner = planes * group_width // 64 * groups
            y = _conv_bn(g, x, f"{scope}/1", inner, 1)
            y = _conv_bn(g, y, f"{scope}/2", inner, 3, stride, groups)
            y = _conv_bn(g, y, f"{scope}/3", planes * 4, 1, act=None, bn_scale=0.3)
            if squeeze_excitation:
                y = _squeeze_excitation(g, y, f"{scope}/se", squeeze_excitation)
            if index == 0:
                x = _conv_bn(g, x, f"{scope}/downsample", planes * 4, 1, stride, act=None)
            x = g.relu(g.add(y, x, f"{scope}/add"), f"{scope}/relu")
    return g.model(name, "input", (1, 3, size, size), g.classifier(x, classes))


def _squeeze_excitation(g: GraphBuilder, x: str, scope: str, reduction: int) -> str:
    c = g.channels[x]
    scale = g._node("GlobalAveragePool", f"{scope}/avgpool", [x], c)
    scale = g.relu(
        g.conv(scale, f"{scope}/fc1", max(1, c // reduction), 1, bias=True), f"{scope}/relu"
    )
    scale = g._node("Sigmoid", scope, [g.conv(scale, f"{scope}/fc2", c, 1, bias=True)], c)
    return g._node("Mul", scope, [scale, x], c)


def se_resnet50(**changes: object) -> onnx.ModelProto:
    """SE-ResNet-50: ResNet-50 with squeeze-and-excitation (reduction 16) in every block."""
    return resnet50(**{"squeeze_excitation": 16, "name": "se_resnet50", "seed": 2, **changes})


def resnext50(**changes: object) -> onnx.ModelProto:
    """ResNeXt-50 32x4d: ResNet-50 with 32 groups of 4 channels (then 8, 16, 32) in its 3x3
    convolutions."""
    return resnet50(**{"groups": 32, "group_width": 4, "name": "resnext50", **changes})


def mobilenet_v2(
    *,
    width: float = 1.0,
    repeats: Sequence[int] = (1, 2, 3, 4, 3, 3, 1),
    last: int = 1280,
    size: int = 224,
    classes: int = 1000,
    seed: int = 1,
) -> onnx.ModelProto:
    """MobileNetV2: inverted residuals (expand 1x1, depthwise 3x3, project 1x1), ReLU6."""

    def channels(c: float) -> int:
        return max(8, int(c * width + 4) // 8 * 8)

    settings = [
        (1, 16, 1),
        (6, 24, 2),
        (6, 32, 2),
        (6, 64, 2),
        (6, 96, 1),
        (6, 160, 2),
        (6, 320, 1),
    ]  # (expansion, channels, stride of the first block)
    g = GraphBuilder(seed)
    g.channels["input"] = 3
    x = _conv_bn(g, "input", "/features.0", channels(32), 3, 2, act="relu6")
    layer = 1
    for (expansion, out, first_stride), count in zip(settings, repeats, strict=True):
        for index in range(count):
            scope = f"/features.{layer}"
            stride = first_stride if index == 0 else 1
            in_channels = g.channels[x]
            hidden = in_channels * expansion
            y = x
            if expansion != 1:
                y = _conv_bn(g, y, f"{scope}/expand", hidden, 1, act="relu6")
            y = _conv_bn(g, y, f"{scope}/dw", hidden, 3, stride, groups=hidden, act="relu6")
            y = _conv_bn(g, y, f"{scope}/project", channels(out), 1, act=None, bn_scale=0.5)
            x = g.add(x, y, f"{scope}/add") if stride == 1 and in_channels == g.channels[y] else y
            layer += 1
    x = _conv_bn(g, x, f"/features.{layer}", last, 1, act="relu6")
    return g.model("mobilenet_v2", "input", (1, 3, size, size), g.classifier(x, classes))


def unet(
    *, base: int = 16, depth: int = 4, size: int = 128, classes: int = 2, seed: int = 2
) -> onnx.ModelProto:
    """UNet: double 3x3 conv blocks, max-pool down, 2x2 ConvTranspose up, Concat skips."""
    g = GraphBuilder(seed)
    g.channels["image"] = 3

    def double_conv(x: str, scope: str, c: int) -> str:
        return _conv_bn(g, _conv_bn(g, x, f"{scope}/a", c, 3), f"{scope}/b", c, 3)

    skips = []
    x = "image"
    for level in range(depth):
        x = double_conv(x, f"/down{level}", base * 2**level)
        skips.append(x)
        x = g.max_pool(x, f"/down{level}/pool", 2, 2, 0)
    x = double_conv(x, "/bottleneck", base * 2**depth)
    for level in reversed(range(depth)):
        up = g.conv_transpose(x, f"/up{level}/upconv", base * 2**level)
        x = double_conv(
            g.concat([skips[level], up], f"/up{level}/cat"), f"/up{level}", base * 2**level
        )
    mask = g.conv(x, "/head", classes, 1, bias=True)
    return g.model("unet", "image", (1, 3, size, size), [mask])


def densenet121(
    *,
    growth: int = 32,
    blocks: Sequence[int] = (6, 12, 24, 16),
    init: int = 64,
    size: int = 224,
    classes: int = 1000,
    seed: int = 3,
    affine_batch_norm: bool = False,
    name: str = "densenet121",
) -> onnx.ModelProto:
    """DenseNet-121: BN-ReLU-Conv dense layers whose outputs are concatenated, transitions
    halving channels (1x1 conv) and resolution (2x2 average pooling); with
    `affine_batch_norm`, each batch norm as Mul and Add of [C, 1, 1] constants."""
    g = GraphBuilder(seed, affine_batch_norm)
    g.channels["input"] = 3
    x = _conv_bn(g, "input", "/features/conv0", init, 7, 2)
    x = g.max_pool(x, "/features/pool0", 3, 2, 1)
    for block, count in enumerate(blocks):
        for index in range(count):
            scope = f"/features/denseblock{block + 1}/denselayer{index + 1}"
            y = g.relu(g.batch_norm(x, f"{scope}/norm1"), f"{scope}/relu1")
            y = g.conv(y, f"{scope}/conv1", 4 * growth, 1)
            y = g.relu(g.batch_norm(y, f"{scope}/norm2"), f"{scope}/relu2")
            y = g.conv(y, f"{scope}/conv2", growth, 3)
            x = g.concat([x, y], f"{scope}/cat")
        if block != len(blocks) - 1:
            scope = f"/features/transition{block + 1}"
            y = g.relu(g.batch_norm(x, f"{scope}/norm"), f"{scope}/relu")
            y = g.conv(y, f"{scope}/conv", g.channels[x] // 2, 1)
            x = g.avg_pool(y, f"{scope}/pool", 2, 2)
    x = g.relu(g.batch_norm(x, "/features/norm5"), "/features/relu5")
    return g.model(name, "input", (1, 3, size, size), g.classifier(x, classes))


#: name -> (full-size builder, small builder for tests)
ZOO: dict[str, tuple[Callable[[], onnx.ModelProto], Callable[[], onnx.ModelProto]]] = {
    "resnet50": (resnet50, lambda: resnet50(width=8, blocks=(1, 1, 1, 1), size=64, classes=10)),
    "resnext50": (
        resnext50,
        lambda: resnext50(
            width=8, blocks=(1, 1, 1, 1), size=64, classes=10, groups=4, group_width=16
        ),
    ),
    "se_resnet50": (
        se_resnet50,
        lambda: se_resnet50(
            width=8, blocks=(1, 1, 1, 1), size=64, classes=10, squeeze_excitation=4
        ),
    ),
    "mobilenet_v2": (
        mobilenet_v2,
        lambda: mobilenet_v2(
            width=0.25, repeats=(1, 2, 1, 1, 1, 1, 1), last=64, size=64, classes=10
        ),
    ),
    "unet": (unet, lambda: unet(base=4, depth=2, size=32)),
    "densenet121": (
        densenet121,
        lambda: densenet121(growth=8, blocks=(2, 3), init=16, size=64, classes=10),
    ),
    "densenet121_zoo": (
        lambda: densenet121(affine_batch_norm=True, name="densenet121_zoo"),
        lambda: densenet121(
            growth=8,
            blocks=(2, 3),
            init=20,
            size=64,
            classes=10,
            affine_batch_norm=True,
            name="densenet121_zoo",
        ),
    ),
}


def build(name: str, small: bool = False) -> onnx.ModelProto:
    """The zoo model `name`, full size or its small variant."""
    full, reduced = ZOO[name]
    return reduced() if small else full()


def write_model(name: str, small: bool, folder: Path) -> Path:
    """Builds `name` and saves it as `folder/<name>[_small].onnx`; returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}{'_small' if small else ''}.onnx"
    onnx.save(build(name, small), path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument(
        "names", nargs="*", help=f"models to build (default: all of {', '.join(ZOO)})"
    )
    parser.add_argument("--small", action="store_true", help="the reduced variants")
    parser.add_argument(
        "-o",
        "--output-dir",
        "--out",
        type=Path,
        default=Path("."),
        help="the folder to write the .onnx files into (default: the current directory)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(ZOO))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(ZOO)}")
    for name in args.names or ZOO:
        print(f"wrote {write_model(name, args.small, args.output_dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
