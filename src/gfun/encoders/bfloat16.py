"""A frozen Linear layer computed in bfloat16, the same numbers on any CPU.

:class:`BFloat16Linear` computes ``round_bf16(round_bf16(x) @ round_bf16(W).T) + b``: inputs and weights rounded to
bfloat16, their products summed in float32, the sum rounded to bfloat16 once, the float32 bias added. Where the CPU
multiplies bfloat16 matrices natively (oneDNN with AVX512-BF16 or AMX: :func:`bfloat16_native`) a bfloat16 kernel does
it; elsewhere the same roundings wrap a float32 product. The two agree but for the rare element whose float32 sum,
added in another order, rounds to the neighbouring bfloat16 (3 in 10,000 elements of a 1,536 x 384 product of random
numbers, one bfloat16 step apart). Inside the int8 frozen pass (:data:`gfun.encoders.frozen.INT8_SCHEME`) dynamic
quantisation amplifies those steps: the document vectors of the two ways agree at a mean cosine of .9987 (debtags).

This module imports torch: import it only where torch is needed (:func:`gfun.encoders.frozen._quantized`).
"""

from __future__ import annotations

import torch

__all__ = ["BFloat16Linear", "bfloat16_native"]


def bfloat16_native() -> bool:
    """Whether this CPU multiplies bfloat16 matrices natively (oneDNN's check: AVX512-BF16 or AMX)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class BFloat16Linear(torch.nn.Module):
    """``round_bf16(round_bf16(x) @ round_bf16(W).T) + b`` for a frozen ``torch.nn.Linear``; inference only.

    Parameters
    ----------
    weight : torch.Tensor
        ``(out_features, in_features)``; kept in bfloat16.
    bias : torch.Tensor or None
        ``(out_features,)``; kept in float32.
    native : bool
        Run oneDNN's bfloat16 kernel (fast where :func:`bfloat16_native`); else the same roundings around a float32
        product.
    """

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, native: bool) -> None:
        super().__init__()
        self.register_buffer("weight", weight.detach().to(torch.bfloat16).clone())
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())
        self.native = bool(native)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, *, native: bool | None = None) -> BFloat16Linear:
        """The bfloat16 twin of ``linear`` (its weights copied); ``native=None``: as this CPU allows."""
        return cls(linear.weight, linear.bias, bfloat16_native() if native is None else native)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (float32, ``(..., in_features)``) through the layer, float32 out."""
        if self.native:
            y = torch.nn.functional.linear(x.to(torch.bfloat16), self.weight)
        else:
            y = torch.nn.functional.linear(x.to(torch.bfloat16).float(), self.weight.float()).to(torch.bfloat16)
        y = y.float()
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        out_features, in_features = self.weight.shape
        return f"in_features={in_features}, out_features={out_features}, bfloat16, native={self.native}"
