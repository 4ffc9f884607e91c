"""Tensor programs in C, compiled and linked like an application's."""
from __future__ import annotations

from conftest import ROOT, compile_c, run_c

HANDLE_SWAP_LOWER_DIMS = r"""
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>

static char last_log[VX_MAX_LOG_MESSAGE_LEN];

static void on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context; (void)ref; (void)status;
    strncpy(last_log, string, sizeof last_log - 1);
}

#define CHECK(condition) do { if (!(condition)) { \
    fprintf(stderr, "line %d: %s failed (log: %s)\n", __LINE__, #condition, last_log); return 1; } } while (0)

int main(void)
{
    vx_context context = vxCreateContext();
    const vx_size dims[3] = {4, 3, 2};
    const vx_size strides[3] = {4, 16, 48};
    const vx_size zero[3] = {0, 0, 0};
    const vx_size plane_end[2] = {4, 3}, plane_stride[2] = {4, 16};
    const vx_size row_start[1] = {1}, row_end[1] = {3}, row_stride[1] = {4};
    vx_float32 first[2][3][4], second[2][3][4], plane[3][4], row[2] = {-1.5f, -2.5f};
    void *previous = NULL;
    vx_size x, y, z;
    vx_uint32 baseline = 0, count = 0;
    vx_tensor tensor, plain;

    vxRegisterLogCallback(context, on_log, vx_false_e);
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &baseline, sizeof baseline);
    for (z = 0; z < 2; z++)
        for (y = 0; y < 3; y++)
            for (x = 0; x < 4; x++) {
                first[z][y][x] = (vx_float32)(x + 10 * y + 100 * z);
                second[z][y][x] = -first[z][y][x];
            }

    tensor = vxCreateTensorFromHandle(context, 3, dims, VX_TYPE_FLOAT32, 0, strides, first, VX_MEMORY_TYPE_HOST);
    CHECK(vxGetStatus((vx_reference)tensor) == VX_SUCCESS);

    /* Two of three dims: the plane at z = 0, read from the application's memory. */
    CHECK(vxCopyTensorPatch(tensor, 2, zero, plane_end, plane_stride, plane, VX_READ_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_SUCCESS);
    CHECK(memcmp(plane, first[0], sizeof plane) == 0);
    /* One dim: elements 1..2 of row y = 0, z = 0, written into the application's memory. */
    CHECK(vxCopyTensorPatch(tensor, 1, row_start, row_end, row_stride, row, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_SUCCESS);
    CHECK(first[0][0][1] == -1.5f && first[0][0][2] == -2.5f && first[0][0][3] == 3.0f && first[1][0][1] == 101.0f);

    /* Swap to the second buffer; the previous pointer comes back. */
    CHECK(vxSwapTensorHandle(tensor, second, &previous) == VX_SUCCESS && previous == (void *)first);
    CHECK(vxCopyTensorPatch(tensor, 2, zero, plane_end, plane_stride, plane, VX_READ_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_SUCCESS);
    CHECK(memcmp(plane, second[0], sizeof plane) == 0);

    /* NULL takes the memory back: no memory until the next swap. */
    CHECK(vxSwapTensorHandle(tensor, NULL, &previous) == VX_SUCCESS && previous == (void *)second);
    CHECK(vxCopyTensorPatch(tensor, 2, zero, plane_end, plane_stride, plane, VX_READ_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_ERROR_NO_MEMORY);
    CHECK(strstr(last_log, "vxCopyTensorPatch") != NULL);
    CHECK(vxSwapTensorHandle(tensor, first, &previous) == VX_SUCCESS && previous == NULL);
    CHECK(vxCopyTensorPatch(tensor, 3, zero, dims, strides, second, VX_READ_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_SUCCESS);
    CHECK(memcmp(first, second, sizeof first) == 0);

    /* A vxCreateTensor tensor swaps too; its own memory comes back, still valid. */
    plain = vxCreateTensor(context, 3, dims, VX_TYPE_FLOAT32, 0);
    CHECK(vxSwapTensorHandle(plain, first, &previous) == VX_SUCCESS && previous != NULL);
    CHECK(((float *)previous)[0] == 0.0f);
    CHECK(vxCopyTensorPatch(plain, 3, zero, dims, strides, second, VX_READ_ONLY, VX_MEMORY_TYPE_HOST)
          == VX_SUCCESS);
    CHECK(memcmp(first, second, sizeof first) == 0);

    CHECK(vxReleaseTensor(&plain) == VX_SUCCESS && vxReleaseTensor(&tensor) == VX_SUCCESS);
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &count, sizeof count);
    CHECK(count == baseline);
    CHECK(vxReleaseContext(&context) == VX_SUCCESS);
    puts("ok");
    return 0;
}
"""


def test_tensor_roundtrip_example_runs_clean():
    result = run_c(compile_c(ROOT / "csrc" / "examples" / "tensor_roundtrip.c", "tensor_roundtrip"))
    assert result.returncode == 0, result.stderr
    assert "tensor_roundtrip: ok" in result.stdout


def test_c_program_uses_its_own_memory_swaps_it_and_copies_lower_dims():
    result = run_c(compile_c(HANDLE_SWAP_LOWER_DIMS, "tensor_handle_swap"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
