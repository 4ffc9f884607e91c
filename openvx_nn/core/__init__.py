"""The object model: lifetime, validation and storage of every OpenVX object.

Nothing here knows about C pointers or cffi; ``openvx_nn.capi`` translates.
"""
