/* bridge/tensor.h: Python-bodied functions behind the tensor entry points. */
