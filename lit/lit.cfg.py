# ruff: noqa: F821  (lit injects `config`)
"""lit configuration: the tools run from the Python that runs lit, never from PATH luck."""

import os
import re
import sys

import lit.formats

config.name = "nnlayout"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

python_bin = os.path.dirname(sys.executable)  # where filecheck was installed
config.environment["PATH"] = os.pathsep.join([python_bin, os.environ.get("PATH", "")])
# oneDNN's instruction-set cap under both its names (DNNL_ is the older one it still reads):
# %onednn_isa below is asked in this process, so the tests must run under the same cap.
# PYTHONPATH: a checkout put first on it is the nnlayout this process imports, so the tools
# must import it too (they ran the installed one). Likewise a user's own oneDNN
# (NNLAYOUT_ONEDNN_LIBRARY, with the loader paths its dependencies need).
for variable in (
    "HOME",
    "LD_LIBRARY_PATH",
    "NNLAYOUT_DISABLE_PADDING",
    "NNLAYOUT_ONEDNN_LIBRARY",
    "OCL_ICD_FILENAMES",
    "OMP_NUM_THREADS",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "PYTHONPATH",
):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]


def command(word: str) -> str:
    """lit substitutes regular expressions: `word` only where it stands as a word of the
    command, as LLVM's ToolSubst does (not inside `--implicit-check-not`, a path or a name)."""
    return rf"(?<![\w.\-/]){re.escape(word)}(?![\w.\-/])"


python = f'"{sys.executable}"'
for tool, module in (
    ("nnlayout-opt", "nnlayout.tools.opt"),
    ("nnlayout-run", "nnlayout.tools.run"),
    ("nnlayout-import", "nnlayout.tools.import_onnx"),
    ("nnlayout-translate", "nnlayout.tools.translate"),
):
    config.substitutions.append((command(tool), f"{python} -m {module}"))
# `not` is a script of this folder, run by its path: lit/ is no package (as one, it would be
# the `lit` that `import lit` finds when Python runs from the checkout).
not_script = os.path.join(config.test_source_root, "not_.py")
config.substitutions.append((command("not"), f'{python} "{not_script}"'))
config.substitutions.append(("%python", python))

# Tests of oneDNN's choices run where the library loads (`// REQUIRES: onednn`).
from nnlayout.kernels.onednn.binding import available as onednn_available  # noqa: E402

# oneDNN chooses its code and weight formats by the widest instruction set it runs here:
# `filecheck --check-prefixes=CHECK,%onednn_isa` also reads the lines of ISA-AVX512 (its
# avx512_core code) or ISA-AVX2 (also where ONEDNN_MAX_CPU_ISA=AVX2 caps an AVX-512 machine).
if onednn_available():
    from nnlayout.kernels.onednn.binding import runs_avx512_core  # noqa: E402

    config.available_features.add("onednn")
    config.substitutions.append(("%onednn_isa", "ISA-AVX512" if runs_avx512_core() else "ISA-AVX2"))
    # bf16 kernels (convert-to-bf16) where oneDNN runs AVX512_BF16 code here: `%onednn_bf16`
    # is BF16 there, else NO-BF16 (an older CPU, or ONEDNN_MAX_CPU_ISA=AVX2).
    from nnlayout.kernels.onednn.common import bf16_refusal  # noqa: E402

    config.substitutions.append(("%onednn_bf16", "NO-BF16" if bf16_refusal() else "BF16"))
    # int8 kernels (qconv2d_onednn, the qconv2d_add fusion) where oneDNN runs VNNI or AMX code:
    # `%onednn_int8` is INT8 there, else NO-INT8 (an older CPU, or ONEDNN_MAX_CPU_ISA=AVX2).
    from nnlayout.kernels.onednn.binding import runs_vnni  # noqa: E402

    config.substitutions.append(("%onednn_int8", "INT8" if runs_vnni() else "NO-INT8"))
