"""The zoo quantized by onnxruntime's `quantize_static` (QDQ form, per-channel s8 weights, u8
activations, a seeded calibration set), compiled and run by nnlayout and by onnxruntime side by
side at one thread: latency, arenas and agreement with onnxruntime's int8 output.

    python -m nnlayout.benchmarks.zoo_int8                  # the five models, full size
    python -m nnlayout.benchmarks.zoo_int8 --small --inputs 10
    python -m nnlayout.benchmarks.zoo_int8 resnet50 --targets ref,avx512
    python -m nnlayout.benchmarks.zoo_int8 --quantizer torch-fx     # quantized by torch itself
    python -m nnlayout.benchmarks.zoo_int8 --quantizer torch-eager  # torch's eager mode
    python -m nnlayout.benchmarks.zoo_int8 --quantizer torch-pt2e   # torchao's pt2e flow
    python -m nnlayout.benchmarks.zoo_int8 --quantizer torch-pt2e-x86  # its x86 quantizer

Models: the zoo's ResNet-50, MobileNetV2, DenseNet-121 and UNet (`examples/make_models.py`,
seeded random weights) and torchvision's ResNet-18 (exported by torch's classic exporter, as
`torchvision_export` does, batch-norm statistics set from random batches; left out, with a
line saying why, where torch is not installed, and with `--small`, having no small variant);
any other torchvision model named (a transformer: vit_b_16) is exported likewise.
Each float model is pre-processed by onnxruntime's `quant_pre_process` (batch norms folded into
the convolutions, as onnxruntime advises before quantizing) and quantized by `quantize_static`
on `--calibration` seeded standard-normal inputs (MinMax calibration).

With `--quantizer torch-fx`, the models are torchvision's (resnet18, mobilenet_v2 and resnet50
by default; any CNN `torchvision_export` knows) quantized as a PyTorch user does it, by
`torch.ao.quantization.quantize_fx` (x86 qconfig, calibrated on seeded random batches), and
exported by torch's classic exporter (`torchvision_export`'s fx-int8, cached beside its other
exports); the float model is the same network's classic export. `--quantizer torch-eager`
quantizes torchvision's quantizable variant of the model (`torchvision.models.quantization`:
googlenet, inception_v3, mobilenet_v2, mobilenet_v3_large, resnet18, resnet50, the resnext101s
and shufflenet_v2s) in torch's eager mode, as torchvision's quantization tutorial does
(`fuse_model`, the x86 qconfig, `prepare`, calibration, `convert`; `eager-int8`).
`--quantizer torch-pt2e` quantizes any torchvision model by torch's pt2e flow (torchao's
`prepare_pt2e`/`convert_pt2e`, the XNNPACK quantizer: s8 activations, per-channel weights)
and exports it with the dynamo exporter, which keeps the biases float (`pt2e-int8`);
`--quantizer torch-pt2e-x86` likewise with its X86InductorQuantizer (u8 activations, a
strict capture; `pt2e-x86-int8`).

The classifiers' final Softmax output is dropped (their logits stay): a one-step difference
of two logits moves a probability by up to a quarter of a logit step, several steps of the
probabilities' 1/256.

Per model, one row: ours int8 ms (the generated module of `default-pipeline{target=...}`),
onnxruntime int8 ms (its CPU provider, one intra-op thread, no spinning), their ratio, ours f32
ms (the float model, same pipeline), our int8 speed-up over our f32, our arenas (int8, f32,
their ratio, and whether each is at the planner's lower bound), and agreement with
onnxruntime's int8 output on `--inputs` seeded inputs: the largest difference of any output in
units of its quantization step (the scale of the DequantizeLinear that makes it), the share of
output values within one step, and the top-1 agreement of the first output (the class of a
classifier, the class of each pixel of UNet's mask). For scale, "onnxruntime's own spread" is
the largest difference, in steps, of onnxruntime's unoptimised session (dequantize, float op,
quantize, as the QDQ form is written) from its optimised one (fused integer kernels) on the
same inputs: an intermediate value that lies within float rounding of a half step rounds one
way or the other depending on the order of the arithmetic, and that one step grows layer by
layer ("onnxruntime's own top-1": the top-1 agreement of those two sessions). The three timed
runs take turns within each of `--repeats` rounds on one input, each timed alone, after
`--warmup` untimed rounds in the same turns; the figures are medians. With `--targets`, the
int8 model is also compiled for those targets (padding on and off) and its generated module
run on the first input: the largest difference from onnxruntime in output steps, per
target. With `--evaluator`, the timed target, the `ref` target
and onnxruntime are also compared with onnx's ReferenceEvaluator on the first input, in output
steps: it runs the QDQ form as written, dequantize, float op, quantize.

A second table gives the same for bf16 against float32 (issue 27): the float model compiled
with `default-pipeline{bf16=true}` (`transforms/convert_bf16.py`), timed in the same rounds:
ours bf16 ms, its speed-up over ours f32, the arenas (bf16 buffers take 2 bytes an element),
the largest relative difference of any output from float32's (|bf16 - f32| over the largest
|f32|, the worst of the `--inputs` seeded inputs) and the top-1 agreement with float32's.
`--no-bf16` leaves it out.

oneDNN fixes its OpenMP thread count when it loads: unless OMP_NUM_THREADS is 1 already, the
script runs itself in a subprocess with one OpenMP/OpenBLAS thread. Exits 1 if the top-1
agreement is under 99% and under onnxruntime's own (its unoptimised session's top-1 agreement
with its optimised one), or an output is further from onnxruntime's than one step and than
onnxruntime's own spread. Run it as a fresh process; on a shared machine say it was busy.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp

from nnlayout.benchmarks.startup import check_names, run_with_threads
from nnlayout.benchmarks.torchvision_export import (
    DEFAULT_CACHE,
    EAGER_INT8,
    EAGER_MODELS,
    FX_INT8,
    PT2E_INT8,
    PT2E_X86_INT8,
    TIMEOUT_SECONDS,
    export_cached,
    last_error_line,
    missing_packages,
    onnx_path,
)
from nnlayout.benchmarks.torchvision_export import (
    MODELS as TORCHVISION_MODELS,
)
from nnlayout.benchmarks.zoo_latency import (
    figure,
    latency_cells,
    onnxruntime_session,
    table,
)
from nnlayout.examples.make_models import MODELS_DIR, write_model
from nnlayout.frontends.onnx import import_to_files
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.binding import relative_difference
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

#: The zoo's own models (examples/make_models.py), then torchvision's ResNet-18.
ZOO = ["resnet50", "mobilenet_v2", "densenet121", "unet"]
MODELS = [*ZOO, "resnet18"]
#: The torch quantizers' default models (torchvision's; any of its models may be named, any
#: of EAGER_MODELS with torch-eager).
TORCH_FX_MODELS = ["resnet18", "mobilenet_v2", "resnet50"]
#: torch's quantizers: the torchvision_export variant each writes.
TORCH_QUANTIZERS = {
    "torch-fx": FX_INT8,
    "torch-eager": EAGER_INT8,
    "torch-pt2e": PT2E_INT8,
    "torch-pt2e-x86": PT2E_X86_INT8,
}
PIPELINE = "default-pipeline{{target={target} padding={padding}{bf16}}}"
MIN_TOP1 = 0.99
STEP_SLACK = 1.001  # one step, and a float rounding's worth
MIB = 1 << 20


# ------------------------------------------------------------------ quantizing
def seeded_inputs(model: onnx.ModelProto, count: int, seed: int) -> Iterator[dict[str, np.ndarray]]:
    """`count` feeds of standard-normal float32 inputs for `model`'s graph inputs."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    shapes = {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input
        if i.name not in initializers
    }
    for _ in range(count):
        yield {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def quantize(
    source: Path,
    target: Path,
    *,
    calibration: int = 8,
    seed: int = 1,
    preprocess: bool = True,
    qoperator: bool = False,
    signed_activations: bool = False,
    per_channel: bool = True,
) -> onnx.ModelProto:
    """The float model at `source` quantized by onnxruntime's `quantize_static` into `target`
    and returned: s8 weights (per output channel by default), u8 activations (s8 with
    `signed_activations`), MinMax-calibrated on `calibration` standard-normal inputs seeded
    with `seed`; QDQ form (QOperator with `qoperator`); with `preprocess`, after
    `quant_pre_process` (onnxruntime's optimizer folds batch norms into convolutions)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quant_pre_process,
        quantize_static,
    )

    model = onnx.load(source)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = seeded_inputs(model, calibration, seed)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    logging.getLogger().setLevel(logging.ERROR)  # onnxruntime's advice to pre-process
    if preprocess:
        prepared = target.with_name(target.stem + ".prepared.onnx")
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        source = prepared
    quantize_static(
        str(source),
        str(target),
        Reader(),
        quant_format=QuantFormat.QOperator if qoperator else QuantFormat.QDQ,
        per_channel=per_channel,
        activation_type=QuantType.QInt8 if signed_activations else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return onnx.load(target)


def without_softmax(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` without the graph outputs a final Softmax makes (where another output is left):
    the zoo's classifiers give their logits and their probabilities, and a one-step
    difference of two logits moves a probability by up to a quarter of a logit step, several
    steps of the probabilities' 1/256 (onnxruntime's own optimised and unoptimised sessions
    differ by 2 there)."""
    producers = {o: n for n in model.graph.node for o in n.output}
    softmax = [
        o
        for o in model.graph.output
        if o.name in producers and producers[o.name].op_type == "Softmax"
    ]
    if not softmax or len(softmax) == len(model.graph.output):
        return model
    for output in softmax:
        model.graph.output.remove(output)
        model.graph.node.remove(producers[output.name])
    return model


def output_steps(model: onnx.ModelProto) -> list[float]:
    """One quantization step of each graph output: the scale of the DequantizeLinear (or
    QLinear op's output scale) that makes it; 0 for an output made in float."""
    constants = {t.name: t for t in model.graph.initializer}
    constants.update(  # torch's exporter writes scales as Constant nodes
        (n.output[0], n.attribute[0].t)
        for n in model.graph.node
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"
    )
    producers = {o: n for n in model.graph.node for o in n.output}
    steps = []
    for output in model.graph.output:
        node = producers.get(output.name)
        scale = node.input[1] if node is not None and node.op_type == "DequantizeLinear" else ""
        steps.append(
            float(numpy_helper.to_array(constants[scale]).reshape(()))
            if scale in constants
            else 0.0
        )
    return steps


# ------------------------------------------------------------------ comparing
def steps_apart(
    want: Sequence[np.ndarray], got: Sequence[np.ndarray], steps: Sequence[float]
) -> float:
    """The largest difference of any output, in units of its step (absolute where 0)."""
    worst = 0.0
    for w, g, step in zip(want, got, steps, strict=True):
        difference = float(np.abs(w.astype(np.float64) - g).max(initial=0.0))
        worst = max(worst, difference / step if step else difference)
    return worst


def top1_agreement(want: np.ndarray, got: np.ndarray) -> tuple[int, int]:
    """(agreeing, total) argmaxes along axis 1: one per image of a classifier's [N, classes],
    one per pixel of a segmentation's [N, classes, H, W]."""
    same = np.argmax(want, axis=1) == np.argmax(got, axis=1)
    return int(same.sum()), int(same.size)


# ------------------------------------------------------------------ compiling
@dataclass
class Compiled:
    generated: ModuleType
    arena_bytes: int
    bound_bytes: int

    @property
    def at_bound(self) -> bool:
        return self.arena_bytes <= self.bound_bytes


def compile_generated(
    module: ModuleOp, source: str, target: str, padding: bool = True, bf16: bool = False
) -> Compiled:
    """`module` (imported from `source`) through default-pipeline (with `bf16=true` where
    `bf16`), translated and loaded."""
    planned = module.clone()
    spec = PIPELINE.format(
        target=target, padding=str(padding).lower(), bf16=" bf16=true" if bf16 else ""
    )
    from nnlayout.ir.context import make_context

    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), planned)
    with tempfile.TemporaryDirectory(prefix="nnlayout-int8-") as scratch:
        translation = translate(planned, Path(scratch) / "model.py", source_path=source)
        generated = import_generated(translation.code)
    return Compiled(
        generated,
        figure(planned, "nnlayout.arena_bytes"),
        figure(planned, "nnlayout.lower_bound_bytes"),
    )


# ------------------------------------------------------------------ one model
@dataclass
class Row:
    model: str
    ours_ms: float = 0.0
    ort_ms: float = 0.0
    f32_ms: float = 0.0
    arena: int = 0
    arena_f32: int = 0
    at_bound: bool = False
    f32_at_bound: bool = False
    steps: float = 0.0
    spread: float = 0.0
    own_agreeing: int = 0
    within: float = 0.0
    agreeing: int = 0
    total: int = 0
    targets: dict[str, float] = field(default_factory=dict)
    bf16_ms: float = 0.0
    arena_bf16: int = 0
    bf16_difference: float = 0.0  # largest relative difference from f32's outputs
    bf16_agreeing: int = 0  # top-1 agreement with f32's
    bf16_total: int = 0
    evaluator: dict[str, float] = field(default_factory=dict)  # steps from onnx's evaluator

    @property
    def passed(self) -> bool:
        allowed = max(1.0, self.spread) * STEP_SLACK
        within = all(s <= allowed for s in (self.steps, *self.targets.values()))
        top1 = self.agreeing >= min(MIN_TOP1 * self.total, self.own_agreeing)
        return within and top1


def float_model(name: str, args: argparse.Namespace) -> Path | str:
    """The float .onnx of `name`, or why there is none."""
    if name in ZOO and args.quantizer not in TORCH_QUANTIZERS:
        return write_model(name, args.small, args.dir)
    if args.small:
        return "no small variant (torchvision's full-size export); left out with --small"
    missing = missing_packages()
    if missing:
        return f"needs {', '.join(missing)} to export it (pip install -e '.[models]')"
    return export_torchvision(name, args.cache_dir)


# torchvision's meta (fake-tensor) registrations of its detection ops fail to import where its
# compiled ops do not load (a CUDA build of torchvision beside a CPU torch); ResNet-18 and the
# classic exporter use none of them, so the export runs without that module.
_EXPORT = """
import sys, types
from pathlib import Path
sys.modules["torchvision._meta_registrations"] = types.ModuleType("_meta_registrations")
from nnlayout.benchmarks.torchvision_export import export_one
export_one(sys.argv[1], "classic", Path(sys.argv[2]))
"""


def export_torchvision(name: str, cache: Path) -> Path | str:
    """torchvision's `name` exported by torch's classic exporter (opset 17) into `cache`, as
    `torchvision_export` does, or why it could not be."""
    path = cache / f"{name}-classic.onnx"
    if path.is_file():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", _EXPORT, name, str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not path.is_file():
        return f"the export failed: {last_error_line(done.stderr + done.stdout)}"
    return path


def time_in_turn(
    runs: Sequence[Callable[[], object]], repeats: int, warmup: int = 0
) -> list[float]:
    """The median milliseconds of each of `runs`, taking turns within each of `repeats`
    rounds so that all see the same machine load, after `warmup` untimed rounds in the same
    turns. The first two (the pair compared: ours and onnxruntime's) swap places every other
    round, so each comes as often after the other as after the last run: in a fixed order ours
    always came after our float32 run, which slowed it more than its turn after ours slowed
    onnxruntime's (MobileNetV2 int8: a ratio of 0.85 in that order, 0.78 alone in turns;
    docs/benchmarks-int8.md). The warm-up rounds measure the steady state, as onnxruntime's
    perf_test does: over the first ten rounds of a fresh process our MobileNetV2 int8 took
    longer than later on, more than onnxruntime's did (docs/benchmarks-int8.md, stop 58)."""
    times: list[list[float]] = [[] for _ in runs]
    for round_ in range(-warmup, repeats):
        order = list(range(len(runs)))
        if round_ % 2 and len(runs) > 1:
            order[:2] = order[1::-1]
        for index in order:
            start = time.perf_counter()
            runs[index]()
            if round_ >= 0:
                times[index].append(time.perf_counter() - start)
    return [float(np.median(t)) * 1e3 for t in times]


def unoptimised_session(onnx_path: Path) -> object:
    """An onnxruntime session of `onnx_path` with its graph optimisations off: it runs the QDQ
    form as written (dequantize, float op, quantize) rather than fused integer kernels."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


def compare(row: Row, int8: Compiled, int8_path: Path, feeds: list[dict[str, np.ndarray]]) -> None:
    """Fills `row`'s agreement with onnxruntime's int8 outputs on `feeds`, and the spread of
    onnxruntime's own unoptimised session from its optimised one."""
    session, plain = onnxruntime_session(int8_path, 1), unoptimised_session(int8_path)
    names = [i.name for i in session.get_inputs()]  # type: ignore[attr-defined]
    steps = output_steps(onnx.load(int8_path))
    within = elements = 0
    for feed in feeds:
        want = session.run(None, feed)  # type: ignore[attr-defined]
        got = int8.generated.run(*(feed[n] for n in names))
        row.steps = max(row.steps, steps_apart(want, got, steps))
        unoptimised = plain.run(None, feed)  # type: ignore[attr-defined]
        row.spread = max(row.spread, steps_apart(want, unoptimised, steps))
        row.own_agreeing += top1_agreement(want[0], unoptimised[0])[0]
        for w, g, step in zip(want, got, steps, strict=True):
            within += int(np.sum(np.abs(w - g) <= (step or 1e-6) * STEP_SLACK))
            elements += w.size
        agreeing, total = top1_agreement(want[0], got[0])
        row.agreeing, row.total = row.agreeing + agreeing, row.total + total
    row.within = within / elements


def evaluator_steps(
    model: onnx.ModelProto, feed: dict[str, np.ndarray], results: dict[str, Sequence[np.ndarray]]
) -> dict[str, float]:
    """How far each of `results` (by whose) lies from onnx's ReferenceEvaluator on `feed`, in
    output steps. The evaluator runs the QDQ form as written (dequantize, float op, quantize);
    it implements QuantizeLinear and DequantizeLinear from opset 19 on only, so an older model
    is converted to opset 19 first (their arithmetic on these types is the same)."""
    from onnx import version_converter
    from onnx.reference import ReferenceEvaluator

    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    want = ReferenceEvaluator(
        model if opset >= 19 else version_converter.convert_version(model, 19)
    ).run(None, feed)
    steps = output_steps(model)
    return {who: steps_apart(want, got, steps) for who, got in results.items()}


def compare_bf16(row: Row, f32: Compiled, bf16: Compiled, inputs: list[list[np.ndarray]]) -> None:
    """Fills `row`'s bf16 agreement with float32 on `inputs` (one list per run)."""
    for xs in inputs:
        want, got = f32.generated.run(*xs), bf16.generated.run(*xs)
        row.bf16_difference = max(row.bf16_difference, relative_difference(want, got))
        agreeing, total = top1_agreement(want[0], got[0])
        row.bf16_agreeing, row.bf16_total = row.bf16_agreeing + agreeing, row.bf16_total + total


def measure(name: str, source: Path, args: argparse.Namespace, folder: Path) -> Row:
    """Quantizes, compiles and runs model `name` (float .onnx at `source`)."""
    label = name + ("_small" if args.small else "")
    f32_path, int8_path = folder / f"{label}.f32.onnx", folder / f"{label}.int8.onnx"
    onnx.save(without_softmax(onnx.load(source)), f32_path)  # imported beside it
    if args.quantizer in TORCH_QUANTIZERS:
        quantized = onnx.load(onnx_path(args.cache_dir, name, TORCH_QUANTIZERS[args.quantizer]))
        onnx.save(quantized, int8_path)  # imported beside it
    else:
        quantized = quantize(f32_path, int8_path, calibration=args.calibration, seed=args.seed)
    f32_module, f32_source = import_to_files(f32_path), str(f32_path.with_suffix(".mlir"))
    f32 = compile_generated(f32_module, f32_source, args.target)
    bf16 = compile_generated(f32_module, f32_source, args.target, bf16=True) if args.bf16 else None
    int8_module = import_to_files(int8_path)
    int8_source = str(int8_path.with_suffix(".mlir"))
    int8 = compile_generated(int8_module, int8_source, args.target)
    row = Row(label, arena=int8.arena_bytes, arena_f32=f32.arena_bytes)
    row.at_bound, row.f32_at_bound = int8.at_bound, f32.at_bound
    feeds = list(seeded_inputs(quantized, args.inputs, args.seed + 1))
    compare(row, int8, int8_path, feeds)
    session = onnxruntime_session(int8_path, 1)
    inputs = [feeds[0][i.name] for i in session.get_inputs()]  # type: ignore[attr-defined]
    runs = [
        lambda: int8.generated.run(*inputs),
        lambda: session.run(None, feeds[0]),  # type: ignore[attr-defined]
        lambda: f32.generated.run(*inputs),
    ]
    if bf16 is not None:
        names = [i.name for i in session.get_inputs()]  # type: ignore[attr-defined]
        compare_bf16(row, f32, bf16, [[feed[n] for n in names] for feed in feeds])
        row.arena_bf16 = bf16.arena_bytes
        runs.append(lambda: bf16.generated.run(*inputs))
    row.ours_ms, row.ort_ms, row.f32_ms, *bf16_ms = time_in_turn(runs, args.repeats, args.warmup)
    row.bf16_ms = bf16_ms[0] if bf16_ms else 0.0
    want, steps = session.run(None, feeds[0]), output_steps(quantized)  # type: ignore[attr-defined]
    if args.evaluator:
        ref = int8 if args.target == "ref" else compile_generated(int8_module, int8_source, "ref")
        row.evaluator = evaluator_steps(
            quantized,
            feeds[0],
            {
                args.target: int8.generated.run(*inputs),
                "ref": ref.generated.run(*inputs),
                "onnxruntime": want,
            },
        )
    for target in args.targets:
        for padding in (True, False):
            other = compile_generated(int8_module, int8_source, target, padding)
            key = f"{target}{'' if padding else ' nopad'}"
            row.targets[key] = steps_apart(want, other.generated.run(*inputs), steps)
            print(f"  {label} {key}: {row.targets[key]:.2f} steps", file=sys.stderr, flush=True)
    return row


# ------------------------------------------------------------------ the table
def report(rows: Sequence[Row], args: argparse.Namespace, markdown: bool) -> str:
    header = [
        "model",
        "ours int8 ms",
        "onnxruntime int8 ms",
        "ratio",
        "ours f32 ms",
        "speed-up over f32",
        "arena int8 MiB",
        "arena f32 MiB",
        "int8/f32",
        "at lower bound",
        "max diff (steps)",
        "within 1 step",
        "onnxruntime's own spread (steps)",
        "top-1 agreement",
        "onnxruntime's own top-1",
    ]
    if args.targets:
        header.append("targets (max steps, first input)")
    if args.evaluator:
        header.append("from onnx's reference evaluator (steps, first input)")
    lines = []
    for r in rows:
        line = [
            r.model,
            *latency_cells(r.ours_ms, r.ort_ms),
            f"{r.f32_ms:.1f}",
            f"{r.f32_ms / r.ours_ms:.2f}x",
            f"{r.arena / MIB:.2f}",
            f"{r.arena_f32 / MIB:.2f}",
            f"{r.arena / r.arena_f32:.3f}" if r.arena_f32 else "-",
            f"{'yes' if r.at_bound else 'NO'} / {'yes' if r.f32_at_bound else 'NO'}",
            f"{r.steps:.2f}",
            f"{100 * r.within:.3f}%",
            f"{r.spread:.2f}",
            f"{100 * r.agreeing / max(r.total, 1):.2f}% of {r.total}",
            f"{100 * r.own_agreeing / max(r.total, 1):.2f}%",
        ]
        if args.targets:
            line.append(", ".join(f"{k} {v:.2f}" for k, v in r.targets.items()))
        if args.evaluator:
            line.append(", ".join(f"{k} {v:.2f}" for k, v in r.evaluator.items()))
        lines.append(line)
    title = (
        f"int8 (QDQ, per-channel) against onnxruntime's int8, 1 thread, target "
        f"{args.target}: medians of {args.repeats} rounds after {args.warmup} untimed; "
        f"agreement on {args.inputs} seeded inputs (at lower bound: int8 / f32 arena)"
    )
    return table(title, header, lines, markdown) + (
        report_bf16(rows, args, markdown) if args.bf16 else ""
    )


def report_bf16(rows: Sequence[Row], args: argparse.Namespace, markdown: bool) -> str:
    """The second table: bf16 (`default-pipeline{bf16=true}`) against our float32."""
    header = ["model", "ours f32 ms", "ours bf16 ms", "speed-up over f32"]
    header += ["arena f32 MiB", "arena bf16 MiB", "bf16/f32", "max rel diff", "top-1 agreement"]
    lines = [
        [
            r.model,
            f"{r.f32_ms:.1f}",
            f"{r.bf16_ms:.1f}",
            f"{r.f32_ms / r.bf16_ms:.2f}x",
            f"{r.arena_f32 / MIB:.2f}",
            f"{r.arena_bf16 / MIB:.2f}",
            f"{r.arena_bf16 / r.arena_f32:.3f}" if r.arena_f32 else "-",
            f"{r.bf16_difference:.1e}",
            f"{100 * r.bf16_agreeing / max(r.bf16_total, 1):.2f}% of {r.bf16_total}",
        ]
        for r in rows
    ]
    title = (
        f"bf16 (default-pipeline{{bf16=true}}) against our float32, 1 thread, target "
        f"{args.target}: medians of the same {args.repeats} rounds; agreement on "
        f"{args.inputs} seeded inputs"
    )
    return "\n" + table(title, header, lines, markdown)


def make_parser() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "names",
        nargs="*",
        help=f"models (default: {', '.join(MODELS)}; with a torch quantizer, "
        f"torchvision's {', '.join(TORCH_FX_MODELS)})",
    )
    parser.add_argument(
        "--quantizer",
        choices=["onnxruntime", *TORCH_QUANTIZERS],
        default="onnxruntime",
        help="onnxruntime's quantize_static (default), or torch's own quantization of a "
        "torchvision model exported by the classic exporter (needs the models extra): "
        "torch.ao's quantize_fx (x86 qconfig; torchvision_export's fx-int8), or eager mode "
        "on torchvision's quantizable variant (fuse_model, prepare, convert; eager-int8); or "
        "torchao's pt2e flow, exported by the dynamo exporter (pt2e-int8; its x86 quantizer: "
        "pt2e-x86-int8)",
    )
    parser.add_argument("--small", action="store_true", help="the zoo's reduced variants")
    parser.add_argument("--target", default="onednn", help="the timed target (default onednn)")
    parser.add_argument(
        "--targets",
        default="",
        help="comma-separated targets also checked (padding on and off) on the first input, "
        "e.g. ref,avx2,avx512,onednn,host",
    )
    parser.add_argument("--repeats", type=int, default=10, help="timed rounds (default 10)")
    parser.add_argument(
        "--warmup", type=int, default=10, help="untimed rounds before them (default 10)"
    )
    parser.add_argument(
        "--inputs", type=int, default=100, help="seeded inputs compared (default 100)"
    )
    parser.add_argument(
        "--calibration", type=int, default=8, help="seeded calibration inputs (default 8)"
    )
    parser.add_argument("--seed", type=int, default=1, help="calibration seed; inputs: seed+1")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument(
        "--evaluator",
        action="store_true",
        help="also compare the timed target, the ref target and onnxruntime with onnx's "
        "ReferenceEvaluator on the first input, in output steps",
    )
    parser.add_argument(
        "--no-bf16",
        dest="bf16",
        action="store_false",
        help="leave out the bf16 table (default-pipeline{bf16=true} against float32)",
    )
    parser.add_argument(
        "-d", "--dir", type=Path, default=MODELS_DIR, help="where the float zoo models are built"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("NNLAYOUT_TORCHVISION_CACHE", DEFAULT_CACHE)),
        help=f"torchvision exports (default: $NNLAYOUT_TORCHVISION_CACHE or {DEFAULT_CACHE})",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = make_parser()
    args = parser.parse_args(argv)
    by_torch = TORCH_QUANTIZERS.get(args.quantizer)
    args.names = args.names or list(TORCH_FX_MODELS if by_torch else MODELS)
    args.targets = [t for t in args.targets.split(",") if t]
    known = {
        FX_INT8: TORCHVISION_MODELS,
        EAGER_INT8: list(EAGER_MODELS),
        PT2E_INT8: TORCHVISION_MODELS,
        PT2E_X86_INT8: TORCHVISION_MODELS,
        None: [*MODELS, *TORCHVISION_MODELS],
    }
    check_names(parser, args.names, known[by_torch])
    if by_torch and (args.small or missing_packages()):
        parser.error(
            f"--quantizer {args.quantizer} needs torch (pip install -e '.[models]'), not --small"
        )
    if by_torch in (PT2E_INT8, PT2E_X86_INT8) and importlib.util.find_spec("torchao") is None:
        parser.error(f"--quantizer {args.quantizer} needs torchao (pip install -e '.[models]')")
    if args.inputs < 1 or args.repeats < 1 or args.calibration < 1:
        parser.error("--inputs, --repeats and --calibration must be at least 1")
    if args.warmup < 0:
        parser.error("--warmup must be at least 0")
    if importlib.util.find_spec("onnxruntime") is None:
        parser.error("needs onnxruntime, which is not installed: pip install -e '.[test]'")
    if os.environ.get("OMP_NUM_THREADS") != "1":
        return run_with_threads("nnlayout.benchmarks.zoo_int8", argv, 1).returncode
    rows = []
    with tempfile.TemporaryDirectory(prefix="nnlayout-zoo-int8-") as scratch:
        for name in args.names:
            source = float_model(name, args)
            if by_torch and not isinstance(source, str):
                source = export_cached(args.cache_dir, name, by_torch, TIMEOUT_SECONDS) or source
            if isinstance(source, str):
                print(f"{name}: left out: {source}", flush=True)
                continue
            rows.append(row := measure(name, source, args, Path(scratch)))
            print(f"  {row.model}: done", file=sys.stderr, flush=True)
    if rows:
        print(report(rows, args, args.markdown))
    failed = [r.model for r in rows if not r.passed]
    if failed:
        print(
            f"MISMATCH: {', '.join(failed)} beyond one output step and onnxruntime's own "
            "spread, or under 99% top-1 and onnxruntime's own"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
