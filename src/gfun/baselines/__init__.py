"""The baselines gfun is compared with: estimators that are not Generalized Funnelling.

:mod:`gfun.baselines.naive`
    Naive (one monolingual classifier per language), UpperBound, and Fun (Funnelling, 2019:
    :func:`~gfun.baselines.naive.make_fun`).
:mod:`gfun.baselines.transformer`
    The fine-tuned multilingual transformer used directly as the classifier (the paper's mBERT row).
:mod:`gfun.baselines.crosslingual`
    The cross-lingual baselines of the paper's Tables 3-4: LRI, CLESA, KCCA and DCI.
"""
