"""How a dataset is split, and the seeds every split and cell derive from.

* :class:`RepeatedCV` -- repeated stratified k-fold CV (I-M4E: 10 x 10-fold;
  LH-RELIEF: 20 runs; EFW: 5-fold);
* :class:`RepeatedHoldout` -- repeated random train / validation / test splits
  (SQP-FW: thirds, 10 repeats, hyper-parameters picked on the validation third; its
  microarray table: train / test 2:1 with internal CV).

Every split depends only on ``(random_state, dataset, repeat)``, so all methods see the
same folds (the paired tests need that).  Seeds come from :func:`derive_seed`: SHA-256 of
the keys, then :class:`numpy.random.SeedSequence`, never Python's ``hash``, so they are
the same in every process and on every machine.
"""

import hashlib
import math
import numbers

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from ..utils import fill_docstring

__all__ = ["RepeatedCV", "RepeatedHoldout", "derive_seed", "root_seed"]

_MAX_SEED = 2**31 - 1


def _key_words(key):
    digest = hashlib.sha256(repr(key).encode("utf-8")).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def derive_seed(random_state, *keys):
    """A seed in ``[0, 2**31 - 1)`` determined by ``random_state`` and the ``keys``.

    ``SeedSequence(entropy=[random_state, *sha256_words(keys)])``: stable across
    processes, machines and Python versions (unlike ``hash()``), and different keys give
    independent streams.

    Parameters
    ----------
    random_state : int
        Root seed (non-negative) of the whole experiment; changing it changes every
        derived seed.
    *keys : str or int
        E.g. ``("cell", method, dataset, repeat, fold)``.

    Returns
    -------
    seed : int
        The derived seed, usable as any estimator's ``random_state``.

    Examples
    --------
    >>> derive_seed(0, "cell", "ReliefF", "sonar", 0, 3) == derive_seed(0, "cell", "ReliefF", "sonar", 0, 3)
    True
    """
    if not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative int here; got {random_state!r}.")
    words = [] if not keys else _key_words(tuple(int(k) if isinstance(k, numbers.Integral) else str(k) for k in keys))
    ss = np.random.SeedSequence(entropy=[int(random_state), *words])
    return int(ss.generate_state(1, dtype=np.uint32)[0] % _MAX_SEED)


def root_seed(random_state):
    """The int root seed of a run from ``random_state``.

    Parameters
    ----------
    random_state : int, RandomState, Generator or None
        An int is taken as it is; a generator gives one draw; ``None`` a fresh seed.

    Returns
    -------
    seed : int
        The root every split and cell seed is derived from.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0] % _MAX_SEED)
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(_MAX_SEED))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_MAX_SEED))
    raise ValueError(f"random_state must be None, an int, a RandomState or a Generator; got {random_state!r}.")


#: the Parameters and Yields of every protocol's ``split``: ``{split}`` in its docstring
_split_doc = fill_docstring(split="""Parameters
----------
y : array-like of shape (n_samples,)
    Class labels (the stratification uses them; only their number matters
    otherwise).
random_state : int
    Root seed of the run (non-negative); each repeat's seed is derived from it,
    ``dataset`` and the repeat.
dataset : str
    Name of the dataset, so that different datasets get independent splits
    under the same root seed.

Yields
------
repeat : int
    Repeat number, from 0.
fold : int
    Fold number within the repeat (always 0 where a repeat is one split).
train : ndarray of int
    Indices of the training part.
val : ndarray of int or None
    Indices of the validation part, sorted; ``None`` without one (tuning then uses
    internal CV).
test : ndarray of int
    Indices of the test part.""")


class RepeatedCV:
    """Repeated (stratified) k-fold cross-validation.

    Parameters
    ----------
    n_splits : int, default=10
        Folds per repeat; every sample is tested once per repeat.
    n_repeats : int, default=10
        Repeats, each with new shuffled folds; more repeats make the mean accuracy less
        dependent on one partition.
    stratified : bool, default=True
        Stratified folds (:class:`~sklearn.model_selection.StratifiedKFold`, shuffled
        with a seed per repeat).
    """

    def __init__(self, n_splits=10, n_repeats=10, stratified=True):
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.stratified = stratified

    def __repr__(self):
        return f"RepeatedCV(n_splits={self.n_splits}, n_repeats={self.n_repeats}, stratified={self.stratified})"

    @_split_doc
    def split(self, y, random_state, dataset):
        """Yield ``(repeat, fold, train, val, test)`` index arrays (``val`` is ``None``).

        {split}
        """
        y = np.asarray(y)
        for r in range(self.n_repeats):
            seed = derive_seed(random_state, "split", dataset, r)
            cls = StratifiedKFold if self.stratified else KFold
            cv = cls(n_splits=self.n_splits, shuffle=True, random_state=seed)
            for f, (tr, te) in enumerate(cv.split(np.zeros((y.shape[0], 1)), y)):
                yield r, f, tr, None, te


class RepeatedHoldout:
    """Repeated random train / validation / test splits.

    Parameters
    ----------
    n_repeats : int, default=10
        Independent random splits.
    train_size : float, default=1/3
        Share of the samples in the training part.
    val_size : float, default=1/3
        Share in the validation part (0: none; tuning then uses internal CV).
    test_size : float, default=1/3
        Share in the test part.  The three shares must sum to 1 (SQP-FW Table 1: equal
        thirds; its Table 2: train / test 2:1 with ``val_size=0``).
    stratified : bool, default=True
        Keep the class proportions in every part
        (:class:`~sklearn.model_selection.StratifiedShuffleSplit`).

    Notes
    -----
    With a validation part, :class:`~knnweights.evaluation.Tuned` methods pick their
    hyper-parameters on it and the chosen model (fitted on the training part only) is
    tested; untuned methods are fitted on the training part.  Without one, tuning uses
    internal CV on the training part.
    """

    def __init__(self, n_repeats=10, train_size=1 / 3, val_size=1 / 3, test_size=1 / 3, stratified=True):
        self.n_repeats = n_repeats
        self.train_size = train_size
        self.val_size = val_size
        self.test_size = test_size
        self.stratified = stratified

    def __repr__(self):
        return (f"RepeatedHoldout(n_repeats={self.n_repeats}, train_size={self.train_size!r}, "
                f"val_size={self.val_size!r}, test_size={self.test_size!r}, stratified={self.stratified})")

    @_split_doc
    def split(self, y, random_state, dataset):
        """Yield ``(repeat, 0, train, val, test)`` index arrays (``val`` ``None`` without a validation part).

        {split}
        """
        total = self.train_size + self.val_size + self.test_size
        if not math.isclose(total, 1.0, rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"train_size + val_size + test_size must be 1; got {total}.")
        y = np.asarray(y)
        n = y.shape[0]
        Xd = np.zeros((n, 1))
        cls = StratifiedShuffleSplit if self.stratified else ShuffleSplit
        for r in range(self.n_repeats):
            seed = derive_seed(random_state, "split", dataset, r)
            n_test = int(round(self.test_size * n))
            rest, test = next(cls(n_splits=1, test_size=n_test, random_state=seed).split(Xd, y))
            rest.sort()
            test.sort()
            if self.val_size > 0:
                n_val = int(round(self.val_size * n))
                seed2 = derive_seed(random_state, "split-val", dataset, r)
                tr, va = next(cls(n_splits=1, test_size=n_val, random_state=seed2).split(Xd[rest], y[rest]))
                yield r, 0, np.sort(rest[tr]), np.sort(rest[va]), test
            else:
                yield r, 0, rest, None, test
