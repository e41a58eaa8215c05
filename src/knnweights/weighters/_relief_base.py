"""The Relief-family estimator base: input hooks, the ``diff`` data, shared parameters and their docs."""

import numbers

import numpy as np

from ..engine import mixed_kernels
from ..engine.genotypes import GenotypeMatrix, is_byte_input
from ..utils import Interval, StrOptions
from ._base import BaseWeighter
from ._relief_bytes import fit_relief_bytes
from ._relief_covariates import refuse_covariates
from ._relief_margins import RampDiff, ramp_diff, range_normalize
from ._relief_regression import PVALUES_DOC, TARGET_DOC

__all__ = ["DIFF_CONSTRAINTS", "RAMP_CONSTRAINTS", "TARGET_CONSTRAINTS", "ReliefBase", "fill_relief_docstring"]


_N_INSTANCES_DOC = """n_instances : int or None, default=None
        Relief's ``m``: score from ``m`` instances drawn at random without replacement
        (``random_state``) against all rows, ``O(m n d)`` instead of ``O(n^2 d)``, memory
        ``O(block x n)``.  ``None`` (or ``m >= n``): every sample, exact and deterministic.
        The estimate is the mean of ``m`` of the ``n`` per-instance margin vectors ``z_i``,
        so its variance is ``var_i(z_if) / m * (n - m) / (n - 1)`` per feature (the
        finite-population correction: 0 at ``m = n``); the standard error falls as
        ``1 / sqrt(m)``."""


_DIFF_PARAMS_DOC = """missing : {"error", "diff"}, default="error"
        ``"error"``: ``NaN`` in ``X`` is refused (one-line error naming the column).
        ``"diff"``: a missing value is scored with Kononenko's (1994) ``diff`` for unknown
        values, as Robnik-Sikonja & Kononenko (2003, Sec. 2.6) use it: with one value
        unknown, the probability that the two values differ given the other instance's
        class (discrete: ``1 - P(x | c)``; continuous: the expected range-normalised
        difference to that class's known values), with both unknown
        ``1 - sum_v P(v | c_1) P(v | c_2)`` (continuous: the expected difference of two
        draws); the probabilities are the class-conditional frequencies of the known
        values.  Neighbours are found with the same ``diff``.
    discrete_features : {"auto"}, bool, array-like of bool or int, or None, default=None
        Features scored as discrete: ``diff`` is 0 for equal and 1 for different values
        (never range-normalised), continuous features keep the range-normalised
        difference, and the distance is the sum of both (the mixed-data distance of
        Relief).  ``None`` (default): every feature continuous (no change for
        continuous data); ``True``: all discrete; ``"auto"``: the features with at most
        ``discrete_limit`` distinct known values; else a boolean mask or indices.
    discrete_limit : int, default=10
        The distinct-value threshold of ``discrete_features="auto"`` (``<=`` is discrete:
        skrebate's ``discrete_threshold=10`` convention).
    genotype_diff : {"additive", "mismatch", "allele-sharing"} or None, default=None
        How two genotypes (allele counts 0/1/2) differ, on every feature, by name:
        ``"additive"`` ``|a - b| / range`` (the observed range: the default numeric ``diff``),
        ``"mismatch"`` 0 for equal genotypes and 1 else (``discrete_features=True``; NPDR's
        "match-mismatch", Arabnejad et al.'s genotype mismatch GM), ``"allele-sharing"``
        ``|a - b| / 2`` (NPDR's "allele-sharing", allele mismatch AM: a fixed scale, so it is
        the additive reading halved on a SNP seen with two adjacent genotypes only and equal to
        it on one seen with 0 and 2; values must be 0, 1 or 2).  The same on bytes and floats,
        in the neighbours' distance and the weight update alike, with the unknown-value
        ``diff`` of ``missing="diff"`` taken under it.  ``None``: ``discrete_features`` and
        ``normalize`` decide; a name leaves them at their defaults (else a ``ValueError``: one
        parameter says how a genotype differs).  Which reading finds which model: the user
        guide's "Genotype differences"."""


_RAMP_PARAMS_DOC = """diff : {"linear", "ramp"}, default="linear"
        The ``diff`` of continuous features: ``"linear"`` the range-normalised ``|a - b|``; ``"ramp"``
        0 up to ``t_eq``, 1 from ``t_diff`` of the range, linear between (Hong 1997;
        Robnik-Sikonja & Kononenko 2003, Sec. 2.7), used in the distance that picks the neighbours and
        in the weight update alike, as CORElearn's ``ReliefFequalK`` does (its ``CAdiff`` returns the
        ramp for both; default thresholds ``ramp=(0.04, 0.1)``; for Relief and ReliefF, unlike CORElearn,
        neighbours at distance 0 are kept and neighbours at equal distances go in sample order, where its heap
        and rounding order them; the user guide's CORElearn comparison measures both).  SURF and
        MultiSURF compute their thresholds on the ramp distances, and a neighbour is strictly closer
        than its threshold, as with the linear ``diff``; I-RELIEF's weighted distances (and
        ``sigma="auto"``) and margins are the ramp's.  Classes and a continuous target (RReliefF:
        neighbours and ``diff(A)`` by the ramp, ``diff(tau)`` linear; SURF's continuous-endpoint rule:
        the radius by the ramp).  ``pvalues``: the pairs are found on the ramp distances and their
        differences are the ramp's, as in the weights (with ``covariates``, ``neighbors_with_covariates``
        takes each numeric covariate's ramp too; not ``pvalue_null="feature"``, whose all-pairs sums the ramp
        would make ``O(n^3)`` per feature).  Complete data (not ``ties="include"``).  On genotype
        bytes the ramp of two codes is scored without a float copy where it is the 0/1 mismatch on
        every feature (``t_diff`` at most one step of each feature's range: the default ramp on 0/1/2
        codes, equal to ``genotype_diff="mismatch"``) and refused otherwise (pass the floats).
    ramp : tuple of (float, float), default=(0.04, 0.1)
        ``(t_eq, t_diff)`` of ``diff="ramp"``, fractions of each feature's range, ``0 <= t_eq < t_diff <= 1``."""


class ReliefBase(BaseWeighter):
    """The Relief family's estimator base: Manhattan ``diff`` on range-normalised data, a byte
    (genotype) matrix scored without a float copy, ``NaN`` with ``missing="diff"``, and the
    ``diff`` data of mixed discrete / continuous features (:meth:`_diff_data`)."""

    _metric = "manhattan"
    #: takes a uint8 / int8 genotype matrix without a float copy (:mod:`knnweights.engine.genotypes`)
    _byte_input = True

    def fit(self, X, y, covariates=None):
        """Learn the feature weights (see :meth:`BaseWeighter.fit`).

        ``X`` may also be a ``uint8`` / ``int8`` genotype matrix (values ``0..15``; unknown:
        a negative ``int8``, the ``uint8`` value 255 or a masked entry; with
        ``missing="diff"``): it is scored in bytes, feature block by feature block, with the
        same weights as its float copy (:mod:`knnweights.engine.genotypes`).

        Parameters
        ----------
        X : array-like, DataFrame or genotype matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.
        covariates : None
            Refused here (no p-values); see the Relief classes with ``pvalues``.

        Returns
        -------
        self : ReliefBase
            The fitted weighter.
        """
        if is_byte_input(X):
            if covariates is not None:
                raise refuse_covariates(self)
            return fit_relief_bytes(self, X, y)
        return super().fit(X, y, covariates)

    @property
    def _allow_nan(self):
        """NaN passes input validation when ``missing="diff"`` (read by BaseWeighter)."""
        return getattr(self, "missing", "error") == "diff"

    def _ramp_thresholds(self):
        """``None`` for ``diff="linear"``, else the validated ``(t_eq, t_diff)`` of ``diff="ramp"``."""
        if getattr(self, "diff", "linear") == "linear":
            return None
        if getattr(self, "genotype_diff", None) is not None:
            raise ValueError(f"{type(self).__name__}: diff='ramp' is a numeric feature's diff; genotype_diff="
                             f"{self.genotype_diff!r} names a genotype reading: choose one.")
        try:
            t_eq, t_diff = (float(t) for t in self.ramp)
        except (TypeError, ValueError):
            raise ValueError(f"ramp must be a pair (t_eq, t_diff) of floats, got {self.ramp!r}.") from None
        if not (0.0 <= t_eq < t_diff <= 1.0):
            raise ValueError(f"ramp=(t_eq, t_diff) needs 0 <= t_eq < t_diff <= 1, got {self.ramp!r}.")
        return t_eq, t_diff

    def _check_ramp(self, X):
        """The ramp ``diff``'s thresholds (``None``: linear); refuses what it is not defined for."""
        ramp = self._ramp_thresholds()
        if ramp is None:
            return None
        name = type(self).__name__
        if getattr(self, "ties", "index") != "index":
            raise NotImplementedError(f"{name}(diff='ramp') needs ties='index'.")
        if isinstance(X, GenotypeMatrix):  # the byte path's mismatch reading is this ramp (_reading)
            self._check_byte_ramp(X, ramp)
            return None
        if X.dtype.kind == "f" and bool(np.isnan(X).any()):
            raise NotImplementedError(f"{name}(diff='ramp') is not defined with missing values.")
        return ramp

    def _check_byte_ramp(self, G, ramp):
        """Refuse the ramp on genotype bytes unless it is the 0/1 mismatch on every feature.

        The byte encoding sums whole multiples of ``1 / S`` per feature; the ramp of the range-normalised
        difference of two codes is 0 or 1 only when ``t_diff`` is at most one step of the range.  Each
        feature's every pair of codes between its smallest and largest known value is scored as
        :func:`~._relief_margins.ramp_diff` scores the float copy, and must give 1 (the mismatch)."""
        st = G.stats()
        name = type(self).__name__
        if st["n_missing"].any():
            raise NotImplementedError(f"{name}(diff='ramp') is not defined with missing values.")
        lo, hi = st["vmin"].astype(np.int64), st["vmax"].astype(np.int64)
        for a, b in {(int(u), int(v)) for u, v in zip(lo, hi, strict=True) if v > u}:
            z = np.arange(a, b + 1, dtype=np.float64) / float(b - a)  # as range_normalize on the float copy
            diffs = ramp_diff(np.abs(z[:, None] - z[None, :]), *ramp)
            if not np.all(diffs[~np.eye(z.size, dtype=bool)] == 1.0):
                raise NotImplementedError(
                    f"{name}(diff='ramp', ramp={ramp}) on genotype bytes: two different codes of {a}..{b} differ "
                    "by less than 1 under this ramp, which the byte encoding does not hold (it holds the ramp where "
                    "it is the 0/1 mismatch, t_diff <= 1 / range, as the default ramp on 0/1/2 codes). Pass "
                    "X.astype(float) for this ramp, or choose genotype_diff='mismatch' or 'additive'.")

    def _ramp_data(self, X):
        """``None`` for ``diff="linear"``, else the :class:`~._relief_margins.RampDiff` of ``X`` (complete floats)
        on which the ramp's distances, margins and pair differences are computed; sets ``discrete_features_``."""
        ramp = self._check_ramp(X)
        if ramp is None:
            return None
        self.discrete_features_ = mixed_kernels.discrete_mask(X, self.discrete_features, self.discrete_limit)
        return RampDiff(X, *ramp, self.discrete_features_)

    def _weights_data(self, X, codes):
        """The ``diff`` data of the weights: the ramp's :class:`~._relief_margins.RampDiff` (``diff="ramp"``),
        else :meth:`_diff_data` (``None`` on the plain path)."""
        data = self._ramp_data(X)
        return self._diff_data(X, codes) if data is None else data

    def _reading(self, X):
        """``(discrete_features, normalize, divisor)`` of the ``diff`` on ``X``: the parameters as given, or
        those ``genotype_diff`` names (``divisor``: allele sharing's fixed 2, else ``None``)."""
        name = getattr(self, "genotype_diff", None)
        if name is None and isinstance(X, GenotypeMatrix) and getattr(self, "diff", "linear") == "ramp":
            self._check_ramp(X)  # bytes: the ramp only where it is the mismatch, so it is read as the mismatch
            return True, True, None
        if name is None:  # MulRel (no discrete_features) reads its normalize here too
            return getattr(self, "discrete_features", None), self.normalize, None
        est = type(self).__name__
        if self.discrete_features is not None or not self.normalize:
            given = "discrete_features" if self.discrete_features is not None else "normalize=False"
            raise ValueError(f"{est}(genotype_diff={name!r}) sets how every genotype differs; leave {given} out "
                             "(mismatch is discrete_features=True, additive the default diff).")
        if name == "mismatch":
            return True, True, None
        if name == "additive":
            return None, True, None
        if isinstance(X, GenotypeMatrix):
            bad = bool((X.stats()["vmax"] > 2).any())
        else:
            known = X[~np.isnan(X)] if X.dtype.kind == "f" else X
            bad = not bool(np.isin(known, (0, 1, 2)).all())
        if bad:
            raise ValueError(f"{est}(genotype_diff='allele-sharing') scores allele counts: every known value must "
                             "be 0, 1 or 2 (use 'additive' or 'mismatch' for other codes).")
        return None, False, 2

    def _normalized(self, X):
        _, normalize, divisor = self._reading(X)
        if divisor is not None:
            return X / divisor
        return range_normalize(X) if normalize else X

    def _diff_data(self, X, codes, force=False):
        """``None`` on the plain path (continuous, complete, not forced), else the
        :class:`~knnweights.engine._kernels_mixed.DiffData` of ``X``; sets ``discrete_features_``."""
        discrete, normalize, divisor = self._reading(X)
        if isinstance(X, GenotypeMatrix):  # bytes: always the diff tables, in feature blocks
            disc = X.discrete_mask(discrete, self.discrete_limit)
            # the ramp read as the mismatch: the attribute is the float path's (the features scored as discrete)
            ramp = getattr(self, "diff", "linear") == "ramp"
            self.discrete_features_ = X.discrete_mask(self.discrete_features, self.discrete_limit) if ramp else disc
            return X.diff_data(codes, disc, normalize, divisor)
        disc = mixed_kernels.discrete_mask(X, discrete, self.discrete_limit)
        self.discrete_features_ = disc
        has_nan = X.dtype.kind == "f" and bool(np.isnan(X).any())
        if not (disc.any() or has_nan or force):
            return None
        Xs = X if divisor is None else X / divisor
        M = mixed_kernels.build_mixed(Xs, codes, int(codes.max()) + 1, disc, normalize, dtype=X.dtype)
        return mixed_kernels.DiffData(M)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan
        return tags


DIFF_CONSTRAINTS = {
    "missing": [StrOptions({"error", "diff"})],
    "discrete_features": [StrOptions({"auto"}), "array-like", "boolean", None],
    "discrete_limit": [Interval(numbers.Integral, 1, None, closed="left")],
    "genotype_diff": [StrOptions({"additive", "mismatch", "allele-sharing"}), None],
}

#: the constraints of ``diff`` and ``ramp`` (validated further by ``ReliefBase._ramp_thresholds``)
RAMP_CONSTRAINTS = {"diff": [StrOptions({"linear", "ramp"})], "ramp": [tuple, list, "array-like"]}


_TARGET_ATTRIBUTES_DOC = """target_type_ : {"classes", "continuous", "survival"}
        How ``y`` was scored.
    martingale_residuals_ : ndarray of shape (n_samples,)
        Survival outcome only: ``event - H0(time)``, the martingale residuals of a Cox model
        without covariates (``H0`` the Nelson-Aalen cumulative hazard), scored as the
        continuous outcome."""


_SURVIVAL_NOTE_DOC = """A survival outcome (a structured ``y`` with fields ``event`` and ``time``) is scored as the
    continuous outcome of its null Cox model's martingale residuals (Therneau, Grambsch & Fleming,
    "Martingale-based residuals for survival models", Biometrika 77(1), 1990): the residual is a
    function of the outcomes only, permuted with them, so the continuous form and its p-values apply
    unchanged; with ``covariates`` the p-values' reference redraws the survival outcome from a Cox
    model on them (see :mod:`knnweights.weighters._relief_survival`)."""


def fill_relief_docstring(estimator_class):
    """Class decorator: the shared parameter docs in place of ``{diff_params}``, ``{target_params}``,
    ``{n_instances}``, ``{ramp_params}`` and ``{target_type}``, the attributes of ``{target_attributes}`` and
    the note ``{survival_note}``, in the docstring of ``estimator_class``.

    Parameters
    ----------
    estimator_class : type
        A Relief-family estimator class.

    Returns
    -------
    estimator_class : type
        The same class, its docstring filled in.
    """
    if estimator_class.__doc__ is None:  # docstrings stripped (python -OO)
        return estimator_class
    estimator_class.__doc__ = estimator_class.__doc__.replace("    {diff_params}", "    " + _DIFF_PARAMS_DOC).replace(
        "    {target_params}", "    " + TARGET_DOC + "\n    " + PVALUES_DOC).replace(
        "    {n_instances}", "    " + _N_INSTANCES_DOC).replace("    {target_type}", "    " + TARGET_DOC).replace(
        "    {ramp_params}", "    " + _RAMP_PARAMS_DOC).replace(
        "    {target_attributes}", "    " + _TARGET_ATTRIBUTES_DOC).replace(
        "    {survival_note}", "    " + _SURVIVAL_NOTE_DOC)
    return estimator_class


TARGET_CONSTRAINTS = {"target_type": [StrOptions({"auto", "classes", "continuous", "survival"})],
                       "pvalues": ["boolean", StrOptions({"mantel", "pseudo-t"})],
                       "padj": [StrOptions({"bh", "bonferroni", "holm", "by"})],
                       "pvalue_null": [StrOptions({"outcome", "feature"})],
                       "covariate_reference": [StrOptions({"redraw", "moments"})]}
