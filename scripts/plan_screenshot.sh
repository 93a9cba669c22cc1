#!/usr/bin/env bash
# The memory-plan picture as a person sees it: plans a model with the default pipeline's
# passes, draws it (`plan-memory{report=true svg=...}`) and takes a screenshot of the SVG in
# headless Chromium (Debian: apt-get install chromium), to look at.
#
#   bash scripts/plan_screenshot.sh [MODEL.mlir|MODEL.onnx] [OUT_DIR] [TARGET] [IMPORT_ARGS...]
#
# IMPORT_ARGS go to nnlayout-import for an .onnx model, e.g. `--batch 1` or
# `--input-shape image=1x3x224x224` for a model with a symbolic dimension.
# By default: the zoo's small U-Net (channel padding and halos; examples/make_models.py),
# target avx2, into ./plan-screenshot/ (plan.svg, plan.png; the report on stderr).
# CHROMIUM=/path/to/chrome overrides the browser. tests/transforms/test_plan_picture.py runs it.
set -euo pipefail
model=${1:-}
out=${2:-plan-screenshot}
target=${3:-avx2}
if [ $# -ge 3 ]; then shift 3; else shift $#; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "$model" ]; then
    model=$(python -c 'import sys; from pathlib import Path
from nnlayout.examples.make_models import write_model
print(write_model("unet", small=True, folder=Path(sys.argv[1])))' "$out")
fi
if [[ "$model" == *.onnx ]]; then
    nnlayout-import "$model" -o "$out/model.mlir" "$@"
    model=$out/model.mlir
fi
nnlayout-opt "$model" -o /dev/null -p "fuse-activations,extend-ranks,fold-batch-norm,fold-pad,\
fuse-channel-shuffle,select-dispatch{target=$target},fuse-post-ops{target=$target},insert-layouts,\
propagate-layouts,fold-constants,bufferize,plan-memory{report=true svg=\"$out/plan.svg\"}"
# The window as large as the picture: its root element's width and height.
size=$(python -c 'import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(root.get("width") + "," + root.get("height"))' "$out/plan.svg")
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
    echo "plan_screenshot.sh: no Chromium found (apt-get install chromium, or set CHROMIUM)" >&2
    exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Without the background-networking flags Chromium keeps trying to reach Google's hosts.
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --window-size="$size" \
    --screenshot="$out/plan.png" "file://$out/plan.svg" >/dev/null 2>&1
test -s "$out/plan.png"
echo "$out/plan.png ($size): the plan picture as Chromium draws it"
