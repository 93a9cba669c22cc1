"""oneDNN as a kernel provider, through ctypes: the binding (binding.py), the map between
oneDNN format tags and nnlayout layouts (formats.py), cached primitives on numpy buffers
(primitives.py) and the `onednn` kernel family (kernels.py), registered only when the library
loads."""
