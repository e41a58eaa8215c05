"""Stand-ins for WEKA classifiers the papers compare with, written from WEKA's documented behaviour."""

import numpy as np
from scipy.special import log_ndtr
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..classifiers import KNNClassifier
from ..utils import fill_docstring

__all__ = ["WekaNaiveBayes", "weka_ibk", "weka_smo"]

#: the samples as :class:`WekaNaiveBayes`'s methods take them: ``{X}`` in their docstrings
_nb_doc = fill_docstring(X="""X : array-like of shape (n_samples, n_features)
    Numeric attributes.""")


def weka_ibk(k):
    """WEKA IBk with its defaults: Euclidean distance on attributes scaled by their training ranges.

    Parameters
    ----------
    k : int
        Neighbours of the vote.

    Returns
    -------
    Pipeline
    """
    return Pipeline([("normalise", MinMaxScaler()), ("knn", KNNClassifier(k))])


def weka_smo(kernel=None, degree=3):
    """WEKA SMO with its defaults: attributes scaled to [0, 1] on the training part (SMO's ``-N 0``), C = 1,
    PolyKernel ``<x, y>^p`` (no lower-order terms), RBFKernel gamma = 0.01.

    Parameters
    ----------
    kernel : {"poly", "rbf"}, optional
        The kernel; ``None``: scikit-learn's default, to be set by a grid.
    degree : int, default=3
        The exponent ``p`` of the polynomial kernel.

    Returns
    -------
    Pipeline
    """
    if kernel is None:
        svc = SVC(C=1.0)
    elif kernel == "poly":
        svc = SVC(C=1.0, kernel="poly", degree=degree, gamma=1.0, coef0=0.0)
    else:
        svc = SVC(C=1.0, kernel="rbf", gamma=0.01)
    return Pipeline([("normalise", MinMaxScaler()), ("svc", svc)])


def _precision(X):
    """WEKA's precision of each numeric attribute: the mean gap between its sorted distinct values, i.e. its
    range over (distinct values - 1); 0.01 for a constant attribute."""
    S = np.sort(X, axis=0)
    gaps = (np.diff(S, axis=0) != 0).sum(axis=0)
    return np.where(gaps > 0, (S[-1] - S[0]) / np.maximum(gaps, 1), 0.01)


def _log_interval(x, mean, sd, prec):
    """log P(x - prec/2 < N(mean, sd^2) < x + prec/2), computed stably in the tail."""
    hi = (x - mean + prec / 2.0) / sd
    lo = (x - mean - prec / 2.0) / sd
    # P = Phi(hi) - Phi(lo); on the upper tail use the survival functions (Phi(-lo) - Phi(-hi)), same value
    upper = lo > 0
    a = np.where(upper, -lo, hi)
    b = np.where(upper, -hi, lo)
    la, lb = log_ndtr(a), log_ndtr(b)
    # a value so far out that both ends underflow has probability 0 (log -inf), never NaN
    gap = np.where(np.isfinite(la), np.minimum(lb - la, 0.0), -np.inf)
    with np.errstate(divide="ignore"):
        return la + np.log1p(-np.exp(gap))


class WekaNaiveBayes(ClassifierMixin, BaseEstimator):
    """Naive Bayes with WEKA's ``NaiveBayes`` defaults for numeric attributes.

    What differs from :class:`sklearn.naive_bayes.GaussianNB` (WEKA 3, ``NaiveBayes`` and
    ``NormalEstimator``):

    * every attribute has a *precision*, the mean gap between its distinct training values;
      values are rounded to it, and a value's likelihood is the normal probability of the
      interval of one precision around it, not the density;
    * a class's standard deviation (divided by n) is at least precision / 6; when the
      attribute is constant in the class it is exactly that (GaussianNB adds one small
      variance to every attribute, so a feature that is almost constant in one class
      dominates its votes);
    * class priors with Laplace's correction ((count + 1) / (n + classes)).

    The products of probabilities are sums of logarithms here (WEKA multiplies and rescales against
    underflow: the same decisions except where its doubles reach zero in a far tail). Nominal
    attributes (WEKA's discrete estimators) are not modelled: the bundled data are numeric.
    """

    _algorithm_version = 1

    @_nb_doc
    def fit(self, X, y):
        """Estimate the precisions, the class priors and each class's normal per attribute.

        Parameters
        ----------
        {X}
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        k, d = self.classes_.size, X.shape[1]
        self.precision_ = _precision(X)
        Xr = np.rint(X / self.precision_) * self.precision_
        counts = np.bincount(yi, minlength=k).astype(float)
        self.class_log_prior_ = np.log((counts + 1.0) / (counts.sum() + k))
        self.theta_ = np.zeros((k, d))
        self.sigma_ = np.tile(self.precision_ / 6.0, (k, 1))
        for c in range(k):
            Z = Xr[yi == c]
            if Z.shape[0] == 0:
                continue
            mean = Z.mean(axis=0)
            sd = np.sqrt(np.abs((Z * Z).sum(axis=0) - mean * Z.sum(axis=0)) / Z.shape[0])
            self.theta_[c] = mean
            self.sigma_[c] = np.where(sd > 1e-10, np.maximum(self.precision_ / 6.0, sd), self.precision_ / 6.0)
        return self

    @_nb_doc
    def predict_log_joint(self, X):
        """``log P(class) + sum_j log P(x_j | class)`` per sample and class.

        Parameters
        ----------
        {X}

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xr = np.rint(X / self.precision_) * self.precision_
        out = np.empty((X.shape[0], self.classes_.size))
        for c in range(self.classes_.size):
            out[:, c] = self.class_log_prior_[c] + _log_interval(Xr, self.theta_[c], self.sigma_[c],
                                                                 self.precision_).sum(axis=1)
        return out

    @_nb_doc
    def predict(self, X):
        """The class of largest joint probability.

        Parameters
        ----------
        {X}

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        joint = self.predict_log_joint(X)  # checks that the model is fitted first
        return self.classes_[np.argmax(joint, axis=1)]
