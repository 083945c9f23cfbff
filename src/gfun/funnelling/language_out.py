"""Language-out outputs: what the training documents look like to views that never saw their language.

A document of a language without training documents reaches the meta tier through views trained on other languages
only. Out-of-fold outputs do not show that: a training document's out-of-fold posteriors come from views trained on
its own language (and, in a parallel corpus, on none of its translations). :func:`language_out_folds` splits the
training languages in two halves (and, with translation groups, the groups too, so that no translation of a judged
document is trained on); a view fitted on one half's documents gives the other half's documents the outputs a
language it never saw would get. ``select`` judges there which meta-classifier classifies unseen languages
(:meth:`gfun.funnelling.select.Select.choose_unseen`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gfun.views.base import ViewGenerator

__all__ = ["language_out_folds", "language_out_kind"]


def language_out_folds(langs: np.ndarray, groups: np.ndarray | None, seed: int | None
                       ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Two (train, judged) boolean masks over the training documents, each judged document in a language and, with
    ``groups``, a group that the fold's training documents do not have.

    The languages are dealt at random (``seed``) into two halves A and B. Without groups, the documents of A train
    and those of B are judged, then the other way round: every document is judged once. With groups (the parallel
    versions of a text), the groups are dealt into two halves G and H as well: the documents of A in G train and
    those of B in H are judged, then those of B in H train and those of A in G are judged: half of the documents
    are judged, each trained on a quarter of them.

    Returns
    -------
    list of (train, judged)
        Empty with fewer than two languages (no language can be left out).
    """
    langs = np.asarray(langs, dtype=object)
    languages = sorted(set(langs.tolist()))
    if len(languages) < 2:
        return []
    rng = np.random.RandomState(seed)
    order = [languages[i] for i in rng.permutation(len(languages))]
    in_a = np.isin(langs, order[: len(languages) // 2])
    if groups is None:
        return [(in_a, ~in_a), (~in_a, in_a)]
    groups = np.asarray(groups)
    unique = np.unique(groups)
    in_g = np.isin(groups, unique[rng.permutation(len(unique))[: len(unique) // 2]])
    return [(in_a & in_g, ~in_a & ~in_g), (~in_a & ~in_g, in_a & in_g)]


def language_out_kind(view: ViewGenerator) -> str:
    """What a view's language-out outputs would be: ``"network"`` (it trains a network,
    :attr:`~gfun.views.base.ViewGenerator.trains_network`: B, R; minutes on a CPU, never fitted again),
    ``"vocabulary"`` (fitted again, but it reaches other languages only through the words they share with its
    training languages, :attr:`~gfun.views.base.ViewGenerator.transfers_by_vocabulary`: P) or ``"refit"``."""
    if view.trains_network:
        return "network"
    return "vocabulary" if view.transfers_by_vocabulary else "refit"
