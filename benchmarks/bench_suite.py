"""The whole performance table in one command: every weighter against every installed peer.

    python benchmarks/bench_suite.py                 # everything, writes benchmarks/RESULTS.md
    python benchmarks/bench_suite.py --quick         # (500, 100) and colon only, short time limits
    python benchmarks/bench_suite.py --only kernels  # one section: kernels | fits | peers | memory | gpu

What it measures, all in the same run on the same machine:

* **kernels**: element rates (``n*n*d / s``) of our compiled L1 and squared-L2 pairwise
  kernels, float64 and float32, against the machine's measured limit (a tight compiled
  ``|a - b|`` accumulate over cache-resident blocks on all cores) and against a chunked
  plain-NumPy version of the same kernel, at (n, d) in (500, 100), (2000, 500),
  (1000, 5000), (200, 20000).
* **fits**: ``fit`` of every weighter in ``knnweights.WEIGHTERS`` (default parameters) on
  synthetic data of those sizes and on the bundled microarray sets.
* **peers**: skrebate's ReliefF, SURF and MultiSURF against our ReliefF / Relief, SURF and
  MultiSURF (time ratio peer / ours and the largest weight difference relative to the
  largest weight), scikit-learn's ``NeighborhoodComponentsAnalysis`` and metric-learn's
  ``NCA`` against our ``NCADiagonal`` (the peers learn a full d x d matrix: a time ratio
  only).
* **memory**: peak resident memory of every weighter's fit at (2000, 20000) (60 s at most).
* **gpu**: with ``device="cuda"`` (PyTorch), the kernel element rate and the speed-up over
  the CPU at n = 20000, d = 1000, when a CUDA device is present.

Every fit runs in its own fresh process (``python bench_suite.py _child SPEC``), after
small warm-up fits that load the compiled kernels (serial and threaded): a fit that runs past ``--timeout`` is
killed and reported as such, and the peak memory is the child's own ``ru_maxrss`` (the
whole process: interpreter, libraries, data and the fit).  Peers run with ``n_jobs=-1``
(all cores, as ours).  Synthetic data: ``X ~ N(0, 1)``, ``y = [x_1 + ... + x_5 > 0]``.
"""

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [(500, 100), (2000, 500), (1000, 5000), (200, 20000)]
MICROARRAYS = ["colon_alon", "leukemia_golub", "kidney_sueltmann", "prostate_singh", "arcene", "breast_vantveer"]
MEMORY_SIZE = (2000, 20000)
GPU_SIZE = (20000, 1000)

# our Relief-family weighters and their skrebate counterparts (class, parameters)
COUNTERPARTS = {
    "ReliefF": ("ReliefF", {"n_neighbors": 10}),
    "Relief": ("ReliefF", {"n_neighbors": 1}),
    "SURF": ("SURF", {}),
    "MultiSURF": ("MultiSURF", {}),
}
OURS_FOR_PEER = {"ReliefF": {"n_neighbors": 10}}


# -- data ---------------------------------------------------------------------------------
def synthetic(n, d, seed=0):
    rng = np.random.default_rng([seed, n, d])
    X = rng.normal(size=(n, d))
    y = (X[:, :5].sum(1) > 0).astype(int)
    return X, y


def load_data(data):
    if data.startswith("syn:"):
        n, d = (int(v) for v in data[4:].split("x"))
        return synthetic(n, d)
    from knnweights.datasets import load

    return load(data, return_X_y=True, missing="median")


# -- one timed fit, in a child process ---------------------------------------------------
def _make(spec):
    lib, name, params = spec["lib"], spec["name"], spec.get("params", {})
    if lib == "ours":
        import knnweights

        cls = knnweights.WEIGHTERS[name]
        valid = cls().get_params()
        est = cls(**params)
        if "random_state" in valid:
            est.set_params(random_state=0)
        return est
    if lib == "skrebate":
        import skrebate

        return getattr(skrebate, name)(n_jobs=-1, **params)
    if lib == "sklearn":
        from sklearn.neighbors import NeighborhoodComponentsAnalysis

        return NeighborhoodComponentsAnalysis(random_state=0, **params)
    if lib == "metric-learn":
        import metric_learn

        return getattr(metric_learn, name)(random_state=0, **params)
    raise ValueError(lib)


def _weights(est):
    for attr in ("scores_", "feature_importances_"):
        if hasattr(est, attr):
            return np.asarray(getattr(est, attr), dtype=float)
    return None


def child(spec):
    """Fit once after a warm-up and print one JSON line (seconds, peak memory, weights file)."""
    import resource
    import warnings

    warnings.simplefilter("ignore")
    X, y = load_data(spec["data"])
    # warm-up: imports, the compiled kernels (numba cache), and big enough to start the
    # thread pools (ours: numba's; skrebate: joblib's workers)
    Xw, yw = synthetic(40, 12, seed=1)
    try:
        _make(spec).fit(Xw, yw)
        if spec["lib"] == "ours":  # and once more through the kernels' threaded compilations (knnweights.engine.jit)
            from knnweights.engine import jit

            serial_work, jit.SERIAL_WORK = jit.SERIAL_WORK, 0
            try:
                _make(spec).fit(Xw, yw)
            finally:
                jit.SERIAL_WORK = serial_work
    except Exception:  # noqa: BLE001 - the real fit reports the error
        pass
    if spec["lib"] == "ours":
        from knnweights.engine.neighbors import weighted_distances

        weighted_distances(synthetic(300, 60, seed=1)[0])  # above the serial threshold: starts numba's pool
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    times = []
    while len(times) < 3 and sum(times) < 2.0:  # the median of up to 3 fits for fast ones
        est = _make(spec)
        t = time.perf_counter()
        try:
            est.fit(X, y)
        except NotImplementedError as e:
            print(json.dumps({"status": "not implemented", "reason": str(e)[:200]}))
            return
        times.append(time.perf_counter() - t)
    sec = float(np.median(times))
    out = {"status": "ok", "seconds": sec, "n_fits": len(times), "rss_before": rss0,
           "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "n_iter": int(np.max(getattr(est, "n_iter_", -1)))}
    w = _weights(est)
    if w is not None and spec.get("weights_file"):
        np.save(spec["weights_file"], w)
    print(json.dumps(out))


def run_child(spec, timeout, mem_limit_gib=16.0):
    """Run one spec in a fresh interpreter; kill it past ``timeout`` s or ``mem_limit_gib``."""
    import psutil

    cmd = [sys.executable, os.path.abspath(__file__), "_child", json.dumps(spec)]
    # output to files, not pipes, and the child in its own process group: a peer's joblib / loky
    # workers inherit the child's stdout and outlive it, and reading a pipe would wait for them
    fout, ferr = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, text=True, start_new_session=True)
    ps = psutil.Process(proc.pid)
    t0, peak, killed = time.perf_counter(), 0, None
    while proc.poll() is None:
        try:
            peak = max(peak, ps.memory_info().rss)
        except psutil.Error:
            pass
        if time.perf_counter() - t0 > timeout + 20:  # imports and warm-up get 20 s on top
            killed = f"> {timeout:.0f} s"
        elif peak > mem_limit_gib * 2**30:
            killed = f"> {mem_limit_gib:.0f} GiB"
        if killed:
            proc.kill()
            break
        time.sleep(0.05)
    proc.wait()
    try:  # whatever the child left behind (idle worker pools)
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    fout.seek(0)
    ferr.seek(0)
    out, err = fout.read(), ferr.read()
    fout.close()
    ferr.close()
    if killed:
        return {"status": "killed", "reason": killed, "rss_peak": peak}
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"status": "error", "reason": (err.strip().splitlines() or ["?"])[-1][:300]}
    res = json.loads(lines[-1])
    if res.get("status") == "ok" and res["seconds"] > timeout:
        res["status"], res["reason"] = "killed", f"> {timeout:.0f} s"
    return res


# -- sections -----------------------------------------------------------------------------
def _median_time(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def numpy_pairwise_l1(A, B, budget_mib=64):
    """The same kernel in plain NumPy: a block of rows broadcast against all rows."""
    out = np.empty((A.shape[0], B.shape[0]))
    step = max(1, int(budget_mib * 2**20 // (8 * B.shape[0] * A.shape[1])))
    for s in range(0, A.shape[0], step):
        out[s:s + step] = np.abs(A[s:s + step, None, :] - B[None, :, :]).sum(-1)
    return out


def kernels_section(sizes, repeat):
    sys.path.insert(0, HERE)
    from bench_kernels import machine_limit_rate

    from knnweights.engine._kernels import pairwise_phi

    limit = machine_limit_rate()
    rows = []
    for n, d in sizes:
        X, _ = synthetic(n, d)
        el = n * n * d
        r = {"n": n, "d": d}
        for dtype in (np.float64, np.float32):
            Xt = X.astype(dtype)
            out = np.empty((n, n), dtype)
            pairwise_phi(Xt[:4], Xt[:4], 0, out[:4, :4])
            for phi, name in ((0, "l1"), (1, "l2sq")):
                r[f"{name}_{np.dtype(dtype).name}"] = el / _median_time(lambda: pairwise_phi(Xt, Xt, phi, out), repeat)  # noqa: B023
        r["numpy_l1"] = el / _median_time(lambda: numpy_pairwise_l1(X, X), 1)  # noqa: B023
        rows.append(r)
        print(f"  kernels {n}x{d}: L1 {r['l1_float64']:.3g} el/s ({100 * r['l1_float64'] / limit:.0f} % of limit)",
              flush=True)
    return {"limit": limit, "rows": rows}


def data_shape(data):
    if data.startswith("syn:"):
        return tuple(int(v) for v in data[4:].split("x"))
    from knnweights.datasets import load

    return load(data, return_X_y=True)[0].shape


def fits_section(datas, timeout, names=None):
    """Every weighter on every data set; a fit is not started where the same weighter already ran
    out of time on a data set with no more samples and no more features."""
    import knnweights

    names = names or list(knnweights.WEIGHTERS)
    shapes = {data: data_shape(data) for data in datas}
    res = {}
    for data in sorted(datas, key=lambda s: shapes[s][0] ** 2 * shapes[s][1]):
        n, d = shapes[data]
        for name in names:
            smaller = [o for o in datas if f"{name}|{o}" in res and res[f"{name}|{o}"]["status"] == "killed"
                       and shapes[o][0] <= n and shapes[o][1] <= d]
            if smaller:
                r = {"status": "skipped", "reason": f"{res[f'{name}|{smaller[0]}']['reason']} on {_label(smaller[0])}"}
            else:
                r = run_child({"lib": "ours", "name": name, "data": data}, timeout)
            res[f"{name}|{data}"] = r
            print(f"  fit {name} on {data}: {_cell(r)}", flush=True)
    return res


def peers_section(datas, timeout, tmp, names=None):
    res = []
    for data in datas:
        for ours, (peer, params) in COUNTERPARTS.items():
            if names is not None and ours not in names:
                continue
            fo, fp = os.path.join(tmp, "ours.npy"), os.path.join(tmp, "peer.npy")
            for f in (fo, fp):
                if os.path.exists(f):
                    os.remove(f)
            r_ours = run_child({"lib": "ours", "name": ours, "data": data, "params": OURS_FOR_PEER.get(ours, {}),
                                "weights_file": fo}, timeout)
            r_peer = run_child({"lib": "skrebate", "name": peer, "data": data, "params": params,
                                "weights_file": fp}, timeout)
            row = {"data": data, "ours": ours, "peer": f"skrebate.{peer}({_params(params)})",
                   "r_ours": r_ours, "r_peer": r_peer}
            if os.path.exists(fo) and os.path.exists(fp):
                a, b = np.load(fo), np.load(fp)
                row["rel_diff"] = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))
                row["corr"] = float(np.corrcoef(a, b)[0, 1])
            res.append(row)
            print(f"  {ours} vs {row['peer']} on {data}: {_cell(r_ours)} vs {_cell(r_peer)}", flush=True)
        if names is not None and "NCADiagonal" not in names:
            continue
        r_ours = run_child({"lib": "ours", "name": "NCADiagonal", "data": data}, timeout)
        for lib, peer, params in (("sklearn", "NeighborhoodComponentsAnalysis", {}), ("metric-learn", "NCA", {})):
            r_peer = run_child({"lib": lib, "name": peer, "data": data, "params": params}, timeout)
            res.append({"data": data, "ours": "NCADiagonal", "peer": f"{lib} {peer} (full d x d)",
                        "r_ours": r_ours, "r_peer": r_peer})
            print(f"  NCADiagonal vs {lib} {peer} on {data}: {_cell(r_ours)} vs {_cell(r_peer)}", flush=True)
    return res


def gpu_section(repeat):
    try:
        import torch
    except ImportError:
        return {"status": "PyTorch is not installed (pip install 'knnweights[gpu]')"}
    if not torch.cuda.is_available():
        return {"status": "no CUDA device on this machine"}
    from knnweights import IRelief, config_context
    from knnweights.engine.neighbors import weighted_distances

    n, d = GPU_SIZE
    X, y = synthetic(n, d)
    el = n * n * d
    out = {"status": "ok", "device": torch.cuda.get_device_name(0)}
    for dev in ("cpu", "cuda"):
        with config_context(device=dev):
            weighted_distances(X[:64])
            if dev == "cuda":
                torch.cuda.synchronize()
            out[f"l1_{dev}"] = el / _median_time(lambda: weighted_distances(X), repeat)  # noqa: B023
            Xs, ys = X[:5000], y[:5000]
            out[f"irelief_{dev}"] = _median_time(lambda: IRelief(max_iter=5).fit(Xs, ys), 1)  # noqa: B023
    return out


# -- report -------------------------------------------------------------------------------
def _params(p):
    return ", ".join(f"{k}={v}" for k, v in p.items())


def _cell(r):
    if r is None:
        return "-"
    if r["status"] == "ok":
        s = f"{r['seconds']:.3g} s"
        return s + (f" ({r['n_iter']} it)" if r.get("n_iter", -1) > 0 else "")
    if r["status"] == "killed":
        return r["reason"]
    if r["status"] == "not implemented":
        return "not implemented"
    if r["status"] == "skipped":
        return f"not run ({r['reason']})"
    return f"error: {r['reason'][:90]}"


def _gib(b):
    return f"{b / 2**30:.2f} GiB"


def _label(data):
    return f"{data[4:].replace('x', ' x ')}" if data.startswith("syn:") else data


def render(results, args):
    m = results["meta"]
    L = ["# Benchmark results", "",
         "Regenerate with `python benchmarks/bench_suite.py` (about 90 minutes on 2 cores; `--quick` takes "
         "minutes; `--only SECTION` re-measures one section and keeps the others from `results.json`). "
         "The script writes this whole file.", "",
         f"Run on {m['started']} UTC: {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
         f"Python {platform.python_version()}, load average {m['load_start']:.1f} at the start and "
         f"{m['load_end']:.1f} at the end (the machine is shared: ratios measured in the same run are "
         f"what to quote). Versions: {m.get('versions') or _versions()}."]
    for sec, runs in results.get("remeasured", {}).items():
        for r in runs if isinstance(runs, list) else [runs]:
            if isinstance(r, str):  # an older results.json: the date only
                L.append(f"The {sec} section was measured again on {r} UTC.")
                continue
            who = f" ({', '.join(r['weighters'])})" if r.get("weighters") else ""
            L.append(f"The {sec} section{who} was measured again on {r['when']} UTC at commit {r['commit']}, load "
                     f"average {r['load_start']:.1f} at the start and {r['load_end']:.1f} at the end; versions: "
                     f"{r['versions']}.")
    L += ["", "## Per-method benchmarks", "",
          "Each of these scripts measures one method family against its earlier code and its targets, in one run "
          "(their tables say the commit, the command and the load):", "",
          "| method | script | table |", "| --- | --- | --- |",
          "| SQPFW (cold fits at theta = 1, the Colon path, per-step cost) | `bench_sqpfw.py` | "
          "[bench_sqpfw.md](bench_sqpfw.md) |",
          "| MDM (lazy LP: rounds, rows, IPM iterations) | `bench_mdm.py` | [bench_mdm.md](bench_mdm.md) |",
          "| NCADiagonal against scikit-learn's NCA | `bench_nca.py` | [bench_nca.md](bench_nca.md) |",
          "| Logo, GFlip, SVMRFE, Simba (default parameters, microarrays) | `bench_iterative.py` | "
          "[bench_iterative.md](bench_iterative.md) |",
          "| LHRelief's incremental neighbour search against one full search per iteration | "
          "`bench_lhrelief.py search` | [bench_lhrelief.md](bench_lhrelief.md) |",
          "| EFW, SBMLR | `bench_efw_sbmlr.py` | [bench_efw_sbmlr.md](bench_efw_sbmlr.md) |",
          "| Relief family with missing values | `bench_relief_missing.py` | "
          "[bench_relief_missing.md](bench_relief_missing.md) |", ""]
    if "kernels" in results:
        k = results["kernels"]
        lim = k["limit"]
        L += ["## Kernels", "",
              f"Machine limit: **{lim:.3g} elements/s** (a compiled `|a - b|` accumulate over cache-resident blocks on "
              "all cores, best of 7 runs). Element rate = n*n*d / seconds, medians of "
              f"{k.get('repeat', 1)}. \"vs NumPy\" is the chunked NumPy broadcast of the same kernel.", "",
              "| n x d | L1 float64 el/s (% of limit) | L2sq float64 | L1 float32 | L2sq float32 | NumPy L1 "
              "| L1 vs NumPy |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in k["rows"]:
            L.append(f"| {r['n']} x {r['d']} | {r['l1_float64']:.3g} ({100 * r['l1_float64'] / lim:.0f} %) | "
                     f"{r['l2sq_float64']:.3g} | {r['l1_float32']:.3g} | {r['l2sq_float32']:.3g} | "
                     f"{r['numpy_l1']:.3g} | {r['l1_float64'] / r['numpy_l1']:.0f}x |")
        L.append("")
    if "peers" in results:
        L += ["## Against the peers", "",
              "Time of one fit (fresh process, after a warm-up); ratio = peer / ours. \"max rel. diff\" = "
              "max |w_ours - w_peer| / max |w_peer| (0 means the same weights).", "",
              "| data | ours | peer | ours s | peer s | peer / ours | max rel. diff | corr |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in results["peers"]:
            ratio = "-"
            if r["r_ours"]["status"] == "ok" and r["r_peer"]["status"] == "ok":
                q = r["r_peer"]["seconds"] / r["r_ours"]["seconds"]
                ratio = f"**{q:.0f}x**" if q >= 10 else f"**{q:.2g}x**"
            elif r["r_ours"]["status"] == "ok" and r["r_peer"]["status"] == "killed" and "s" in r["r_peer"]["reason"]:
                lim = float(r["r_peer"]["reason"].split()[1])
                ratio = f"> {lim / r['r_ours']['seconds']:.0f}x"
            rd = f"{r['rel_diff']:.1e}" if "rel_diff" in r else "-"
            cc = f"{r['corr']:.6f}" if "corr" in r else "-"
            L.append(f"| {_label(r['data'])} | {r['ours']} | {r['peer']} | {_cell(r['r_ours'])} | "
                     f"{_cell(r['r_peer'])} | {ratio} | {rd} | {cc} |")
        L.append("")
    if "fits" in results:
        datas = [d for d in results.get("fit_order", []) if any(k.endswith("|" + d) for k in results["fits"])]
        datas += [d for d in dict.fromkeys(k.split("|")[1] for k in results["fits"]) if d not in datas]
        names = list(dict.fromkeys(k.split("|")[0] for k in results["fits"]))
        L += ["## Fit time of every weighter (default parameters)", "",
              "Seconds of one `fit` (iterations in brackets); \"> T s\": stopped at the time limit.", "",
              "| weighter | " + " | ".join(_label(d) for d in datas) + " |",
              "| --- |" + " --- |" * len(datas)]
        for nm in names:
            L.append(f"| {nm} | " + " | ".join(_cell(results["fits"].get(f"{nm}|{d}")) for d in datas) + " |")
        L.append("")
    if "memory" in results:
        n, d = MEMORY_SIZE
        L += [f"## Memory at n = {n}, d = {d}", "",
              f"Peak resident memory of the whole process (the data alone is {_gib(n * d * 8)}); target < 4 GiB. "
              "A fit stopped at the time limit reports the peak it had reached.", "",
              "| weighter | peak memory | before the fit | fit time |", "| --- | --- | --- | --- |"]
        for nm, r in results["memory"].items():
            before = _gib(r["rss_before"]) if "rss_before" in r else "-"
            peak = _gib(r["rss_peak"]) if "rss_peak" in r else "-"
            L.append(f"| {nm} | {peak} | {before} | {_cell(r)} |")
        L.append("")
    if "gpu" in results:
        g = results["gpu"]
        L += ["## GPU", ""]
        if g["status"] != "ok":
            L += [f"Not measured: {g['status']}. The CUDA path (`knnweights.set_config(device='cuda')`) is tested "
                  "against the CPU path in `tests/test_gpu.py`, which skips without a device.", ""]
        else:
            n, d = GPU_SIZE
            L += [f"{g['device']}, n = {n}, d = {d}: L1 distances {g['l1_cuda']:.3g} el/s on the GPU against "
                  f"{g['l1_cpu']:.3g} on the CPU (**{g['l1_cuda'] / g['l1_cpu']:.0f}x**); IRelief (5 iterations, "
                  f"5000 x {d}) {g['irelief_cuda']:.3g} s against {g['irelief_cpu']:.3g} s.", ""]
    L += ["## Notes", "",
          "- Relief-family target (>= 50x skrebate at 2000 x 500, equal weights): read the peers table. Within-set "
          "distance matrices that fit `working_memory` are computed once per pair (`pairwise_phi_sym`, "
          "bit-identical to the rectangular kernel).",
          "- skrebate runs with `n_jobs=-1` (its fastest setting here). metric-learn 0.7.0 (the latest release) "
          "cannot run against scikit-learn 1.9 (`check_X_y(force_all_finite=...)` was removed), so its rows show "
          "the error (or, where it is not installed, `ModuleNotFoundError`).",
          "- scikit-learn's NCA learns a full d x d matrix; `NCADiagonal` learns d weights with the same kind of "
          "BLAS products (`engine.nca_terms`) from a soft start (`init='scaled'`), and is the only one that runs "
          "at d = 20000 (sklearn needs > 16 GiB).",
          "- SQP-FW with the default theta = 1 moves one constraint per active-set step (Lemma 5): tens of "
          "thousands of steps on colon; its per-step cost is in `bench_sqpfw.md`. On wide data its default work "
          "budget (`max_work`, 120 counted GFLOP) stops the fit with a ConvergenceWarning before the local "
          "minimum (`bench_sqpfw.md`, *The work budget*).",
          "- \"error: n_neighbors=10 is larger ...\" is ReliefF refusing a class with fewer than k + 1 samples "
          "(kidney_sueltmann's chRCC), as documented.",
          "- Memory: fits stopped at the time limit report the peak reached until then."]
    return "\n".join(L) + "\n"


def _commit():
    """The short commit of HEAD, with '+' when the working tree has uncommitted changes."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def _versions():
    out = []
    for mod in ("knnweights", "numpy", "numba", "sklearn", "skrebate", "metric_learn", "torch"):
        try:
            m = __import__(mod)
            out.append(f"{mod} {getattr(m, '__version__', '?')}")
        except ImportError:
            out.append(f"{mod} absent")
    return ", ".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        child(json.loads(argv[1]))
        return 0
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="(500, 100) and colon only, 60 s per fit")
    p.add_argument("--only", nargs="+", choices=["kernels", "fits", "peers", "memory", "gpu"])
    p.add_argument("--timeout", type=float, default=None, help="seconds per fit (default 90, quick 60)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--weighters", nargs="+", default=None,
                   help="only these weighters in the fits / memory / peers sections (the others' rows are kept)")
    p.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    p.add_argument("--json", default=os.path.join(HERE, "results.json"),
                   help="raw results; with --only, the other sections are taken from it")
    a = p.parse_args(argv)
    sections = a.only or ["kernels", "peers", "fits", "memory", "gpu"]
    sizes = SIZES[:1] if a.quick else SIZES
    datas = [f"syn:{n}x{d}" for n, d in sizes] + (MICROARRAYS[:1] if a.quick else MICROARRAYS)
    timeout = a.timeout or (60.0 if a.quick else 90.0)
    started = datetime.datetime.now(datetime.UTC)
    load_start = os.getloadavg()[0]
    results = {}
    if a.only and os.path.exists(a.json):  # one section again: keep the others from the last run
        with open(a.json) as fh:
            results = json.load(fh)
    results["fit_order"] = datas
    with tempfile.TemporaryDirectory() as tmp:
        if "kernels" in sections:
            print("kernels", flush=True)
            results["kernels"] = {**kernels_section(sizes, a.repeat), "repeat": a.repeat}
        if "peers" in sections:
            print("peers", flush=True)
            pdatas = [f"syn:{n}x{d}" for n, d in sizes] + MICROARRAYS[:1]
            rows = peers_section(pdatas, timeout, tmp, a.weighters)
            if a.weighters:  # the other methods' rows of the last run stay, each data set's rows together
                rows = [r for r in results.get("peers", []) if r["ours"] not in a.weighters] + rows
                rows.sort(key=lambda r: pdatas.index(r["data"]) if r["data"] in pdatas else len(pdatas))
            results["peers"] = rows
        if "fits" in sections:
            print("fits", flush=True)
            results["fits"] = {**results.get("fits", {}), **fits_section(datas, timeout, a.weighters)}
        if "memory" in sections and not a.quick:
            print("memory", flush=True)
            import knnweights

            data = f"syn:{MEMORY_SIZE[0]}x{MEMORY_SIZE[1]}"
            results.setdefault("memory", {})
            for nm in a.weighters or knnweights.WEIGHTERS:
                results["memory"][nm] = run_child({"lib": "ours", "name": nm, "data": data}, min(timeout, 60))
                print(f"  memory {nm}: {results['memory'][nm].get('rss_peak', 0) / 2**30:.2f} GiB", flush=True)
        if "gpu" in sections:
            results["gpu"] = gpu_section(a.repeat)
    if a.only and "meta" in results:
        for sec in a.only:
            runs = results.setdefault("remeasured", {}).get(sec)
            runs = [] if runs is None else runs if isinstance(runs, list) else [runs]
            runs.append({"when": f"{started:%Y-%m-%d %H:%M}", "commit": _commit(), "load_start": load_start,
                         "load_end": os.getloadavg()[0], "versions": _versions(),
                         "weighters": a.weighters if sec in ("fits", "memory") else None})
            results["remeasured"][sec] = runs
    else:
        results["meta"] = {"started": f"{started:%Y-%m-%d %H:%M}", "load_start": load_start,
                           "load_end": os.getloadavg()[0], "versions": _versions(), "commit": _commit()}
    text = render(results, a)
    with open(a.out, "w") as fh:
        fh.write(text)
    with open(a.json, "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
