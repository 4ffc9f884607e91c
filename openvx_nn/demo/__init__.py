"""The digits demo: a LeNet-style CNN on scikit-learn's 8x8 digits, run by the library in Q7.8 and F32."""
from .model import DigitsModel, Variant, load_model
from .run import classify, main, run_demo

__all__ = ["DigitsModel", "Variant", "classify", "load_model", "main", "run_demo"]
