"""The torch models `language_models.py` exports: written here as minGPT and BERT write them
(and a GPT-2 decoding step with a static key/value cache, as users write one for export),
or transformers' own GPT-2 and BERT (randomly initialised from their configurations, nothing
downloaded). Imported only there: it needs torch, and transformers for the latter (the
`models` extra)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

HEADS = 12


class Attention(nn.Module):
    """Multi-head self-attention over [B, T, C]; `bias` is added to the scores (a causal
    -inf above the diagonal, or BERT's padding bias)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = (
            s.view(b, t, HEADS, c // HEADS).transpose(1, 2) for s in self.qkv(x).split(c, dim=2)
        )
        scores = (q @ k.transpose(-2, -1)) * (1.0 / (c // HEADS) ** 0.5) + bias
        y = (scores.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)

    def step(
        self, x: torch.Tensor, bias: torch.Tensor, cache: tuple[torch.Tensor, ...], put: bool
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One token [1, 1, C] attending over the key and value caches [1, H, T, C/H] with
        its own written at the position `cache[2]` ([1]): by `index_copy`, or by an indexed
        assignment with `put`. Returns the result and the two caches written."""
        b, t, c = x.shape
        q, k, v = (
            s.view(b, t, HEADS, c // HEADS).transpose(1, 2) for s in self.qkv(x).split(c, dim=2)
        )
        keys, values, pos = cache
        if put:
            keys, values = keys.clone(), values.clone()
            keys[:, :, pos], values[:, :, pos] = k, v
        else:
            keys, values = keys.index_copy(2, pos, k), values.index_copy(2, pos, v)
        scores = (q @ keys.transpose(-2, -1)) * (1.0 / (c // HEADS) ** 0.5) + bias
        y = (scores.softmax(-1) @ values).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y), keys, values


class GptBlock(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = Attention(width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x), bias)
        return self.feed_forward(x)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.out(functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    """GPT-2: logits [1, T, vocabulary] of token ids [1, T]."""

    def __init__(self, vocabulary: int, width: int, length: int, layers: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocabulary, width), nn.Embedding(length, width)
        self.blocks = nn.ModuleList(GptBlock(width) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2's
        causal = torch.tril(torch.ones(length, length)).view(1, 1, length, length)
        self.register_buffer("causal", causal)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t))
        zeros = torch.zeros(1, 1, t, t)
        bias = zeros.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        for block in self.blocks:
            x = block(x, bias)
        return self.head(self.ln(x))


class GptStep(Gpt):
    """One step of GPT-2 decoding with a static key/value cache, as users write it for
    export: the logits [1, 1, vocabulary] of the token id [1, 1] at position `pos` ([1],
    int64), and the key and value caches [layers, 1, H, T, width / H] with that position
    written (`index_copy`, or `cache[:, :, pos] = k` with `put`); the positions after `pos`
    are hidden from the scores."""

    def __init__(self, vocabulary: int, width: int, length: int, layers: int, put: bool) -> None:
        super().__init__(vocabulary, width, length, layers)
        self.put = put

    def forward(  # type: ignore[override]
        self, ids: torch.Tensor, pos: torch.Tensor, keys: torch.Tensor, values: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        length = keys.shape[3]
        x = self.wte(ids) + self.wpe(pos)
        later = torch.arange(length) > pos
        bias = torch.zeros(1, 1, 1, length).masked_fill(later, float("-inf"))
        written: list[tuple[torch.Tensor, torch.Tensor]] = []
        for i, block in enumerate(self.blocks):
            cache = (keys[i], values[i], pos)
            a, k, v = block.attention.step(block.ln1(x), bias, cache, self.put)
            x = block.feed_forward(x + a)
            written.append((k, v))
        new_keys, new_values = (torch.stack(c) for c in zip(*written, strict=True))
        return self.head(self.ln(x)), new_keys, new_values


class BertLayer(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.attention = Attention(width)
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.attention(x, bias))
        return self.ln2(x + self.out(functional.gelu(self.fc(x))))


class Bert(nn.Module):
    """BERT: the pooled [1, width] of token ids, an attention mask and token types, [1, T]
    each (int64)."""

    def __init__(self, vocabulary: int, width: int, length: int, layers: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocabulary, width), nn.Embedding(length, width)
        self.types = nn.Embedding(2, width)
        self.ln = nn.LayerNorm(width)
        self.layers = nn.ModuleList(BertLayer(width) for _ in range(layers))
        self.pooler = nn.Linear(width, width)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        x = self.ln(self.wte(ids) + self.wpe(torch.arange(t)) + self.types(types))
        bias = (1.0 - mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        return torch.tanh(self.pooler(x[:, 0]))


class Transformers(nn.Module):
    """transformers' `GPT2LMHeadModel` or `LlamaForCausalLM` (their logits), `BertModel` or
    `RobertaModel` (their last hidden state), called as users call them, randomly initialised
    from configurations of the given sizes. RoBERTa is given no token type ids: it computes
    its position ids from the token ids (a running count of the non-padding ones) and reads
    its token types from a buffer at them."""

    def __init__(self, name: str, vocabulary: int, width: int, length: int, layers: int) -> None:
        super().__init__()
        import transformers

        sizes = {"vocab_size": vocabulary, "hidden_size": width, "num_hidden_layers": layers}
        if name == "hf-gpt2":
            config = transformers.GPT2Config(
                vocab_size=vocabulary, n_embd=width, n_layer=layers, n_positions=length
            )
            self.model = transformers.GPT2LMHeadModel(config)
        elif name == "hf-llama":  # grouped-query attention: 12 heads, 4 of keys and values
            config = transformers.LlamaConfig(
                num_attention_heads=12,
                num_key_value_heads=4,
                intermediate_size=width * 8 // 3,
                max_position_embeddings=length,
                **sizes,
            )
            self.model = transformers.LlamaForCausalLM(config)
        elif name == "hf-roberta":  # its positions start after its padding index, 1
            config = transformers.RobertaConfig(max_position_embeddings=length + 2, **sizes)
            self.model = transformers.RobertaModel(config)
        else:
            config = transformers.BertConfig(max_position_embeddings=length, **sizes)
            self.model = transformers.BertModel(config)
        self.name = name

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        if self.name in CAUSAL:
            return self.model(input_ids=inputs[0], use_cache=False).logits
        if self.name == "hf-roberta":
            return self.model(input_ids=inputs[0], attention_mask=inputs[1])[0]
        ids, mask, types = inputs
        return self.model(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]


#: The models given token ids alone.
CAUSAL = ("gpt", "hf-gpt2", "hf-llama")
