"""porter: port CUDA-flavoured PyTorch and Triton code to AMD Instinct GPUs and make it fast there."""

__version__ = "0.1.0"
