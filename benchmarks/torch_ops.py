"""torch's operations as users write them in their own models: does each export import, and
does it compute what onnxruntime computes on every target?

    python -m nnlayout.benchmarks.torch_ops                       # every case, both exporters
    python -m nnlayout.benchmarks.torch_ops --models argmax,lstm --exporters classic
    python -m nnlayout.benchmarks.torch_ops --targets host --markdown

Each case of `CASES` is a small torch module around one operation (or a few that go
together): argmax and topk at a classifier's end, pixel shuffle, recurrent layers, log-softmax,
reductions of masks, rounding, trigonometry, tiling, one-hot, padding modes, attention and
so on, on a seeded input (an image [1, 8, 16, 16], a sequence [1, 10, 16], or indices).
Each is exported by each of torch's exporters (the classic one at opset 17, the dynamo one),
imported, compiled with `default-pipeline` for each of `--targets`, padding on and off, and
run as the generated module on the same input as onnxruntime (`export_census.row`). Columns:
imported (or the refusal, or torch's export error, in one line), ops, max rel diff, the
output's largest magnitude. A census of coverage, not a timing. Needs torch and onnxscript
(`pip install -e '.[models]'`). Exits 1 if a result differs from onnxruntime's by more than
1e-4 relative; 2 on bad arguments or a missing package.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nnlayout.benchmarks import export_census
from nnlayout.benchmarks.language_models import _stdout_to_stderr

#: The inputs a case is given: an image, a sequence, a batch of attention heads, indices.
INPUTS = {
    "image": (1, 8, 16, 16),
    "sequence": (1, 10, 16),
    "heads": (1, 2, 10, 16),
}
# Each case: its input kind, and a function of torch, its module `nn` and `F` that returns
# (the layers it owns, or None, and its forward of (layers, input)).
Case = tuple[str, Callable[[Any, Any, Any], tuple[Any, Callable[[Any, Any], Any]]]]
CASES: dict[str, Case] = {
    "argmax": ("image", lambda t, nn, F: (None, lambda m, x: x.argmax(1))),
    "argmax_keepdim": ("image", lambda t, nn, F: (None, lambda m, x: x.argmax(1, keepdim=True))),
    "max_with_indices": ("image", lambda t, nn, F: (None, lambda m, x: x.max(1)[1])),
    "argmin": ("image", lambda t, nn, F: (None, lambda m, x: x.argmin(-1))),
    "topk": ("image", lambda t, nn, F: (None, lambda m, x: x.flatten(1).topk(5))),
    "sort": ("image", lambda t, nn, F: (None, lambda m, x: x.flatten(1).sort(descending=True)[0])),
    "pixel_shuffle": ("image", lambda t, nn, F: (None, lambda m, x: F.pixel_shuffle(x, 2))),
    "pixel_unshuffle": ("image", lambda t, nn, F: (None, lambda m, x: F.pixel_unshuffle(x, 2))),
    "lstm": (
        "sequence",
        lambda t, nn, F: (nn.LSTM(16, 32, batch_first=True), lambda m, x: m(x)[0]),
    ),
    "lstm_2_layers_bidirectional": (
        "sequence",
        lambda t, nn, F: (
            nn.LSTM(16, 32, num_layers=2, bidirectional=True, batch_first=True),
            lambda m, x: m(x)[0],
        ),
    ),
    "gru": ("sequence", lambda t, nn, F: (nn.GRU(16, 32, batch_first=True), lambda m, x: m(x)[0])),
    "rnn": ("sequence", lambda t, nn, F: (nn.RNN(16, 32, batch_first=True), lambda m, x: m(x)[0])),
    "log_softmax": ("image", lambda t, nn, F: (None, lambda m, x: F.log_softmax(x, 1))),
    "logsumexp": ("image", lambda t, nn, F: (None, lambda m, x: x.logsumexp(1))),
    "any_all": (
        "image",
        lambda t, nn, F: (None, lambda m, x: (x > 0).any(1).float() + (x > 0).all(1).float()),
    ),
    "mask_count": ("image", lambda t, nn, F: (None, lambda m, x: (x > 0).long().sum(-1))),
    "floor_round": (
        "image",
        lambda t, nn, F: (None, lambda m, x: t.floor(x * 3) / 2 + t.round(x) + t.ceil(x)),
    ),
    "remainder": ("image", lambda t, nn, F: (None, lambda m, x: t.remainder(x, 0.7))),
    "sign": ("image", lambda t, nn, F: (None, lambda m, x: x.sign() * x.abs().sqrt())),
    "shrink": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.tanhshrink(x) + F.hardshrink(x) + F.softshrink(x)),
    ),
    "trigonometry": (
        "image",
        lambda t, nn, F: (None, lambda m, x: t.sin(x) + t.cos(x) + t.tan(x * 0.1)),
    ),
    "atan2": ("image", lambda t, nn, F: (None, lambda m, x: t.atan2(x, x + 1))),
    "celu": ("image", lambda t, nn, F: (None, lambda m, x: F.celu(x) + F.softsign(x))),
    "tril": ("image", lambda t, nn, F: (None, lambda m, x: x.tril() + x.triu(1))),
    "repeat": ("image", lambda t, nn, F: (None, lambda m, x: x.repeat(1, 2, 1, 1))),
    "repeat_interleave": (
        "image",
        lambda t, nn, F: (None, lambda m, x: x.repeat_interleave(2, dim=1)),
    ),
    "one_hot": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.one_hot(x.argmax(1), 8).float()),
    ),
    "pad_circular": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.pad(x, (1, 1, 2, 2), mode="circular")),
    ),
    "pad_reflect": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.pad(x, (1, 1, 2, 2), mode="reflect")),
    ),
    "flip_roll": ("image", lambda t, nn, F: (None, lambda m, x: x.flip(3) + x.roll(2, 3))),
    "unfold": ("image", lambda t, nn, F: (None, lambda m, x: F.unfold(x, 3))),
    "bicubic": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.interpolate(x, scale_factor=2, mode="bicubic")),
    ),
    "bilinear_align_corners": (
        "image",
        lambda t, nn, F: (
            None,
            lambda m, x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        ),
    ),
    "grid_sample": (
        "image",
        lambda t, nn, F: (
            None,
            lambda m, x: F.grid_sample(x, x[:, :2].permute(0, 2, 3, 1).tanh(), align_corners=False),
        ),
    ),
    "conv_transpose": (
        "image",
        lambda t, nn, F: (nn.ConvTranspose2d(8, 4, 4, 2, 1), lambda m, x: m(x)),
    ),
    "conv1d": ("sequence", lambda t, nn, F: (nn.Conv1d(10, 4, 3), lambda m, x: m(x))),
    "group_norm": ("image", lambda t, nn, F: (nn.GroupNorm(2, 8), lambda m, x: m(x))),
    "normalize": ("image", lambda t, nn, F: (None, lambda m, x: F.normalize(x, dim=1))),
    "std": ("image", lambda t, nn, F: (None, lambda m, x: x.std(1))),
    "amax_amin": ("image", lambda t, nn, F: (None, lambda m, x: x.amax((2, 3)) - x.amin((2, 3)))),
    "prod": ("image", lambda t, nn, F: (None, lambda m, x: x.prod(1))),
    "adaptive_pools": (
        "image",
        lambda t, nn, F: (
            None,
            lambda m, x: F.adaptive_avg_pool2d(x, 4).sum() + F.adaptive_max_pool2d(x, 1).sum(),
        ),
    ),
    "glu": ("image", lambda t, nn, F: (None, lambda m, x: F.glu(x, 1))),
    "activations": (
        "image",
        lambda t, nn, F: (
            None,
            lambda m, x: F.selu(x) + F.elu(x, 0.5) + F.mish(x) + F.logsigmoid(x) + F.relu6(x),
        ),
    ),
    "prelu": ("image", lambda t, nn, F: (nn.PReLU(8), lambda m, x: m(x))),
    "chunk_cat": (
        "image",
        lambda t, nn, F: (None, lambda m, x: t.cat(x.chunk(4, 1)[::-1], 1)),
    ),
    "einsum_two_contractions": (
        "image",
        lambda t, nn, F: (None, lambda m, x: t.einsum("bchw,bdhw->bcd", x, x)),
    ),
    "scaled_dot_product_attention": (
        "heads",
        lambda t, nn, F: (None, lambda m, x: F.scaled_dot_product_attention(x, x, x)),
    ),
    "causal_attention": (
        "heads",
        lambda t, nn, F: (
            None,
            lambda m, x: F.scaled_dot_product_attention(x, x, x, is_causal=True),
        ),
    ),
    "multihead_attention": (
        "sequence",
        lambda t, nn, F: (
            nn.MultiheadAttention(16, 2, batch_first=True),
            lambda m, x: m(x, x, x)[0],
        ),
    ),
    "transformer_encoder_layer": (
        "sequence",
        lambda t, nn, F: (
            nn.TransformerEncoderLayer(16, 2, 32, batch_first=True),
            lambda m, x: m(x),
        ),
    ),
    "where_sum": ("image", lambda t, nn, F: (None, lambda m, x: t.where(x > 0, x, 0).sum())),
    "cumsum": ("image", lambda t, nn, F: (None, lambda m, x: x.cumsum(2))),
    "max_pool_indices": (
        "image",
        lambda t, nn, F: (None, lambda m, x: F.max_pool2d(x, 2, return_indices=True)[1].float()),
    ),
    "conv3d": ("image", lambda t, nn, F: (nn.Conv3d(8, 4, 1), lambda m, x: m(x.unsqueeze(2)))),
    "conv_transpose3d": (
        "image",
        lambda t, nn, F: (nn.ConvTranspose3d(8, 4, 2, stride=2), lambda m, x: m(x.unsqueeze(2))),
    ),
}
MODELS = tuple(CASES)


def torch_module(name: str) -> Any:
    """The case `name` as a torch module in eval mode."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    layers, forward = CASES[name][1](torch, nn, F)

    class Case(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = layers

        def forward(self, x: Any) -> Any:
            return forward(self.layers, x)

    return Case().eval()


def export(name: str, exporter: str, folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """The case exported into `folder`, and the input it was exported with."""
    import torch

    from nnlayout.benchmarks.torchvision_export import CLASSIC_OPSET

    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # the classic exporter cannot export it
    model = torch_module(name)
    shape = INPUTS[CASES[name][0]]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    path = folder / f"{name}-{exporter}.onnx"
    options = {"dynamo": exporter == "dynamo"} | (
        {} if exporter == "dynamo" else {"opset_version": CLASSIC_OPSET}
    )
    with torch.no_grad(), warnings.catch_warnings(), _stdout_to_stderr():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.from_numpy(x),), str(path), input_names=["x"], **options)
    return path, {"x": x}


def main(argv: Sequence[str] | None = None) -> int:
    return export_census.main(
        argv, "nnlayout.benchmarks.torch_ops", __doc__, MODELS, "torch", export
    )


if __name__ == "__main__":
    raise SystemExit(main())
