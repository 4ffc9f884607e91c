"""``python -m openvx_nn``: the openvx-nn command line."""
import sys

from .cli import main

sys.exit(main())
