"""Why a gFun model gives a label: each view's share of the meta-classifier's decision, and the words behind it.

For a document and a class, the meta-classifier's decision value ``f(z)`` (positive: the label is predicted) is
split exactly into a **base value** and one **contribution per view**::

    f(z) = base + sum over views of contribution(view)

The contributions are the Shapley values of the views (Shapley, 1953; the SHAP reading of Lundberg and Lee, 2017)
in the game whose players are the views that serve the document and whose payoff for a set ``S`` of them is the
decision the meta-classifier gives when only the views of ``S`` are present:

* with the averaging policies (``mean``, ``select``, ``wmean``), an absent view is dropped from the average, as
  the model drops a view that does not serve a document's language;
* with ``concat`` and ``stack`` (one block per view side by side), an absent view's block is replaced by its
  training average (its columns of :attr:`~gfun.funnelling.generalized.GeneralizedFunnelling.meta_input_mean_`);
* with no view present, the meta-classifier reads its average training input (``meta_input_mean_``): the base
  value is its decision there, the same for every document.

Shapley values are the one split that adds up (efficiency: base + contributions = decision, exactly, whatever the
meta-classifier: the RBF SVMs are not additive in their inputs, so no per-view reading of them is), that gives
nothing to a view that changes no payoff, and that treats views alike when they change payoffs alike. With ``k``
views they cost ``2^k`` decisions per document, computed exactly (``k`` is at most a handful). A view that does not
serve the document contributes 0: one ``select`` did not keep, one that does not cover the document's language, the
zero-shot fallback views of a language the main views serve (and, for a language only the fallback views serve,
the main views; the fallback views are then the players, averaged as the model averages them).

The views built on words also say which words of the document pushed each label up or down:

* **X** (per-language linear SVMs) and **P** (one linear SVM over a vocabulary shared by all languages): a term's
  value is ``w_jt * x_t``, its weight in the view's SVM of the class times its TF-IDF weight in the document. The
  values of all the document's terms plus the SVM's intercept are the view's own decision score for the class
  (``view_score``), whose Platt sigmoid is the view's posterior;
* **M** and **W** (TF-IDF-weighted word vectors, nonlinear after SIF, L2 and the mapper): occlusion. A term's value
  is the view's posterior of the class for the document minus its posterior for the document without that term
  (every occurrence removed, the other terms' weights unchanged): positive when the word raised the posterior.
  With ``concat`` (no mapper to posteriors), it is the change in the meta-classifier's decision instead (the other
  views unchanged). Occlusion values do not add up to anything: words interact.

Terms are the view's own (stems for X, words and word bigrams for P); ``words`` lists the words of the text behind
each. :meth:`gfun.funnelling.generalized.GeneralizedFunnelling.explain` is the entry point; ``gfun explain`` and the
page of ``gfun serve`` show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gfun.funnelling.aggregation import ViewBlocks, fallback_input

__all__ = ["DocumentExplanation", "Explanations", "LabelExplanation", "ViewContribution", "WordEffect",
           "explain_model"]

#: What the numbers of a view's words are (``ViewContribution.word_measure``).
WORD_MEASURES = {
    "svm-term": "w*x terms of the view's SVM score",
    "posterior-change": "change in the view's posterior when the word is removed",
    "decision-change": "change in the decision when the word is removed from the view",
}
#: Most views a document's explanation enumerates every coalition of (2^k meta-classifier decisions).
MAX_PLAYERS = 12


@dataclass
class WordEffect:
    """One term of a document and how much it pushed a label (see the module docstring for what ``value`` is).

    Attributes
    ----------
    term : str
        The term as the view weighs it (a stem for X).
    words : list of str
        The words of the text behind it (lower-cased).
    value : float
    """

    term: str
    words: list[str]
    value: float


@dataclass
class ViewContribution:
    """One view's part in the decision of one label for one document.

    Attributes
    ----------
    view : str
        The view's name in the model (its letter for the paper's views).
    contribution : float
        Its Shapley value, in units of the meta-classifier's decision (0 for a view that does not serve the
        document).
    used : bool
        Whether the view's output reached the meta-classifier for this document.
    note : str
        How it took part: ``"used"``, ``"zero-shot fallback"``, or why not (``"not kept by select"``,
        ``"does not serve 'fi'"``, ...).
    posterior : float or None
        The view's posterior of the label for the document (its mapper's, for a view of features), where its
        output reaching the meta level is posteriors.
    word_measure : str or None
        What the word values are: ``"svm-term"``, ``"posterior-change"`` or ``"decision-change"``
        (:data:`WORD_MEASURES`); ``None`` for a view not built on words (or not used).
    view_score, intercept : float or None
        ``"svm-term"`` only: the view's SVM decision score of the label (the sum of every term's value and the
        intercept) and the intercept.
    words_up, words_down : list of WordEffect
        The terms with the largest positive values (largest first) and the most negative ones (most negative
        first), at most ``top_words`` of each.
    """

    view: str
    contribution: float
    used: bool
    note: str
    posterior: float | None = None
    word_measure: str | None = None
    view_score: float | None = None
    intercept: float | None = None
    words_up: list[WordEffect] = field(default_factory=list)
    words_down: list[WordEffect] = field(default_factory=list)


@dataclass
class LabelExplanation:
    """The decision of one label for one document, split into a base value and the views' contributions.

    Attributes
    ----------
    label : str
    predicted : bool
        Whether the label is predicted (``decision > 0``).
    decision : float
        The meta-classifier's decision value (what ``decision_function`` gives).
    base_value : float
        The decision at the meta-classifier's average training input (no view present).
    probability : float or None
        The calibrated probability (``predict_proba``), when the model has one.
    views : list of ViewContribution
        Every view of the model, in model order (then the zero-shot fallback views):
        ``base_value + sum(v.contribution for v in views) == decision``.
    """

    label: str
    predicted: bool
    decision: float
    base_value: float
    probability: float | None
    views: list[ViewContribution]


@dataclass
class DocumentExplanation:
    """Why a document gets (or does not get) the labels explained for it.

    Attributes
    ----------
    id, lang : str
    labels : list of str
        The labels the model predicts for the document.
    explained : list of LabelExplanation
        The labels explained: the predicted ones by default (the best-scoring one when none is), or those asked for.
    """

    id: str
    lang: str
    labels: list[str]
    explained: list[LabelExplanation]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (one line of ``gfun explain --output``)."""
        return asdict(self)

    def to_text(self) -> str:
        """A readable rendering: per label, the decision as base + contributions, then each view's line and words."""
        lines = [f"document {self.id} ({self.lang}): " + (", ".join(self.labels) or "no label predicted")]
        for lab in self.explained:
            used = [v for v in lab.views if v.used]
            parts = " ".join(f"{v.view.upper()} {v.contribution:+.3f}" for v in used)
            proba = "" if lab.probability is None else f", probability {lab.probability:.3f}"
            lines.append(f"  {lab.label}: decision {lab.decision:+.3f} = base {lab.base_value:+.3f} {parts} "
                         f"({'predicted' if lab.predicted else 'not predicted'}{proba})")
            for v in lab.views:
                lines.extend(_view_lines(v))
        return "\n".join(lines)


@dataclass
class Explanations:
    """Explanations of a batch of documents (:meth:`GeneralizedFunnelling.explain`): a sequence of
    :class:`DocumentExplanation`.

    Attributes
    ----------
    aggregation : str
        The model's aggregation policy (what an absent view means: see the module docstring).
    views : list of str
        The model's views (then its zero-shot fallback views), in the order of every ``LabelExplanation.views``.
    documents : list of DocumentExplanation
    """

    aggregation: str
    views: list[str]
    documents: list[DocumentExplanation]

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[DocumentExplanation]:
        return iter(self.documents)

    def __getitem__(self, i: int) -> DocumentExplanation:
        return self.documents[i]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"aggregation", "views", "documents": [...]}``."""
        return {"aggregation": self.aggregation, "views": list(self.views),
                "documents": [d.to_dict() for d in self.documents]}

    def to_text(self) -> str:
        """Every document's :meth:`DocumentExplanation.to_text`, a blank line between them."""
        return "\n\n".join(d.to_text() for d in self.documents)


def _view_lines(v: ViewContribution) -> list[str]:
    name = v.view.upper()
    if not v.used:
        return [f"    {name}  0 ({v.note})"]
    head = f"    {name}  {v.contribution:+.3f}" + ("" if v.posterior is None else f"  posterior {v.posterior:.3f}")
    if v.note != "used":
        head += f" ({v.note})"
    lines = [head]
    if v.word_measure is not None and (v.words_up or v.words_down):
        what = WORD_MEASURES[v.word_measure]
        if v.word_measure == "svm-term":
            what += f" {v.view_score:+.3f} = intercept {v.intercept:+.3f} + terms"
        lines.append(f"      words ({what}):")
        for sign, words in (("+", v.words_up), ("-", v.words_down)):
            if words:
                lines.append(f"        {sign} " + ", ".join(_word(w) for w in words))
    return lines


def _word(w: WordEffect) -> str:
    value = f"{w.value:+.3f}" if abs(w.value) >= 5e-4 else f"{w.value:+.1e}"
    return f"{'/'.join(w.words)} {value}"


# ---------------------------------------------------------------------------------------------- computing them
def reference_input(model: Any) -> np.ndarray:
    """The meta-classifier's average training input (``meta_input_mean_``): what it reads with no view present.

    Raises
    ------
    ValueError
        For a model saved by an earlier gfun without z-scoring of the meta-level input (it did not keep that
        average).
    """
    ref = getattr(model, "meta_input_mean_", None)
    if ref is None:
        raise ValueError("this model was saved by an earlier gfun without the average of its meta-level training "
                         "input, which explanations start from (models that z-score their meta-level input have it); "
                         "train it again to explain its predictions")
    return np.asarray(ref, dtype=np.float64)


def _decisions(model: Any, Z: np.ndarray, unseen: bool = False) -> np.ndarray:
    """The meta-classifier's decisions for meta-level inputs ``Z`` (before the z-scoring), as ``decision_function``;
    ``unseen``: those of the meta-classifier of languages without training documents."""
    if unseen:
        return model.aggregation_.unseen_language_meta().decision_function(Z)
    if model.scaler_ is not None:
        Z = model.scaler_.transform(Z)
    return model.meta_.decision_function(Z)


def _shapley_weights(k: int) -> np.ndarray:
    """``w[s] = s! (k - s - 1)! / k!``: the weight of a coalition of ``s`` other players in a player's value."""
    return np.array([math.factorial(s) * math.factorial(k - s - 1) / math.factorial(k) for s in range(k)])


def _players(vb: ViewBlocks, i: int) -> tuple[bool, tuple[int, ...]]:
    """Whether document ``i`` is served by the fallback views, and the indices of the views serving it."""
    if vb.fallback[i]:
        return True, tuple(f for f, m in enumerate(vb.fallback_masks) if m[i])
    return False, tuple(v for v, m in enumerate(vb.masks) if m[i])


def _coalition_inputs(model: Any, vb: ViewBlocks, rows: np.ndarray, fallback: bool, present: set[int],
                      reference: np.ndarray) -> np.ndarray:
    """The meta-level input (before z-scoring) of the documents ``rows`` when only the views ``present`` (among those
    serving them) take part: see the module docstring."""
    if fallback:
        masks = [m[rows] & (f in present) for f, m in enumerate(vb.fallback_masks)]
        return fallback_input([B[rows] for B in vb.fallback_blocks], masks, len(reference))
    policy = model.aggregation_
    blocks = [B[rows] for B in vb.blocks]
    masks = [m[rows] for m in vb.masks]
    if policy.side_by_side:  # an absent view's block: its training average
        for v, ref in enumerate(_reference_blocks(vb, reference)):
            if v not in present:
                blocks[v] = np.where(masks[v][:, None], ref.astype(np.float32), blocks[v])
    else:  # an absent view is dropped from the average
        masks = [m & (v in present) for v, m in enumerate(masks)]
    return policy.combine(blocks, masks)


def _reference_blocks(vb: ViewBlocks, reference: np.ndarray) -> list[np.ndarray]:
    """Each view's columns of the average meta-level input (``concat`` and ``stack`` put the blocks side by side)."""
    widths = [B.shape[1] for B in vb.blocks]
    if sum(widths) != len(reference):
        raise ValueError(f"the views' blocks have {sum(widths)} columns, the meta-classifier reads {len(reference)}")
    edges = np.concatenate([[0], np.cumsum(widths)])
    return [reference[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]


def shapley_contributions(model: Any, vb: ViewBlocks, reference: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The exact Shapley values of the views in every document's decision of every class.

    Returns
    -------
    decision : ndarray (n_docs, n_classes)
        The decisions with every serving view present (those of ``decision_function``).
    base : ndarray (n_docs, n_classes)
        The decisions at the reference input (no view present): the same for every document of a meta-classifier
        (a document of a language without training documents may have its own, with its own average input).
    main, fallback : ndarray (n_docs, n_views, n_classes), (n_docs, n_fallback_views, n_classes)
        The contributions of the model's views and of its zero-shot fallback views (0 where a view does not serve
        the document); ``base + main.sum(1) + fallback.sum(1) == decision``.
    """
    n, k_classes = len(vb.fallback), len(model.classes_)
    unseen_rows = model.unseen_rows(vb.langs, vb.fallback)
    own = model.aggregation_.unseen_language_meta()
    decision = np.zeros((n, k_classes))
    base = np.zeros((n, k_classes))
    main = np.zeros((n, len(vb.blocks), k_classes))
    fall = np.zeros((n, len(vb.fallback_blocks), k_classes))
    groups: dict[tuple[bool, tuple[int, ...], bool], list[int]] = {}
    for i in range(n):
        groups.setdefault((*_players(vb, i), bool(unseen_rows[i])), []).append(i)
    for (fallback, players, unseen), members in groups.items():
        rows = np.asarray(members)
        ref = own.input_mean if unseen else reference
        base[rows] = _decisions(model, ref[None, :], unseen)[0]
        k = len(players)
        if k > MAX_PLAYERS:
            raise ValueError(f"{k} views serve these documents: explaining them needs 2^{k} decisions each (at most "
                             f"{MAX_PLAYERS} views)")
        inputs = [_coalition_inputs(model, vb, rows, fallback, {players[b] for b in range(k) if s >> b & 1}, ref)
                  for s in range(1, 2 ** k)]
        values = np.empty((2 ** k, len(rows), k_classes))
        values[0] = base[rows]
        if inputs:
            values[1:] = _decisions(model, np.vstack(inputs), unseen).reshape(2 ** k - 1, len(rows), k_classes)
        weights = _shapley_weights(k) if k else np.zeros(0)
        out = fall if fallback else main
        for b, player in enumerate(players):
            phi = np.zeros((len(rows), k_classes))
            for s in range(2 ** k):
                if not s >> b & 1:
                    phi += weights[bin(s).count("1")] * (values[s | 1 << b] - values[s])
            out[rows, player] = phi
        decision[rows] = values[-1]
    return decision, base, main, fall


def _chosen_labels(scores: np.ndarray, classes: list[str], labels: Sequence[str] | None, top_k: int | None
                   ) -> list[int]:
    """The classes explained for a document with decisions ``scores``."""
    if labels is not None:
        return [classes.index(c) for c in labels]
    order = np.argsort(-scores, kind="stable")
    if top_k is not None:
        return [int(j) for j in order[:top_k]]
    predicted = [int(j) for j in order if scores[j] > 0]
    return predicted or [int(order[0])]


def _check_choice(classes: list[str], labels: Sequence[str] | None, top_k: int | None, top_words: int) -> None:
    if labels is not None and top_k is not None:
        raise ValueError("give labels or top_k, not both")
    if labels is not None:
        if isinstance(labels, str):
            raise TypeError("labels must be a list of class names, got a single string")
        unknown = [c for c in labels if c not in classes]
        if unknown:
            shown = ", ".join(classes[:10]) + (", ..." if len(classes) > 10 else "")
            raise ValueError(f"unknown label(s) {unknown}: the model's classes are {shown}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int | np.integer) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
    if isinstance(top_words, bool) or not isinstance(top_words, int | np.integer) or top_words < 0:
        raise ValueError(f"top_words must be a non-negative integer, got {top_words!r}")


def _ranked(terms: list[str], words: list[list[str]], values: np.ndarray, top: int
            ) -> tuple[list[WordEffect], list[WordEffect]]:
    """The ``top`` terms with the largest positive and the most negative ``values``."""
    order = np.argsort(-values, kind="stable")
    up = [WordEffect(terms[t], words[t], float(values[t])) for t in order[:top] if values[t] > 0]
    down = [WordEffect(terms[t], words[t], float(values[t])) for t in order[::-1][:top] if values[t] < 0]
    return up, down


class _WordReader:
    """The word values of one view for one document, computed once for every label explained."""

    def __init__(self, model: Any, vb: ViewBlocks, branch: Any, v: int | None, i: int, text: str, lang: str) -> None:
        self.measure: str | None = None
        view = branch.view
        if branch.mapper is None and callable(getattr(view, "linear_terms", None)):
            lt = view.linear_terms(text, lang)
            self.measure, self.terms, self.words = "svm-term", lt.terms, lt.words
            self.values, self.scores, self.intercept = lt.values, lt.scores, lt.intercept
        elif callable(getattr(view, "term_occlusion", None)):
            occ = view.term_occlusion(text, lang)
            self.terms, self.words = occ.terms, occ.words
            if branch.mapper is not None:
                post = branch.map(occ.views, np.asarray([lang] * len(occ.views), dtype=object))
                self.measure, self.values = "posterior-change", post[0] - post[1:]
            elif v is not None:
                self.measure, self.values = "decision-change", _decision_changes(model, vb, v, i, occ.views)

    def effects(self, j: int, top: int) -> dict[str, Any]:
        if self.measure is None:
            return {}
        up, down = _ranked(self.terms, self.words, self.values[:, j], top) if top else ([], [])
        out: dict[str, Any] = {"word_measure": self.measure, "words_up": up, "words_down": down}
        if self.measure == "svm-term":
            out.update(view_score=float(self.scores[j]), intercept=float(self.intercept[j]))
        return out


def _decision_changes(model: Any, vb: ViewBlocks, v: int, i: int, views: np.ndarray) -> np.ndarray:
    """The decision of document ``i`` with view ``v``'s output ``views[0]`` minus its decision with each
    ``views[1 + t]`` instead (every other view unchanged): (n_terms, n_classes)."""
    policy = model.aggregation_
    rows = np.full(len(views), i)
    blocks = [B[rows] for B in vb.blocks]
    blocks[v] = policy.transform_block(views, model.normalize)
    d = _decisions(model, policy.combine(blocks, [m[rows] for m in vb.masks]),
                   bool(model.unseen_rows(vb.langs[[i]], vb.fallback[[i]])[0]))
    return d[0] - d[1:]


def _note(model: Any, branch: Any, lang: str, used: bool, fallback_doc: bool, is_fallback_view: bool) -> str:
    if used:
        return "zero-shot fallback" if is_fallback_view else "used"
    if not branch.view.covers(lang):
        return f"does not serve {lang!r}"
    if is_fallback_view:
        return "zero-shot fallback, for languages no view serves"
    if branch.name not in model.selected_views_:
        return "not kept by select"
    if fallback_doc:
        return f"{model.aggregation_.name} needs every view"
    return "not used"


def explain_model(model: Any, X: Any, *, langs: Sequence[str] | None = None, labels: Sequence[str] | None = None,
                  top_k: int | None = None, top_words: int = 10) -> Explanations:
    """Explain a fitted :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`'s decisions (see the module
    docstring; the parameters are those of its :meth:`explain`)."""
    from sklearn.utils.validation import check_is_fitted

    from gfun.corpus.inputs import unpack
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.estimator import check_finite

    check_is_fitted(model, "meta_")
    classes = list(model.classes_)
    _check_choice(classes, labels, top_k, top_words)
    reference = reference_input(model)
    texts, lang_arr = unpack(X, langs)
    ids = list(X.ids) if isinstance(X, MultilingualCorpus) else [str(i) for i in range(len(texts))]
    vb = model.view_blocks(texts, lang_arr)
    decision, base, main, fall = shapley_contributions(model, vb, reference)
    check_finite(decision, "the meta-classifier", lang_arr)
    proba = (model._proba(decision, model.unseen_rows(lang_arr, vb.fallback))
             if getattr(model.meta_, "platt_A_", None) is not None else None)
    branches = list(model.branches_) + list(model.fallback_branches_)
    n_main = len(model.branches_)
    outputs = list(vb.outputs) + list(vb.fallback_outputs)
    masks = list(vb.masks) + list(vb.fallback_masks)
    position = [np.cumsum(m) - 1 for m in masks]  # a document's row in a view's output
    documents = []
    for i, (text, lang) in enumerate(zip(texts, lang_arr, strict=True)):
        lang = str(lang)
        fallback_doc = bool(vb.fallback[i])
        chosen = _chosen_labels(decision[i], classes, labels, top_k)
        readers = {}
        for b, branch in enumerate(branches):
            if masks[b][i] and top_words:
                readers[b] = _WordReader(model, vb, branch, b if b < n_main else None, i, text, lang)
        explained = []
        for j in chosen:
            views = []
            for b, branch in enumerate(branches):
                used = bool(masks[b][i])
                value = main[i, b, j] if b < n_main else fall[i, b - n_main, j]
                contribution = ViewContribution(branch.name, float(value), used,
                                                _note(model, branch, lang, used, fallback_doc, b >= n_main))
                out = outputs[b]
                if used and out is not None and out.shape[1] == len(classes) and (
                        branch.mapper is not None or branch.view.output == "posteriors"):
                    contribution.posterior = float(out[position[b][i], j])
                if b in readers:
                    for key, val in readers[b].effects(j, top_words).items():
                        setattr(contribution, key, val)
                views.append(contribution)
            explained.append(LabelExplanation(classes[j], bool(decision[i, j] > 0), float(decision[i, j]),
                                              float(base[i, j]), None if proba is None else float(proba[i, j]),
                                              views))
        documents.append(DocumentExplanation(ids[i], lang, [classes[j] for j in np.flatnonzero(decision[i] > 0)],
                                             explained))
    return Explanations(model.aggregation_.name, [b.name for b in branches], documents)
