"""The ramp ``diff`` where it was refused: the cost of ``pvalues=True`` and ``IRelief`` with ``diff="ramp"``, and the
linear p-values' pair kernels (the ramp's specialisation must not slow them).

Data: ``(400, 1000)`` standard normal, two classes, one relevant feature.  Fits: ``ReliefF(n_neighbors=10,
pvalues=True)``, ``MultiSURF(pvalues=True)``, ``IRelief(max_iter=10, tol=0)``, each linear and with
``diff="ramp"`` (CORElearn's default ramp), and the ramp weights without p-values; median wall time of
``--repeat`` fits after one warm-up fit.  Kernels: each pair kernel of MultiSURF's linear p-values on one
block of 128 features, on one thread (``kernel(..., 0, 1)``), median of 7 calls.

``--linear-only`` runs the linear rows alone, so that the same script times an older checkout.

Usage::

    PYTHONPATH=src python benchmarks/ramp_pvalues.py [--linear-only] [--label NAME]
"""

import argparse
import platform
import warnings

import numpy as np
from relief_covariates import median_time


def main():
    from knnweights import IRelief, MultiSURF, ReliefF
    from knnweights.engine import pair_kernels
    from knnweights.weighters import _relief_regression as rr

    ap = argparse.ArgumentParser()
    ap.add_argument("--linear-only", action="store_true")
    ap.add_argument("--label", default="this checkout")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rs = np.random.RandomState(0)
    X = rs.normal(size=(400, 1000))
    y = rs.randint(0, 2, 400)
    X[:, 0] += y
    fits = [("ReliefF(n_neighbors=10, pvalues=True)", ReliefF(n_neighbors=10, pvalues=True)),
            ("MultiSURF(pvalues=True)", MultiSURF(pvalues=True)),
            ("IRelief(max_iter=10, tol=0)", IRelief(max_iter=10, tol=0.0))]
    rows = []
    for name, est in fits:
        rows.append((name + " linear", median_time(lambda est=est: est.fit(X, y), args.repeat)))
        if not args.linear_only:
            ramp = est.set_params(diff="ramp")
            rows.append((name + " ramp", median_time(lambda est=ramp: est.fit(X, y), args.repeat)))
            if "pvalues" in est.get_params():
                nop = est.set_params(pvalues=False)
                rows.append((name.replace("pvalues=True", "pvalues=False") + " ramp",
                             median_time(lambda est=nop: est.fit(X, y), args.repeat)))
    print(f"# {args.label}; {platform.processor() or platform.machine()}")
    for name, t in rows:
        print(f"| {name} | {t:.3f} |")
    est = MultiSURF(pvalues=True).fit(X, y)
    m = rr._pair_moments(est, rr._diff_data(est, X, y), y, "classes", "mantel")
    indptr, indices, flags = m._graph()
    block = next(iter(m._blocks()))
    cols = block[2] if len(block) == 3 else (block[2], block[3], m._plain)  # older checkouts: (f0, f1, E, ecol)
    n, nf = 400, block[1] - block[0]
    v, continuous, _ = m._outcome
    abar = np.full(nf, 0.3)
    out = [np.empty((n, nf)) for _ in range(5)]
    counts = np.empty((n, 3))
    kernels = [("pair_sums", lambda: pair_kernels.pair_sums.kernel(*cols, indptr, indices, flags, v, continuous,
                                                                    *out[:3], counts, 0, 1)),
               ("c_powers", lambda: pair_kernels.c_powers.kernel(*cols, indptr, indices, flags, abar, *out[:3], 0, 1)),
               ("c_matvec", lambda: pair_kernels.c_matvec.kernel(*cols, indptr, indices, flags, abar, out[0], out[3],
                                                                  0, 1)),
               ("c_triangles", lambda: pair_kernels.c_triangles.kernel(*cols, indptr, indices, flags, abar,
                                                                        np.iinfo(np.int64).max, 0, 0, out[4], 0, 1))]
    for name, fn in kernels:
        print(f"| {name} | {1e3 * median_time(fn, 7):.1f} ms |")


if __name__ == "__main__":
    main()
