"""nnlayout-opt's pass instrumentation: --print-ir-before/after dumps (on stderr, parsing
back; after a step of the default pipeline or all of it; after a failure, the IR the pass
left) and --time-passes (every stage once per run, also when diagnostics do not match)."""

import re
from pathlib import Path

import pytest

from nnlayout.tests.tools.test_cli import EXAMPLE, GOOD, opt
from nnlayout.transforms.default_pipeline import DefaultPipelinePass

_BREAKING_PLUGIN = """
from dataclasses import dataclass
from xdsl.dialects import func
from xdsl.passes import ModulePass
from nnlayout.transforms import register_pass


@register_pass
@dataclass(frozen=True)
class DropReturn(ModulePass):
    '''Leaves a function without its terminator: IR that does not verify.'''
    name = "drop-return"

    def apply(self, ctx, op):
        for ret in list(op.walk()):
            if isinstance(ret, func.ReturnOp):
                ret.detach()
                ret.erase()
"""


def _dumps(stderr: str) -> list[tuple[str, str]]:
    """(title, IR) of each `// -----// IR Dump TITLE //----- //` section of `stderr`."""
    parts = re.split(r"^// -----// IR Dump (.*) //----- //\n", stderr, flags=re.MULTILINE)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def test_print_ir_leaves_stdout_alone_and_dumps_parse_back() -> None:
    pipeline = "select-dispatch{target=avx2},insert-layouts,bufferize"
    plain = opt(str(EXAMPLE), "-p", pipeline)
    dumped = opt(str(EXAMPLE), "-p", pipeline, "--print-ir-before-all", "--print-ir-after-all")
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout == plain.stdout
    dumps = _dumps(dumped.stderr)
    assert [title for title, _ in dumps] == [
        "Before select-dispatch",
        "After select-dispatch",
        "Before insert-layouts",
        "After insert-layouts",
        "Before bufferize",
        "After bufferize",
    ]
    assert dumps[0][1].strip() == opt(str(EXAMPLE)).stdout.strip()  # the input, parsed
    assert dumps[-1][1].strip() == plain.stdout.strip()
    for _, ir in dumps:
        assert opt("-", stdin=ir).returncode == 0


def test_print_ir_after_a_step_of_the_default_pipeline_or_all_of_it() -> None:
    step = opt(
        str(EXAMPLE),
        "-p",
        "default-pipeline{target=avx2}",
        "--print-ir-after",
        "bufferize,plan-memory",
        "-o",
        "/dev/null",
    )
    assert [title for title, _ in _dumps(step.stderr)] == [
        "After default-pipeline (bufferize)",
        "After default-pipeline (plan-memory)",
    ]
    whole = opt(
        str(EXAMPLE),
        "-p",
        "default-pipeline{target=avx2}",
        "--print-ir-after",
        "default-pipeline",
        "-o",
        "/dev/null",
    )
    titles = [title for title, _ in _dumps(whole.stderr)]
    assert titles[0] == "After default-pipeline (fuse-activations)"
    assert titles[-1] == "After default-pipeline (plan-memory)"
    assert len(titles) == len(DefaultPipelinePass().passes())


def test_print_ir_after_failure_shows_the_ir_the_pass_left(tmp_path: Path) -> None:
    plugin = tmp_path / "drop_return.py"
    plugin.write_text(_BREAKING_PLUGIN)
    result = opt(
        str(EXAMPLE), "--load", str(plugin), "-p", "cse,drop-return", "--print-ir-after-failure"
    )
    assert result.returncode == 1
    ((title, ir),) = _dumps(result.stderr)
    assert title == "After drop-return Failed"
    assert "nn.softmax" in ir and "func.return" not in ir
    assert "error: IR after pass 'drop-return' does not verify" in ir  # the error follows
    quiet = opt(str(EXAMPLE), "--load", str(plugin), "-p", "cse,drop-return")
    assert _dumps(quiet.stderr) == [] and quiet.returncode == 1


def test_time_passes_reports_every_stage_once_per_run() -> None:
    text = EXAMPLE.read_text()
    result = opt(
        "-",
        "--split-input-file",
        "-p",
        "select-dispatch{target=avx2},cse",
        "--time-passes",
        "-o",
        "/dev/null",
        stdin=f"{text}\n// -----\n{text}",
    )
    assert result.returncode == 0, result.stderr
    rows = re.findall(r"^ +([0-9.]+) \( *([0-9.]+)%\)  (.+)$", result.stderr, re.MULTILINE)
    assert [name for _, _, name in rows] == [
        "parse",
        "verify",
        "select-dispatch",
        "cse",
        "output",
        "Total",
    ]
    seconds = [float(s) for s, _, _ in rows]
    assert sum(seconds[:-1]) == pytest.approx(seconds[-1], abs=1e-3)
    assert rows[-1][1] == "100.0"


def test_time_passes_reports_also_when_diagnostics_do_not_match() -> None:
    unmet = GOOD.replace("{}", "  // expected-error @+1 {{never}}\n")
    result = opt("-", "--verify-diagnostics", "-p", "cse", "--time-passes", stdin=unmet)
    assert result.returncode == 1
    assert "... Execution time report ..." in result.stderr
    assert result.stderr.rstrip().endswith("expected error not produced: {{never}}")
