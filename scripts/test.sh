#!/usr/bin/env bash
# The README's test command: a fresh venv, the package with its test extra, then ruff, pytest, lit.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e '.[test]'
ruff check .
ruff format --check .
python -m pytest
lit -q lit/
# oneDNN's choices differ by instruction set (%onednn_isa): on an AVX-512 machine, check
# the AVX2 expectations too (elsewhere this repeats the run above).
ONEDNN_MAX_CPU_ISA=AVX2 lit -q lit/
echo "lit: all tests passed"
