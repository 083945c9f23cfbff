import time, sys, numpy as np
from gfun.kernel_svm import RBFSVMOvR
from gfun.metrics import f1_from_counts
d = np.load(sys.argv[1]); Z, Zv, Y, groups = d["Z"].astype(np.float64), d["Zv"].astype(np.float64), d["Y"].astype(bool), d["groups"]
def f1(dec):
    p = dec > 0; tp, fp, fn = (p & Y).sum(0), (p & ~Y).sum(0), (~p & Y).sum(0)
    return round(float(f1_from_counts(tp, fp, fn, np.zeros_like(tp)).mean()), 4), round(float(f1_from_counts(tp.sum(), fp.sum(), fn.sum())), 4)
for spec in sys.argv[2:]:
    kw = eval(f"dict({spec})")
    t = time.perf_counter()
    m = RBFSVMOvR(cv=3, threshold="validated", n_jobs=2, random_state=0, **kw).validate(Z, Y, X_val=Zv, groups=groups)
    print(spec, round(time.perf_counter() - t, 1), "oof", f1(m.oof_decision_ + m.threshold_), "validated", f1(m.validated_decision_), "C", np.unique(m.C_, return_counts=True), flush=True)
