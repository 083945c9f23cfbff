"""Support vector machines: the first tier's linear SVMs, the RBF SVMs of the meta tier, and what they need.

:mod:`gfun.svm.linear` (one-vs-rest liblinear SVMs with cross-validated scores), :mod:`gfun.svm.kernel`
(:class:`~gfun.svm.kernel.RBFSVMOvR`: RBF SVMs sharing one Gram matrix) with its exact path
(:mod:`gfun.svm.kernel_exact`) and its validation (:mod:`gfun.svm.kernel_validation`), :mod:`gfun.svm.rbf_kernel` (the
RBF kernel in place), :mod:`gfun.svm.nystroem` (the Nystroem approximation, its paths of ``RBFSVMOvR``),
:mod:`gfun.svm.memory_budget` (memory sizes and peaks), :mod:`gfun.svm.thresholds` (per-class decision thresholds),
:mod:`gfun.svm.calibration` (Platt sigmoids) and :mod:`gfun.svm.sklearn_private` (the private scikit-learn functions
used, checked before use).
"""
