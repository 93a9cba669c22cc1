"""The C prototypes of the oneDNN v3.2 calls `binding` makes: each function's result type
(`STATUS` for a `dnnl_status_t`, checked on every call) and argument types, and the structures
they pass (`Dims`, `ExecArg`)."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_float, c_int, c_int32, c_int64, c_size_t, c_uint, c_void_p

DNNL_MAX_NDIMS = 12

Dims = c_int64 * DNNL_MAX_NDIMS


class ExecArg(ctypes.Structure):
    """dnnl_exec_arg_t: an argument index and the memory bound to it."""

    _fields_ = [("arg", c_int), ("memory", c_void_p)]


STATUS = object()  # marks functions returning dnnl_status_t, checked on every call
_P = c_void_p
_PP = POINTER(c_void_p)
PROTOTYPES: dict[str, tuple[object, tuple[object, ...]]] = {
    "dnnl_engine_create": (STATUS, (_PP, c_int, c_size_t)),
    "dnnl_stream_create": (STATUS, (_PP, _P, c_uint)),
    "dnnl_stream_wait": (STATUS, (_P,)),
    "dnnl_memory_desc_create_with_tag": (STATUS, (_PP, c_int, Dims, c_int, c_int)),
    "dnnl_memory_desc_create_with_strides": (STATUS, (_PP, c_int, Dims, c_int, Dims)),
    "dnnl_memory_desc_create_submemory": (STATUS, (_PP, _P, Dims, Dims)),
    "dnnl_memory_desc_destroy": (STATUS, (_P,)),
    "dnnl_memory_desc_query": (STATUS, (_P, c_int, _P)),
    "dnnl_memory_desc_equal": (c_int, (_P, _P)),
    "dnnl_memory_desc_get_size": (c_size_t, (_P,)),
    "dnnl_memory_create": (STATUS, (_PP, _P, _P, _P)),
    "dnnl_memory_set_data_handle": (STATUS, (_P, _P)),
    "dnnl_memory_destroy": (STATUS, (_P,)),
    "dnnl_primitive_attr_create": (STATUS, (_PP,)),
    "dnnl_primitive_attr_destroy": (STATUS, (_P,)),
    "dnnl_primitive_attr_set_scratchpad_mode": (STATUS, (_P, c_int)),
    "dnnl_primitive_attr_set_post_ops": (STATUS, (_P, _P)),
    "dnnl_primitive_attr_set_scales_mask": (STATUS, (_P, c_int, c_int)),
    "dnnl_primitive_attr_set_zero_points_mask": (STATUS, (_P, c_int, c_int)),
    "dnnl_primitive_attr_set_fpmath_mode": (STATUS, (_P, c_int)),
    "dnnl_post_ops_create": (STATUS, (_PP,)),
    "dnnl_post_ops_destroy": (STATUS, (_P,)),
    "dnnl_post_ops_append_eltwise": (STATUS, (_P, c_int, c_float, c_float)),
    "dnnl_post_ops_append_sum": (STATUS, (_P, c_float, c_int32, c_int)),
    "dnnl_post_ops_append_dw": (STATUS, (_P, c_int, c_int, c_int, c_int64, c_int64, c_int64)),
    "dnnl_post_ops_append_binary": (STATUS, (_P, c_int, _P)),
    "dnnl_convolution_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, _P, _P, Dims, Dims, Dims, Dims, _P),
    ),
    "dnnl_deconvolution_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, _P, _P, Dims, Dims, Dims, Dims, _P),
    ),
    "dnnl_pooling_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, Dims, Dims, Dims, Dims, Dims, _P),
    ),
    "dnnl_eltwise_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, c_float, c_float, _P),
    ),
    "dnnl_binary_primitive_desc_create": (STATUS, (_PP, _P, c_int, _P, _P, _P, _P)),
    "dnnl_prelu_forward_primitive_desc_create": (STATUS, (_PP, _P, c_int, _P, _P, _P, _P)),
    "dnnl_matmul_primitive_desc_create": (STATUS, (_PP, _P, _P, _P, _P, _P, _P)),
    "dnnl_softmax_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, c_int, _P),
    ),
    "dnnl_inner_product_forward_primitive_desc_create": (STATUS, (_PP, _P, c_int, *[_P] * 5)),
    "dnnl_batch_normalization_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, _P, _P, c_float, c_uint, _P),
    ),
    "dnnl_reduction_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, _P, _P, c_float, c_float, _P),
    ),
    "dnnl_layer_normalization_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, _P, _P, _P, c_float, c_uint, _P),
    ),
    "dnnl_lrn_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, c_int64, c_float, c_float, c_float, _P),
    ),
    "dnnl_concat_primitive_desc_create": (STATUS, (_PP, _P, _P, c_int, c_int, _PP, _P)),
    "dnnl_resampling_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, _P, _P, _P, _P),
    ),
    "dnnl_shuffle_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, _P, _P, c_int, c_int64, _P),
    ),
    # RNN primitives: pd, engine, prop, (activation,) direction, the memory descriptors, flags,
    # (alpha, beta,) attr
    "dnnl_lstm_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, *[_P] * 11, c_uint, _P),
    ),
    "dnnl_gru_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, *[_P] * 7, c_uint, _P),
    ),
    "dnnl_lbr_gru_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, *[_P] * 7, c_uint, _P),
    ),
    "dnnl_vanilla_rnn_forward_primitive_desc_create": (
        STATUS,
        (_PP, _P, c_int, c_int, c_int, *[_P] * 7, c_uint, c_float, c_float, _P),
    ),
    "dnnl_reorder_primitive_desc_create": (STATUS, (_PP, _P, _P, _P, _P, _P)),
    "dnnl_primitive_desc_query": (STATUS, (_P, c_int, c_int, _P)),
    "dnnl_primitive_desc_query_md": (_P, (_P, c_int, c_int)),
    "dnnl_primitive_desc_destroy": (STATUS, (_P,)),
    "dnnl_primitive_desc_next_impl": (c_int, (_P,)),  # last_impl_reached is not a failure
    "dnnl_get_effective_cpu_isa": (c_int, ()),
    "dnnl_primitive_create": (STATUS, (_PP, _P)),
    "dnnl_primitive_execute": (STATUS, (_P, _P, c_int, POINTER(ExecArg))),
    "dnnl_primitive_destroy": (STATUS, (_P,)),
    # libgomp's, found through libdnnl (dlsym searches the libraries it loaded)
    "omp_get_max_threads": (c_int, ()),
    "omp_set_num_threads": (None, (c_int,)),
}
