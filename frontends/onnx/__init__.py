"""ONNX -> `nn` dialect: one `func.func @main` whose arguments are the graph's inputs.

The importer runs onnx's checker and shape inference first, then emits, node by node, the `nn`
ops with the same semantics (a few nodes decompose: Softmax before opset 13 coerces to 2-D,
1-D Conv/pooling run as 2-D ops on a height-1 image, GlobalMaxPool is a max pool over the
whole image, Dropout is the identity it is at inference; before opset 7 a binary op's B with
`broadcast=1 axis=k` is reshaped to broadcast from A's axis k). Every result is checked
against the shape ONNX inferred, so an importer bug surfaces at import time, naming the node,
rather than as a wrong answer later (except where onnx's inference is wrong: a pooling window
that ceil_mode would start in the end padding, which ONNX drops; a ConvTranspose with
auto_pad SAME and output_padding, whose output is input * stride; and what is computed from
those outputs). ONNX value names become SSA name hints (sanitised to what MLIR accepts).

What is known at compile time folds (`folding`): a node whose inputs are all constants, and a
Shape or Size of any value (shapes are static in nn), is evaluated at import by onnx's reference
implementation of its operator, at the model's opset; its results are constants, as if the
model had stored them. So the exporters' shape arithmetic (Shape, Gather, Concat, ... into a
Reshape) leaves only tensor computation, and an operator without a converter is refused only
where it acts on run-time values, saying so. Squeeze/Unsqueeze of such values become
`nn.reshape`, a Cast to float32 of one is the value. `import_model(..., input_shapes=...)`
(`nnlayout-import --input-shape NAME=DIMS`) fixes graph inputs' symbolic sizes.

A float16 model (torch's `model.half()`) keeps float16 inputs and outputs, and computes in
float32 between them: its weights are widened exactly at import, each float16 input is cast
to float32 on entry and each float16 output rounded once on exit, a Cast between float16
and float32 inside is the value itself, and one of a mask or integers to float16 makes
float32. Why: oneDNN has no float16 kernels on a CPU without AVX512-FP16 (onnxruntime's CPU
runs most float16 ops in float32 between casts, too), and rounding once is closer to the
model's float32 arithmetic than rounding after each op. So the results are within two
float16 steps of onnx's reference evaluation where every value stays in float16's range (one
that would overflow float16 between two ops stays finite here), and what folds at import
from constants is computed as ONNX says, in float16 (onnx's reference evaluator). A bfloat16
model (torch's `model.to(torch.bfloat16)`) is imported the same way, bfloat16 for float16
(`checks.NARROW_FLOATS`): bfloat16 has float32's range, so nothing overflows, and its
results are float32's rounded once to bfloat16 (onnxruntime's CPU refuses such models: its
Conv, Gemm and most other kernels have no bfloat16; `default-pipeline{bf16=true}` is what
computes in bfloat16 for speed, `transforms/convert_bf16.py`).

Initializers, Constant nodes and folded results become `nn.constant`s where a tensor is used;
those with more than `inline_limit` elements are returned in `ImportedModel.weights` and
referenced as `nn.constant external "key"`, where `key` is a file-name-safe version of the ONNX
name (the original name is kept in an `onnx.name` attribute when it differs). Integer
constants that act as attributes (Reshape's shape) are read at import time and never become
tensors, also when an Identity passes them on.

What nn cannot express is refused with a `UserError` naming the node and the reason: other
operators on run-time values, tensors of other types (float64, float8, ...), symbolic
dimensions left open, folds
that would make a constant beyond `limits.FOLDED_CONSTANT_BYTES`, MaxPool's Indices and
Dropout's mask outputs where something reads them (unread, they are left out), training-mode
BatchNormalization (statistics outputs listed, read or not) and Dropout, 3-D
convolution/pooling, and attributes ONNX leaves open (a NaN Clip bound, ...).

The package: `loading` reads the file, `inference` and `checks` hold what is checked before
a node is translated, `importer` walks the graph, keeping its `state`, folding what it can
(`folding`), and `operators` is the table of converters, grouped by kind in `convolution`,
`pooling` (both on `windows`), `elementwise`, `linear`, `normalisation`, `shapes`, `reshapes`
and `constants`.
"""

from nnlayout.frontends.onnx.common import sanitize_name
from nnlayout.frontends.onnx.importer import (
    DEFAULT_INLINE_LIMIT,
    ImportedModel,
    import_model,
    import_to_files,
    write_imported,
)
from nnlayout.frontends.onnx.loading import load_model
from nnlayout.frontends.onnx.operators import SUPPORTED_OPS
from nnlayout.frontends.onnx.windows import same_pads

__all__ = [
    "DEFAULT_INLINE_LIMIT",
    "SUPPORTED_OPS",
    "ImportedModel",
    "import_model",
    "import_to_files",
    "load_model",
    "same_pads",
    "sanitize_name",
    "write_imported",
]
