"""Every command's `--help` is whole: the four tools, the main job, make_models and every
`python -m nnlayout.benchmarks.X` and `nnlayout.scripts.X` (those marked slow) exit 0 and
print a description that ends a sentence (a first docstring line cut mid-sentence did not)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [
    "tools.opt",
    "tools.run",
    "tools.import_onnx",
    "tools.translate",
    "examples.run_example",
    "examples.make_models",
]
# Slow: each imports much of the package and its benchmark's libraries.
OTHERS = [
    f"{folder}.{path.stem}"
    for folder in ("benchmarks", "scripts")
    for path in sorted((ROOT / folder).glob("*.py"))
    if path.stem != "__init__" and "__main__" in path.read_text()
]
COMMANDS = [*TOOLS, *(pytest.param(command, marks=pytest.mark.slow) for command in OTHERS)]


def description(help_text: str) -> str:
    """The description argparse printed: the paragraph(s) after the usage lines (the first
    blank line), before the first argument section."""
    body = help_text.split("\n\n", 1)[1]
    return re.split(r"^(?:positional arguments|options):$", body, maxsplit=1, flags=re.M)[0]


def test_every_benchmark_and_script_is_listed() -> None:
    assert len([c for c in OTHERS if c.startswith("benchmarks.")]) >= 10
    assert len([c for c in OTHERS if c.startswith("scripts.")]) >= 4


@pytest.mark.parametrize("command", COMMANDS)
def test_help_exits_0_with_a_whole_description(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"nnlayout.{command}", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = description(done.stdout).strip()
    assert text.endswith((".", ".)")), text[-200:]
    assert len(text) > 30
