/* bridge/scalar.h: Python-bodied functions behind the scalar entry points. */
