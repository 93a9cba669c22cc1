"""timm's image models as users export them: does each import, and does it compute what
onnxruntime computes on every target?

    python -m nnlayout.benchmarks.timm_zoo                          # every model, both exporters
    python -m nnlayout.benchmarks.timm_zoo --models convnext_atto,levit_128s --exporters dynamo
    python -m nnlayout.benchmarks.timm_zoo --targets host --markdown

Each model of `MODELS` (small variants of the families timm users reach for: mobile CNNs,
RegNets, RepVGG, HRNet, ConvNeXt, EdgeNeXt, PoolFormer, MobileViT, FastViT, EfficientViT,
EfficientFormer, LeViT, ViT, DeiT, Swin, PiT, XCiT, MLP-Mixer, ResMLP, NF-Nets, ...) is
built by `timm.create_model(name, pretrained=False)` (seeded, nothing downloaded), its
batch-norm statistics set from random batches and any all-zero layer weight given random
values first (`torchvision_export.calibrated`: a fresh model's outputs collapse otherwise),
in eval mode, and exported for one 3x224x224 image by each of torch's exporters; then
imported, compiled with `default-pipeline` for each of `--targets` (ref, avx2, avx512, onednn
and host by default), padding on and off, and run as the generated module on the same seeded
image as onnxruntime. Columns: imported (or the refusal, or torch's export error, in one
line), ops (kernels on host), max rel diff (from onnxruntime, relative to the output's largest
magnitude, worst over the targets and padding) and the output's largest magnitude. A census,
not a timing (`zoo_latency.py` and `torchvision_zoo.py` time). Needs torch, onnxscript and
timm (`pip install -e '.[models]'`). Exits 1 if a result differs from onnxruntime's by more
than 1e-4 relative; 2 on bad arguments or a missing package.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nnlayout.benchmarks import export_census
from nnlayout.benchmarks.language_models import _stdout_to_stderr

SIZE = 224
MODELS = (
    "resnet18",
    "efficientnet_b0",
    "tf_efficientnet_lite0",
    "tf_efficientnet_b0",
    "mobilenetv3_large_100",
    "mobilenetv4_conv_small",
    "lcnet_050",
    "ghostnet_100",
    "rexnet_100",
    "regnety_002",
    "repvgg_a0",
    "dla34",
    "cspresnet50",
    "hrnet_w18_small",
    "convnext_atto",
    "convnextv2_atto",
    "edgenext_xx_small",
    "poolformer_s12",
    "mobilevit_xxs",
    "mobilevitv2_050",
    "fastvit_t8",
    "efficientvit_b0",
    "efficientformer_l1",
    "levit_128s",
    "vit_tiny_patch16_224",
    "deit_tiny_patch16_224",
    "swin_tiny_patch4_window7_224",
    "pit_ti_224",
    "xcit_nano_12_p16_224",
    "mixer_s16_224",
    "resmlp_12_224",
    "nf_resnet26",
    "eca_nfnet_l0",
    "inception_next_tiny",
    "hgnetv2_b0",
    "coat_lite_tiny",
    "tinynet_e",
    "mnasnet_small",
    "dpn48b",
    "selecsls42b",
)


def export(name: str, exporter: str, folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """The model exported into `folder`, and the image it was exported with."""
    import timm
    import torch

    from nnlayout.benchmarks.torchvision_export import CLASSIC_OPSET, calibrated

    torch.backends.mha.set_fastpath_enabled(False)  # the classic exporter cannot export it
    torch.manual_seed(0)
    net = timm.create_model(name, pretrained=False)
    calibrated(net, (3, SIZE, SIZE))
    image = np.random.default_rng(2).standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)
    path = folder / f"{name}-{exporter}.onnx"
    options = {"dynamo": exporter == "dynamo"} | (
        {} if exporter == "dynamo" else {"opset_version": CLASSIC_OPSET}
    )
    with torch.no_grad(), warnings.catch_warnings(), _stdout_to_stderr():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net, (torch.from_numpy(image),), str(path), input_names=["image"], **options
        )
    return path, {"image": image}


def main(argv: Sequence[str] | None = None) -> int:
    return export_census.main(argv, "nnlayout.benchmarks.timm_zoo", __doc__, MODELS, "timm", export)


if __name__ == "__main__":
    raise SystemExit(main())
