"""transformers' models as users export them, small: does each import, and does it compute what
onnxruntime computes on every target?

    python -m nnlayout.benchmarks.transformers_zoo                     # every model, both exporters
    python -m nnlayout.benchmarks.transformers_zoo --models bart,llama --exporters dynamo
    python -m nnlayout.benchmarks.transformers_zoo --targets ref,host --markdown

Each model of `MODELS` is built by transformers from a small configuration (2 layers, width
64, 4 heads; seeded random weights, eval mode), called as users call it (token ids and an
attention mask, ids alone for a causal model, T5 with decoder ids, images, a waveform, Whisper
with mel features and decoder ids), exported by each of torch's exporters, imported, compiled
with `default-pipeline` for each of `--targets` (ref, avx2, avx512, onednn and host by
default), padding on and off, and run as the generated module on the same seeded inputs as
onnxruntime (token ids include padding tokens, id 1, which RoBERTa's position ids count
around). Columns: imported (or the refusal,
or torch's export error, in one line), ops, max rel diff (from onnxruntime, relative to the
output's largest magnitude, worst over the targets and padding), and the output's largest
magnitude (0 means an untrained model whose output collapsed: the comparison then says
nothing). A census, not a timing: at these sizes latency means little (`language_models.py`
times four of these at full width). Needs torch, onnxscript and transformers (`pip install -e
'.[models]'`). Exits 1 if a result differs from onnxruntime's by more than 1e-4 relative; 2
on bad arguments or a missing package.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nnlayout.benchmarks import export_census
from nnlayout.benchmarks.language_models import _stdout_to_stderr

TOKENS, VOCABULARY, PAD = 32, 1000, 1
#: Sizes most configurations share.
_SIZES = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
_TEXT = {**_SIZES, "intermediate_size": 128, "vocab_size": VOCABULARY}
_DECODER = {**_TEXT, "num_key_value_heads": 2, "max_position_embeddings": 64}

#: name -> (transformers class, configuration class, its arguments, how it is called).
MODELS: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "bert": ("BertModel", "BertConfig", _TEXT, "mask"),
    "distilbert": (
        "DistilBertModel",
        "DistilBertConfig",
        {"vocab_size": VOCABULARY, "dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128},
        "mask",
    ),
    "roberta": ("RobertaModel", "RobertaConfig", _TEXT, "mask"),
    "albert": ("AlbertModel", "AlbertConfig", {**_TEXT, "embedding_size": 32}, "mask"),
    "electra": ("ElectraModel", "ElectraConfig", {**_TEXT, "embedding_size": 32}, "mask"),
    "deberta-v2": ("DebertaV2Model", "DebertaV2Config", _TEXT, "mask"),
    "mpnet": ("MPNetModel", "MPNetConfig", _TEXT, "mask"),
    "bart": (
        "BartModel",
        "BartConfig",
        {"vocab_size": VOCABULARY, "d_model": 64, "encoder_layers": 1, "decoder_layers": 1}
        | {"encoder_attention_heads": 4, "decoder_attention_heads": 4}
        | {"encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "max_position_embeddings": 64},
        "mask",
    ),
    "t5": (
        "T5Model",
        "T5Config",
        {"vocab_size": VOCABULARY, "d_model": 64, "d_kv": 16, "d_ff": 128, "num_layers": 1}
        | {"num_decoder_layers": 1, "num_heads": 4},
        "t5",
    ),
    "gpt2": (
        "GPT2LMHeadModel",
        "GPT2Config",
        {"vocab_size": VOCABULARY, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64},
        "ids",
    ),
    "llama": ("LlamaForCausalLM", "LlamaConfig", _DECODER, "ids"),
    "qwen2": ("Qwen2ForCausalLM", "Qwen2Config", _DECODER, "ids"),
    "mistral": ("MistralForCausalLM", "MistralConfig", _DECODER, "ids"),
    "phi": ("PhiForCausalLM", "PhiConfig", _DECODER, "ids"),
    "gemma": ("GemmaForCausalLM", "GemmaConfig", {**_DECODER, "head_dim": 16}, "ids"),
    "falcon": ("FalconForCausalLM", "FalconConfig", {**_SIZES, "vocab_size": VOCABULARY}, "ids"),
    "gpt-j": (
        "GPTJForCausalLM",
        "GPTJConfig",
        {"vocab_size": VOCABULARY, "n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8},
        "ids",
    ),
    "gpt-neo": (
        "GPTNeoForCausalLM",
        "GPTNeoConfig",
        {"vocab_size": VOCABULARY, "hidden_size": 64, "num_layers": 2, "num_heads": 4}
        | {"attention_types": [[["global", "local"], 1]], "window_size": 16},
        "ids",
    ),
    "gpt-bigcode": (
        "GPTBigCodeForCausalLM",
        "GPTBigCodeConfig",
        {"vocab_size": VOCABULARY, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64},
        "ids",
    ),
    "opt": (
        "OPTForCausalLM",
        "OPTConfig",
        {**_TEXT, "ffn_dim": 128, "max_position_embeddings": 64, "word_embed_proj_dim": 64},
        "ids",
    ),
    "bloom": (
        "BloomForCausalLM",
        "BloomConfig",
        {"vocab_size": VOCABULARY, "hidden_size": 64, "n_layer": 2, "n_head": 4},
        "ids",
    ),
    "clip-text": ("CLIPTextModel", "CLIPTextConfig", _DECODER, "ids"),
    "mobilebert": (
        "MobileBertModel",
        "MobileBertConfig",
        {**_SIZES, "vocab_size": VOCABULARY, "intermediate_size": 64, "embedding_size": 32}
        | {"intra_bottleneck_size": 32, "true_hidden_size": 32, "num_feedforward_networks": 2},
        "mask",
    ),
    "whisper": (
        "WhisperModel",
        "WhisperConfig",
        {"vocab_size": VOCABULARY, "d_model": 64, "encoder_layers": 1, "decoder_layers": 1}
        | {"encoder_attention_heads": 4, "decoder_attention_heads": 4, "num_mel_bins": 16}
        | {"encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "max_source_positions": 16}
        | {"max_target_positions": 16, "pad_token_id": PAD, "bos_token_id": 2}
        | {"eos_token_id": 3, "decoder_start_token_id": 2},
        "speech",
    ),
    "vit": ("ViTModel", "ViTConfig", {**_SIZES, "image_size": 32, "patch_size": 8}, "image"),
    "dinov2": (
        "Dinov2Model",
        "Dinov2Config",
        {**_SIZES, "image_size": 32, "patch_size": 8},
        "image",
    ),
    "deit": ("DeiTModel", "DeiTConfig", {**_SIZES, "image_size": 32, "patch_size": 8}, "image"),
    "beit": (
        "BeitModel",
        "BeitConfig",
        {**_SIZES, "image_size": 32, "patch_size": 8, "use_relative_position_bias": True},
        "image",
    ),
    "clip-vision": (
        "CLIPVisionModel",
        "CLIPVisionConfig",
        {**_SIZES, "intermediate_size": 128, "image_size": 32, "patch_size": 8},
        "image",
    ),
    "swin": (
        "SwinModel",
        "SwinConfig",
        {"image_size": 64, "patch_size": 4, "embed_dim": 16, "depths": [1, 1]}
        | {"num_heads": [2, 4], "window_size": 4},
        "image",
    ),
    "convnext": (
        "ConvNextModel",
        "ConvNextConfig",
        {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2},
        "image",
    ),
    "resnet": (
        "ResNetModel",
        "ResNetConfig",
        {"embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1]},
        "image",
    ),
    "segformer": (
        "SegformerForSemanticSegmentation",
        "SegformerConfig",
        {"num_encoder_blocks": 2, "depths": [1, 1], "sr_ratios": [2, 1], "strides": [4, 2]}
        | {"hidden_sizes": [16, 32], "num_attention_heads": [1, 2], "num_labels": 3}
        | {"decoder_hidden_size": 32, "patch_sizes": [7, 3], "mlp_ratios": [2, 2]},
        "image",
    ),
    "wav2vec2": (
        "Wav2Vec2Model",
        "Wav2Vec2Config",
        {**_SIZES, "intermediate_size": 128, "conv_dim": (32, 32), "conv_stride": (5, 2)}
        | {"conv_kernel": (10, 3), "num_conv_pos_embeddings": 16}
        | {"num_conv_pos_embedding_groups": 4},
        "wave",
    ),
}


def inputs_for(kind: str, config: Any) -> dict[str, np.ndarray]:
    """The seeded inputs of a model called as `kind` says."""
    rng = np.random.default_rng(0)
    if kind == "image":
        size = getattr(config, "image_size", 64)
        size = size if isinstance(size, int) else 64
        return {"pixels": rng.standard_normal((1, 3, size, size)).astype(np.float32)}
    if kind == "wave":
        return {"wave": rng.standard_normal((1, 1600)).astype(np.float32)}
    if kind == "speech":  # 16 mel bins over 32 frames, and 4 decoder ids
        features = rng.standard_normal((1, 16, 32)).astype(np.float32)
        return {"features": features, "decoder_ids": np.array([[2, 5, 9, 11]], np.int64)}
    ids = rng.integers(2, VOCABULARY, (1, TOKENS), dtype=np.int64)
    ids[0, 5] = ids[0, TOKENS * 3 // 4 :] = PAD  # padding tokens, inside and at the end
    if kind == "ids":
        return {"ids": ids}
    if kind == "t5":
        return {"ids": ids, "decoder_ids": rng.integers(2, VOCABULARY, (1, 8), dtype=np.int64)}
    mask = np.ones((1, TOKENS), np.int64)
    mask[:, TOKENS * 3 // 4 :] = 0
    return {"ids": ids, "mask": mask}


def torch_model(name: str) -> tuple[Any, dict[str, np.ndarray]]:
    """The seeded transformers model `name` wrapped to take its inputs positionally and return
    its first output, and those inputs."""
    import torch
    import transformers

    model_class, config_class, sizes, kind = MODELS[name]
    torch.manual_seed(0)
    config = getattr(transformers, config_class)(**sizes)
    model = getattr(transformers, model_class)(config).eval()
    keywords: dict[str, Callable[[tuple[Any, ...]], dict[str, Any]]] = {
        "mask": lambda a: {"input_ids": a[0], "attention_mask": a[1]},
        "ids": lambda a: {"input_ids": a[0], "use_cache": False},
        "t5": lambda a: {"input_ids": a[0], "decoder_input_ids": a[1], "use_cache": False},
        "image": lambda a: {"pixel_values": a[0]},
        "wave": lambda a: {"input_values": a[0]},
        "speech": lambda a: {"input_features": a[0], "decoder_input_ids": a[1], "use_cache": False},
    }

    class Called(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *given: Any) -> Any:
            return self.model(**keywords[kind](given))[0]

    return Called().eval(), inputs_for(kind, config)


def export(name: str, exporter: str, folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    import torch

    model, inputs = torch_model(name)
    path = folder / f"{name}-{exporter}.onnx"
    options = {"dynamo": exporter == "dynamo"} | (
        {} if exporter == "dynamo" else {"opset_version": 17}
    )
    with torch.no_grad(), warnings.catch_warnings(), _stdout_to_stderr():
        warnings.simplefilter("ignore")
        tensors = tuple(torch.from_numpy(x) for x in inputs.values())
        torch.onnx.export(
            model, tensors, str(path), input_names=list(inputs), output_names=["y"], **options
        )
    return path, inputs


def main(argv: Sequence[str] | None = None) -> int:
    return export_census.main(
        argv, "nnlayout.benchmarks.transformers_zoo", __doc__, MODELS, "transformers", export
    )


if __name__ == "__main__":
    raise SystemExit(main())
