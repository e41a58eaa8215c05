"""The papers' datasets, bundled with the package (no network), and generators.

Every dataset of ``list_datasets()`` ships as a gzip CSV inside the package (one row
per sample, a header, ``label`` last).  ``DATASETS[name]`` records its source and the
sizes the papers state.  Generators: :func:`make_spiral` (Fermat's spiral of
LH-RELIEF Fig. 1) and :func:`add_irrelevant_features`.
"""

import gzip
import hashlib
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_random_state

__all__ = ["DATASETS", "list_datasets", "load", "make_spiral", "add_irrelevant_features", "dataset_info"]

# name: (file, n, d, classes, source, papers)
DATASETS = {
    "colon_alon": ("colon_alon.csv.gz", 62, 2000, 2, "Alon et al. 1999, PNAS 96 (ramhiser/datamicroarray alon.RData)",
                   "I-M4E T3/T4 Colon 40 vs 22; SQP-FW T2 62x2000; EFW 62x2000"),
    "prostate_singh": ("prostate_singh.csv.gz", 136, 12600, 2,
                       "Singh et al. 2002, Cancer Cell 1 (Kent Ridge train + test ARFF)",
                       "I-M4E T3/T4 Prostate 59 vs 77; EFW 136x12600; SQP-FW T2 uses the first 102 rows"),
    "kidney_sueltmann": ("kidney_sueltmann.csv.gz", 74, 4224, 3, "Sueltmann et al., Bioconductor kidpack",
                         "SQP-FW T2 Kidney 74x4224, 3 classes"),
    "breast_vantveer": ("breast_vantveer.csv.gz", 78, 24481, 2,
                        "van 't Veer et al. 2002, Nature 415 (Bioconductor cancerdata VEER); 36,458 NaN in the source",
                        "I-M4E T3/T4 Breast 44 vs 34"),
    "leukemia_golub": ("leukemia_golub.csv.gz", 72, 7129, 2, "Golub et al. 1999, Science 286 (scikit-feature ALLAML)",
                       "SQP-FW T2 72x7129"),
    "arcene": ("arcene.csv.gz", 200, 10000, 2, "NIPS 2003 feature selection challenge (scikit-feature arcene)",
               "EFW 200x10000"),
    "spambase": ("spambase.csv.gz", 4601, 57, 2, "UCI Spambase", "SQP-FW T1 4601x57; LH-RELIEF T2"),
    "page_blocks": ("page_blocks.csv.gz", 5473, 10, 5, "UCI Page Blocks", "SQP-FW T1 5473x10; LH-RELIEF T2"),
    "waveform": ("waveform.csv.gz", 5000, 21, 3, "UCI Waveform (Version 1)", "SQP-FW T1 5000x21; EFW 5000x21"),
    "ionosphere": ("ionosphere.csv.gz", 351, 34, 2, "UCI Ionosphere",
                   "I-M4E T5 IONO; SQP-FW T1 351x33 (constant f1 dropped); EFW 351x34"),
    "sonar": ("sonar.csv.gz", 208, 60, 2, "UCI Connectionist Bench (Sonar)", "SQP-FW T1; EFW; LH-RELIEF T2: 208x60"),
    "pima_diabetes": ("pima_diabetes.csv.gz", 768, 8, 2, "UCI Pima Indians Diabetes (NIDDK)",
                      "EFW 768x8; LH-RELIEF T2 + Fig. 2b"),
    "breast_cancer_wisconsin_original": ("breast_cancer_wisconsin_original.csv.gz", 699, 9, 2,
                                         "UCI Breast Cancer Wisconsin (Original); 16 missing values",
                                         "EFW Wisconsin 699x10 (10 includes the id)"),
    "bupa_liver": ("bupa_liver.csv.gz", 345, 6, 2, "UCI Liver Disorders (BUPA)", "LH-RELIEF T2 + Fig. 2a"),
    "tae": ("tae.csv.gz", 151, 5, 3, "UCI Teaching Assistant Evaluation", "LH-RELIEF T2 Teach 151x5"),
    "wpbc": ("wpbc.csv.gz", 198, 33, 2, "UCI Wisconsin Prognostic Breast Cancer",
             "I-M4E T5 WPBC; LH-RELIEF T2 Cancer 198x32"),
    "haberman": ("haberman.csv.gz", 306, 3, 2, "UCI Haberman's Survival", "I-M4E T5 HS; LH-RELIEF T2 306x3"),
    "statlog_heart": ("statlog_heart.csv.gz", 270, 13, 2, "UCI Statlog (Heart)", "I-M4E T5 SH"),
    "vertebral_column": ("vertebral_column.csv.gz", 310, 6, 2, "UCI Vertebral Column (2-class file)", "I-M4E T5 VC"),
    "lymphography": ("lymphography.csv.gz", 148, 18, 4, "UCI Lymphography", "I-M4E T5 LYM (two largest classes)"),
    "parkinsons": ("parkinsons.csv.gz", 195, 22, 2, "UCI Parkinsons (Little et al. 2007)",
                   "I-M4E T5 PARK; SQP-FW T1 195x22"),
    "hayes_roth": ("hayes_roth.csv.gz", 160, 4, 3, "UCI Hayes-Roth (train + test)", "I-M4E T5 HR (two largest)"),
    "ecoli": ("ecoli.csv.gz", 336, 7, 8, "UCI Ecoli", "I-M4E T5 EC (cp vs im)"),
    "glass": ("glass.csv.gz", 214, 9, 6, "UCI Glass Identification", "I-M4E T5 GI (two largest)"),
    "wine_quality": ("wine_quality.csv.gz", 6497, 11, 7, "UCI Wine Quality, red + white",
                     "SQP-FW T1 6497x11; I-M4E T5 WQ (two largest)"),
    "image_segmentation": ("image_segmentation.csv.gz", 2310, 19, 7, "UCI Image Segmentation",
                           "SQP-FW T1 2310x18 (drop constant region-pixel-count)"),
    "pendigits": ("pendigits.csv.gz", 10992, 16, 10, "UCI Pen-Based Digits (train + test)", "SQP-FW T1 10992x16"),
}

# the dataset keys used by the paper tables (../papers/tables) -> bundled name
ALIASES = {
    "colon_alon1999": "colon_alon",
    "prostate_singh2002_136": "prostate_singh",
    "prostate_singh2002_102": "prostate_singh",
    "breast_vantveer2002": "breast_vantveer",
    "leukemia_golub1999": "leukemia_golub",
    "waveform_v1": "waveform",
}


def list_datasets():
    """Names of the bundled datasets, sorted.

    Returns
    -------
    names : list of str
        Every name :func:`load` accepts (besides the aliases of the paper tables).
    """
    return sorted(DATASETS)


def dataset_info(name):
    """Source and paper sizes of a bundled dataset, as a dict.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`, or an alias that :func:`load` accepts.

    Returns
    -------
    info : dict
        ``name`` (the resolved name), ``file``, ``n`` (samples), ``d`` (features),
        ``classes``, ``source`` and ``papers`` (the papers that use the dataset).
    """
    key = _resolve(name)
    f, n, d, c, src, papers = DATASETS[key]
    return {"name": key, "file": f, "n": n, "d": d, "classes": c, "source": src, "papers": papers}


def _resolve(name):
    key = ALIASES.get(name, name)
    if key not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; bundled: {', '.join(list_datasets())}")
    return key


def _read(fname):
    with resources.files("knnweights.data").joinpath(fname).open("rb") as fh:
        with gzip.open(fh, "rt") as text:
            header = text.readline().rstrip("\n").split(",")
            rows = [line.rstrip("\n").split(",") for line in text if line.strip()]
    arr = np.array(rows, dtype=object)
    Xs = arr[:, :-1]
    X = np.where(Xs == "", "nan", Xs).astype(np.float64)
    labels = arr[:, -1].astype(str)
    try:
        as_num = labels.astype(np.float64)
        labels = as_num.astype(np.int64) if np.all(as_num == np.round(as_num)) else as_num
    except ValueError:
        pass
    return X, labels, header[:-1]


def _content_digest(name):
    """SHA-256 (hex) of a bundled dataset's CSV text: its identity, read before any parsing or arithmetic."""
    h = hashlib.sha256()
    with resources.files("knnweights.data").joinpath(DATASETS[_resolve(name)][0]).open("rb") as fh:
        with gzip.open(fh, "rb") as raw:
            for block in iter(lambda: raw.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def load(name, return_X_y=False, missing="keep", as_frame=False):
    """Load a bundled dataset.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` (the paper tables' keys such as
        ``"colon_alon1999"`` are accepted too).
    return_X_y : bool
        Return ``(X, y)`` instead of a Bunch.
    missing : {"keep", "median", "drop_features"}
        Missing values (only ``breast_vantveer`` and
        ``breast_cancer_wisconsin_original`` have any): keep them as NaN (the
        weighters then refuse the data with the column named), impute the feature
        median, or drop every feature with a missing value.
    as_frame : bool, default=False
        Return the data as a pandas DataFrame with the feature names as columns
        and the target as a Series named ``"label"`` (as scikit-learn's loaders);
        the Bunch then also has ``frame`` (the features and ``label`` in one
        DataFrame).

    Returns
    -------
    data : Bunch or tuple
        A Bunch with ``data``, ``target``, ``feature_names``, ``name``, ``DESCR``
        (source and paper sizes) and, with ``as_frame``, ``frame``; with
        ``return_X_y``, the tuple ``(X, y)`` instead (a DataFrame and a Series with
        ``as_frame``).

    Examples
    --------
    >>> X, y = load("haberman", return_X_y=True, as_frame=True)
    >>> X.shape, list(X.columns), y.name
    ((306, 3), ['age', 'year_of_operation', 'positive_axillary_nodes'], 'label')
    """
    key = _resolve(name)
    if missing not in ("keep", "median", "drop_features"):
        raise ValueError(f"missing must be 'keep', 'median' or 'drop_features', got {missing!r}")
    X, y, names = _read(DATASETS[key][0])
    nan = np.isnan(X)
    if nan.any() and missing == "median":
        med = np.nanmedian(np.where(nan.all(axis=0), 0.0, X), axis=0)
        X = np.where(nan, med, X)
    elif nan.any() and missing == "drop_features":
        keep = ~nan.any(axis=0)
        X, names = X[:, keep], [nm for nm, k in zip(names, keep, strict=True) if k]
    frame = None
    if as_frame:
        X = pd.DataFrame(X, columns=list(names))
        y = pd.Series(y, name="label")
        frame = pd.concat([X, y], axis=1)
    if return_X_y:
        return X, y
    info = dataset_info(key)
    bunch = Bunch(data=X, target=y, feature_names=np.array(names, dtype=object), name=key,
                  DESCR=f"{key}: {X.shape[0]} x {X.shape[1]}, source: {info['source']}; papers: {info['papers']}")
    if as_frame:
        bunch.frame = frame
    return bunch


def make_spiral(n_per_class=200, turns=2.0, noise=0.02, n_irrelevant=0, random_state=None):
    """Fermat's spiral, two classes (LH-RELIEF Fig. 1a).

    Class 0 lies on ``r = sqrt(t)``, class 1 on the opposite arm ``r = -sqrt(t)``, with
    ``t`` uniform in ``[0, 2 pi turns]`` rescaled so ``r <= 1``; Gaussian noise of
    standard deviation ``noise`` is added.  The label is set by the first two features
    only; ``n_irrelevant`` standard-normal features are appended (the paper does not
    state its spiral parameters; these are ours).

    Parameters
    ----------
    n_per_class : int, default=200
        Samples on each arm.
    turns : float, default=2.0
        Turns of each arm; more turns pack the arms closer together, which makes the
        classes harder to separate.
    noise : float, default=0.02
        Standard deviation of the Gaussian noise added to both relevant features.
    n_irrelevant : int, default=0
        Standard-normal features appended after the two relevant ones.
    random_state : int, RandomState instance or None, default=None
        Seed of the positions, the noise and the irrelevant features.

    Returns
    -------
    X : ndarray of shape (2 * n_per_class, 2 + n_irrelevant)
        Samples; columns 0 and 1 are the spiral, the rest irrelevant.
    y : ndarray of shape (2 * n_per_class,)
        Labels 0 and 1 (the two arms).
    """
    rng = check_random_state(random_state)
    t = rng.uniform(0.0, 2 * np.pi * turns, size=2 * n_per_class)
    r = np.sqrt(t / (2 * np.pi * turns))
    sign = np.repeat([1.0, -1.0], n_per_class)
    X = np.column_stack([sign * r * np.cos(t), sign * r * np.sin(t)])
    X += noise * rng.standard_normal(X.shape)
    y = np.repeat([0, 1], n_per_class)
    if n_irrelevant:
        X = add_irrelevant_features(X, n_irrelevant, random_state=rng)
    return X, y


def add_irrelevant_features(X, n, random_state=None):
    """Append ``n`` i.i.d. standard-normal features to ``X`` (robustness experiments).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data to extend; its columns are kept first, unchanged.
    n : int
        Number of irrelevant features to append (``>= 0``).
    random_state : int, RandomState instance or None, default=None
        Seed of the appended features.

    Returns
    -------
    X_new : ndarray of shape (n_samples, n_features + n)
        ``X`` followed by the irrelevant features.
    """
    X = np.asarray(X, dtype=np.float64)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = check_random_state(random_state)
    return np.hstack([X, rng.standard_normal((X.shape[0], int(n)))])
