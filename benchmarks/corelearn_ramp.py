"""knnweights' ReliefF beside CORElearn's ``ReliefFequalK`` (R), with the ramp ``diff`` on and off.

Run:  python benchmarks/corelearn_ramp.py [--k 10] [--out benchmarks/corelearn_ramp.md]

Needs ``Rscript`` with the CORElearn package (R is no dependency of knnweights; it is only for
this comparison).  For each data set the samples go to R exactly (raw float64, ``readBin``; the
labels as a CSV), and an R script written here to a temporary file computes
``attrEval(class ~ ., data, estimator = "ReliefFequalK", kNearestEqual = k, ReliefIterations = 0,
maxThreads = 1, ...)`` twice:

- ramp on: ``numAttrProportionEqual = 0.04``, ``numAttrProportionDifferent = 0.1`` (CORElearn's
  defaults);
- ramp off: ``numAttrProportionEqual = 0``, ``numAttrProportionDifferent = 1``: the ramp from 0 at
  a difference of 0 to 1 at the feature's range, which is the linear ``|a - b| / range``.  (Both
  at 0 is not "off": every difference, 0 included, is then 1, and every weight 0.)

``ReliefIterations = 0`` scores every instance once; ``maxThreads = 1`` fixes the order of
CORElearn's sums (its threads add to shared weights atomically, in any order).  knnweights fits
``ReliefF(n_neighbors=k, diff="ramp", ramp=(0.04, 0.1))`` and ``ReliefF(n_neighbors=k)`` (every
instance, ``miss_weighting="prior"``: CORElearn weighs a miss class ``C`` by ``P(C) / (1 - P(c))``
too; ``k`` clamped to a class's size as CORElearn clamps it; no feature discrete, as every column
is numeric in R).

To say where the two differ, a third computation is written here in NumPy from the definitions
(``rules_reference``), brute force, with two of CORElearn's rules as switches:

- ``skip_zero``: an instance at total distance exactly 0 from the query (the query itself and its
  duplicates under the ``diff`` in use) is no neighbour of any class;
- ``drop_small``: a class's summed ``diff`` of a feature over its ``k`` neighbours counts only
  when above ``1e-7``.

With both off it is knnweights' definition (its agreement with knnweights checks knnweights);
with both on, CORElearn's.  Neighbours tied in distance are taken in sample order (stable sort);
the table counts the queries where a tie straddles the ``k``-th neighbour of some class, the one
place where the two programs' tie orders could still differ.
"""

import argparse
import os
import platform
import shutil
import subprocess
import tempfile
import time
import warnings

import numpy as np
from scipy import stats

from knnweights import ReliefF, datasets

#: (name, the number of highest-variance features kept or None for all)
DATASETS = (
    ("kidney_sueltmann", None),
    ("colon_alon", None),
    ("leukemia_golub", None),
    ("glass", None),
    ("ecoli", None),
    ("image_segmentation", None),
)
RAMP = (0.04, 0.1)
SETTINGS = {"ramp on": RAMP, "ramp off": (0.0, 1.0)}
TOP = 20
#: the reference's tie tolerance on ramp distances (knnweights' tie rule: distances equal in exact
#: arithmetic but rounded apart are equal, and go in sample order)
TIE_TOL = 1e-9

R_SCRIPT = r"""
suppressPackageStartupMessages(library(CORElearn))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; k <- as.integer(args[2]); teq <- as.numeric(args[3]); tdiff <- as.numeric(args[4])
cat(R.version.string, "\n", sep = "", file = file.path(dir, "versions.txt"))
cat("CORElearn ", as.character(packageVersion("CORElearn")), "\n", sep = "", file = file.path(dir, "versions.txt"),
    append = TRUE)
for (name in readLines(file.path(dir, "names.txt"))) {
  shape <- scan(file.path(dir, paste0(name, ".shape")), quiet = TRUE)
  con <- file(file.path(dir, paste0(name, ".f64")), "rb")
  x <- readBin(con, "double", n = shape[1] * shape[2], size = 8, endian = "little")
  close(con)
  X <- matrix(x, nrow = shape[1], ncol = shape[2], byrow = TRUE)
  d <- as.data.frame(X)
  colnames(d) <- paste0("f", seq_len(shape[2]))
  d$class <- factor(read.csv(file.path(dir, paste0(name, ".labels.csv")), colClasses = "character")$label)
  out <- list()
  secs <- c()
  for (s in list(c("on", teq, tdiff), c("off", 0, 1))) {
    t0 <- proc.time()[["elapsed"]]
    w <- attrEval(class ~ ., d, estimator = "ReliefFequalK", kNearestEqual = k, ReliefIterations = 0,
                  maxThreads = 1, numAttrProportionEqual = as.numeric(s[2]),
                  numAttrProportionDifferent = as.numeric(s[3]))
    secs <- c(secs, proc.time()[["elapsed"]] - t0)
    out[[s[1]]] <- sprintf("%a", as.numeric(w[paste0("f", seq_len(shape[2]))]))
  }
  write.csv(data.frame(on = out$on, off = out$off), file.path(dir, paste0(name, ".weights.csv")), row.names = FALSE)
  cat(secs, "\n", file = file.path(dir, paste0(name, ".seconds")))
}
"""


def load(name, top):
    """The data set's samples (float64, the ``top`` highest-variance features when set) and labels."""
    X, y = datasets.load(name, return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    if top is not None and X.shape[1] > top:
        keep = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:top])
        X = X[:, keep]
    return np.ascontiguousarray(X), np.asarray(y)


def run_corelearn(data, k):
    """CORElearn's weights per data set and setting, the versions and CORElearn's seconds."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise SystemExit("Rscript not found: install R and CORElearn to run this comparison.")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (X, y) in data.items():
            X.astype("<f8").tofile(os.path.join(tmp, name + ".f64"))
            np.savetxt(os.path.join(tmp, name + ".shape"), np.array(X.shape)[None], fmt="%d")
            with open(os.path.join(tmp, name + ".labels.csv"), "w") as fh:
                fh.write("label\n" + "".join(f'"c_{v}"\n' for v in y))
        with open(os.path.join(tmp, "names.txt"), "w") as fh:
            fh.write("\n".join(data) + "\n")
        script = os.path.join(tmp, "corelearn.R")
        with open(script, "w") as fh:
            fh.write(R_SCRIPT)
        subprocess.run([rscript, script, tmp, str(k), repr(RAMP[0]), repr(RAMP[1])], check=True)
        weights, seconds = {}, {}
        for name in data:
            with open(os.path.join(tmp, name + ".weights.csv")) as fh:
                rows = [line.strip().replace('"', "").split(",") for line in fh.readlines()[1:]]
            weights[name] = {"ramp on": np.array([float.fromhex(r[0]) for r in rows]),
                             "ramp off": np.array([float.fromhex(r[1]) for r in rows])}
            with open(os.path.join(tmp, name + ".seconds")) as fh:
                seconds[name] = sum(float(v) for v in fh.read().split())
        with open(os.path.join(tmp, "versions.txt")) as fh:
            versions = fh.read().strip().splitlines()
    return weights, versions, seconds


def ramp_of_differences(A, E, D):
    """The ramp of raw absolute differences ``A``: 0 up to ``E``, 1 from ``D``, linear between (``E < D``)."""
    out = (A - E) * (1.0 / (D - E))
    out[A <= E] = 0.0
    out[A >= D] = 1.0
    return out


def nearest_first(cand, dist, tie_tol, reverse_ties):
    """``cand`` by distance; distances within ``tie_tol`` of the next smaller one tie, and tied ones go in
    sample order (reversed with ``reverse_ties``)."""
    order = cand[np.argsort(dist[cand], kind="stable")]
    group = np.concatenate([[0], np.cumsum(np.diff(dist[order]) > tie_tol)])
    return order[np.lexsort((-order if reverse_ties else order, group))]


def rules_reference(X, y, k, t_eq, t_diff, skip_zero, drop_small, tie_tol=0.0, reverse_ties=False, block=32):
    """ReliefF with ``k`` equal neighbours per class and the ramp ``diff``, brute force from the definition.

    The thresholds are ``t_eq`` and ``t_diff`` times each feature's range on ``X``; the total distance
    is the sum of the features' ``diff`` in feature order; neighbours tied in distance (within
    ``tie_tol``) in sample order, or reversed.  ``skip_zero`` and ``drop_small`` switch on CORElearn's
    two rules (module docstring).  Returns the weights and the number of queries whose ``k``-th
    neighbour of some class is tied with the next one.
    """
    n, p = X.shape
    classes, codes = np.unique(y, return_inverse=True)
    prior = np.bincount(codes) / n
    rng = X.max(axis=0) - X.min(axis=0)
    rng[rng <= 0] = 1e-7
    E, D = t_eq * rng, t_diff * rng
    hit_sum, miss_sum = np.zeros(p), np.zeros(p)
    boundary_ties = 0
    for s in range(0, n, block):
        Q = X[s:s + block]
        F = ramp_of_differences(np.abs(X[None, :, :] - Q[:, None, :]), E, D)
        dist = np.zeros((Q.shape[0], n))
        for f in range(p):
            dist += F[:, :, f]
        for b in range(Q.shape[0]):
            i = s + b
            ok = np.ones(n, bool)
            ok[i] = False
            if skip_zero:
                ok &= dist[b] != 0.0
            tied = False
            for c in range(classes.size):
                cand = np.flatnonzero(ok & (codes == c))
                if cand.size == 0:
                    continue
                order = nearest_first(cand, dist[b], tie_tol, reverse_ties)
                m = min(k, order.size)
                if order.size > m and abs(dist[b, order[m - 1]] - dist[b, order[m]]) <= tie_tol:
                    tied = True
                inc = F[b, order[:m]].sum(axis=0)
                if drop_small:
                    inc[inc <= 1e-7] = 0.0
                if c == codes[i]:
                    hit_sum += inc / m
                else:
                    miss_sum += prior[c] / (1.0 - prior[codes[i]]) * inc / m
            boundary_ties += tied
    return (miss_sum - hit_sum) / n, boundary_ties


def zero_distance_pairs(X, t_eq, t_diff):
    """Ordered pairs ``i != j`` at total ramp distance exactly 0 (duplicates under the ``diff``)."""
    rng = X.max(axis=0) - X.min(axis=0)
    rng[rng <= 0] = 1e-7
    E = t_eq * rng
    count = 0
    for i in range(X.shape[0]):
        count += int((np.abs(X - X[i]) <= E).all(axis=1).sum()) - 1
    return count


def compare(a, b):
    """max |a - b|, Pearson, Spearman, and the share of ``b``'s top ``TOP`` in ``a``'s top ``TOP``."""
    top = min(TOP, a.size)
    ta = set(np.argsort(-a, kind="stable")[:top])
    tb = set(np.argsort(-b, kind="stable")[:top])
    return (np.abs(a - b).max(), stats.pearsonr(a, b)[0], stats.spearmanr(a, b)[0], len(ta & tb) / top)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "corelearn_ramp.md"))
    args = parser.parse_args()
    t_start = time.perf_counter()
    data = {name: load(name, top) for name, top in DATASETS}
    corelearn, versions, r_seconds = run_corelearn(data, args.k)
    rows, diag, mixed = [], [], []
    for name, (X, y) in data.items():
        for setting, (t_eq, t_diff) in SETTINGS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # k clamped to the small classes (ecoli)
                est = (ReliefF(n_neighbors=args.k, diff="ramp", ramp=RAMP) if setting == "ramp on"
                       else ReliefF(n_neighbors=args.k))
                kw = est.fit(X, y).scores_
            steps = [rules_reference(X, y, args.k, t_eq, t_diff, skip, drop, tol)[0]
                     for skip, drop, tol in ((False, False, TIE_TOL), (True, False, TIE_TOL), (True, True, TIE_TOL))]
            exact, ties = rules_reference(X, y, args.k, t_eq, t_diff, True, True)
            reversed_ties, _ = rules_reference(X, y, args.k, t_eq, t_diff, True, True, reverse_ties=True)
            cl = corelearn[name][setting]
            rows.append((name, X.shape, setting, *compare(kw, cl)))
            if setting == "ramp off":
                mixed.append((name, X.shape, *compare(kw, corelearn[name]["ramp on"])))
            chain = [kw, *steps, exact, cl]
            diag.append((name, setting, zero_distance_pairs(X, t_eq, t_diff), ties,
                         *(np.abs(a - b).max() for a, b in zip(chain[:-1], chain[1:], strict=True)),
                         np.abs(exact - reversed_ties).max()))
    total = time.perf_counter() - t_start
    write(args, rows, diag, mixed, versions, r_seconds, total)


def cpu_model():
    """The CPU's model name (lscpu), else the platform's processor string."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or platform.machine()


def write(args, rows, diag, mixed, versions, r_seconds, total):
    """The markdown report."""
    g = "{:.2g}".format
    lines = [
        "# knnweights' ReliefF beside CORElearn's ReliefFequalK: the ramp on and off",
        "",
        "`python benchmarks/corelearn_ramp.py` (module docstring: what is run and how).",
        f"{cpu_model()}, {os.cpu_count()} CPUs; {'; '.join(versions)} (built from the CRAN sources without its"
        " plotting import rpart.plot: Debian 12 packages neither CORElearn nor rpart.plot);"
        f" numpy {np.__version__};"
        f" k = {args.k}; every instance scored; {total:.0f} s in all ({sum(r_seconds.values()):.1f} s in CORElearn).",
        "",
        f"Ramp on: knnweights `ReliefF(n_neighbors={args.k}, diff=\"ramp\", ramp={RAMP})` against CORElearn's defaults"
        f" (`numAttrProportionEqual = {RAMP[0]}`, `numAttrProportionDifferent = {RAMP[1]}`); ramp off:"
        f" `ReliefF(n_neighbors={args.k})` against `numAttrProportionEqual = 0`, `numAttrProportionDifferent = 1`.",
        f"Top {TOP}: the share of CORElearn's top {TOP} features in knnweights' top {TOP} (all features when fewer).",
        "",
        "| data set | n x p | setting | max abs diff | Pearson | Spearman | top 20 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, shape, setting, mx, pr, sp, top in rows:
        lines.append(f"| {name} | {shape[0]} x {shape[1]} | {setting} | {g(mx)} | {pr:.6f} | {sp:.6f} | {top:.2f} |")
    lines += [
        "",
        "## Where they differ",
        "",
        "The NumPy reference of the module docstring, from knnweights' definition to CORElearn's, one change at a"
        " time; each column is the max |difference| of the weights between two neighbouring steps, so that a"
        " difference between knnweights and CORElearn shows in the column of its cause:",
        "",
        f"1. *tie rule*: knnweights against the reference with knnweights' tie rule (distances within {TIE_TOL:g}"
        " are equal and go in sample order), neither of CORElearn's rules;",
        "2. *skip zero*: CORElearn's rule that no instance at total distance exactly 0 is a neighbour;",
        "3. *drop small*: CORElearn's rule that a class's summed `diff` of at most 1e-7 counts 0;",
        "4. *exact*: distances compared exactly as computed (CORElearn's comparisons), ties in sample order;",
        "5. *CORElearn*: the exact reference with both rules against CORElearn.",
        "",
        "Zero pairs: ordered pairs of distinct samples at total distance exactly 0 under the setting's `diff`."
        f" Boundary ties: queries (CORElearn's rules) whose {args.k}-th neighbour of some class ties with the next."
        " Ties reversed: what the exact reference moves when tied neighbours go in reverse sample order"
        " (the size of a change of tie order alone).",
        "",
        "| data set | setting | zero pairs | boundary ties | 1. tie rule | 2. skip zero | 3. drop small | 4. exact"
        " | 5. CORElearn | ties reversed |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, setting, zp, ties, *steps in diag:
        lines.append(f"| {name} | {setting} | {zp} | {ties} | " + " | ".join(g(v) for v in steps) + " |")
    lines += [
        "",
        "Reading the columns: *1. tie rule* at rounding level says knnweights computes its definition; *2. skip"
        " zero* is the difference knnweights' docstring declares (CORElearn drops the query's duplicates under the"
        " `diff`, which the ramp makes many more of: every pair whose features all differ by at most"
        f" {RAMP[0]} of their range); *4. exact*: distances equal in exact arithmetic, rounded apart, go to the"
        " lower index in knnweights and to the rounding in an exact comparison; *5. CORElearn*: CORElearn picks"
        " the k nearest of a class with a partial heapsort on the distance alone, so which of the neighbours tied"
        " at the k-th distance it takes follows the heap, not the sample order (nonzero only with boundary ties,"
        " and of the size of *ties reversed*).",
        "",
        "## knnweights' default (linear) against CORElearn's default (ramp on)",
        "",
        f"`ReliefF(n_neighbors={args.k})` against `attrEval(..., estimator = \"ReliefFequalK\")` with CORElearn's"
        " default thresholds: the comparison issue 60 first made.",
        "",
        "| data set | n x p | max abs diff | Pearson | Spearman | top 20 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, shape, mx, pr, sp, top in mixed:
        lines.append(f"| {name} | {shape[0]} x {shape[1]} | {g(mx)} | {pr:.6f} | {sp:.6f} | {top:.2f} |")
    lines.append("")
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
