/* plan_helpers.h: native helper threads for plans whose layers share their work (see plan_helpers.c). */
#ifndef OPENVX_NN_PLAN_HELPERS_H
#define OPENVX_NN_PLAN_HELPERS_H
#include <stdint.h>

/* A native run of a plan with shared layers begins: helpers (at most wanted, started on first use) spin on the
 * gang's mailbox at address mailbox while it lasts.  runs_in_flight: the native runs of the process now. */
void vxnn_helpers_begin(int64_t *mailbox, int64_t wanted, int64_t runs_in_flight);
/* ... and ends: helpers spin a short while longer for the next run, then sleep. */
void vxnn_helpers_end(void);
/* Process exit: helpers stop taking tasks. */
void vxnn_helpers_close(void);
#endif
