"""The kernels of the model front ends' operations (NNAPI, CoreML): float32 and asymmetric uint8
(``real = scale * (q - zero_point)``) arithmetic, on NHWC data or in OpenVX axis order. They know no
front end; the package is named for who needs them. A new NNAPI or CoreML operation's arithmetic goes here."""

from . import float_winograd  # noqa: F401 - hands the Winograd route to float_convolution
