"""Save gFun-X's meta-classifier inputs on debtags run 0 (``run0``) or the ``--split all`` corpus (``all``).

Fits gFun-X until its meta level and stores the z-scored training and out-of-fold inputs, the labels and the
cross-validation groups in ``/tmp/scale/meta_<which>.npz`` (read by ``compare_meta.py``).
"""

import sys

import numpy as np

from gfun.datasets.debtags import load_debtags
from gfun.funnelling import GeneralizedFunnelling
from gfun.normalization import ZScore


class _Stop(Exception):
    """Raised once the meta inputs are captured: the rest of the fit is not needed."""


def main() -> None:
    which = sys.argv[1]
    r = load_debtags(0, "/work/shared/data/debtags", **({"split": "all"} if which == "all" else {}))
    rec: dict[str, np.ndarray] = {}

    def capture(self, Zmeta, Zval, Y, zscore, cv, final=True):  # noqa: ANN001, ANN202 - stands in for _fit_meta
        if zscore:
            scaler = ZScore.fit(Zmeta)
            rec.update(Z=scaler.transform(Zmeta), Zv=scaler.transform(Zval), Y=Y, groups=self.groups_)
        raise _Stop

    GeneralizedFunnelling._fit_meta = capture
    try:
        GeneralizedFunnelling(views="x", n_jobs=2, random_state=0).fit(r.train)
    except _Stop:
        pass
    np.savez(f"/tmp/scale/meta_{which}.npz", **rec)
    print({k: v.shape for k, v in rec.items()})


if __name__ == "__main__":
    main()
