"""The documentation cannot drift from the code:

- the generated pages (docs/dialects.md, passes.md, kernels.md, onnx-operators.md) are what
  `scripts/gen_docs.py` makes now;
- every relative link of README.md and docs/*.md names a file that exists;
- every shell command of README.md and docs/tutorial.md that starts with `nnlayout-` or
  `python -m nnlayout` is run: the README's quick start and the Python API's snippets here
  (cheap), the tutorial's walk-through here too (marked slow: it builds, imports, compiles and
  runs a small ResNet-50, about a minute), the rest by the test named in `RUN_ELSEWHERE`;
- the files the tutorial shows (`File \\`path\\`:` before a code block) are shown as they are.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TUTORIAL = ROOT / "docs" / "tutorial.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

# Documented commands that an expensive test runs instead of this file, with a string of
# that test that shows it runs them.
RUN_ELSEWHERE = {
    "python -m nnlayout.examples.run_example": (
        "tests/tools/test_run_example.py",
        "from nnlayout.examples.run_example import main",
    ),
}


def _generator():  # scripts/ is no package: load the generator by its path
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------ generated pages


@pytest.mark.parametrize("page", ["dialects.md", "passes.md", "kernels.md", "onnx-operators.md"])
def test_a_generated_page_is_what_the_generator_makes(page: str) -> None:
    generator = _generator()
    written = (ROOT / "docs" / page).read_text(encoding="utf-8")
    if page == "kernels.md":
        from nnlayout.kernels.onednn.binding import available

        if not available():
            pytest.skip("kernels.md lists oneDNN's kernels, which do not load here")
    if page == "onnx-operators.md":
        import onnx

        if f"Generated with onnx {onnx.__version__} " not in written:
            pytest.skip(
                f"onnx-operators.md was generated with another onnx than {onnx.__version__}"
            )
    assert written == generator.PAGES[page](), (
        f"docs/{page} differs from the code: run `python scripts/gen_docs.py` and commit it"
    )


def test_generated_pages_name_every_op_pass_and_converter() -> None:
    from nnlayout.dialects import layout, nn
    from nnlayout.frontends.onnx import SUPPORTED_OPS

    dialects = (ROOT / "docs" / "dialects.md").read_text(encoding="utf-8")
    for op in [*nn.NN.operations, *layout.Layout.operations]:
        assert f"### `{op.name}`" in dialects
    passes = (ROOT / "docs" / "passes.md").read_text(encoding="utf-8")
    for name in _generator().builtin_passes():
        assert f"## `{name}`" in passes
    assert "## `dce`" in passes and "## `default-pipeline`" in passes
    operators = (ROOT / "docs" / "onnx-operators.md").read_text(encoding="utf-8")
    for name in SUPPORTED_OPS:
        assert f"\n| {name} | " in operators


# ------------------------------------------------------------------ links

_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_names_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    broken = [
        target
        for target in _LINK.findall(text)
        if not re.match(r"[a-z]+:", target)
        and not target.startswith("#")
        and not (page.parent / target.split("#")[0]).exists()
    ]
    assert broken == [], f"{page.name} links to missing files: {broken}"


# ------------------------------------------------------------------ commands


def code_blocks(page: Path, language: str) -> list[tuple[str, str]]:
    """(the heading above, the text) of each ```language block of `page`."""
    blocks, heading = [], ""
    for match in re.finditer(
        r"^(#+ [^\n]*)$|^```(\w*)\n(.*?)^```$", page.read_text(encoding="utf-8"), re.M | re.S
    ):
        if match.group(1):
            heading = match.group(1)
        elif match.group(2) == language:
            blocks.append((heading, match.group(3)))
    return blocks


def commands(block: str) -> list[str]:
    """The commands of a shell block: each line (comments dropped), each `&&` part."""
    found = []
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        found += [part.strip() for part in line.split("&&") if part.strip()]
    return found


def documented(command: str) -> bool:
    return command.startswith(("nnlayout-", "python -m nnlayout"))


def quick_start() -> list[str]:
    return [c for h, b in code_blocks(README, "sh") if h == "## Quick start" for c in commands(b)]


def tutorial() -> list[str]:
    return [c for _, b in code_blocks(TUTORIAL, "sh") for c in commands(b)]


def test_every_documented_command_is_run_by_a_test() -> None:
    run_here = set(quick_start()) | set(tutorial())
    for page in (README, TUTORIAL):
        for _, block in code_blocks(page, "sh"):
            for command in filter(documented, commands(block)):
                if command in run_here:
                    continue
                assert command in RUN_ELSEWHERE, f"{page.name}: no test runs `{command}`"
                test_file, marker = RUN_ELSEWHERE[command]
                assert marker in (ROOT / test_file).read_text(encoding="utf-8")
    assert any(documented(c) for c in quick_start()) and any(documented(c) for c in tutorial())


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`command` as a shell runs it in `folder`, with this Python's tools first on PATH."""
    env = dict(
        os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    )
    env.pop("NNLAYOUT_DISABLE_PADDING", None)
    result = subprocess.run(
        ["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"`{command}` failed:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _checkout_copy(tmp_path: Path) -> Path:
    """A folder holding what the documented commands read from the checkout: examples/."""
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("models")
    )
    return tmp_path


def quoted_lines(page: Path, heading: str) -> list[str]:
    """The lines of the ```text blocks under `heading` of `page` (an output the page quotes),
    without the `...` lines that mark an abridgement."""
    return [
        line
        for h, block in code_blocks(page, "text")
        if h == heading
        for line in block.splitlines()
        if line.strip() != "..."
    ]


def is_printed(quoted: str, output: str) -> bool:
    """Whether a line of `output` is `quoted`, where a `...` inside it stands for anything."""
    pattern = ".*".join(re.escape(part) for part in quoted.split("..."))
    return any(re.fullmatch(pattern, line) for line in output.splitlines())


def test_the_readme_quick_start_runs(tmp_path: Path) -> None:
    folder = _checkout_copy(tmp_path)
    outputs = [_run(command, folder) for command in quick_start()]
    quoted = quoted_lines(README, "## Quick start")
    assert any("remark:" in line for line in quoted) and any("arena" in line for line in quoted)
    for line in quoted:  # what the README says the first command prints, it prints
        assert is_printed(line, outputs[0].stderr), f"not printed: {line}\n{outputs[0].stderr}"
    planned = (folder / "tiny_resnet.planned.mlir").read_text()
    assert "nnlayout.arena_bytes" in planned and '"conv2d_nchwc"' in planned
    assert np.load(folder / "out" / "result0.npy").shape == (1, 10)
    assert outputs[-1].stdout.startswith("(array([[")


@pytest.mark.slow
def test_the_tutorial_runs(tmp_path: Path) -> None:
    """Every command of the tutorial, in order, in one folder (a minute: it builds and runs a
    small ResNet-50, as the tutorial does)."""
    folder = _checkout_copy(tmp_path)
    text = TUTORIAL.read_text(encoding="utf-8")
    for command in tutorial():
        result = _run(command, folder)
        if "--remarks" in command:  # the remark the tutorial quotes is printed
            assert next(line for line in result.stderr.splitlines() if "remark:" in line) in text
        if "plan-memory{report" in command:
            assert next(line for line in result.stderr.splitlines() if "@main" in line) in text
            assert (folder / "plan.svg").read_text().startswith("<svg")
        if command.startswith("python -c") and "before/" in command:
            assert float(result.stdout) < 1e-5


def test_the_python_api_snippets_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_checkout_copy(tmp_path))
    namespace: dict[str, object] = {}
    for _, block in code_blocks(ROOT / "docs" / "python-api.md", "python"):
        exec(compile(block, "docs/python-api.md", "exec"), namespace)  # noqa: S102


def test_the_files_the_tutorial_shows_are_the_files() -> None:
    shown = re.findall(r"^File `([^`]+)`:\n\n```\w*\n(.*?)^```$", TUTORIAL.read_text(), re.M | re.S)
    assert len(shown) == 3
    for path, text in shown:
        assert (ROOT / path).read_text(encoding="utf-8") == text, (
            f"the tutorial shows an old {path}"
        )
