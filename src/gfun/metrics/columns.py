"""What the columns of gfun's printed tables mean, in words: the ``--help`` of ``gfun evaluate``, ``gfun demo``
and ``gfun experiment`` lists them (no import of pandas or numpy, so that ``gfun --help`` stays light)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["COLUMN_HELP", "columns_help"]

#: What each column (and cell notation) of gfun's printed tables means, by its printed name: the ``--help`` of
#: ``gfun evaluate``, ``gfun demo`` and ``gfun experiment`` and the user guide list them (:func:`columns_help`).
COLUMN_HELP: dict[str, str] = {
    "lang": "the test language; 'average' is the unweighted mean over languages (the paper's way), 'all' the "
            "documents taken together when they have no language",
    "method": "the configuration trained (Naive, Pooled, Fun: baselines; gFun-<views>: Generalized Funnelling "
              "with those views)",
    "F1M": "macro-averaged F1: the F1 of each class of the codeframe, averaged with equal weight (a class with no "
           "true and no predicted document scores 1); 0 to 1",
    "F1µ": "micro-averaged F1: true and false positives and negatives summed over the classes, then F1; 0 to 1",
    "KM": "macro-averaged K (recall + specificity - 1, per class, averaged): 0 for a trivial or random "
          "classifier, 1 for a perfect one, negative for one worse than random",
    "Kµ": "micro-averaged K: counts summed over the classes, then K",
    "F1M(present)": "F1M over the classes that occur in the language's test labels only ('-' where none "
                    "does): F1M counts every class of the codeframe, and a class absent from a language's test "
                    "documents scores 1 there when the model predicts it for none of them (0 otherwise)",
    "unlabelled": "the share of the test documents without any true label that get at least one predicted label "
                  "(how often a document that belongs to no class is given one; '-' where every document has a "
                  "label); 0 is best",
    "n_docs": "test documents of the language (their total in the average row)",
    "unknown_labels": "occurrences of test labels the model does not know (see --unknown-labels)",
    "fit_s": "seconds the fit took (on this machine, with --n-jobs jobs)",
    "± std": "mean ± standard deviation over the runs (a single run shows its score alone)",
    "† ‡": "not significantly different from the best method (paired two-tailed t-test over the runs): † with "
           "0.001 < p < 0.05, ‡ with p >= 0.05; bold: best method; italics: best of its group",
}


def columns_help(columns: Sequence[str], title: str = "columns of the table") -> str:
    """``--help`` text explaining ``columns`` (printed names, keys of :data:`COLUMN_HELP`): a title line, then one
    indented line per column, ``NAME: meaning``."""
    unknown = [c for c in columns if c not in COLUMN_HELP]
    if unknown:
        raise KeyError(f"no explanation of column(s) {unknown} in COLUMN_HELP")
    return title + ":\n" + "\n".join(f"  {c}: {COLUMN_HELP[c]}" for c in columns)
