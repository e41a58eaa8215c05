"""The engine of ``knnweights reproduce``: table specs, running them, comparing with the papers.

A :class:`TableSpec` names the paper's CSV (bundled under
``knnweights/data/paper_tables``), its datasets (:class:`DatasetSpec`) and its methods
(:class:`MethodSpec`).  :func:`run_table` evaluates every available (method, dataset)
cell with :func:`knnweights.evaluation.run_grid` (resumable through a
:class:`~knnweights.evaluation.ResultStore` in the output folder) and lays out our mean
and standard deviation beside the paper's number.  A method that raises
:class:`NotImplementedError`, a dataset that is not bundled, or a WEKA classifier with no
faithful scikit-learn counterpart stays in the table with its reason.
"""

import csv
import io
import math
import os
import time
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ..datasets import ALIASES, list_datasets
from ..evaluation import RepeatedHoldout, ResultStore, paired_ttest, run_grid, win_tie_loss
from ..utils import fill_docstring, progress_bar
from ._data import reduction
from ._versions import version_key

__all__ = ["Config", "DatasetSpec", "MethodSpec", "TableSpec", "TableResult", "read_paper_table", "run_table",
           "within_tolerance", "miss_reason", "miss_reasons", "holdout_two_to_one", "MISS_KINDS"]


@dataclass
class Config:
    """How much a ``knnweights reproduce`` run computes, where it writes, how it reports.

    Parameters
    ----------
    mode : {"tiny", "quick", "full"}, default="quick"
        The protocol: a smoke test, a reduced one, or the papers'.
    out : str, default="knnweights-results"
        Output folder (CSV, PNG, ``report.md``, the resumable ``store/``).
    n_jobs : int, default=-1
        Parallel cells (joblib; -1: every core); the results do not depend on it (seeds are per cell).
    progress : bool, optional
        A progress bar per table; ``None``: when there is a ``log``.
    datasets : tuple of str, optional
        Restrict to these dataset keys / labels (``None``: all).
    methods : tuple of str, optional
        Restrict the tables to these method labels, as the tables print them (``None``: all).
    random_state : int, default=0
        The root seed of every cell.
    log : callable, optional
        Receives the status lines (``None``: silent).
    compute : bool, default=True
        ``False``: report from the store only (a partly finished run), compute nothing.
    revalidate : int, default=0
        Stale cells per (method, dataset) recomputed to vouch for the rest (``run_grid``'s ``revalidate``).
    figures : tuple of str, optional
        Compute only the figures whose store names start with one of these (``None``: all).
    """

    mode: str = "quick"
    out: str = "knnweights-results"
    n_jobs: int = -1
    progress: bool = None
    datasets: tuple = None
    methods: tuple = None
    random_state: int = 0
    log: object = None
    compute: bool = True
    revalidate: int = 0
    figures: tuple = None

    def computes(self, name):
        """Whether the figure (or cached value) stored as ``name`` is computed now (else read from the store).

        Parameters
        ----------
        name : str
            The figure's store name.

        Returns
        -------
        bool
        """
        return self.compute and (self.figures is None or any(name.startswith(f) for f in self.figures))

    def pick(self, tiny, quick, full):
        """The value for this run's mode.

        Parameters
        ----------
        tiny : object
            The value in ``--tiny``.
        quick : object
            The value in ``--quick``.
        full : object
            The value in ``--full``.

        Returns
        -------
        object
        """
        return {"tiny": tiny, "quick": quick, "full": full}[self.mode]

    def say(self, msg):
        """Pass a status line to ``log`` (nothing when there is none).

        Parameters
        ----------
        msg : str
            The line.
        """
        if self.log is not None:
            self.log(msg)


@dataclass
class DatasetSpec:
    """One dataset row of a paper table.

    Parameters
    ----------
    label : str
        The dataset as the paper prints it.
    key : str
        The paper's dataset key (stored cells are keyed on it).
    load : callable, optional
        ``load(cfg) -> (X, y)``; ``None`` with ``reason``: not bundled.  Its
        ``load.identity(cfg)`` (:func:`._data.loader`), when it has one, keys the stored cells on
        what identifies the data rather than on their floats.
    reason : str, default=""
        Why the dataset cannot be loaded.
    note : str, default=""
        Preprocessing / subsampling said in the table.
    differs : str, default=""
        How the bundled data differ from the paper's (a reason for a missed cell).
    unexplained : str, default=""
        What is known about misses on this set that no known cause explains (said after
        "unexplained" in the reason column; the kind stays "unexplained").
    """

    label: str
    key: str
    load: object = None
    reason: str = ""
    note: str = ""
    differs: str = ""
    unexplained: str = ""

    @property
    def bundled(self):
        """The bundled dataset name (``knnweights datasets``), or ``None``."""
        name = getattr(self.load, "bundled", None) or ALIASES.get(self.key, self.key)
        return name if name in list_datasets() else None

    def names(self):
        """Every name ``--datasets`` accepts for this row: label, key, bundled name.

        Returns
        -------
        set of str
        """
        return {n for n in (self.label, self.key, self.bundled) if n}


@dataclass
class MethodSpec:
    """One method column of a paper table.

    Parameters
    ----------
    label : str
        The method as the table prints it.
    build : callable, optional
        ``build(cfg)`` -> the method for :func:`~knnweights.evaluation.run_grid`; ``None`` with
        ``reason``: not available.
    reason : str, default=""
        Why the method is not available.
    stand_in : str, default=""
        The scikit-learn (or knnweights) stand-in for a WEKA / MATLAB method, said in the table.
    substitute : bool, optional
        Whether it stands in for the paper's WEKA / MATLAB method; ``None``: whether
        ``stand_in`` says " for WEKA" or " for the paper's".
    reading : str, default=""
        Where the paper is ambiguous: the reading used (a reason for a missed cell).
    paper_label : str, optional
        This column is another reading of the paper's method of that label: its number is
        shown and judged beside ours, but the row is not counted in the fidelity (the paper's
        cell is counted once, by the row labelled as in the paper).
    """

    label: str
    build: object = None
    reason: str = ""
    stand_in: str = ""
    substitute: bool = None
    reading: str = ""
    paper_label: str = None

    @property
    def is_substitute(self):
        """Whether the method stands in for the paper's WEKA / MATLAB one."""
        if self.substitute is not None:
            return bool(self.substitute)
        return " for WEKA" in self.stand_in or " for the paper's" in self.stand_in


@dataclass
class TableSpec:
    """A paper table to reproduce.

    Parameters
    ----------
    paper : str
        The paper's command-line name (``im4e``, ``lh-relief``...).
    name : str
        The table's name (``im4e_table5``): its CSV and store file.
    title : str
        The table's title in the report.
    csv : str or None
        The paper's bundled CSV file; ``None``: our own experiment.
    datasets : list of DatasetSpec
        The rows.
    methods : list of MethodSpec
        The columns.
    protocol : callable
        ``protocol(cfg)`` -> the splits (:class:`~knnweights.evaluation.RepeatedCV` /
        :class:`~knnweights.evaluation.RepeatedHoldout`).
    metric : {"accuracy", "error"}, default="accuracy"
        What the table prints (``"error"``: 100 - accuracy).
    reference : str, optional
        The W/T/L reference method's label.
    wtl_rule : {"im4e", "lhrelief", "stated"}, optional
        How the W/T/L outcomes are decided (see :func:`_win_tie_loss_rows`).
    stated_outcome : str, optional
        With ``wtl_rule="stated"``: the outcome the paper's text gives for every dataset
        (``"tie"``: no significant difference).
    caption : str, default=""
        The protocol said under the table.
    extra_value : str, optional
        A further recorded value to report (e.g. ``"n_nonzero"``), as its median.
    extra_paper : str, optional
        The paper CSV's column printed beside that median (e.g. ``"median_genes_selected"``).
    """

    paper: str
    name: str
    title: str
    csv: str
    datasets: list
    methods: list
    protocol: object
    metric: str = "accuracy"
    reference: str = None
    wtl_rule: str = None
    stated_outcome: str = None
    caption: str = ""
    extra_value: str = None
    extra_paper: str = None


@dataclass
class TableResult:
    """A table's comparison with the paper, as :func:`run_table` makes it.

    Parameters
    ----------
    spec : TableSpec
        The table.
    rows : list of dict
        The comparison rows, one per (dataset, method).
    wtl : list of dict, optional
        Per competitor: our W/T/L against the reference and the paper's.
    best : list of dict, optional
        Per dataset: the paper's marked best method against ours (:func:`_best_of_row`).
    cells_total : int, default=0
        The cells used.
    cells_run : int, default=0
        The cells this run computed.
    seconds : float, default=0.0
        Wall time of the table.
    raw : list of dict, optional
        The cells' rows.
    cells_expected : int, optional
        The cells the protocol asks for (``None``: not counted, e.g. a custom table).
    cells_revalidated : int, default=0
        Stale cells kept under the current code by ``--revalidate`` (not computed).
    cells_stale : int, default=0
        Stored cells made by other algorithm versions, not used (recomputed on resume).
    code : dict, optional
        Method label -> ``{"version": the algorithm versions of its cells}``.
    """

    spec: TableSpec
    rows: list
    wtl: list = field(default_factory=list)
    best: list = field(default_factory=list)
    cells_total: int = 0
    cells_run: int = 0
    seconds: float = 0.0
    raw: list = field(default_factory=list)
    cells_expected: int = None
    cells_revalidated: int = 0
    cells_stale: int = 0
    code: dict = field(default_factory=dict)

    @property
    def partial(self):
        """Fewer cells done than the protocol asks for (a run stopped before the end)."""
        return self.cells_expected is not None and self.cells_total < self.cells_expected


def read_paper_table(fname):
    """Rows of a bundled paper CSV as dicts.

    Parameters
    ----------
    fname : str
        The file name under ``knnweights/data/paper_tables``.

    Returns
    -------
    list of dict
    """
    text = resources.files("knnweights.data").joinpath("paper_tables").joinpath(fname).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def holdout_two_to_one(tiny, quick, full):
    """A table's protocol: repeated random 2:1 train / test splits, the number of repeats per mode.

    Parameters
    ----------
    tiny : int
        Repeats in ``--tiny``.
    quick : int
        Repeats in ``--quick``.
    full : int
        Repeats in ``--full``.

    Returns
    -------
    callable
        ``protocol(cfg)`` -> :class:`~knnweights.evaluation.RepeatedHoldout`.
    """
    return lambda cfg: cfg.pick(*(RepeatedHoldout(r, 2 / 3, 0, 1 / 3) for r in (tiny, quick, full)))


def within_tolerance(ours, se, paper, points=2.0):
    """``|ours - paper| <= 2 se + points``: the fidelity criterion of the report.

    Parameters
    ----------
    ours : float or None
        Our mean.
    se : float
        Its standard error (NaN: none, for one cell).
    paper : float or None
        The paper's number.
    points : float, default=2.0
        The tolerance beyond two standard errors.

    Returns
    -------
    bool or None
        ``None`` when either number is missing.
    """
    if ours is None or paper is None or not np.isfinite(ours) or not np.isfinite(paper):
        return None
    return bool(abs(ours - paper) <= 2.0 * (se if np.isfinite(se) else 0.0) + points)


def _finite_float(x):
    """``float(x)`` when that is a finite number, else ``None`` (an empty or non-numeric CSV cell)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _selected(cfg, ds):
    return cfg.datasets is None or bool(ds.names() & set(cfg.datasets))


def _method_selected(cfg, m):
    wanted = getattr(cfg, "methods", None)
    return wanted is None or m.label in wanted


#: the kinds of reasons a cell may miss the paper's number
MISS_KINDS = ("dataset differs", "stand-in classifier", "paper ambiguity", "unexplained")

#: the parameters of :func:`miss_reasons` and :func:`miss_reason`: ``{cell}`` in their docstrings
_miss_doc = fill_docstring(cell="""ds : DatasetSpec
    The cell's dataset.
m : MethodSpec
    The cell's method.
reduced : str, default=""
    How this mode shrinks the dataset (:func:`._data.reduction`).""")


@_miss_doc
def miss_reasons(ds, m, reduced=""):
    """Why a cell may miss the paper's number, each reason with its kind (:data:`MISS_KINDS`).

    Parameters
    ----------
    {cell}

    Returns
    -------
    list of (str, str)
        ``[(kind, text)]``; ``[("unexplained", ...)]`` when no cause is known.
    """
    why = []
    if reduced:
        why.append(("dataset differs", f"dataset differs from the paper's: {reduced}"))
    if ds.differs:
        why.append(("dataset differs", f"dataset differs from the paper's: {ds.differs}"))
    if m.is_substitute:
        why.append(("stand-in classifier", f"stand-in classifier: {m.stand_in}"))
    if m.reading:
        why.append(("paper ambiguity", f"paper ambiguity, reading used: {m.reading}"))
    return why or [("unexplained", f"unexplained ({ds.unexplained})" if ds.unexplained else "unexplained")]


@_miss_doc
def miss_reason(ds, m, reduced=""):
    """Why a cell may miss the paper's number, as text: the causes we know of, else ``"unexplained"``.

    Parameters
    ----------
    {cell}

    Returns
    -------
    str
    """
    return "; ".join(text for _, text in miss_reasons(ds, m, reduced))


def _n_splits(protocol, y):
    return sum(1 for _ in protocol.split(y, 0, "count"))


class _CountingStore(ResultStore):
    """A :class:`ResultStore` that advances a progress bar for every cell it records.

    ``appended`` counts the cells this process computed and wrote, ``revalidated`` the stale
    cells it kept under the current code (``--revalidate``: written again, not computed).
    Other processes may append to the same file meanwhile (lanes on disjoint methods), so
    the file's growth is not this run's work.
    """

    def __init__(self, path, bar):
        super().__init__(path)
        self.bar = bar
        self.appended = 0
        self.revalidated = 0

    def append(self, row):
        super().append(row)
        if "revalidated" in row:
            self.revalidated += 1
        else:
            self.appended += 1
        if self.bar is not None:
            self.bar.update(1)


def _run_cells(method_objs, data, protocol, cfg, store, identity=None):
    """``{(method, dataset key): rows or exception}``: all cells in one parallel run, split on failure.

    One :func:`run_grid` call over every method and dataset keeps every core busy; when a
    cell raises, the run is split (per dataset, then per method) so the failing group gets
    its reason and the others their rows; finished cells are kept by the store.
    ``identity``: dataset key -> what identifies its data (``run_grid``'s ``data_identity``).
    """
    identity = identity or {}
    code = {m: version_key(obj) for m, obj in method_objs.items()}

    def grid(methods, datasets):
        return run_grid(methods, datasets, protocol=protocol, random_state=cfg.random_state, n_jobs=cfg.n_jobs,
                        store=store, progress=False, as_frame=False, code_versions={m: code[m] for m in methods},
                        compute=getattr(cfg, "compute", True), revalidate=getattr(cfg, "revalidate", 0),
                        data_identity={d: identity[d] for d in datasets if d in identity})

    out = {}
    try:
        rows = grid(method_objs, data)
    except Exception:  # noqa: BLE001 - split below to find which group fails
        rows = None
    if rows is not None:
        for key in ((m, d) for m in method_objs for d in data):
            out[key] = []
        for r in rows:
            out[(r["method"], r["dataset"])].append(r)
        return out
    for d, Xy in data.items():
        try:
            rows = grid(method_objs, {d: Xy}) if len(method_objs) > 1 else None
        except Exception:  # noqa: BLE001
            rows = None
        if rows is not None:
            for m in method_objs:
                out[(m, d)] = [r for r in rows if r["method"] == m]
            continue
        for m, obj in method_objs.items():
            try:
                out[(m, d)] = grid({m: obj}, {d: Xy})
            except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
                out[(m, d)] = exc
    return out


def run_table(spec, cfg):
    """Run every available cell of ``spec`` and compare with the paper's numbers.

    Parameters
    ----------
    spec : TableSpec
        The table.
    cfg : Config
        The run.

    Returns
    -------
    TableResult
        Its ``rows`` hold, per (dataset, method): ``ours_mean``, ``ours_std``, ``ours_se``,
        ``n_cells``, ``paper``, ``diff``, ``within`` (see :func:`within_tolerance`),
        ``status`` (``ok``, ``not bundled: ...``, ``not available: ...``, ``not implemented:
        ...``, ``failed: ...``) and, for a cell outside the tolerance, ``miss_reason`` (see
        :func:`miss_reason`).
    """
    t0 = time.monotonic()
    paper_rows = read_paper_table(spec.csv) if spec.csv else []
    paper = {}
    for r in paper_rows:
        paper[(r.get("dataset"), r.get("method"))] = r
    protocol = spec.protocol(cfg)
    res = TableResult(spec, [])
    cells = {}  # (dataset label, method label) -> list of row dicts
    status = {}
    method_objs = {}
    reduced = {}
    for m in spec.methods:
        if m.build is None or not _method_selected(cfg, m):
            continue
        try:
            method_objs[m.label] = m.build(cfg)
        except NotImplementedError as exc:
            status[m.label] = f"not implemented: {exc}"
    data, labels, identity = {}, {}, {}
    for ds in spec.datasets:
        if not _selected(cfg, ds) or ds.load is None:
            continue
        try:
            X, y = ds.load(cfg)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            for m in spec.methods:
                status[(ds.label, m.label)] = f"failed: loading the data: {type(exc).__name__}: {exc}"
            continue
        data[ds.key] = (X, y)
        if hasattr(ds.load, "identity"):
            identity[ds.key] = ds.load.identity(cfg)
        labels[ds.key] = ds.label
        reduced[ds.label] = reduction(ds.load, cfg.mode)
    path = os.path.join(cfg.out, "store", f"{spec.name}.jsonl")
    for m, obj in method_objs.items():
        res.code[m] = {"version": version_key(obj)}
    per_ds = {d: _n_splits(protocol, y) for d, (_, y) in data.items()}
    res.cells_expected = sum(per_ds.values()) * len(method_objs)
    bar = None
    if method_objs and data and cfg.progress is not False and cfg.log is not None and getattr(cfg, "compute", True):
        total = res.cells_expected
        stored = len({(r.get("method"), r.get("dataset"), r.get("repeat"), r.get("fold"))
                      for r in ResultStore(path).read()
                      if r.get("method") in method_objs and r.get("dataset") in data
                      and r.get("code") == res.code[r.get("method")]["version"]})
        no = getattr(cfg, "table_no", None)
        bar = progress_bar(total, f"table {no[0]}/{no[1]} {spec.name}" if no else spec.name, initial=min(stored, total))
    store = _CountingStore(path, bar)
    try:
        got = _run_cells(method_objs, data, protocol, cfg, store, identity) if method_objs and data else {}
    finally:
        if bar is not None:
            bar.close()
    res.cells_run = store.appended
    res.cells_revalidated = store.revalidated
    for (m, d), rows in got.items():
        lab = labels[d]
        if isinstance(rows, NotImplementedError):
            status[(lab, m)] = f"not implemented: {rows}"
        elif isinstance(rows, Exception):
            status[(lab, m)] = f"failed: {type(rows).__name__}: {str(rows)[:200]}"
        else:
            res.cells_total += len(rows)
            for r in rows:
                r["dataset_label"] = lab
            cells[(lab, m)] = rows
            res.raw.extend(rows)
    done_keys = {(r["method"], r["dataset"], r["repeat"], r["fold"]) for r in res.raw}
    res.cells_stale = len({(r.get("method"), r.get("dataset"), r.get("repeat"), r.get("fold"))
                           for r in ResultStore(path).read()
                           if r.get("method") in res.code and r.get("dataset") in data
                           and r.get("code") != res.code[r["method"]]["version"]}
                          - done_keys)
    # failed / not implemented groups have no cells to wait for
    res.cells_expected = sum(per_ds[d] for (m, d), rows in got.items() if not isinstance(rows, Exception))
    rev = f", {res.cells_revalidated} of them revalidated" if res.cells_revalidated else ""
    cfg.say(f"  {spec.name}: {res.cells_total} cells ({res.cells_run} run, {res.cells_total - res.cells_run} "
            f"from the store{rev})")
    # comparison rows
    sign = -1.0 if spec.metric == "error" else 1.0
    for ds in spec.datasets:
        if not _selected(cfg, ds):
            continue
        for m in spec.methods:
            p = paper.get((ds.label, m.paper_label or m.label))
            pv = _finite_float(p["mean"]) if p else None
            row = {"table": spec.name, "dataset": ds.label, "dataset_key": ds.key, "method": m.label,
                   "stand_in": m.stand_in, "dataset_note": ds.note, "paper": pv,
                   "paper_as_printed": p.get("as_printed", "") if p else "",
                   "paper_std": _finite_float(p.get("std")) if p else None,
                   "ours_mean": None, "ours_std": None, "ours_se": None, "n_cells": 0, "diff": None, "within": None,
                   "miss_reason": "", "miss_kinds": ""}
            if m.paper_label:
                row["counted"] = False  # another reading of the paper's m.paper_label (see MethodSpec)
            if ds.load is None:
                row["status"] = f"not bundled: {ds.reason}"
            elif m.build is None:
                row["status"] = f"not available: {m.reason}"
            elif not _method_selected(cfg, m):
                row["status"] = "not run (method not selected)"
            elif m.label in status:
                row["status"] = status[m.label]
            elif (ds.label, m.label) in status:
                row["status"] = status[(ds.label, m.label)]
            elif (ds.label, m.label) in cells:
                rows = cells[(ds.label, m.label)]
                need = per_ds.get(ds.key)
                if not rows:
                    row["status"] = f"partial: 0 / {need} cells (not computed yet)"
                    res.rows.append(row)
                    continue
                acc = np.array([r["accuracy"] for r in rows], dtype=float)
                vals = 100.0 - acc if spec.metric == "error" else acc
                mean = float(vals.mean())
                std = float(vals.std(ddof=1)) if vals.size > 1 else 0.0
                se = std / math.sqrt(vals.size) if vals.size > 1 else float("nan")
                row.update(ours_mean=round(mean, 2), ours_std=round(std, 2),
                           ours_se=round(se, 3) if np.isfinite(se) else None, n_cells=int(vals.size), status="ok")
                if spec.extra_value:
                    ev = [r.get(spec.extra_value) for r in rows if r.get(spec.extra_value) is not None]
                    row[f"ours_median_{spec.extra_value}"] = float(np.median(ev)) if ev else None
                    if spec.extra_paper and p and _finite_float(p.get(spec.extra_paper)) is not None:
                        row[f"paper_{spec.extra_paper}"] = _finite_float(p.get(spec.extra_paper))
                if need is not None and len(rows) < need:
                    # a run stopped before the end: the mean of the cells done so far, never judged
                    row["status"] = f"partial: {len(rows)} / {need} cells (not judged)"
                    if pv is not None:
                        row["diff"] = round(mean - pv, 2)
                elif pv is not None:
                    row["diff"] = round(mean - pv, 2)
                    row["within"] = within_tolerance(mean, se, pv)
                    if row["within"] is False:
                        why = miss_reasons(ds, m, reduced.get(ds.label, ""))
                        row["miss_reason"] = "; ".join(text for _, text in why)
                        row["miss_kinds"] = ", ".join(dict.fromkeys(kind for kind, _ in why))
            else:
                row["status"] = "not run (dataset not selected)"
            res.rows.append(row)
    need_by_label = {labels[d]: n for d, n in per_ds.items()}
    complete = {k: v for k, v in cells.items() if v and len(v) >= need_by_label.get(k[0], 0)}
    if spec.reference and spec.wtl_rule:
        res.wtl = _win_tie_loss_rows(spec, complete, paper_rows, sign)  # partly computed cells are not counted
    res.best = _best_of_row(spec, complete, paper_rows)
    res.seconds = time.monotonic() - t0
    return res


def _paired(rows_a, rows_b):
    a = {(r["repeat"], r["fold"]): r["accuracy"] for r in rows_a}
    b = {(r["repeat"], r["fold"]): r["accuracy"] for r in rows_b}
    keys = sorted(set(a) & set(b))
    return np.array([a[k] for k in keys]), np.array([b[k] for k in keys])


def _win_tie_loss_rows(spec, cells, paper_rows, sign):
    """Per competitor: our W/T/L (from its side vs the reference) and the paper's.

    I-M4E rule: paired two-tailed t-test p < 0.01 and >= 0.5 points; the paper's count is
    in its ``W/T/L`` row, and per dataset the direction implied by its means (its README
    checks that the 0.5-point rule alone reproduces every printed W/T/L cell).
    LH-RELIEF rule: the p-value of the paired t-test of I-RELIEF vs LH-RELIEF, p < 0.05.
    Stated rule: paired t-test p < 0.05 for ours; the paper's outcome on every dataset is the
    one its text states (``spec.stated_outcome``, e.g. SQP-FW's "not statistically significant").
    """
    ref = spec.reference
    pmean = {(r["dataset"], r["method"]): _finite_float(r["mean"]) for r in paper_rows}
    pwtl = {r["method"]: r.get("as_printed", "") for r in paper_rows if r.get("dataset") == "W/T/L"}
    out = []
    labels = [ds.label for ds in spec.datasets]
    for m in spec.methods:
        if m.label == ref:
            continue
        ours = {"win": 0, "tie": 0, "loss": 0}
        agree = total = 0
        per = []
        for d in labels:
            if (d, m.label) not in cells or (d, ref) not in cells:
                continue
            a, b = _paired(cells[(d, m.label)], cells[(d, ref)])
            if a.size < 2:
                continue
            if spec.wtl_rule == "im4e":
                o = win_tie_loss(a, b, alpha=0.01, min_diff=0.5)
            else:
                o = win_tie_loss(a, b, alpha=0.05, min_diff=0.0)
            ours[o] += 1
            pval = float(paired_ttest(a, b)[1])
            pm, pr = pmean.get((d, m.label)), pmean.get((d, ref))
            paper_o = None
            if pm is not None and pr is not None:
                diff = sign * (pm - pr)
                if spec.wtl_rule == "im4e":
                    paper_o = "win" if diff >= 0.5 else "loss" if diff <= -0.5 else "tie"
                elif spec.wtl_rule == "stated":
                    paper_o = spec.stated_outcome
                else:
                    pp = None
                    for r in paper_rows:
                        if r["dataset"] == d and r["method"] == m.label:
                            pp = _finite_float(r.get("p_value_vs_LH-RELIEF"))
                    if pp is None:
                        paper_o = None
                    else:
                        paper_o = "tie" if pp >= 0.05 else ("win" if diff > 0 else "loss")
                if paper_o is not None:
                    total += 1
                    agree += int(paper_o == o)
            per.append({"dataset": d, "ours": o, "p_value": pval, "paper": paper_o})
        out.append({"method": m.label, "ours": f"{ours['win']}/{ours['tie']}/{ours['loss']}",
                    "paper": pwtl.get(m.label, ""), "agree": agree, "compared": total, "per_dataset": per})
    return out


#: the p-value at or above which our paired t-test cannot tell two methods apart (SQP-FW Table 1's boldface rule)
BEST_TIE_P = 0.05


def _best_of_row(spec, cells, paper_rows):
    """Per dataset whose paper row marks a best method: the paper's best against ours.

    SQP-FW Table 1 (asterisk) and LH-RELIEF Table 2 (star) mark the best method of each row,
    and SQP-FW sets in bold the methods "not significantly different from the best"
    (paired t-test, p >= 0.05), which the paper's text no longer shows. A row agrees when
    the paper's best is our best too, or when our paired t-test of the two over the same
    splits gives p >= :data:`BEST_TIE_P` (the paper's best would be bold in our table).
    The competitors are the rows labelled as in the paper (not other readings) that have a
    paper number and every cell done; a dataset whose marked method is not among them, with
    fewer than two competitors, or with fewer than two paired splits (no test), is left out. Best means the highest mean
    accuracy (the lowest error).
    """
    marked = {}
    pnum = set()
    for r in paper_rows:
        if _finite_float(r.get("mean")) is not None:
            pnum.add((r.get("dataset"), r.get("method")))
        if str(r.get("best_marked", "")).strip().lower() == "yes":
            marked.setdefault(r.get("dataset"), []).append(r.get("method"))
    out = []
    for ds in spec.datasets:
        d = ds.label
        if d not in marked:
            continue
        comp = [m.label for m in spec.methods
                if m.paper_label is None and (d, m.label) in pnum and cells.get((d, m.label))]
        paper_best = [m for m in marked[d] if m in comp]
        if len(comp) < 2 or not paper_best:
            continue
        means = {m: float(np.mean([r["accuracy"] for r in cells[(d, m)]])) for m in comp}
        ours = max(comp, key=lambda m: means[m])  # the first of equal means, in the table's order
        pb = max(paper_best, key=lambda m: means[m])
        a, b = _paired(cells[(d, ours)], cells[(d, pb)])
        if a.size < 2:  # one split (e.g. --tiny) cannot test a difference: the row is not compared
            continue
        pval = 1.0 if pb == ours else float(paired_ttest(a, b)[1])
        agree = pval >= BEST_TIE_P
        out.append({"dataset": d, "paper_best": pb, "ours_best": ours, "p_value": pval, "agree": agree,
                    "competitors": len(comp)})
    return out

