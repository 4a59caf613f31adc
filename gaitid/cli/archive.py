"""``gaitid batch``: a session or an archive."""

from __future__ import annotations

import argparse
import contextlib
import sys

from gaitid.cli.options import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_norms_argument,
    add_replace_outputs_argument,
    add_settings_arguments,
    add_subject_arguments,
    check_outdir,
    settings_from_args,
    subject_from_args,
)


def add_batch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", nargs="+", metavar="DIR_OR_GLOB", help="folders (searched recursively) or glob patterns")
    parser.add_argument("-o", "--outdir", required=True, help="output folder (one subfolder per trial)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="trials processed in parallel here (default 1)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="Dask distributed scheduler, e.g. tcp://host:8786")
    parser.add_argument("--force", action="store_true",
                        help="reprocess trials whose outputs are up to date (and retry those that failed)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each trial's static, session and subject data (with sources); process nothing")
    parser.add_argument("--pairing", metavar="CSV",
                        help="static trials to use: a table with columns path (or trial) and static, "
                             "e.g. an edited batch_summary.csv")
    parser.add_argument("--no-report", action="store_true", help="skip the per-trial and session reports")
    parser.add_argument("--parquet", action="store_true", help="also write the combined tables as Parquet")
    add_replace_outputs_argument(parser)
    parser.add_argument("--memory-limit", metavar="BYTES", type=_size,
                        help="memory one trial may use, e.g. 4G (default: 80%% of this machine's memory shared by "
                             "the --jobs workers); a trial whose header promises more fails without being read")
    parser.add_argument("--time-limit", metavar="S", type=float, default=3600.0,
                        help="seconds one trial may take (default 3600; 0: no limit)")
    add_norms_argument(parser)
    add_subject_arguments(parser)
    add_settings_arguments(parser)


def _size(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().rstrip("B").rstrip("I")
    try:
        value = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a size in bytes, or with K, M, G or T (e.g. 4G)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be positive")
    return int(value)


@contextlib.contextmanager
def _norms_for_workers(path: str | None, convention: str):
    """Check the --norms file now (an error names it before any trial runs) and hand it to the
    workers through the environment they inherit (gaitid.batch.job.configured_norms) for the
    batch's duration; the caller's environment is restored after."""
    import os
    from pathlib import Path

    from gaitid.cli.options import read_norms_option
    from gaitid.core.vocabulary import NORMS_ENV

    value = "none" if read_norms_option(path, convention) is None else str(Path(path).resolve())
    previous = os.environ.get(NORMS_ENV)
    os.environ[NORMS_ENV] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(NORMS_ENV, None)
        else:
            os.environ[NORMS_ENV] = previous


def cmd_batch(args: argparse.Namespace) -> int:
    """Process every trial of a session or archive; exit 1 when some trial failed."""
    settings = settings_from_args(args)
    opts = subject_from_args(args)
    check_outdir(args.outdir)
    with _norms_for_workers(args.norms, settings.convention):
        return _batch(args, settings, opts)


def _batch(args: argparse.Namespace, settings, opts) -> int:
    from pathlib import Path

    from gaitid.batch import describe_plan, plan, run_batch

    if args.dry_run:
        jobs = plan(args.sources, args.outdir, pairing=args.pairing, cache=False)
        print(describe_plan(jobs, opts, settings))
        n = sum(not j.not_a_trial for j in jobs)
        print(f"{n} trials to process (dry run: nothing processed)")
        return EXIT_OK
    from gaitid.batch.runner import BatchInterrupted

    try:
        summary = run_batch(args.sources, args.outdir, settings, jobs=args.jobs, scheduler=args.scheduler,
                            subject=opts, pairing=args.pairing, report=not args.no_report,
                            parquet=args.parquet, force=args.force, memory_limit=args.memory_limit,
                            replace_outputs=args.replace_outputs,
                            time_limit_s=args.time_limit or None)
    except BatchInterrupted as stop:  # Ctrl-C: what finished is kept and summarised; a rerun goes on
        print(f"\n{stop}; summary in {stop.summary}", file=sys.stderr)
        return EXIT_INTERRUPTED
    not_trials = int(((summary["status"] == "skipped") & (summary["error"].fillna("") != "")).sum())
    counts = summary["status"].value_counts().to_dict()
    counts["skipped"] = counts.get("skipped", 0) - not_trials
    again = summary.attrs.get("up_to_date_failures", 0)
    print(f"{len(summary) - not_trials} trials: {counts.get('ok', 0)} ok, {counts.get('skipped', 0)} up to date, "
          f"{counts.get('failed', 0)} failed{f' ({again} unchanged since the last run: --force retries)' if again else ''}"
          f"{f', {not_trials} not trials (gaitid outputs, folders or broken links named .c3d)' if not_trials else ''}"
          f"; summary in {Path(args.outdir) / 'batch_summary.csv'}")
    for _, row in summary[summary["status"] == "failed"].iterrows():
        error = str(row["error"])
        print(f"  failed: {error if error.startswith(str(row['path'])) else row['path'] + ': ' + error}",
              file=sys.stderr)
    return EXIT_FAILURE if counts.get("failed", 0) else EXIT_OK
