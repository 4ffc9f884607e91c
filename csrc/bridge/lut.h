/* bridge/lut.h: Python-bodied functions behind the lut entry points. */
