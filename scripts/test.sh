#!/usr/bin/env bash
# The README's test command, which CI (.ci/run) runs: the tiers are in docs/testing.md.
#
#   bash scripts/test.sh          # the full tier: ruff, pytest --runslow (random-program
#                                 # fuzzing, iree-opt validity, every target x padding sweep),
#                                 # lit, and lit again with oneDNN capped at AVX2
#   bash scripts/test.sh --fast   # for developers: ruff, the default pytest tier, lit once
#
# The first run makes .venv (the package, editable, with its test extra; the full tier adds
# the mlir extra, iree-base-compiler); later runs reuse it and reinstall only when
# pyproject.toml changed, an extra is missing, or .venv imports another checkout's nnlayout.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=false
for arg in "$@"; do
    case $arg in
    --fast) fast=true ;;
    -h | --help)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bash scripts/test.sh [--fast]" >&2
        exit 2
        ;;
    esac
done
extras=test
$fast || extras=test,mlir

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip
fi
. .venv/bin/activate
# What was installed: pyproject.toml's hash and the extras, one a line.
stamp=.venv/nnlayout-installed
pyproject=$(sha256sum pyproject.toml | cut -d' ' -f1)
installed=$(cat "$stamp" 2>/dev/null || true)
here=$(python -c 'import os, nnlayout; print(os.path.dirname(os.path.realpath(nnlayout.__file__)))' 2>/dev/null || true)
needed=false
[ "$here" = "$(pwd -P)" ] || needed=true
[ "$(head -n 1 <<<"$installed")" = "$pyproject" ] || needed=true
for extra in ${extras//,/ }; do
    grep -qx "$extra" <<<"$installed" || needed=true
done
if $needed; then
    # Keep the extras installed before (a full-tier venv stays one after a --fast run).
    all=$( (tail -n +2 <<<"$installed"; tr , '\n' <<<"$extras") | sort -u | grep . | paste -sd,)
    echo "scripts/test.sh: installing the package with its extras [$all] into .venv"
    python -m pip install -q -e ".[$all]"
    printf '%s\n' "$pyproject" ${all//,/ } >"$stamp"
fi

ruff check .
ruff format --check .
if $fast; then
    python -m pytest
    lit -q lit/
else
    python -m pytest --runslow
    lit -q lit/
    # oneDNN's choices differ by instruction set (%onednn_isa): on an AVX-512 machine, check
    # the AVX2 expectations too (elsewhere this repeats the run above).
    ONEDNN_MAX_CPU_ISA=AVX2 lit -q lit/
fi
echo "lit: all tests passed"
