/* bridge/all.h: every Python-bodied function, for the C wrappers in csrc/api/. */
#ifndef OPENVX_NN_BRIDGE_ALL_H
#define OPENVX_NN_BRIDGE_ALL_H
#include <stdint.h>
#include <stddef.h>
#include "../bridge_types.h"
#include "reference.h"
#include "scalar.h"
#include "lut.h"
#include "tensor.h"
#include "graph.h"
#include "image.h"
#include "array.h"
#include "object_array.h"
#include "user_kernel.h"
#include "import_kernel.h"
#include "unimplemented.h"
#endif
