"""Training neural networks with torch: what the B and R views and the fine-tuned transformer baseline share.

:mod:`gfun.neural.training` (presets, devices, the early-stopping training loop, batched inference) and
:mod:`gfun.neural.fine_tuning` (fine-tuning a transformer encoder with a linear output layer: the B view's engine).
Importing this package does not import torch.
"""
