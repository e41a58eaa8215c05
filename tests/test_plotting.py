"""Each plotting function renders a PNG with labelled axes that shows the given numbers."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402

from knnweights.evaluation import HalvingElimination, win_tie_loss_table  # noqa: E402
from knnweights.plotting import plot_accuracy_boxplots, plot_elimination_curves, plot_win_tie_loss  # noqa: E402


def _rows():
    rng = np.random.default_rng(0)
    rows = []
    for d, base in [("sonar", 80.0), ("pima", 70.0)]:
        for m, shift in [("I-M4E", 3.0), ("ReliefF", 0.0), ("Simba", -4.0)]:
            for i in range(20):
                rows.append({"method": m, "dataset": d, "repeat": i // 10, "fold": i % 10,
                             "accuracy": base + shift + rng.normal(0, 2)})
    return rows


def _check_png(path):
    img = imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    flat = img[..., :3].reshape(-1, 3)
    assert np.unique(np.round(flat, 2), axis=0).shape[0] > 10  # not a blank image


def _labelled(ax):
    assert ax.get_xlabel() and ax.get_ylabel()


def test_accuracy_boxplots(tmp_path):
    rows = _rows()
    ax = plot_accuracy_boxplots(rows, title="10 x 10-fold CV", path=tmp_path / "box.png")
    _check_png(tmp_path / "box.png")
    _labelled(ax)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["sonar", "pima"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["I-M4E", "ReliefF", "Simba"]
    one = plot_accuracy_boxplots(rows, dataset="pima", path=tmp_path / "box1.png")
    _check_png(tmp_path / "box1.png")
    _labelled(one)
    assert [t.get_text() for t in one.get_xticklabels()] == ["I-M4E", "ReliefF", "Simba"]
    # the median lines sit at the data's medians
    medians = sorted(float(line.get_ydata()[0]) for line in one.lines if len(line.get_xdata()) == 2
                     and line.get_gid() == "median")
    expect = sorted(np.median([r["accuracy"] for r in rows if r["dataset"] == "pima" and r["method"] == m])
                    for m in ("I-M4E", "ReliefF", "Simba"))
    np.testing.assert_allclose(medians, expect, rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError, match="no rows"):
        plot_accuracy_boxplots(rows, dataset="nope")


def test_win_tie_loss_bars(tmp_path):
    table = win_tie_loss_table(_rows(), "I-M4E", test="ttest")
    ax = plot_win_tie_loss(table, reference="I-M4E", path=tmp_path / "wtl.png")
    _check_png(tmp_path / "wtl.png")
    _labelled(ax)
    assert "I-M4E" in ax.get_ylabel()
    widths = [p.get_width() for p in ax.patches]
    n = len(table)
    assert widths[:n] == [r["wins"] for r in table]
    assert widths[n : 2 * n] == [r["ties"] for r in table]
    assert widths[2 * n :] == [r["losses"] for r in table]
    assert {t.get_text() for t in ax.texts} == {r["wtl"] for r in table} == {"0/0/2"}


def test_elimination_curves(tmp_path):
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 20))
    X[:, :2] += 2.0 * y[:, None]
    from sklearn.neighbors import KNeighborsClassifier

    from knnweights import ReliefF

    h = HalvingElimination(ReliefF(n_neighbors=5), KNeighborsClassifier(1), min_features=3, cv=2,
                           random_state=0).fit(X, y)
    manual = {"n_features": [1, 2, 5, 10, 40], "accuracy": [70.0, 90.0, 85.0, 80.0, 65.0], "std": [3.0] * 5}
    ax = plot_elimination_curves({"ReliefF halving": h, "manual": manual}, title="elimination",
                                 path=tmp_path / "elim.png")
    _check_png(tmp_path / "elim.png")
    _labelled(ax)
    assert ax.get_xscale() == "log"
    line = ax.lines[0]
    assert np.array_equal(line.get_xdata(), np.sort(h.counts_))
    np.testing.assert_allclose(line.get_ydata(), 100 * h.cv_scores_[np.argsort(h.counts_)], rtol=1e-5, atol=1e-8)
    star = ax.lines[1]  # the chosen count
    assert star.get_xdata()[0] == h.n_features_selected_
    np.testing.assert_allclose(ax.lines[2].get_ydata(), manual["accuracy"], rtol=1e-5, atol=1e-8)
