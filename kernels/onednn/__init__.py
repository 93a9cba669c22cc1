"""oneDNN as a kernel provider, through ctypes, registered only when the library loads: the
binding (binding.py), the map between oneDNN format tags and nnlayout layouts (formats.py),
cached primitives on numpy buffers (primitives.py), one module per primitive family
(convolution, deconvolution, matmul, pooling, eltwise and binary, reorder, and the ops run in
their operand's layout: any_layout.py), the numeric bounds that guard them (bounds.py), how a
bound op is called (calls.py, executor.py, prepared.py) and the `onednn` family's descriptor
table (kernels.py)."""
