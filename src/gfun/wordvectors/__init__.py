"""Sources of word vectors aligned across languages (the resources of the M and R views).

* :class:`~gfun.wordvectors.vecfile.VecFileSource`: ``.vec`` text files (MUSE / fastText), read lazily for a
  vocabulary;
* :class:`~gfun.wordvectors.encoder.EncoderWordVectors`: vectors derived from a multilingual encoder for any
  vocabulary (default: the offline multilingual-e5-small), cached on disk;
* :class:`~gfun.wordvectors.procrustes.ProcrustesAligned`: optional orthogonal refinement of each language onto
  English with a bilingual dictionary (FreeDict databases: :func:`~gfun.wordvectors.dictionaries.freedict_pairs`);
* :func:`~gfun.wordvectors.evaluation.evaluate_alignment`: word-translation precision@1 with cosine and CSLS;
* :func:`make_source` (defined here): a source from a short spec (``"e5"``, ``"e5-subword"``, ``"vec:DIR"``, ...).

Every source (:class:`~gfun.wordvectors.base.WordVectorSource`) answers ``source.vectors(lang, vocabulary)`` with a
``(len(vocabulary), dim)`` float32 matrix, zero rows for out-of-vocabulary words. Importing this package does not
import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gfun.wordvectors.base import WordVectorSource
__all__ = ["SOURCE_HELP", "check_source_spec", "make_source", "source_modules"]


SOURCE_HELP = (
    "word-vector source: 'e5' (multilingual-e5-small, each word encoded in isolation), 'e5-subword' "
    "(mean of its sub-word input embeddings), 'encoder:SPEC' / 'encoder-subword:SPEC' (any encoder spec: "
    "folder or cached HF id), 'vec:PATH' (a folder of <lang>.vec / wiki.multi.<lang>.vec files, or a "
    "template with {lang})"
)


def check_source_spec(spec: str) -> str:
    """``spec`` if it names a word-vector source (see ``SOURCE_HELP``), checked without loading anything: the
    command line refuses a bad one before any fitting.

    Raises
    ------
    ValueError
        An unknown kind, a kind that needs an argument without one, or a ``vec:`` folder that does not exist.
    """
    from pathlib import Path

    kind, _, arg = str(spec).partition(":")
    if kind in ("e5", "e5-subword") or (kind in ("encoder", "encoder-subword") and arg):
        return spec
    if kind == "vec" and arg:
        if "{lang}" not in arg and not Path(arg).expanduser().is_dir():
            raise ValueError(f"word-vector source {spec!r}: {arg!r} is not a folder (give a folder of <lang>.vec "
                             "files, or a path template with {lang})")
        return spec
    raise ValueError(f"unknown word-vector source {spec!r}; {SOURCE_HELP}")


def source_modules(spec: Any) -> tuple[str, ...]:
    """The optional modules that the word-vector source ``spec`` needs (nothing is imported): an encoder's
    (:func:`gfun.encoders.resolver.encoder_modules`) for ``e5``, ``e5-subword`` and ``encoder[-subword]:SPEC``,
    none for ``vec:`` files or a source object (already built)."""
    if not isinstance(spec, str):
        return ()
    from gfun.encoders.resolver import encoder_modules

    kind, _, arg = spec.partition(":")
    if kind in ("e5", "e5-subword"):
        return encoder_modules(None)
    if kind in ("encoder", "encoder-subword") and arg:
        return encoder_modules(arg)
    return ()


def make_source(spec: str, *, cache_dir: str | None = None, **options: Any) -> WordVectorSource:
    """Build a word-vector source from a short spec (see ``SOURCE_HELP``).

    Parameters
    ----------
    spec : str
        ``"e5"``, ``"e5-subword"``, ``"encoder:<model spec>"``, ``"encoder-subword:<model spec>"``
        or ``"vec:<folder or template>"``.
    cache_dir : str, optional
        gfun cache root.
    **options
        Passed to the source's constructor.

    Returns
    -------
    WordVectorSource
    """
    from gfun.wordvectors.encoder import EncoderWordVectors
    from gfun.wordvectors.vecfile import VecFileSource

    kind, _, arg = spec.partition(":")
    if kind in ("e5", "encoder") and (arg or kind == "e5"):
        return EncoderWordVectors(arg or "multilingual-e5-small", cache_dir=cache_dir, **options)
    if kind in ("e5-subword", "encoder-subword") and (arg or kind == "e5-subword"):
        return EncoderWordVectors(
            arg or "multilingual-e5-small", method="subword-mean", cache_dir=cache_dir, **options
        )
    if kind == "vec" and arg:
        return VecFileSource(arg, cache_dir=cache_dir, **options)
    raise ValueError(f"unknown word-vector source {spec!r}; {SOURCE_HELP}")

