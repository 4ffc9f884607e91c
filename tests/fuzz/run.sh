#!/bin/sh
# Build the C-API fuzzer with the flags the installed package prints and run it:
#   sh tests/fuzz/run.sh --calls 1000000 [--seed S] [--epoch N] [--timeout SECONDS] [--trace]
# Exit status 0: no crash, no hang, every status defined, no reference leak.
set -e
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# shellcheck disable=SC2046
cc -std=c99 -O1 "$here/driver.c" -o "$build/fuzz_driver" $("$python" -m openvx_nn.config --cflags --libs)
"$build/fuzz_driver" "$@"
