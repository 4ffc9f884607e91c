/* plan.h: the native plan of a verified graph, run in C without the GIL.
 *
 * Python (openvx_nn/core/native_plan.py) builds a plan as one int64 array and
 * publishes its address under the graph's handle; vxProcessGraph looks it up
 * and walks it here.  Layout (int64 words):
 *   [0] references (the table's one, plus one per run in flight)
 *   [1] number of steps        [2] address of the graph's cells (below)
 *   [3] the graph's handle     [4] number of guards   [5] index of the first step
 *   [6] the gang's mailbox when some step shares its work with helpers, else 0 (plan_helpers.h)
 *   [7] how many helper threads such a run wants
 *   [8 ...] guards: (address of an int64 counter, the value it must still have)
 *   steps, 5 words each: (entry int32(*)(int64 *), its argument block, node handle,
 *                         index of its write counters, how many)
 *   write counters: addresses of the int64 counters a step bumps.
 * The graph's cells (int64): [0] busy (1 while a run holds the graph), [1] vx_graph_state_e,
 * [2] scheduled (from vxScheduleGraph until vxWaitGraph collects), [3] done, [4] the scheduled run's status,
 * [5] runs completed by vxProcessGraph or vxScheduleGraph in C (tests: the native path was taken),
 * [6] the graph's settings counter (Python bumps it; a plan guards it like any other counter).
 * Python keeps the array and everything it points to alive until the references drop to 0. */
#ifndef OPENVX_NN_PLAN_H
#define OPENVX_NN_PLAN_H
#include <stdint.h>

/* vxnn_plan_run / vxnn_plan_execute: no current native plan, or the graph is busy: take the Python path. */
#define VXNN_NOT_NATIVE 1

/* Publish (or replace) the plan at address plan for graph; 0 retires it.  The table takes a reference.
 * The same table holds tensors' layouts (tensor_copy.c): any int64 block whose word 0 counts references. */
void vxnn_plan_publish(uintptr_t graph, uintptr_t plan);
/* The block published for handle with a reference added (NULL: none); give it back with vxnn_plan_drop. */
int64_t *vxnn_plan_take(uintptr_t handle);
void vxnn_plan_drop(int64_t *block);
/* Run graph's plan if it has a current one and the graph is free: a vx_status, or VXNN_NOT_NATIVE. */
int32_t vxnn_plan_run(uintptr_t graph);
/* Run a plan whose graph the caller has claimed (vxnn_plan_claim); *failed gets the failing step's index. */
int32_t vxnn_plan_execute(uintptr_t plan, int64_t *failed);
/* vxScheduleGraph of a graph with a current native plan: a detached pthread runs it (VX_SUCCESS), or
 * VXNN_NOT_NATIVE (no plan, busy, already scheduled, changed: the Python path decides). */
int32_t vxnn_plan_schedule(uintptr_t graph);
/* vxWaitGraph of a natively scheduled graph, by its cells or its handle: the run's status, or VXNN_NOT_NATIVE
 * when the graph is not scheduled natively. */
int32_t vxnn_plan_wait(uintptr_t cells);
int32_t vxnn_plan_wait_graph(uintptr_t graph);
/* Claim a graph's busy cell for a run on the Python path (waits for a native run to end), and let it go. */
void vxnn_plan_claim(uintptr_t cells);
void vxnn_plan_unclaim(uintptr_t cells);
/* Process exit: refuse new native runs and wait for those in flight (they stop at the next node). */
void vxnn_plan_close(void);
/* Count the native runs in flight in 16 int64 stripes 8 words apart from address (Python sums them). */
void vxnn_plan_count_runs_in(uintptr_t address);
#endif
