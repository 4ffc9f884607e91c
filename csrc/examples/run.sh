#!/bin/sh
# Build and run the C examples against the installed libopenvx.so, exactly as an
# application would: only the flags python -m openvx_nn.config prints.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/openvx-nn-examples
mkdir -p "$out"
flags=$(python -m openvx_nn.config --cflags --libs)
for example in context_info tensor_roundtrip; do
    [ -f "$here/$example.c" ] || continue
    cc -std=c99 -Wall -Wextra -Werror "$here/$example.c" $flags -o "$out/$example"
    echo "== $example"
    "$out/$example"
done
# NNAPI programs link libneuralnetworks.so instead
nnapi_flags=$(python -m openvx_nn.config --cflags --nnapi-libs)
for example in nnapi_cnn; do
    cc -std=c99 -Wall -Wextra -Werror "$here/$example.c" $nnapi_flags -o "$out/$example"
    echo "== $example"
    "$out/$example"
done
