"""Command-line pieces shared by ``gfun`` and ``gfun experiment``: help formatting, output, C options, the
options of the neural views and the ``view_params`` they give.

Both command modules import this one (and not each other), so the experiment commands do not import the main
CLI that registers them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["NEURAL_PRESETS", "HelpFormatter", "add_neural_arguments", "neural_view_params"]

NEURAL_PRESETS = ("paper", "gpu", "cpu")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` lines that state a default only where there is one to state: not for options whose default is
    ``None`` or ``False`` (absent, off), nor for counters (``-v``), nor where the help text already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if (action.default is None or action.default is False or isinstance(action, argparse._CountAction)
                or "(default" in (action.help or "")):
            return action.help
        return super()._get_help_string(action)


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")



def _C_type(*, allow_cv: bool = True) -> Any:
    """argparse ``type`` of a C option: a positive finite number (or ``cv``); NaN, inf, 0 and negatives are refused.

    argparse prefixes the message with the option: ``argument --meta-C: must be a positive finite number or 'cv',
    got 'nan'``.
    """

    def parse(value: str) -> float | str:
        from gfun.inputs import check_C

        try:
            return check_C("cv" if value.strip() == "cv" else float(value), allow_cv=allow_cv)
        except ValueError:
            what = "a positive finite number" + (" or 'cv'" if allow_cv else "")
            raise argparse.ArgumentTypeError(f"must be {what}, got {value!r}") from None

    return parse


_parse_C = _C_type()  # also used by the experiment commands


def neural_view_params(word_vectors: str | None = None, encoder: str | None = None, neural_preset: str | None = None,
                       device: str | None = None, recurrent_wce: bool = False, *, trainable_layers: int | None = None,
                       save_dtype: str | None = None, self_contained: bool = False,
                       progress: bool = False) -> dict | None:
    """``view_params`` of the options ``--word-vectors``, ``--encoder``, ``--neural-preset``, ``--device``, ``--r-wce``,
    ``--trainable-layers``, ``--save-dtype``, ``--self-contained`` (and progress bars).

    The word vectors go to the M and R views, the encoder, the trainable layers and how the weights are saved to the
    B view (and the ``bert`` baseline), the preset, the device and progress bars to B and R; ``self_contained`` also
    makes M store its word vectors.
    """
    out: dict[str, dict] = {}
    if word_vectors:
        out["m"] = {"source": word_vectors}
        out["r"] = {"source": word_vectors}
    if self_contained:  # M's sub-word vectors are otherwise recomputed from the local encoder at load time
        out.setdefault("m", {})["store_vectors"] = True
    b = {"model": encoder, "trainable_layers": trainable_layers, "save_dtype": save_dtype,
         "self_contained": self_contained or None}
    if any(v is not None for v in b.values()):
        out["b"] = {k: v for k, v in b.items() if v is not None}
    for letter in ("b", "r"):
        if neural_preset:
            out.setdefault(letter, {})["preset"] = neural_preset
        if device:
            out.setdefault(letter, {})["device"] = device
        if progress:
            out.setdefault(letter, {})["progress"] = True
    if recurrent_wce:
        out.setdefault("r", {})["wce"] = True
    return out or None


def add_neural_arguments(p: argparse.ArgumentParser, *, saving: bool = False) -> None:
    """Options of the neural views B and R (and of the fine-tuned transformer baseline); ``saving``: also how the
    B weights are saved (``--save-dtype``, ``--self-contained``)."""
    p.add_argument("--encoder", default=None,
                   help="transformer of the b view and of the bert baseline: 'multilingual-e5-small' (default, "
                   "offline), a local save_pretrained folder, or a Hugging Face id already in the local cache (never "
                   "downloaded)")
    p.add_argument("--neural-preset", choices=NEURAL_PRESETS, default=None,
                   help="training settings of the b and r views (default: gpu on a CUDA device, cpu otherwise): "
                   "paper (section 4.3/5 settings: batch 4, length 512, up to 50 epochs), gpu (10 epochs, length "
                   "256, head lr 1e-3), cpu (b: only the top layer fine-tuned on a frozen pass computed once per "
                   "document, int8 frozen layers, length 128, 3 epochs)")
    p.add_argument("--trainable-layers", type=int, default=None,
                   help="b view: fine-tune only the top K transformer layers (and the output layer) on a frozen pass "
                   "computed once per document; 0: the frozen encoder's vector (default: the preset's)")
    if saving:
        p.add_argument("--save-dtype", choices=("float32", "float16"), default=None,
                       help="precision of the saved b weights (float16 halves the model file)")
        p.add_argument("--self-contained", action="store_true",
                       help="store every b weight and the m view's word vectors in the model (default: the b weights "
                       "fine-tuning did not change, and sub-word word vectors such as e5-subword's, are referred to "
                       "by content hash of the local encoder and recomputed from it at load time)")
    p.add_argument("--device", default=None, help="torch device of the b and r views: auto (default), cpu, cuda, ...")


def _read(path: str, classes: list[str] | None = None, on_unknown_label: str = "error",
          detect_language: bool | list[str] = False, on_missing_labels: str = "warn") -> Any:
    from gfun.corpus import read_corpus

    return read_corpus(path, classes, on_unknown_label=on_unknown_label, detect_language=detect_language,
                       on_missing_labels=on_missing_labels)
