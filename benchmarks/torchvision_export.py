"""torchvision's models exported to ONNX by both of torch's exporters, cached as files.

    python -m nnlayout.benchmarks.torchvision_export                    # every model, both
    python -m nnlayout.benchmarks.torchvision_export --models resnet18 --exporters dynamo

Each model is built with `weights=None` (seeded with torch.manual_seed(0)), in eval mode, for
one 3x224x224 image (inception_v3: 3x299x299; the video classifiers one clip, `VIDEO`), and
exported with the classic exporter
(`torch.onnx.export(..., dynamo=False, opset_version=17)`) and with torch's default one
(`dynamo=True`, its default opset). Segmentation models are built with
`weights_backbone=None` too and exported through a wrapper that returns their `"out"` tensor
rather than their dictionary. Attention's fused fast path is disabled
(`torch.backends.mha.set_fastpath_enabled(False)`), as the classic exporter needs for vit_b_16.

Freshly initialised torchvision models collapse their outputs in eval mode: a batch norm's
running statistics are mean 0 and variance 1, which is far from the real statistics of its
input, so that activations shrink or vanish layer after layer (GoogLeNet's output is its last
bias, MobileNetV2's about 3e-9) and comparing two runtimes on them proves nothing. Before the
export, every batch norm's running statistics are therefore set from a few seeded random
batches (forward passes in train mode under `torch.no_grad()`, with cumulative averaging),
and the model is put back in eval mode.

For the same reason, a Linear or Conv weight that is entirely zero is given seeded random
values of the scale torch gives a fresh layer (`kaiming_uniform_` with a = sqrt(5), bound
1/sqrt(fan_in)): torchvision zero-initialises ViT's classification head (`heads.head`), so
that vit_b_16's output would be all zeros whatever its input. Among the 26 models, that head
is the only such weight (ViT's class token is zero too, but it is not a layer's weight and the
output still depends on the input through attention).

Each export runs in a subprocess with a time limit (5 minutes by default): an export that
fails or times out is recorded in `<model>-<exporter>.error` beside where its .onnx would be
(first line: the reason), and the next one starts. A cached file is reused unless `--force`.
Needs torch, torchvision and onnxscript (`pip install -e '.[models]'`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

#: The models of issue 26, roughly from the quickest export to the slowest.
MODELS = [
    "resnet18",
    "squeezenet1_1",
    "alexnet",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "mnasnet1_0",
    "shufflenet_v2_x1_0",
    "efficientnet_b0",
    "regnet_x_400mf",
    "regnet_y_400mf",
    "googlenet",
    "vgg11_bn",
    "resnet50",
    "resnext50_32x4d",
    "wide_resnet50_2",
    "densenet121",
    "inception_v3",
    "efficientnet_v2_s",
    "convnext_tiny",
    "lraspp_mobilenet_v3_large",
    "deeplabv3_mobilenet_v3_large",
    "fcn_resnet50",
    "vit_b_16",
    "swin_t",
    "maxvit_t",
    "r3d_18",
    "mc3_18",
    "r2plus1d_18",
    "s3d",
    "swin3d_t",
    "mvit_v2_s",
]
SEGMENTATION = {"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", "fcn_resnet50"}
EXPORTERS = ["classic", "dynamo"]
#: Not an exporter of the float zoo: the model quantized by torch (`quantized_fx`), then the
#: classic exporter; what `zoo_int8 --quantizer torch-fx` measures.
FX_INT8 = "fx-int8"
#: Likewise, the model's quantizable variant (torchvision.models.quantization) quantized in
#: torch's eager mode (`quantized_eager`), as torchvision's quantization tutorial does it.
EAGER_INT8 = "eager-int8"
#: Likewise, the model quantized by torch's pt2e flow (`quantized_pt2e`: torchao's
#: prepare_pt2e/convert_pt2e, where torch's deprecation notices send quantize_fx users), then
#: the dynamo exporter (which keeps biases float).
PT2E_INT8 = "pt2e-int8"
#: Likewise with torchao's X86InductorQuantizer (u8 activations; a strict capture), whose
#: residual blocks add a convolution's float result (`quantized_pt2e`).
PT2E_X86_INT8 = "pt2e-x86-int8"
#: The models torchvision has a quantizable variant of, for EAGER_INT8.
EAGER_MODELS = (
    "googlenet",
    "inception_v3",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "resnet18",
    "resnet50",
    "resnext101_32x8d",
    "resnext101_64x4d",
    "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5",
    "shufflenet_v2_x2_0",
)
CLASSIC_OPSET = 17
DEFAULT_CACHE = Path.home() / ".cache" / "nnlayout" / "torchvision"
TIMEOUT_SECONDS = 300
CALIBRATION_BATCHES = 3
NEEDS = ("torch", "torchvision", "onnxscript")


#: Video classifiers (3-D convolutions and pooling; swin3d_t's and mvit_v2_s's attention) and
#: the clip each is given: 8 frames of 112x112 (torchvision trains them on 16), 16 frames of
#: 224x224 for s3d, whose last pooling window is 2x7x7, and for the two transformers.
VIDEO = {
    "r3d_18": (8, 112),
    "mc3_18": (8, 112),
    "r2plus1d_18": (8, 112),
    "s3d": (16, 224),
    "swin3d_t": (16, 224),
    "mvit_v2_s": (16, 224),
}


def input_shape(model: str) -> tuple[int, ...]:
    """One input of `model` without its batch axis: an image, or a video clip (C, T, H, W)."""
    if model in VIDEO:
        frames, size = VIDEO[model]
        return (3, frames, size, size)
    size = 299 if model == "inception_v3" else 224
    return (3, size, size)


def onnx_path(cache: Path, model: str, exporter: str) -> Path:
    return cache / f"{model}-{exporter}.onnx"


def error_path(cache: Path, model: str, exporter: str) -> Path:
    return cache / f"{model}-{exporter}.error"


def missing_packages() -> list[str]:
    """The packages of the `models` extra that are not installed."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def require(parser: argparse.ArgumentParser, missing: Sequence[str], why: str, extra: str) -> None:
    """Exits with code 2 and one line on stderr if packages `missing` are needed for `why`."""
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        print(
            f"{parser.prog}: error: {why} needs {', '.join(missing)}, which {verb} not "
            f"installed: pip install -e '.[{extra}]'",
            file=sys.stderr,
        )
        raise SystemExit(2)


# ------------------------------------------------------------------ in the export subprocess
def build(model: str, quantizable: bool = False) -> object:
    """The torchvision model `model` (its quantizable variant, not quantized yet, with
    `quantizable`), seeded, its batch-norm statistics set, in eval mode."""
    import torch
    import torchvision

    torch.manual_seed(0)
    # A segmentation model's backbone has weights of its own, downloaded unless told not to.
    extra: dict[str, object] = {"weights_backbone": None} if model in SEGMENTATION else {}
    if quantizable:
        extra = {"quantize": False}
    name = f"quantized_{model}" if quantizable else model
    net = torchvision.models.get_model(name, weights=None, **extra)
    calibrated(net, input_shape(model))
    if model in SEGMENTATION:
        net = _out_only(net)
    return net


def calibrated(net: object, shape: tuple[int, ...]) -> None:
    """`net` (a torch module) with its batch norms' running statistics set from a few seeded
    random batches of inputs of `shape` (without the batch axis) and its all-zero layer
    weights given random values (see the module's docstring), in eval mode."""
    import torch

    batch_norms = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in batch_norms]
    for m in batch_norms:
        m.momentum = None  # a cumulative average over the calibration batches
    generator = torch.Generator().manual_seed(1)
    net.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES if batch_norms else 0):
            net(torch.randn(4, *shape, generator=generator))
    for m, momentum in zip(batch_norms, momenta, strict=True):
        m.momentum = momentum
    net.eval()
    _randomise_zero_weights(net)


def _randomise_zero_weights(net: object) -> None:
    """Gives each Linear/Conv weight that is all zeros seeded values of torch's default scale."""
    import math

    import torch

    generator = torch.Generator().manual_seed(3)
    layers = (torch.nn.Linear, torch.nn.modules.conv._ConvNd)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, layers) and not m.weight.any():
                torch.nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), generator=generator)


def _out_only(inner: object) -> object:
    """A segmentation model that returns its "out" tensor, not its dictionary."""
    import torch

    class Out(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x)["out"]

    return Out()


def export_one(model: str, exporter: str, path: Path) -> None:
    """Exports `model` with `exporter` to `path` (in this process)."""
    import torch

    # Else, in eval mode, the classic exporter meets attention's fused fast path
    # (aten::_native_multi_head_attention, which it cannot export); the same arithmetic.
    torch.backends.mha.set_fastpath_enabled(False)
    net = build(model, quantizable=exporter == EAGER_INT8)
    x = torch.randn(1, *input_shape(model), generator=torch.Generator().manual_seed(2))
    if exporter == FX_INT8:
        net = quantized_fx(net, x)
    if exporter == EAGER_INT8:
        net = quantized_eager(net, x)
    if exporter in (PT2E_INT8, PT2E_X86_INT8):
        net = quantized_pt2e(net, x, x86=exporter == PT2E_X86_INT8)
    partial = path.parent / f"{path.name}.partial"  # moved into place when complete
    partial.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        if exporter in ("classic", FX_INT8, EAGER_INT8):
            torch.onnx.export(
                net,
                (x,),
                str(partial / path.name),
                dynamo=False,
                opset_version=CLASSIC_OPSET,
                input_names=["input"],
                output_names=["output"],
            )
        else:
            torch.onnx.export(net, (x,), str(partial / path.name), dynamo=True)
    for written in sorted(partial.iterdir(), key=lambda p: p.name == path.name):
        written.replace(path.parent / written.name)  # the .onnx last: external data first
    partial.rmdir()


def quantized_fx(net: object, x: object) -> object:
    """`net` quantized as torch's own tooling does it (`torch.ao.quantization.quantize_fx`,
    the x86 backend's default qconfig: u8 activations, per-channel s8 weights, the Relu
    after a convolution fused into it), calibrated on seeded random batches."""
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    prepared = prepare_fx(net, get_default_qconfig_mapping("x86"), (x,))
    generator = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            prepared(torch.randn(4, *x.shape[1:], generator=generator))
    return convert_fx(prepared)


def quantized_eager(net: object, x: object) -> object:
    """A quantizable torchvision model quantized in torch's eager mode: its convolutions,
    batch norms and Relus fused (`fuse_model`), the x86 backend's default qconfig, observers
    calibrated on seeded random batches, converted to quantized modules."""
    import torch
    from torch.ao.quantization import convert, get_default_qconfig, prepare

    net.fuse_model(is_qat=False)  # type: ignore[attr-defined]
    net.qconfig = get_default_qconfig("x86")  # type: ignore[attr-defined]
    prepared = prepare(net)
    generator = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            prepared(torch.randn(4, *x.shape[1:], generator=generator))
    return convert(prepared)


def quantized_pt2e(net: object, x: object, x86: bool = False) -> object:
    """`net` quantized by torch's pt2e flow: captured by `torch.export`, annotated by torchao's
    XNNPACK quantizer (symmetric per-channel s8 weights, s8 activations) or, `x86`, its
    X86InductorQuantizer (per-channel s8 weights, u8 activations; torchao 0.18's needs a
    strict capture, else it stops at torchvision's convolutions: "Input partition has more
    than one output node"), calibrated on seeded random images, converted
    (`convert_pt2e`)."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    if x86:
        from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
            X86InductorQuantizer,
            get_default_x86_inductor_quantization_config,
        )

        quantizer = X86InductorQuantizer()
        quantizer.set_global(get_default_x86_inductor_quantization_config())
    else:
        from torchao.testing.pt2e._xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )

        quantizer = XNNPACKQuantizer()
        quantizer.set_global(get_symmetric_quantization_config(is_per_channel=True))
    captured = torch.export.export(net, (x,), strict=x86).module()
    prepared = prepare_pt2e(captured, quantizer)
    generator = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for _ in range(4 * CALIBRATION_BATCHES):  # the captured graph takes x's batch of 1
            prepared(torch.randn(*x.shape, generator=generator))
    return convert_pt2e(prepared)


# ------------------------------------------------------------------ the parent
def export_cached(
    cache: Path, model: str, exporter: str, timeout: float, force: bool = False
) -> str | None:
    """Ensures `<model>-<exporter>.onnx` is in `cache`, exporting it in a subprocess; returns
    None when it is there, else the recorded reason it is not (also when recorded before)."""
    path, error = onnx_path(cache, model, exporter), error_path(cache, model, exporter)
    if not force:
        if path.is_file():
            return None
        if error.is_file():
            return error.read_text(encoding="utf-8").splitlines()[0]
    cache.mkdir(parents=True, exist_ok=True)
    error.unlink(missing_ok=True)
    command = [sys.executable, "-m", "nnlayout.benchmarks.torchvision_export"]
    command += ["--one", model, exporter, str(path)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        reason = f"timeout: the export took more than {timeout:g} s"
        log = ""
    else:
        if done.returncode == 0 and path.is_file():
            return None
        log = done.stderr + done.stdout
        reason = f"export failed: {last_error_line(log)}"
    seconds = time.perf_counter() - start
    error.write_text(f"{reason}\n({seconds:.0f} s)\n\n{log}", encoding="utf-8")
    return reason


def last_error_line(log: str) -> str:
    """The line of a traceback that names the exception (the last such line)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error" in line.split(":")[0] or "Exception" in line.split(":")[0]:
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """--models, --exporters and --cache-dir, shared with the benchmark."""
    parser.add_argument(
        "--models",
        default=",".join(MODELS),
        help=f"comma-separated torchvision model names (default: all of {', '.join(MODELS)})",
    )
    parser.add_argument(
        "--exporters",
        default=",".join(EXPORTERS),
        help="comma-separated, of classic (dynamo=False, opset 17) and dynamo "
        "(torch's default exporter and opset)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("NNLAYOUT_TORCHVISION_CACHE", DEFAULT_CACHE)),
        help="where the exported .onnx files (and .error records) are kept "
        f"(default: $NNLAYOUT_TORCHVISION_CACHE or {DEFAULT_CACHE})",
    )


def chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, str]]:
    """The (model, exporter) pairs the arguments name; unknown names end the program."""
    models, exporters = args.models.split(","), args.exporters.split(",")
    unknown = [m for m in models if m not in MODELS] + [e for e in exporters if e not in EXPORTERS]
    if unknown:
        parser.error(f"unknown model or exporter: {', '.join(unknown)}")
    return [(m, e) for m in models for e in exporters]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_arguments(parser)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS, help="seconds each")
    parser.add_argument("--force", action="store_true", help="export again what is cached")
    parser.add_argument("--one", nargs=3, metavar=("MODEL", "EXPORTER", "PATH"), help="internal")
    args = parser.parse_args(argv)
    require(parser, missing_packages(), "exporting torchvision models", "models")
    if args.one:
        export_one(args.one[0], args.one[1], Path(args.one[2]))
        return 0
    failed = 0
    for model, exporter in chosen(parser, args):
        start = time.perf_counter()
        reason = export_cached(args.cache_dir, model, exporter, args.timeout, args.force)
        failed += reason is not None
        status = "ok" if reason is None else reason
        print(f"{model} {exporter}: {status} ({time.perf_counter() - start:.0f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
