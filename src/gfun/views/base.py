"""The contract every view-generating function (VGF) follows.

A VGF maps a document written in language ``lang`` to a language-independent vector (its
"view"). It is fitted on the training documents of all languages, produces the views of the
training documents (:meth:`ViewGenerator.fit_transform`, in-sample or cross-validated as the
view decides) and of new documents (:meth:`ViewGenerator.transform`). Every view of one VGF
has the same dimensionality whatever the language.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from sklearn.base import BaseEstimator

from gfun.errors import UnseenLanguageError

__all__ = ["LanguageCoverage", "LanguageReach", "ViewGenerator"]

#: Which languages a fitted view can represent: only those it was trained on, also some others (those a
#: word-vector source has vectors for), or any language.
LanguageReach = Literal["training", "some", "any"]


@dataclass(frozen=True)
class LanguageCoverage:
    """Which languages a fitted view serves, as ``gfun info``, ``GET /model`` and the served page report it.

    Attributes
    ----------
    reach : {"training", "some", "any"}
        The view's :meth:`ViewGenerator.language_reach`.
    trained : tuple of str
        The training languages the view serves, sorted.
    others : str
        What the other languages served are, for ``reach == "some"`` (e.g. "languages its word vectors cover").
    """

    reach: LanguageReach
    trained: tuple[str, ...]
    others: str = "some other languages"

    @property
    def any_language(self) -> bool:
        """Whether the view serves documents of any language, also of languages it was not trained on."""
        return self.reach == "any"

    def describe(self) -> str:
        """One line: ``"de, en"``, ``"any language (trained on de, en)"`` or ``"de, en and <others>"``."""
        trained = ", ".join(self.trained) or "no training language"
        if self.reach == "any":
            return f"any language (trained on {trained})"
        if self.reach == "some":
            return f"{trained} and {self.others}"
        return trained

    def as_dict(self) -> dict[str, Any]:
        """``{"languages": trained, "any_language": bool, "reach": reach, "serves": describe()}`` (JSON-able)."""
        return {"languages": list(self.trained), "any_language": self.any_language, "reach": self.reach,
                "serves": self.describe()}


class ViewGenerator(BaseEstimator, ABC):
    """Base class of view-generating functions.

    Subclasses set :attr:`letter` (the paper's configuration letter) and :attr:`output`
    (``"posteriors"`` when the view already is a vector of |Y| calibrated posteriors, which the
    averaging aggregation can use as is; ``"features"`` otherwise), and may set :attr:`description` (what the
    view is in a few words, e.g. ``"word embeddings"``; the log of a fit names the view with it).
    """

    letter: ClassVar[str] = "?"
    output: ClassVar[Literal["posteriors", "features"]] = "features"
    #: What the view is, in words, as the log of a fit names it (``"X view (posteriors): fitted in 0.2 s"``).
    description: ClassVar[str] = ""
    #: The parameters of the view that the estimator sets, among those it has, unless the view is given them
    #: (``view_params``, ``<name>__<parameter>``, or a view object built with another value than the default):
    #: ``n_jobs`` and ``random_state`` (the estimator's), ``train_posteriors`` (the aggregation policy's).
    from_estimator: ClassVar[tuple[str, ...]] = ("n_jobs", "random_state")
    #: Whether the view trains a network (minutes on a CPU): it is not fitted again for the language-out outputs of
    #: ``select``'s ``unseen="auto"`` (:mod:`gfun.funnelling.language_out`), whose model then keeps the shared
    #: meta-classifier for languages without training documents.
    trains_network: ClassVar[bool] = False
    #: Whether the view represents a language it was not trained on only through the words that language shares
    #: with its training languages (P's pooled vocabulary). ``select``'s ``unseen="auto"`` does not judge a
    #: meta-classifier that reads only such views on language-out outputs: training languages that share words
    #: with each other (da, de; es, it, pt) make those outputs far better than an unseen language's.
    transfers_by_vocabulary: ClassVar[bool] = False

    @abstractmethod
    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Fit on the training documents and return their views, shape (n_docs, dim)."""

    def fit(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> ViewGenerator:
        """Fit on the training documents."""
        self.fit_transform(texts, langs, Y)
        return self

    @abstractmethod
    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        """Views of new documents, shape (n_docs, dim); rows in input order."""

    @abstractmethod
    def covers(self, lang: str) -> bool:
        """Whether documents of ``lang`` can be represented by this (fitted) view."""

    def language_reach(self) -> LanguageReach:
        """Which languages the fitted view represents: ``"training"`` (only its training languages),
        ``"any"``, or ``"some"`` (more than its training languages, not necessarily all; the default,
        the cautious answer for a view that does not say).

        :class:`gfun.funnelling.generalized.GeneralizedFunnelling` uses it to drop the views ``aggregation="select"``
        did not keep and that no document could ever need.
        """
        return "some"

    def language_coverage(self) -> LanguageCoverage:
        """Which languages the fitted view serves: its :meth:`language_reach` and the training languages it covers
        (``languages_``). What ``gfun info``, ``GET /model`` and the served page report for the view."""
        trained = sorted({str(lang) for lang in getattr(self, "languages_", []) if self.covers(str(lang))})
        return LanguageCoverage(self.language_reach(), tuple(trained))

    # ---------------------------------------------------------------- what the tiers read from a fitted view
    def takes_groups(self) -> bool:
        """Whether :meth:`fit_transform` takes ``groups=``: one value per training document, documents sharing a
        value to be kept in the same cross-validation fold (the translations of one text in a parallel corpus).

        The first tier passes the estimator's groups (``cv_groups``) to a view that declares the keyword. A view
        that cross-validates across languages needs them: a translation of a held-out document in the training
        folds would make its out-of-fold outputs as good as in-sample ones."""
        import inspect

        return "groups" in inspect.signature(self.fit_transform).parameters

    def pop_training_oof(self) -> np.ndarray | None:
        """The out-of-fold version of the training views the last :meth:`fit_transform` returned, or ``None``.

        A view that computes its training views in-sample but can also give each training document the view a
        model that did not see it would give (as a new document gets) stores it as ``train_oof_`` in
        :meth:`fit_transform`; the first tier takes it once, as the meta tier's validation input (what new
        documents look like), and the view drops it (it is not part of the fitted state).
        """
        return self.__dict__.pop("train_oof_", None)

    def heldout_documents(self) -> np.ndarray | None:
        """Indices of the training documents the fitted view kept out of its training (``heldout_idx_``, e.g. an
        early-stopping split), or ``None``. ``select`` judges its candidates on them: a view that trains a network
        gives its own training documents outputs far better than a new document's."""
        return getattr(self, "heldout_idx_", None)

    def resolved_params(self) -> dict[str, Any]:
        """:meth:`get_params` with what a machine-dependent value (``"auto"``) stands for here, and anything else
        that decides the view's output beyond its parameters: what a cache of fitted views (``memory``) is keyed
        by. The default: the parameters."""
        return self.get_params()

    def release(self) -> None:
        """Drop what the fitted view rebuilds on demand and must not keep or save (for example a loaded encoder);
        called by the first tier once the view and its mapper are fitted. The default keeps everything."""

    @abstractmethod
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and numpy arrays describing the fitted view (no pickle)."""

    @classmethod
    @abstractmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> ViewGenerator:
        """Rebuild a fitted view from :meth:`get_state` output."""

    def _check_languages(self, langs: np.ndarray) -> None:
        unseen = sorted({str(lang) for lang in np.unique(langs) if not self.covers(str(lang))})
        if unseen:
            raise UnseenLanguageError(
                f"view {self.letter.upper()} ({type(self).__name__}) cannot represent language(s) {unseen}: "
                f"it was fitted on {sorted(getattr(self, 'languages_', []))}", languages=unseen)
