"""Parse + verify + print speed of a 2,000-op `nn` module, in-process and through nnlayout-opt.

    python benchmarks/parse_speed.py [--ops 2000] [--repeat 3] [--keep module.mlir]

The module is a ResNet-like chain at 64x56x56: residual blocks of conv2d, batch_norm, relu and
add, with external constants for the weights, a max_pool2d every few blocks and a classifier
head. Each figure is the best of `--repeat` runs, as wall-clock time and as CPU time (user +
system, children included for the CLI): on a busy shared machine the CPU time is the figure
that does not depend on what else runs. Acceptance target: under 2 s of CPU time, both
in-process and through the CLI (start-up included).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path

from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.ir.verify import verify_module
from nnlayout.tools.driver import description

TARGET_SECONDS = 2.0
ACT = "tensor<1x64x56x56xf32>"
WEIGHT = "tensor<64x64x3x3xf32>"
PARAM = "tensor<64xf32>"


def _block(i: int, x: str) -> tuple[list[str], str]:
    """One residual block reading `x`; returns its lines and its output value."""
    conv = "strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1"
    bn_type = f"({ACT}, {PARAM}, {PARAM}, {PARAM}, {PARAM}) -> {ACT}"
    lines = []
    for j in (1, 2):
        source = x if j == 1 else f"%b{i}_r1"
        lines += [
            f'  %b{i}_w{j} = nn.constant external "block{i}.conv{j}.weight" : {WEIGHT}',
            f"  %b{i}_c{j} = nn.conv2d {source}, %b{i}_w{j} {conv} : ({ACT}, {WEIGHT}) -> {ACT}",
            f"  %b{i}_n{j} = nn.batch_norm %b{i}_c{j}, %scale, %shift, %mean, %var "
            f"epsilon 1.0e-05 : {bn_type}",
        ]
        if j == 1:
            lines.append(f"  %b{i}_r1 = nn.relu %b{i}_n1 : {ACT}")
    lines += [
        f"  %b{i}_s = nn.add %b{i}_n2, {x} : ({ACT}, {ACT}) -> {ACT}",
        f"  %b{i}_r2 = nn.relu %b{i}_s : {ACT}",
    ]
    out = f"%b{i}_r2"
    if i % 4 == 3:
        lines.append(
            f"  %b{i}_p = nn.max_pool2d {out} kernel [3, 3] strides [1, 1] "
            f"pads [1, 1, 1, 1] dilations [1, 1] : {ACT} -> {ACT}"
        )
        out = f"%b{i}_p"
    return lines, out


def make_module(ops: int) -> str:
    """A module with at least `ops` nn ops (func.func and func.return not counted)."""
    head = [
        f"func.func @resnet(%x: {ACT}, %scale: {PARAM}, %shift: {PARAM}, %mean: {PARAM}, "
        f"%var: {PARAM}) -> tensor<1x1000xf32> {{"
    ]
    tail_ops = [
        "  %gap = nn.global_avg_pool {x} : " + ACT + " -> tensor<1x64x1x1xf32>",
        "  %flat = nn.flatten %gap axis 1 : tensor<1x64x1x1xf32> -> tensor<1x64xf32>",
        '  %fc_w = nn.constant external "fc.weight" : tensor<1000x64xf32>',
        '  %fc_b = nn.constant external "fc.bias" : tensor<1000xf32>',
        "  %fc = nn.gemm %flat, %fc_w, %fc_b trans_b alpha 1.0 beta 1.0 : (tensor<1x64xf32>, "
        "tensor<1000x64xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>",
        "  %prob = nn.softmax %fc axis 1 : tensor<1x1000xf32>",
    ]
    body: list[str] = []
    x, i = "%x", 0
    while len(body) + len(tail_ops) < ops:
        lines, x = _block(i, x)
        body += lines
        i += 1
    tail = [line.format(x=x) for line in tail_ops]
    return "\n".join(head + body + tail + ["  func.return %prob : tensor<1x1000xf32>", "}", ""])


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_of(repeat: int, step: Callable[[], object]) -> tuple[float, float, object]:
    """The fastest wall and CPU times of `repeat` runs of `step`, and its last result."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), _cpu_seconds()
        result = step()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, _cpu_seconds() - cpu)
    return best_wall, best_cpu, result


Figures = dict[str, tuple[float, float]]


def in_process(text: str, repeat: int) -> Figures:
    ctx = make_context()
    *parse, module = best_of(repeat, lambda: parse_module(ctx, text, "bench.mlir"))
    *verify, _ = best_of(repeat, lambda: verify_module(module, text))
    *printing, _ = best_of(repeat, lambda: print_module(module, StringIO()))
    steps = {"parse": parse, "verify": verify, "print": printing}
    total = tuple(sum(times[i] for times in steps.values()) for i in range(2))
    return {name: (wall, cpu) for name, (wall, cpu) in {**steps, "total": total}.items()}


def through_cli(path: Path, repeat: int) -> tuple[float, float]:
    command = [sys.executable, "-m", "nnlayout.tools.opt", str(path), "-o", "/dev/null"]
    wall, cpu, _ = best_of(repeat, lambda: subprocess.run(command, check=True))
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="also write the generated module here")
    args = parser.parse_args()

    text = make_module(args.ops)
    op_count = sum(" = nn." in line for line in text.splitlines())
    if args.keep:
        args.keep.write_text(text)
    figures = in_process(text, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.mlir"
        path.write_text(text)
        figures["CLI (parse+verify+print)"] = through_cli(path, args.repeat)
        tiny = Path(folder) / "tiny.mlir"
        tiny.write_text("func.func @f() {\n  func.return\n}\n")
        figures["CLI start-up (empty module)"] = through_cli(tiny, args.repeat)

    print(f"{op_count} nn ops, {len(text) / 1e6:.2f} MB of IR, best of {args.repeat}")
    print(f"{'step':<28} {'wall s':>7} {'CPU s':>7} {'ops/s (CPU)':>12}")
    for step, (wall, cpu) in figures.items():
        rate = "" if step.startswith("CLI start") else f"{op_count / cpu:.0f}"
        print(f"{step:<28} {wall:7.3f} {cpu:7.3f} {rate:>12}")
    worst = max(figures[step][1] for step in ("total", "CLI (parse+verify+print)"))
    verdict = "OK" if worst < TARGET_SECONDS else "TOO SLOW"
    print(
        f"target: CPU time under {TARGET_SECONDS:.1f} s in-process and through the CLI: {verdict}"
    )
    return 0 if worst < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
