"""``knnweights rank FILE``: the features of a user's table (or the SNPs of a PLINK .bed file) ranked by
each weighter fitted on all rows."""

import numpy as np

from ..engine import config_context
from ..evaluation.distributed import scheduler_address
from ..exceptions import UsageError
from ..io import read_plink
from ._console import print_status, print_warnings
from ._options import WEIGHTERS, Command, add_data_arguments, add_scheduler_argument, build_weighter, parse_methods
from ._tables import (
    baseline_names,
    describe_target,
    load_user_table,
    print_top_features,
    rank_with_status,
    write_table,
)

#: the weighters that take genotype bytes, and the default for a .bed file
PLINK_METHODS = ("MultiSURF", "ReliefF")


def _add_arguments(p):
    """Add the arguments of ``rank``."""
    add_data_arguments(p, survival=True)
    p.add_argument("--out", metavar="FILE", default=None,
                   help="the table (.csv, .tsv, .parquet, .xlsx; default: <file stem>_ranks.csv)")
    p.add_argument("--top", metavar="N", type=int, default=20, help="features printed (default: 20)")
    p.add_argument("--pvalues", action="store_true",
                   help="a p-value and an adjusted one (q, by --padj) per feature and method: the Relief family's "
                        "pair test, a permutation test for the others (columns <method>_p, <method>_q)")
    p.add_argument("--padj", choices=("bh", "bonferroni", "holm", "by"), default="bh",
                   help="the adjustment of every q column, the baselines' and (with --pvalues) the methods' "
                        "(default: bh, Benjamini-Hochberg; by: Benjamini-Yekutieli; bonferroni, holm: the "
                        "family-wise error rate)")
    p.add_argument("--pvalue-null", choices=("outcome", "feature"), default="outcome",
                   help="with --pvalues, what the Relief family's pair test permutes (the weighters' pvalue_null): "
                        "outcome, the target (exact when no feature matters; too many small p-values for classes "
                        "when informative features shape the neighbourhoods); feature, each feature's values "
                        "(exact for a feature unrelated to the target and the other features, conservative; not "
                        "with covariates). Default: outcome. The other methods' permutation test permutes the target")
    p.add_argument("--covariates", metavar="COLS", default=None,
                   help="comma-separated covariate columns: not features; with --pvalues, the Relief family's "
                        "p-values are adjusted for them (NPDR's pair regression; the weights do not change), and "
                        "the baselines are the same tests given them (ANCOVA, partial correlations, Cox score: "
                        "columns ending in _adj)")
    p.add_argument("--covariate-reference", choices=("redraw", "moments"), default="redraw",
                   help="with covariates (--covariates or --covar), the reference of the Relief family's adjusted "
                        "p-values (the weighters' covariate_reference): redraw, outcomes redrawn given the "
                        "covariates (Monte Carlo, none below 0.001); moments, the same reference's exact moments "
                        "(class labels only; no floor, faster). Default: redraw")
    p.add_argument("--permutations", type=int, default=199, metavar="B",
                   help="permutations for the methods without their own p-values (default: 199)")
    p.add_argument("--pheno", metavar="FILE", default=None,
                   help="PLINK .bed input: a phenotype file (FID IID value ...; default: the .fam file's)")
    p.add_argument("--pheno-col", metavar="NAME", default=None,
                   help="PLINK .bed input: the phenotype file's column (header name or 1-based index)")
    p.add_argument("--covar", metavar="FILE", default=None,
                   help="PLINK .bed input with --pvalues: a covariate file (FID IID c1 c2 ..., optional FID IID "
                        "name ... header; e.g. genotype principal components), matched to the .fam by FID and "
                        "IID; the p-values are adjusted for them (NPDR's pair regression; the weights do not change)")
    p.add_argument("--covar-name", metavar="COLS", default=None,
                   help="PLINK .bed input: the covariate file's columns, comma-separated header names, PC1-PC10 "
                        "a range (default: all)")
    p.add_argument("--genotype-diff", choices=("additive", "mismatch", "allele-sharing"), default=None,
                   help="PLINK .bed input: how two genotypes differ (the weighters' genotype_diff): additive "
                        "|a - b| / range, mismatch 0 / 1, allele-sharing |a - b| / 2 (default: additive)")
    p.add_argument("--n-jobs", type=int, default=None,
                   help="parallel work: permutation refits (joblib), or the compiled kernels' threads for a "
                        ".bed file (default: all)")
    add_scheduler_argument(p)


def _check_pvalue_null(args, covariates, flag):
    """``--pvalue-null feature`` needs ``--pvalues`` and takes no covariates."""
    if args.pvalue_null == "outcome":
        return
    if not args.pvalues:
        raise UsageError("--pvalue-null chooses the p-values' permutation: add --pvalues.")
    if covariates:
        raise UsageError(f"--pvalue-null feature with {flag}: permuting a feature breaks its tie to the covariates, "
                         f"so that test is not implemented; leave out --pvalue-null (the covariates then adjust the "
                         f"outcome permutation's p-values).")


def _check_covariate_reference(args, covariates, flag):
    """``--covariate-reference moments`` needs covariates (and, through them, ``--pvalues``)."""
    if args.covariate_reference != "redraw" and not covariates:
        raise UsageError(f"--covariate-reference chooses the covariate-adjusted p-values' reference: add {flag} "
                         "(and --pvalues).")


def _null_params(args):
    """The weighters' ``pvalue_null`` and ``covariate_reference`` where they are not the defaults (the Relief
    family's; others ignore them)."""
    params = {"pvalue_null": args.pvalue_null} if args.pvalue_null != "outcome" else {}
    if args.covariate_reference != "redraw":
        params["covariate_reference"] = args.covariate_reference
    return params


def _run(args):
    """Rank the features of a user's file by each weighter (fit on all rows); the exit status."""
    if args.top < 0:
        raise UsageError(f"--top must be 0 or more; got {args.top}.")
    if str(args.file).lower().endswith(".bed"):
        return _run_plink(args)
    if args.pheno or args.pheno_col or args.genotype_diff or args.covar or args.covar_name:
        raise UsageError("--pheno / --pheno-col / --genotype-diff / --covar / --covar-name are for a PLINK .bed "
                         "file; a table takes --target COL and --covariates COLS (and the weighters' "
                         "discrete_features for its coding).")
    if args.permutations < 1:
        raise UsageError(f"--permutations must be at least 1; got {args.permutations}.")
    _check_pvalue_null(args, args.covariates, "--covariates")
    _check_covariate_reference(args, args.covariates, "--covariates COLS")
    if args.covariates and not args.pvalues:
        raise UsageError("--covariates adjusts the p-values: add --pvalues.")
    data = load_user_table(args)
    names = parse_methods(args.methods, continuous=data.continuous, survival=data.survival)
    X, y = data.X, data.y
    if data.covariates is not None:
        own = [m for m in names if "pvalues" not in build_weighter(m, 0, data.continuous).get_params()]
        if own:
            raise UsageError(f"--covariates: {', '.join(own)} test(s) by permuting the target freely, which no "
                             "covariate adjusts; use Relief-family methods (--methods ReliefF,MultiSURF).")
    print_status(f"{data.name}: {X.shape[0]} samples x {X.shape[1]} features, {describe_target(data)}")
    table, _, kept, warn = rank_with_status(names, X, y, args, data.continuous, covariates=data.covariates,
                                            survival=data.survival, weighter_params=_null_params(args))
    out = args.out or f"{data.name}_ranks.csv"
    write_table(table, out)
    print_warnings(warn)
    print_top_features(table, list(kept) + baseline_names(table), args.top, pvalues=args.pvalues)
    what = "weight, signed score, rank" + (", p, q" if args.pvalues else "")
    print(f"wrote {out}: {len(table)} features x {len(kept)} method(s) ({what}) and the univariate "
          f"baseline(s) {', '.join(baseline_names(table))} (statistic, p, q, rank)")
    return 0


def _run_plink(args):
    """Rank the SNPs of a PLINK fileset by the byte-capable Relief weighters (no float copy)."""
    names = parse_methods(args.methods, default=PLINK_METHODS)
    bad = [n for n in names if not getattr(WEIGHTERS[n], "_byte_input", False)]
    if bad:
        ok = sorted(n for n, c in WEIGHTERS.items() if getattr(c, "_byte_input", False))
        raise UsageError(f"--methods: {', '.join(bad)} cannot score genotype bytes; choose from {', '.join(ok)}.")
    address = scheduler_address(args.scheduler)
    given = [flag for flag, on in (("--log", args.log), ("--target", args.target), ("--time", args.time),
                                   ("--event", args.event), ("--target-type", args.target_type not in (None, "auto")))
             if on]
    if given:
        raise UsageError(f"{', '.join(given)}: not for a PLINK .bed file (its phenotype comes from the .fam file or "
                         "--pheno; its genotypes are scored as bytes).")
    if args.covariates:
        raise UsageError("--covariates names columns of a table; a PLINK .bed file takes a covariate file: "
                         "--covar FILE [--covar-name COLS].")
    if args.covar_name and not args.covar:
        raise UsageError("--covar-name selects columns of a covariate file: add --covar FILE.")
    _check_pvalue_null(args, args.covar, "--covar")
    _check_covariate_reference(args, args.covar, "--covar FILE")
    if args.covar and not args.pvalues:
        raise UsageError("--covar adjusts the p-values: add --pvalues.")
    if args.padj != "bh" and not args.pvalues:
        raise UsageError("--padj adjusts the p-values: add --pvalues.")
    data = read_plink(args.file, pheno=args.pheno, pheno_col=args.pheno_col, lazy=bool(address), covar=args.covar,
                      covar_name=args.covar_name)
    continuous = data.y.dtype.kind == "f"  # a quantitative phenotype: the Relief family's regression form
    if np.unique(data.y).size < 2:
        raise UsageError(f"{args.file}: the phenotype has one value ({data.y[0]!r}); at least two are needed.")
    for m in data.messages:
        print_status(f"note: {m}")
    n, d = data.X.shape
    what = "a quantitative phenotype" if continuous else f"{len(np.unique(data.y.astype(str)))} classes"
    print_status(f"{data.name}: {n} samples x {d} SNPs, {what}"
                 + (f"; {data.covariates.shape[1]} covariate(s)" if data.covariates is not None else "")
                 + (f"; feature blocks on the dask scheduler at {address}" if address else ""))
    with config_context(n_jobs=args.n_jobs or 0, scheduler=address or ""):
        # unknown genotypes (-127): Relief's unknown-value diff
        params = {"missing": "diff", "genotype_diff": args.genotype_diff, **_null_params(args)}
        table, _, kept, warn = rank_with_status(names, data.X, data.y, args, continuous, scale="none", baselines=False,
                                                feature_names=data.snps, weighter_params=params,
                                                covariates=data.covariates)
    out = args.out or f"{data.name}_ranks.csv"
    write_table(table, out)
    print_warnings(warn)
    print_top_features(table, kept, args.top, pvalues=args.pvalues)
    what = "weight, signed score, rank" + (", p, q" if args.pvalues else "")
    print(f"wrote {out}: {len(table)} SNPs x {len(kept)} method(s) ({what})")
    return 0


COMMAND = Command(
    "rank", help="rank the features of your file (CSV/TSV/Parquet/Excel) by each weighter",
    description="Fit each weighter on all rows of FILE and write one table: the feature, then per method its "
                "weight, signed score and rank (1 = best, no ties), then a univariate baseline (Welch t or "
                "ANOVA F for classes, Pearson and Spearman for a continuous target). Prints the top features. "
                "A target with non-integer numbers is continuous (--target-type to choose); a censored survival "
                "outcome is --target-type survival --time COL --event COL (baseline: the Cox score test).\n\n"
                "example: knnweights rank genes.csv --target diagnosis --id-col sample --drop batch --top 30 "
                "--pvalues\n\n"
                "A PLINK .bed file (with its .bim and .fam) is ranked SNP by SNP from its bytes by the Relief "
                f"family (default: {', '.join(PLINK_METHODS)}); the phenotype comes from the .fam file or "
                "--pheno; --pvalues adds the Relief family's pair-test p-values (no unknown calls), --covar FILE "
                "adjusts them for covariates such as principal components.\n\nexample: knnweights rank study.bed "
                "--pheno pheno.txt --pheno-col disease --pvalues --covar pcs.txt --covar-name PC1-PC10",
    run=_run, add_arguments=_add_arguments)
