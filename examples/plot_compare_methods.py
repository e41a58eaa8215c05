"""
Comparing weighters on one dataset
==================================

Every weighter is a scikit-learn transformer whose ``transform`` rescales the features so
that a plain :class:`~sklearn.neighbors.KNeighborsClassifier` with the weighter's metric is
the weighted kNN. :func:`knnweights.evaluation.weighted_knn` builds that pipeline, so
weighters can be compared by cross-validation like any other model. Here: the Ionosphere
data (351 radar returns, 34 features), five weighters, accuracy and fit time.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from knnweights import IM4E, IRelief, NCADiagonal, ReliefF, Simba
from knnweights.datasets import load
from knnweights.evaluation import weighted_knn

X, y = load("ionosphere", return_X_y=True)
X = StandardScaler().fit_transform(X)
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)

results = {"plain kNN": cross_val_score(KNeighborsClassifier(n_neighbors=5), X, y, cv=cv)}
fit_time = {}
for weighter in [ReliefF(n_neighbors=10), IRelief(), Simba(random_state=0), IM4E(random_state=0),
                 NCADiagonal(random_state=0)]:
    name = type(weighter).__name__
    results[name] = cross_val_score(weighted_knn(weighter, n_neighbors=5), X, y, cv=cv)
    t0 = time.perf_counter()
    weighter.fit(X, y)
    fit_time[name] = time.perf_counter() - t0
    print(f"{name:12s} accuracy {results[name].mean():.3f} +- {results[name].std():.3f}, "
          f"one fit {fit_time[name]:.3f} s")

# %%
# Accuracy per fold
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.boxplot(list(results.values()), tick_labels=list(results))
ax.set_ylabel("5-fold CV accuracy")
ax.tick_params(axis="x", rotation=30)
fig.tight_layout()

# %%
# Which features each method keeps
fig, ax = plt.subplots(figsize=(7, 3))
for weighter in [ReliefF(n_neighbors=10), IRelief(), NCADiagonal(random_state=0)]:
    w = weighter.fit(X, y).feature_importances_
    ax.plot(np.arange(1, X.shape[1] + 1), w / w.max(), marker="o", ms=3, lw=1, label=type(weighter).__name__)
ax.set_xlabel("feature")
ax.set_ylabel("weight / max weight")
ax.legend()
fig.tight_layout()
