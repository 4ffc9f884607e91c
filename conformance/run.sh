#!/bin/sh
# One command: build the suite against the installed library and run it.
#   sh conformance/run.sh [--filter=PATTERN] [--seed=N] [--quiet] [--list]
set -e
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python}
make -s -C "$here" PYTHON="$PYTHON" OUT="${CT_BUILD:-$here/build}" all
exec "${CT_BUILD:-$here/build}/conformance" "$@"
