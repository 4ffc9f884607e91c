/* tensor_copy.c: vxCopyTensorPatch in C for a tensor whose layout Python published.
 *
 * After a copy on the Python path, Python publishes the tensor's layout under its handle in the plan table
 * (plan.c; openvx_nn/core/native_copy.py): int64 words
 *   [0] references   [1] data address   [2] rank   [3] element size
 *   [4] address of the storage epoch    [5] its value when published
 *   [6] address of the root's write counter (bumped by a write, as the Python path does)
 *   [7] address of the tensor's alive cell (1 until it is released)
 *   [8 .. 8+rank) dims   [14 .. 14+rank) byte strides
 * The layout is current while the epoch keeps its value (no tensor's memory moved) and the tensor lives.
 * Only a well-formed call is done here; anything else goes to the Python path, which checks every argument
 * and reports the first problem. */
#include <string.h>
#include "plan.h"
#include "tensor_copy.h"

enum { T_REFS, T_DATA, T_RANK, T_SIZE, T_EPOCH_AT, T_EPOCH, T_WRITES_AT, T_ALIVE_AT, T_DIMS, T_STRIDES = 14 };
#define MAX_RANK 6
#define MAX_SPAN ((vx_size)1 << 62)

static int current(const int64_t *t)
{
    return __atomic_load_n((int64_t *)t[T_EPOCH_AT], __ATOMIC_ACQUIRE) == t[T_EPOCH]
           && __atomic_load_n((int64_t *)t[T_ALIVE_AT], __ATOMIC_ACQUIRE) == 1;
}

/* Whether the call is one the Python path would carry out (its checks, in C). */
static int well_formed(const int64_t *t, vx_size n, const vx_size *start, const vx_size *end,
                       const vx_size *user_stride, const void *user_ptr, vx_enum usage, vx_enum memory_type)
{
    vx_size i, size = (vx_size)t[T_SIZE];
    if (n < 1 || n > (vx_size)t[T_RANK] || !start || !end || !user_stride || !user_ptr)
        return 0;
    if ((usage != VX_READ_ONLY && usage != VX_WRITE_ONLY) || memory_type != VX_MEMORY_TYPE_HOST)
        return 0;
    if (user_stride[0] != size)
        return 0;
    for (i = 0; i < n; i++) {
        if (end[i] > (vx_size)t[T_DIMS + i] || start[i] >= end[i])
            return 0;
        if (i && user_stride[i] < user_stride[i - 1] * (end[i - 1] - start[i - 1]))
            return 0;
        if (user_stride[i] > MAX_SPAN / (end[i] - start[i]))
            return 0;
    }
    return 1;
}

/* n bytes, not memcpy: glibc's (rep movsb on this kind of CPU) runs 8 to 13 times slower when the target lies 1 to
 * 31 bytes past the source modulo 4096, which a caller's buffer and a tensor meet by chance of their addresses.
 * Eight bytes a step (GCC makes them 16); it must not turn the loop back into a memcpy call. */
typedef uint64_t unaligned_word __attribute__((aligned(1), may_alias));

__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void copy_run(char *to, const char *from, vx_size n)
{
    vx_size i = 0;
    for (; i + 8 <= n; i += 8)
        *(unaligned_word *)(to + i) = *(const unaligned_word *)(from + i);
    for (; i < n; i++)
        to[i] = from[i];
}

/* Copy the box: rows along dim 0 (one run where both sides are packed), the other dims by an odometer. */
static void copy_box(const int64_t *t, vx_size n, const vx_size *start, const vx_size *end, const vx_size *user_stride,
                     char *user, int to_user)
{
    vx_size size = (vx_size)t[T_SIZE], count[MAX_RANK] = {0}, i, k, row = end[0] - start[0];
    const int64_t *strides = &t[T_STRIDES];
    char *data = (char *)(uintptr_t)t[T_DATA];
    int packed = strides[0] == (int64_t)size;
    for (i = 0; i < n; i++)
        data += (int64_t)start[i] * strides[i];
    for (;;) {
        char *tp = data, *up = user;
        for (i = 1; i < n; i++) {
            tp += (int64_t)count[i] * strides[i];
            up += count[i] * user_stride[i];
        }
        if (packed)
            copy_run(to_user ? up : tp, to_user ? tp : up, row * size);
        else
            for (k = 0; k < row; k++)
                memcpy(to_user ? up + k * size : tp + k * strides[0], to_user ? tp + k * strides[0] : up + k * size,
                       size);
        for (i = 1; i < n; i++) { /* the next row: the lowest dim above 0 that has one left */
            if (++count[i] < end[i] - start[i])
                break;
            count[i] = 0;
        }
        if (i >= n)
            return;
    }
}

vx_status vxnn_copy_tensor_natively(uintptr_t tensor, vx_size n, const vx_size *start, const vx_size *end,
                                    const vx_size *user_stride, void *user_ptr, vx_enum usage, vx_enum memory_type)
{
    int64_t *t = vxnn_plan_take(tensor);
    if (!t)
        return VXNN_NOT_NATIVE;
    if (t[T_RANK] > MAX_RANK || !current(t)
        || !well_formed(t, n, start, end, user_stride, user_ptr, usage, memory_type)) {
        vxnn_plan_drop(t);
        return VXNN_NOT_NATIVE;
    }
    copy_box(t, n, start, end, user_stride, user_ptr, usage == VX_READ_ONLY);
    if (usage == VX_WRITE_ONLY)
        __atomic_add_fetch((int64_t *)t[T_WRITES_AT], 1, __ATOMIC_RELEASE);
    vxnn_plan_drop(t);
    return VX_SUCCESS;
}
