"""The map between oneDNN format tags and nnlayout layout strings.

Each `Format` pairs a `dnnl_format_tag_t` with the TVM-style layout string whose
`LayoutSpec.pack` produces exactly oneDNN's bytes for it, padding included (checked by
tests/kernels/test_onednn_binding.py through oneDNN reorders). The map holds the formats
convolution, pooling and the element-wise primitives choose on avx2 and avx512 for f32: plain and
channels-last data, `nChw8c`/`nChw16c`, and the weight blockings of the jit and brgemm
convolutions.

oneDNN's tags are semantics-agnostic (`nchw` = `oihw` = `abcd`), so each format has a role
saying which tensor it describes: `data` (N, C, H, W), `weights` (O, I, H, W), `grouped`
(oneDNN's 5-D g, o, i, h, w weights of a grouped convolution, which are our 4-D O, I, H, W
with O = g * o: a blocked one is our layout of the same blocks only when the block of o
divides o, as oneDNN pads each group's o on its own), `depthwise` (the same with
o = i = 1, where a block of g is a block of our O), `vector` (C), `matrix` (N, C) and
`matrix_weights` (O, I).

`layout_of_blocking` names any blocked descriptor in our notation (a fully connected layer's
weights, whose formats oneDNN picks by shape). `identify` finds the format of a descriptor
oneDNN chose by comparing it with descriptors made from each candidate tag of the role
(`dnnl_memory_desc_equal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nnlayout.dialects.kernel_attr import PLAIN_LAYOUT
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.onednn.binding import Blocking, MemoryDesc


@dataclass(frozen=True)
class Format:
    tag: str  # oneDNN's name, e.g. "nChw8c"
    value: int  # its dnnl_format_tag_t
    role: str
    layout: str  # ours, e.g. "NCHW8c"

    @property
    def kernel_layout(self) -> str:
        """The layout as a kernel declares it: plain ("") for the logical order."""
        return PLAIN_LAYOUT if LayoutSpec.parse(self.layout).is_identity else self.layout


FORMATS: tuple[Format, ...] = (
    Format("nchw", 5, "data", "NCHW"),
    Format("nhwc", 22, "data", "NHWC"),
    Format("nChw8c", 102, "data", "NCHW8c"),
    Format("nChw16c", 78, "data", "NCHW16c"),
    Format("oihw", 5, "weights", "OIHW"),
    Format("ohwi", 22, "weights", "OHWI"),
    Format("hwio", 28, "weights", "HWIO"),
    Format("OIhw8i8o", 107, "weights", "OIHW8i8o"),
    Format("OIhw16i16o", 79, "weights", "OIHW16i16o"),
    Format("Oihw16o", 73, "weights", "OIHW16o"),
    Format("Ohwi8o", 216, "weights", "OHWI8o"),
    Format("Ohwi16o", 211, "weights", "OHWI16o"),
    Format("Ohwi24o", 661, "weights", "OHWI24o"),
    Format("Ohwi32o", 214, "weights", "OHWI32o"),
    Format("Ohwi48o", 302, "weights", "OHWI48o"),
    Format("Ohwi64o", 305, "weights", "OHWI64o"),
    Format("goihw", 6, "grouped", "OIHW"),
    Format("gOIhw4i4o", 137, "grouped", "OIHW4i4o"),
    Format("gOIhw8i8o", 162, "grouped", "OIHW8i8o"),
    Format("gOIhw16i16o", 124, "grouped", "OIHW16i16o"),
    Format("gOhwi8o", 193, "grouped", "OHWI8o"),
    Format("gOhwi16o", 188, "grouped", "OHWI16o"),
    Format("gOhwi24o", 664, "grouped", "OHWI24o"),
    Format("gOhwi32o", 191, "grouped", "OHWI32o"),
    Format("gOhwi48o", 312, "grouped", "OHWI48o"),
    Format("gOhwi64o", 315, "grouped", "OHWI64o"),
    Format("goihw", 6, "depthwise", "OIHW"),
    Format("Goihw8g", 138, "depthwise", "OIHW8o"),
    Format("Goihw16g", 114, "depthwise", "OIHW16o"),
    Format("hwioG8g", 539, "depthwise", "HWIO8o"),
    Format("hwioG16g", 438, "depthwise", "HWIO16o"),
    Format("x", 2, "vector", "C"),
    Format("nc", 3, "matrix", "NC"),
    Format("oi", 3, "matrix_weights", "OI"),
    Format("io", 14, "matrix_weights", "IO"),
)
_IDENTITY = {
    "data": "NCHW",
    "weights": "OIHW",
    "grouped": "OIHW",
    "depthwise": "OIHW",
    "vector": "C",
    "matrix": "NC",
    "matrix_weights": "OI",
}


def by_layout(role: str, layout: str) -> Format | None:
    """The format of `role` whose layout is `layout` ("" = the role's plain layout)."""
    text = layout or _IDENTITY[role]
    return next((f for f in FORMATS if f.role == role and f.layout == text), None)


def names(fmt: Format, dims: tuple[int, ...]) -> bool:
    """Whether `fmt`'s layout of our logical tensor is oneDNN's tensor of `dims`: a grouped
    format pads o within each group, our layout pads O = g * o as a whole, and the two
    agree only when no group needs padding."""
    if fmt.role != "grouped":
        return True
    return dims[1] % LayoutSpec.parse(fmt.layout).block_product("O") == 0


def identify_all(md: MemoryDesc, role: str) -> list[Format]:
    """Every mapped format of `role` that describes `md` (a descriptor oneDNN chose, of any
    data type). More than one can: for 1x1 kernels Oihw16o and Ohwi16o are the same bytes.
    int8 weights with compensation after them (an extra flag) have none."""
    if not md.is_blocked:
        return []
    shape = md.shape
    return [
        candidate
        for candidate in FORMATS
        if candidate.role == role
        and names(candidate, shape)
        and MemoryDesc.with_tag(shape, candidate.value, md.data_type) == md
    ]


def identify(md: MemoryDesc, role: str) -> Format | None:
    """The first mapped format of `role` that `md` has, if any."""
    found = identify_all(md, role)
    return found[0] if found else None


def layout_of_blocking(blocking: Blocking, letters: Sequence[str]) -> str:
    """Our layout string of a blocked descriptor whose dim `i` is our axis `letters[i]`:
    its outer dims by decreasing stride, then its inner blocks ("OI8i24o" for oneDNN's
    weights [N, K] as N/24, K/8, 8k, 24n). The caller checks the byte sizes agree (a
    descriptor may pad beyond its blocks)."""
    order = sorted(range(len(letters)), key=lambda i: (-blocking.strides[i], i))
    blocks = "".join(f"{size}{letters[index].lower()}" for size, index in blocking.inner)
    return "".join(letters[i] for i in order) + blocks
