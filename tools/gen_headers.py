"""Write include/VX/*.h from the ABI facts tables (enums, functions, structs).

The headers are committed; this script is how they were produced and how they
are refreshed when the tables grow.  Usage: python tools/gen_headers.py ABI_DIR

Every function of every tier is declared (plus the deprecated ones of
vx_compatibility.h, listed in tools/compatibility.tsv); the build
(csrc/build_capi.py) gives each declared function without a hand-written
wrapper a stub that logs and returns VX_ERROR_NOT_IMPLEMENTED, so a function
added to a table is declared, exported and stubbed with no new hand code.
Only the files this script names are written: other headers in include/VX
(vendor extensions) are left alone.
"""
from __future__ import annotations

import csv
import sys
from collections import OrderedDict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "include" / "VX"
COMPAT_FUNCTIONS = Path(__file__).resolve().parent / "compatibility.tsv"

HANDLES = {
    "vx_reference": "_vx_reference", "vx_context": "_vx_context", "vx_graph": "_vx_graph",
    "vx_node": "_vx_node", "vx_kernel": "_vx_kernel", "vx_parameter": "_vx_parameter",
    "vx_scalar": "_vx_scalar", "vx_lut": "_vx_lut", "vx_image": "_vx_image",
    "vx_object_array": "_vx_object_array", "vx_array": "_vx_array",
    "vx_meta_format": "_vx_meta_format", "vx_tensor": "_vx_tensor_t",
    "vx_delay": "_vx_delay", "vx_distribution": "_vx_distribution",
    "vx_pyramid": "_vx_pyramid", "vx_threshold": "_vx_threshold",
    "vx_matrix": "_vx_matrix", "vx_convolution": "_vx_convolution",
    "vx_remap": "_vx_remap",
}

# Field C types of the standard structs; offsets and sizes come from structs.tsv
# and are checked by the test suite, these only name the types.
STRUCTS = {
    "vx_rectangle_t": ("vx_types.h", ["vx_uint32 start_x", "vx_uint32 start_y",
                                      "vx_uint32 end_x", "vx_uint32 end_y"]),
    "vx_coordinates2d_t": ("vx_types.h", ["vx_uint32 x", "vx_uint32 y"]),
    "vx_coordinates3d_t": ("vx_types.h", ["vx_uint32 x", "vx_uint32 y", "vx_uint32 z"]),
    "vx_keypoint_t": ("vx_types.h", ["vx_int32 x", "vx_int32 y", "vx_float32 strength",
                                     "vx_float32 scale", "vx_float32 orientation",
                                     "vx_int32 tracking_status", "vx_float32 error"]),
    "vx_imagepatch_addressing_t": ("vx_types.h", [
        "vx_uint32 dim_x", "vx_uint32 dim_y", "vx_int32 stride_x", "vx_int32 stride_y",
        "vx_uint32 scale_x", "vx_uint32 scale_y", "vx_uint32 step_x", "vx_uint16 step_y",
        "vx_uint16 stride_x_bits"]),
    "vx_coordinates2df_t": ("vx_types.h", ["vx_float32 x", "vx_float32 y"]),
    "vx_line2d_t": ("vx_types.h", ["vx_float32 start_x", "vx_float32 start_y",
                                   "vx_float32 end_x", "vx_float32 end_y"]),
    "vx_hog_t": ("vx_types.h", ["vx_int32 cell_width", "vx_int32 cell_height", "vx_int32 block_width",
                                "vx_int32 block_height", "vx_int32 block_stride", "vx_int32 num_bins",
                                "vx_int32 window_width", "vx_int32 window_height",
                                "vx_int32 window_stride", "vx_float32 threshold"]),
    "vx_hough_lines_p_t": ("vx_types.h", ["vx_float32 rho", "vx_float32 theta", "vx_int32 threshold",
                                          "vx_int32 line_length", "vx_int32 line_gap",
                                          "vx_float32 theta_max", "vx_float32 theta_min"]),
    "vx_perf_t": ("vx_types.h", ["vx_uint64 tmp", "vx_uint64 beg", "vx_uint64 end",
                                 "vx_uint64 sum", "vx_uint64 avg", "vx_uint64 min",
                                 "vx_uint64 num", "vx_uint64 max"]),
    "vx_kernel_info_t": ("vx_types.h", ["vx_enum enumeration",
                                        "vx_char name[256] /* VX_MAX_KERNEL_NAME */"]),
    "vx_tensor_matrix_multiply_params_t": ("vx_types.h", [
        "vx_bool transpose_input1", "vx_bool transpose_input2", "vx_bool transpose_input3"]),
    "vx_border_t": ("vx_types.h", ["vx_enum mode", "vx_pixel_value_t constant_value"]),
    "vx_nn_convolution_params_t": ("vx_khr_nn.h", [
        "vx_size padding_x", "vx_size padding_y", "vx_enum overflow_policy",
        "vx_enum rounding_policy", "vx_enum down_scale_size_rounding",
        "vx_size dilation_x", "vx_size dilation_y"]),
    "vx_nn_deconvolution_params_t": ("vx_khr_nn.h", [
        "vx_size padding_x", "vx_size padding_y", "vx_enum overflow_policy",
        "vx_enum rounding_policy", "vx_size a_x", "vx_size a_y"]),
    "vx_nn_roi_pool_params_t": ("vx_khr_nn.h", ["vx_enum pool_type"]),
    "vx_graph_parameter_queue_params_t": ("vx_khr_pipelining.h", [
        "vx_uint32 graph_parameter_index", "vx_uint32 refs_list_size", "vx_reference *refs_list"]),
    "vx_event_graph_parameter_consumed": ("vx_khr_pipelining.h", [
        "vx_graph graph", "vx_uint32 graph_parameter_index"]),
    "vx_event_graph_completed": ("vx_khr_pipelining.h", ["vx_graph graph"]),
    "vx_event_node_completed": ("vx_khr_pipelining.h", ["vx_graph graph", "vx_node node"]),
    "vx_event_node_error": ("vx_khr_pipelining.h", ["vx_graph graph", "vx_node node", "vx_status status"]),
    "vx_event_user_event": ("vx_khr_pipelining.h", ["void *user_event_parameter"]),
    "vx_delta_rectangle_t": ("vx_compatibility.h", ["vx_int32 delta_start_x", "vx_int32 delta_start_y",
                                                    "vx_int32 delta_end_x", "vx_int32 delta_end_y"]),
}

EVENT = """typedef union _vx_event_info_t {
    vx_event_graph_parameter_consumed graph_parameter_consumed;
    vx_event_graph_completed graph_completed;
    vx_event_node_completed node_completed;
    vx_event_node_error node_error;
    vx_event_user_event user_event;
} vx_event_info_t;

typedef struct _vx_event {
    vx_enum type;
    vx_uint64 timestamp;
    vx_uint32 app_value;
    vx_event_info_t event_info;
} vx_event_t;
"""

PIXEL_VALUE = """typedef union _vx_pixel_value_t {
    vx_uint8 RGB[3];
    vx_uint8 RGBX[4];
    vx_uint8 YUV[3];
    vx_uint8 U1;
    vx_uint8 U8;
    vx_uint16 U16;
    vx_int16 S16;
    vx_uint32 U32;
    vx_int32 S32;
    vx_uint8 reserved[16];
} vx_pixel_value_t;
"""

BASIC_TYPES = """typedef char vx_char;
typedef uint8_t vx_uint8;
typedef uint16_t vx_uint16;
typedef uint32_t vx_uint32;
typedef uint64_t vx_uint64;
typedef int8_t vx_int8;
typedef int16_t vx_int16;
typedef int32_t vx_int32;
typedef int64_t vx_int64;
typedef float vx_float32;
typedef double vx_float64;
typedef int32_t vx_enum;
typedef size_t vx_size;
typedef uint32_t vx_df_image;
typedef vx_enum vx_status;
typedef vx_enum vx_bool;
typedef uint32_t vx_bitfield;
typedef uintptr_t vx_map_id;
typedef vx_enum vx_action;
"""

CALLBACKS = """typedef vx_action (VX_CALLBACK *vx_nodecomplete_f)(vx_node node);
typedef vx_status (VX_CALLBACK *vx_kernel_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_initialize_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_deinitialize_f)(vx_node node, const vx_reference *parameters, vx_uint32 num);
typedef vx_status (VX_CALLBACK *vx_kernel_validate_f)(vx_node node, const vx_reference parameters[], vx_uint32 num, vx_meta_format metas[]);
typedef void (VX_CALLBACK *vx_log_callback_f)(vx_context context, vx_reference ref, vx_status status, const vx_char string[]);
typedef vx_status (VX_API_CALL *vx_publish_kernels_f)(vx_context context);
typedef vx_status (VX_API_CALL *vx_unpublish_kernels_f)(vx_context context);
"""

MACROS = """#define VX_MAX_IMPLEMENTATION_NAME (64)
#define VX_MAX_KERNEL_NAME (256)
#define VX_MAX_LOG_MESSAGE_LEN (1024)
#define VX_MAX_REFERENCE_NAME (64)
#define VX_SCALE_UNITY (1024u)
#define VX_SCALE_PYRAMID_HALF (0.5f)
#define VX_SCALE_PYRAMID_ORB ((vx_float32)0.8408964f)
#define VX_FMT_REF "%p"
#define VX_FMT_SIZE "%zu"

#define VX_ATTRIBUTE_BASE(vendor, object) (((vendor) << 20) | ((object) << 8))
#define VX_KERNEL_BASE(vendor, lib) (((vendor) << 20) | ((lib) << 12))
#define VX_ENUM_BASE(vendor, id) (((vendor) << 20) | ((id) << 12))
#define VX_DF_IMAGE(a, b, c, d) ((a) | ((b) << 8) | ((c) << 16) | ((d) << 24))

#define VX_VENDOR_MASK (0xFFF00000)
#define VX_TYPE_MASK (0x000FFF00)
#define VX_LIBRARY_MASK (0x000FF000)
#define VX_KERNEL_MASK (0x00000FFF)
#define VX_ATTRIBUTE_ID_MASK (0x000000FF)
#define VX_ENUM_TYPE_MASK (0x000FF000)
#define VX_ENUM_MASK (0x00000FFF)
"""

PLATFORM = """#ifndef VX_API_ENTRY
#define VX_API_ENTRY
#endif
#ifndef VX_API_CALL
#define VX_API_CALL
#endif
#ifndef VX_CALLBACK
#define VX_CALLBACK
#endif
"""

RECT_CALLBACK = """typedef vx_status (VX_CALLBACK *vx_kernel_image_valid_rectangle_f)(vx_node node, vx_uint32 index, const vx_rectangle_t *const input_valid[], vx_rectangle_t *const output_valid[]);
"""

IMAGEPATCH_INIT = "#define VX_IMAGEPATCH_ADDR_INIT {0u, 0u, 0, 0, 0u, 0u, 0u, 0u, 0u}\n"

# vx_compatibility.h: the OpenVX 1.0.1 names kept for old programs.  Attribute
# aliases follow one rule (VX_<OBJECT>_ATTRIBUTE_<X> for VX_<OBJECT>_<X>) over
# the object families 1.0.1 had; the rest are listed.
COMPAT_FAMILIES = ("context", "kernel", "node", "parameter", "image", "scalar", "graph", "lut",
                   "distribution", "threshold", "matrix", "convolution", "pyramid", "remap",
                   "array", "delay")
COMPAT_RENAMES = {
    "VX_REF_ATTRIBUTE_COUNT": "VX_REFERENCE_COUNT", "VX_REF_ATTRIBUTE_TYPE": "VX_REFERENCE_TYPE",
    "VX_REF_ATTRIBUTE_NAME": "VX_REFERENCE_NAME",
    "VX_ENUM_BORDER_MODE": "VX_ENUM_BORDER", "VX_BORDER_MODE_POLICY": "VX_ENUM_BORDER_POLICY",
    "VX_BORDER_MODE_UNDEFINED": "VX_BORDER_UNDEFINED", "VX_BORDER_MODE_CONSTANT": "VX_BORDER_CONSTANT",
    "VX_BORDER_MODE_REPLICATE": "VX_BORDER_REPLICATE",
    "VX_BORDER_MODE_UNSUPPORTED_POLICY_DEFAULT_TO_UNDEFINED": "VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED",
    "VX_BORDER_MODE_UNSUPPORTED_POLICY_RETURN_ERROR": "VX_BORDER_POLICY_RETURN_ERROR",
    "VX_NODE_ATTRIBUTE_BORDER_MODE": "VX_NODE_BORDER",
    "VX_CONTEXT_ATTRIBUTE_IMMEDIATE_BORDER_MODE": "VX_CONTEXT_IMMEDIATE_BORDER",
    "VX_INTERPOLATION_TYPE_NEAREST_NEIGHBOR": "VX_INTERPOLATION_NEAREST_NEIGHBOR",
    "VX_INTERPOLATION_TYPE_BILINEAR": "VX_INTERPOLATION_BILINEAR",
    "VX_INTERPOLATION_TYPE_AREA": "VX_INTERPOLATION_AREA",
}
COMPAT_TEXT = """#define VX_TYPE_SCALAR_MAX (VX_TYPE_BOOL + 1)
#define vx_border_mode_e vx_border_e
#define vx_border_mode_policy_e vx_border_policy_e
#define _vx_border_mode_t _vx_border_t
#define vx_border_mode_t vx_border_t

/* Kernels and threshold attributes removed from OpenVX 1.2/1.3. */
#define VX_KERNEL_ACCUMULATE (VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_BASE) + 0x16)
#define VX_KERNEL_ACCUMULATE_WEIGHTED (VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_BASE) + 0x17)
#define VX_KERNEL_ACCUMULATE_SQUARE (VX_KERNEL_BASE(VX_ID_KHRONOS, VX_LIBRARY_KHR_BASE) + 0x18)
#define VX_THRESHOLD_THRESHOLD_VALUE (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x1)
#define VX_THRESHOLD_THRESHOLD_LOWER (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x2)
#define VX_THRESHOLD_THRESHOLD_UPPER (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x3)
#define VX_THRESHOLD_TRUE_VALUE (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x4)
#define VX_THRESHOLD_FALSE_VALUE (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x5)
#define VX_THRESHOLD_DATA_TYPE (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_THRESHOLD) + 0x6)
#define VX_META_FORMAT_ATTRIBUTE_DELTA_RECTANGLE (VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_META_FORMAT) + 0x0)
#define vxAccessArrayItem(type, ptr, index, stride) \\
    (*(type *)(&((vx_uint8 *)(ptr))[(index) * (stride)]))

typedef vx_status (VX_CALLBACK *vx_kernel_input_validate_f)(vx_node node, vx_uint32 index);
typedef vx_status (VX_CALLBACK *vx_kernel_output_validate_f)(vx_node node, vx_uint32 index, vx_meta_format meta);
"""

# Enumerators the standard defines as macros rather than enum members.
AS_MACRO = {"VX_LIBRARY_KHR_NN_EXTENSION"}

DESCRIPTIONS = {
    "vx_vendors.h": "Vendor identifiers.",
    "vx_types.h": "Basic types, handles, callbacks, enumerations and structures.",
    "vx_kernels.h": "Standard kernel enumerations.",
    "vx_api.h": "Framework functions: context, references, graphs, nodes, kernels, data objects.",
    "vx_nodes.h": "Graph-mode node constructors for the standard kernels.",
    "vxu.h": "Immediate-mode (vxu) calls for the standard kernels.",
    "vx_khr_nn.h": "The Khronos Neural Network extension (KHR_NN_8, KHR_NN_16).",
    "vx.h": "The OpenVX umbrella header.",
    "vx_import.h": "Importing objects from memory (the export and import extension).",
    "vx_khr_ix.h": "Exporting objects to memory (the export and import extension).",
    "vx_khr_import_kernel.h": "Importing kernels from a URL (NNEF models).",
    "vx_khr_pipelining.h": "Graph pipelining, streaming and events.",
    "vx_khr_user_data_object.h": "User data objects.",
    "vx_compatibility.h": "OpenVX 1.0.1 names and functions kept for older programs.",
}

INCLUDES = {
    "vx_vendors.h": [],
    "vx_types.h": ["<stdint.h>", "<stddef.h>"],
    "vx_kernels.h": [],
    "vx_api.h": ["<VX/vx_types.h>"],
    "vx_nodes.h": ["<VX/vx_types.h>"],
    "vxu.h": ["<VX/vx.h>"],
    "vx_khr_nn.h": ["<VX/vx.h>"],
    "vx.h": ["<VX/vx_vendors.h>", "<VX/vx_types.h>", "<VX/vx_kernels.h>",
             "<VX/vx_api.h>", "<VX/vx_nodes.h>"],
    "vx_import.h": ["<VX/vx.h>"],
    "vx_khr_ix.h": ["<VX/vx.h>", "<VX/vx_import.h>"],
    "vx_khr_import_kernel.h": ["<VX/vx.h>"],
    "vx_khr_pipelining.h": ["<VX/vx.h>"],
    "vx_khr_user_data_object.h": ["<VX/vx.h>"],
    "vx_compatibility.h": ["<VX/vx.h>"],
}

# Extension identification strings and handle types of the extension headers.
EXTENSION_PRELUDE = {
    "vx_import.h": "typedef struct _vx_import *vx_import;\n#define VX_TYPE_IMPORT (0x814)\n",
    "vx_khr_ix.h": '#define OPENVX_KHR_IX "vx_khr_ix"\n',
    "vx_khr_import_kernel.h": '#define OPENVX_KHR_IMPORT_KERNEL "vx_khr_import_kernel"\n',
    "vx_khr_pipelining.h": '#define OPENVX_KHR_PIPELINING "vx_khr_pipelining"\n',
    "vx_khr_user_data_object.h": ('#define OPENVX_KHR_USER_DATA_OBJECT "vx_khr_user_data_object"\n'
                                  "typedef struct _vx_user_data_object *vx_user_data_object;\n"),
}


def c_value(hex_text: str) -> str:
    """An enumerator value as C source; 32-bit patterns above INT_MAX are negative."""
    v = int(hex_text, 16)
    if v >= 0x80000000:
        return str(v - (1 << 32))
    return f"0x{v:X}"


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def enum_blocks(rows, header):
    blocks: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()
    for r in rows:
        if r["header"] == header and r["name"] not in AS_MACRO:
            blocks.setdefault(r["enum_type"], []).append((r["name"], c_value(r["value"])))
    out = []
    for etype, items in blocks.items():
        body = ",\n".join(f"    {n} = {v}" for n, v in items)
        out.append(f"enum {etype} {{\n{body}\n}};\n")
    for r in rows:
        if r["header"] == header and r["name"] in AS_MACRO:
            out.append(f"#define {r['name']} ({c_value(r['value'])})\n")
    return "\n".join(out)


def struct_block(name):
    fields = STRUCTS[name][1]
    body = "".join(f"    {f};\n" for f in fields)
    return f"typedef struct _{name} {{\n{body}}} {name};\n"


def prototypes(rows, header):
    """One line per function of ``header`` (every tier): csrc/build_capi.py reads them back."""
    out = []
    for r in rows:
        if r["header"] == header:
            out.append(f"VX_API_ENTRY {r['returns']} VX_API_CALL {r['name']}({r['parameters']});")
    return "\n".join(out) + "\n"


def compat_aliases(enums) -> str:
    """The 1.0.1 attribute names: one rule over the families 1.0.1 had, then the listed renames."""
    names = {r["name"] for r in enums}
    lines = []
    for r in enums:
        family = r["enum_type"][3:-len("_attribute_e")] if r["enum_type"].endswith("_attribute_e") else ""
        prefix = f"VX_{family.upper()}_"
        if family in COMPAT_FAMILIES and r["name"].startswith(prefix):
            lines.append(f"#define {prefix}ATTRIBUTE_{r['name'][len(prefix):]} {r['name']}")
    for old, new in COMPAT_RENAMES.items():
        if new not in names:
            raise ValueError(f"compatibility name {old} aliases {new}, which the tables do not define")
        lines.append(f"#define {old} {new}")
    return "\n".join(lines) + "\n"


def wrap(name: str, body: str) -> str:
    guard = "_OPENVX_NN_" + name.upper().replace(".", "_")
    inc = "".join(f"#include {i}\n" for i in INCLUDES[name])
    return (f"/* {name}: {DESCRIPTIONS[name]}\n"
            f" * Written by openvx-nn from the OpenVX 1.3.1 ABI facts; generated by tools/gen_headers.py. */\n"
            f"#ifndef {guard}\n#define {guard}\n\n{inc}\n"
            f"#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n{body}\n"
            f"#ifdef __cplusplus\n}}\n#endif\n\n#endif\n")


def main(abi: Path) -> None:
    enums = read_tsv(abi / "enums.tsv")
    funcs = read_tsv(abi / "functions.tsv") + read_tsv(COMPAT_FUNCTIONS)
    files = {}
    files["vx_vendors.h"] = enum_blocks(enums, "vx_vendors.h")
    handles = "".join(f"typedef struct {s} *{h};\n" for h, s in HANDLES.items())
    structs_types = "\n".join(struct_block(n) for n, (h, _) in STRUCTS.items()
                              if h == "vx_types.h" and n != "vx_border_t")
    files["vx_types.h"] = "\n".join([
        PLATFORM, MACROS, BASIC_TYPES, handles, CALLBACKS, enum_blocks(enums, "vx_types.h"),
        structs_types, IMAGEPATCH_INIT, PIXEL_VALUE, struct_block("vx_border_t"), RECT_CALLBACK])
    files["vx_kernels.h"] = enum_blocks(enums, "vx_kernels.h")
    files["vx_api.h"] = prototypes(funcs, "vx_api.h")
    files["vx_nodes.h"] = prototypes(funcs, "vx_nodes.h")
    files["vxu.h"] = prototypes(funcs, "vxu.h")
    nn_structs = "\n".join(struct_block(n) for n, (h, _) in STRUCTS.items() if h == "vx_khr_nn.h")
    files["vx_khr_nn.h"] = "\n".join([
        '#define OPENVX_KHR_NN "vx_khr_nn"\n', enum_blocks(enums, "vx_khr_nn.h"),
        nn_structs, prototypes(funcs, "vx_khr_nn.h")])
    files["vx.h"] = ("#define VX_VERSION_MAJOR(x) (((x) & 0xFF) << 8)\n"
                     "#define VX_VERSION_MINOR(x) ((x) & 0xFF)\n"
                     "#define VX_VERSION_1_0 (0x100)\n#define VX_VERSION_1_1 (0x101)\n"
                     "#define VX_VERSION_1_2 (0x102)\n#define VX_VERSION_1_3 (0x103)\n"
                     "#define VX_VERSION VX_VERSION_1_3\n")
    for name, prelude in EXTENSION_PRELUDE.items():
        structs = "\n".join(struct_block(n) for n, (h, _) in STRUCTS.items() if h == name)
        extra = EVENT if name == "vx_khr_pipelining.h" else ""
        files[name] = "\n".join(part for part in (prelude, enum_blocks(enums, name), structs, extra,
                                                   prototypes(funcs, name)) if part.strip())
    compat_structs = "\n".join(struct_block(n) for n, (h, _) in STRUCTS.items() if h == "vx_compatibility.h")
    files["vx_compatibility.h"] = "\n".join([COMPAT_TEXT, compat_aliases(enums), compat_structs,
                                             prototypes(funcs, "vx_compatibility.h")])
    OUT.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (OUT / name).write_text(wrap(name, body))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/abi"))
