"""envdoctor: makes a GPU machine ready for PyTorch and DeepSpeed, and says what is wrong when it is not."""

__version__ = "0.1.0"
