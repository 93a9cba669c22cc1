"""Language models as users write them in torch, given token ids, through nnlayout and
onnxruntime at 1 thread.

    python -m nnlayout.benchmarks.language_models                 # eight models, both exporters
    python -m nnlayout.benchmarks.language_models --models gpt --layers 2 --markdown
    python -m nnlayout.benchmarks.language_models --check-targets ref,avx2,avx512,onednn,host

Eight models (seeded, eval mode). Two written here in torch the way minGPT and BERT write
them: `gpt`, a GPT-2 decoder (token and position embeddings, causal `masked_fill`, tanh GELU,
the output layer tied to the token table), given `ids` [1, T]; `bert`, a BERT encoder (token,
position and token-type embeddings, its int64 attention mask made an additive bias, `(1 -
mask.float()) * -10000`, exact GELU, a tanh pooler), given `ids`, `mask` and `types`. Two
decoding steps of that GPT-2 with a static key/value cache of T positions, as users write one
for export: `gpt-step` (the token's keys and values written at `pos` by `index_copy`) and
`gpt-step-put` (by `cache[:, :, pos] = k`), given one token id, `pos` (3/4 of T) and the
caches [layers, 1, 12, T, width / 12], returning the logits and the caches written. And
transformers' own, randomly initialised from their configurations: `hf-gpt2`
(GPT2LMHeadModel's logits), `hf-bert` (BertModel's last hidden state; transformers builds
its attention mask from the int64 one with Cast to bool, And, GatherND or Gather, and tests
the softmax with IsNaN), `hf-roberta` (RobertaModel's, given ids with padding tokens and a
mask but no token types: it computes its position ids from the ids, a CumSum, and gathers
its token types from a buffer at them) and `hf-llama` (LlamaForCausalLM's logits: RMSNorm,
rotary positions, SwiGLU, 4 key/value heads for 12). Each is exported with both of torch's
exporters (which needs torch, onnxscript and, for the last four, transformers: `pip install
-e '.[models]'`; an export torch refuses is shown in one line), imported (a refusal is shown
in one line instead of numbers),
compiled with `default-pipeline{target=host}`, translated to the generated numpy module and
run, as onnxruntime is, on the same seeded inputs (token ids over the vocabulary, a mask with
its last quarter 0); both are then timed, interleaved, `--repeats` times, and the medians
shown. Columns: imported, ops, max rel diff (from onnxruntime, relative to the output's
largest magnitude, over the timed target and every `--check-targets` target with padding on
and off), fallbacks (numpy kernels where the target has a faster family), arena/bound, ours
ms, onnxruntime ms, ratio. Exits 1 if a result differs from onnxruntime's by more than 1e-4
relative; 2 on bad arguments or a missing package.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nnlayout.benchmarks.startup import run_with_threads
from nnlayout.benchmarks.torchvision_export import missing_packages, require
from nnlayout.benchmarks.torchvision_zoo import compiled, imported
from nnlayout.benchmarks.zoo_latency import (
    figure,
    onnxruntime_session,
    time_interleaved,
    verdict,
)
from nnlayout.diagnostics import UserError
from nnlayout.kernels.targets import get_target
from nnlayout.lowering.to_numpy import generated_module
from nnlayout.reports.census import kernel_census
from nnlayout.runtime.binding import relative_difference

MODELS = ("gpt", "bert", "gpt-step", "gpt-step-put", "hf-gpt2", "hf-bert", "hf-roberta", "hf-llama")
#: The decoding steps: their key/value caches' positions.
STEPS = ("gpt-step", "gpt-step-put")
EXPORTERS = ("classic", "dynamo")
COLUMNS = (
    "model",
    "exporter",
    "imported",
    "ops",
    "max rel diff",
    "fallbacks",
    "arena/bound",
    "ours ms",
    "onnxruntime ms",
    "ratio",
)


def torch_model(name: str, args: argparse.Namespace) -> tuple[Any, dict[str, np.ndarray]]:
    """The seeded torch module `name` in eval mode, and its inputs by name."""
    import torch

    from nnlayout.benchmarks.language_model_code import (
        CAUSAL,
        HEADS,
        Bert,
        Gpt,
        GptStep,
        Transformers,
    )

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, args.vocabulary, (1, args.length), dtype=np.int64)
    sizes = (args.vocabulary, args.width, args.length, args.layers)
    if name in STEPS:  # one token at 3/4 of the cache, the caches seeded
        cache = (args.layers, 1, HEADS, args.length, args.width // HEADS)
        keys, values = (rng.standard_normal(cache).astype(np.float32) for _ in range(2))
        pos = np.array([args.length * 3 // 4], np.int64)
        step = GptStep(*sizes, put=name == "gpt-step-put")
        return step.eval(), {"ids": ids[:, :1], "pos": pos, "keys": keys, "values": values}
    if name.startswith("hf-"):
        model = Transformers(name, *sizes)
    else:
        model = Gpt(*sizes) if name == "gpt" else Bert(*sizes)
    if name in CAUSAL:
        return model.eval(), {"ids": ids}
    mask = np.ones((1, args.length), np.int64)
    mask[:, args.length * 3 // 4 :] = 0  # padded positions, which the bias must hide
    if name == "hf-roberta":  # padding tokens (1) where the mask is 0, and one inside
        ids[:, args.length * 3 // 4 :] = ids[:, args.length // 3] = 1
        return model.eval(), {"ids": ids, "mask": mask}
    types = np.zeros((1, args.length), np.int64)
    types[:, args.length // 2 :] = 1
    return model.eval(), {"ids": ids, "mask": mask, "types": types}


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Everything written to standard output meanwhile goes to standard error, Python's and
    what torch's C++ writes to the descriptor (its classic exporter prints the whole graph
    there when it fails), so that only the table is on standard output."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _without_package_root() -> Iterator[None]:
    """nnlayout's own folder off the module path meanwhile (`python -m` puts the working
    folder there: run from the repository, whose root is the package, its `kernels` would
    hide the `kernels` package transformers imports); nnlayout is found by its install."""
    root, saved = Path(__file__).resolve().parents[1], list(sys.path)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != root]
    try:
        yield
    finally:
        sys.path[:] = saved


def export(
    name: str, exporter: str, args: argparse.Namespace, folder: Path
) -> tuple[Path, dict[str, np.ndarray]]:
    """The model exported into `folder`, and the inputs it was exported with."""
    import torch

    model, inputs = torch_model(name, args)
    path = folder / f"{name}-{exporter}.onnx"
    tensors = tuple(torch.from_numpy(x) for x in inputs.values())
    names = ["y"] if name not in STEPS else ["y", "keys_out", "values_out"]
    options = {"dynamo": exporter == "dynamo"} | (
        {} if exporter == "dynamo" else {"opset_version": 17}
    )
    with torch.no_grad(), warnings.catch_warnings(), _stdout_to_stderr():
        warnings.simplefilter("ignore")  # torch's notes on its exporters, not on this model
        torch.onnx.export(
            model, tensors, str(path), input_names=list(inputs), output_names=names, **options
        )
    return path, inputs


def measure(name: str, exporter: str, args: argparse.Namespace) -> list[str]:
    """The model's row of the table."""
    with tempfile.TemporaryDirectory(prefix="nnlayout-lm-") as scratch:
        try:
            path, inputs = export(name, exporter, args, Path(scratch))
        except Exception as error:  # noqa: BLE001 - torch's refusal, shown in the row
            reason = str(error).strip().splitlines()[-1] if str(error).strip() else ""
            return [name, exporter, f"export failed: {type(error).__name__}: {reason}"[:120]]
        try:
            module, source = imported(path, Path(scratch))
        except UserError as error:
            return [name, exporter, error.message]
        session = onnxruntime_session(path, 1)
        expected = session.run(None, inputs)  # type: ignore[attr-defined]
        xs = list(inputs.values())
        worst = 0.0
        for target in args.check_targets:
            for padding in (True, False):
                with generated_module(compiled(module, target, padding), source_path=source) as g:
                    worst = max(worst, relative_difference(expected, g.run(*xs)))
        planned = compiled(module, "host", True)
        census = kernel_census(planned, get_target("host"))
        with generated_module(planned, source_path=source) as generated:
            worst = max(worst, relative_difference(expected, generated.run(*xs)))
            ours, theirs = time_interleaved(
                lambda: generated.run(*xs),
                lambda: session.run(None, inputs),  # type: ignore[attr-defined]
                args.repeats,
            )
        arena, bound = (
            figure(planned, "nnlayout.arena_bytes"),
            figure(planned, "nnlayout.lower_bound_bytes"),
        )
        return [
            name,
            exporter,
            "yes",
            str(sum(census.kernels.values())),
            f"{worst:.1e}",
            str(sum(census.fallbacks.values())),
            f"{arena / bound:.2f}" if bound else "-",
            f"{ours:.2f}",
            f"{theirs:.2f}",
            f"{ours / theirs:.2f}",
        ]


def table(rows: Sequence[Sequence[str]], markdown: bool, columns: Sequence[str] = COLUMNS) -> str:
    """The rows under `columns`; a refused model's row (model, exporter, why) spans the rest."""
    if markdown:
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        padded = [[*row, *[""] * (len(columns) - len(row))] for row in rows]
        return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in padded)])
    full = [columns, *(r for r in rows if len(r) == len(columns))]
    widths = [max(len(r[i]) for r in full) for i in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip()
        for row in (columns, *rows)
    )


def arguments(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default=",".join(MODELS), help=f"{', '.join(MODELS)} (all)")
    parser.add_argument("--exporters", default=",".join(EXPORTERS), help="classic, dynamo")
    parser.add_argument("--layers", type=int, default=2, help="blocks (default 2)")
    parser.add_argument("--width", type=int, default=768, help="model width (default 768)")
    parser.add_argument("--length", type=int, default=128, help="tokens (default 128)")
    parser.add_argument("--vocabulary", type=int, default=50257, help="(default 50257)")
    parser.add_argument("--check-targets", default="", help="e.g. ref,avx2,avx512,onednn,host")
    parser.add_argument("--repeats", type=int, default=10, help="timed runs (default 10)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.models, args.exporters = args.models.split(","), args.exporters.split(",")
    args.check_targets = [t for t in args.check_targets.split(",") if t]
    for given, known in ((args.models, MODELS), (args.exporters, EXPORTERS)):
        if unknown := [x for x in given if x not in known]:
            parser.error(f"unknown: {', '.join(unknown)} (known: {', '.join(known)})")
    if min(args.layers, args.width, args.length, args.vocabulary) < 1 or args.width % 12:
        parser.error("--layers, --length and --vocabulary are positive, --width a multiple of 12")
    return parser, args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, args = arguments(argv)
    require(parser, missing_packages(), "exporting the models", "models")
    if any(m.startswith("hf-") for m in args.models):
        missing = [] if importlib.util.find_spec("transformers") else ["transformers"]
        require(parser, missing, "exporting transformers' models", "models")
    if not args.child:  # oneDNN fixes its thread count when it loads: 1 thread, in a child
        child = [*argv, "--child"]
        return run_with_threads("nnlayout.benchmarks.language_models", child, 1).returncode
    with _without_package_root():
        rows = [measure(m, e, args) for m in args.models for e in args.exporters]
    print(table(rows, args.markdown))
    return verdict(max((float(r[4]) for r in rows if len(r) == len(COLUMNS)), default=0.0))


if __name__ == "__main__":
    raise SystemExit(main())
