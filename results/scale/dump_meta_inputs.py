import sys, numpy as np
from gfun.datasets.debtags import load_debtags
from gfun.funnelling import GeneralizedFunnelling
r = load_debtags(0, "/work/shared/data/debtags", **({"split": "all"} if sys.argv[1] == "all" else {}))
rec = {}
orig = GeneralizedFunnelling._fit_meta
def spy(self, Zmeta, Zval, Y, zscore, cv, final=True):
    if zscore:
        from gfun.normalization import ZScore
        s = ZScore.fit(Zmeta); rec["Z"] = s.transform(Zmeta); rec["Zv"] = s.transform(Zval); rec["Y"] = Y
        rec["groups"] = self.groups_
    raise SystemExit
GeneralizedFunnelling._fit_meta = spy
m = GeneralizedFunnelling(views="x", n_jobs=2, random_state=0)
try:
    m.fit(r.train)
except SystemExit:
    pass
# test inputs too
np.savez(f"/tmp/scale/meta_{sys.argv[1]}.npz", Z=rec["Z"], Zv=rec["Zv"], Y=rec["Y"], groups=rec["groups"])
print({k: v.shape for k, v in rec.items()})
