"""The NNAPI tests share a model-building helper and plain references (this directory)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
