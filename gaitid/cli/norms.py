"""``gaitid norms``: build normative data from control trials, show it, score trials against it."""

from __future__ import annotations

import argparse
import sys

from gaitid.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_settings_arguments,
    add_subject_arguments,
    settings_from_args,
    subject_from_args,
    trial_with_subject,
)


def add_norms_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="norms_action", metavar="<action>")
    b = sub.add_parser("build", help="build a lab's normative data from its control trials",
                       description="Build normative data (mean and SD curves, parameter norms, MAP reference, GDI "
                                   "basis) from control trials.")
    b.add_argument("controls", nargs="+", metavar="CONTROL",
                   help="control trials: C3D files or glob patterns, folders of C3D files (searched recursively; "
                        "static trials paired as 'gaitid batch' does), or result folders written by gaitid run/batch")
    b.add_argument("-o", "--output", required=True, help="norms file to write (.toml)")
    b.add_argument("--speed-bands", metavar="M_S", help="speeds in m/s cutting the controls into speed bands, e.g. 0.8,1.2")
    b.add_argument("--source", help="what the controls are (lab, population, protocol), recorded in the file")
    b.add_argument("--age-range", metavar="MIN-MAX", help="the controls' age range in years, e.g. 6-12")
    b.add_argument("--subjects", type=int, metavar="N",
                   help="number of control subjects (default: distinct subject names in the files, when all are named)")
    b.add_argument("--static", help="static trial for every control C3D (default: paired per folder)")
    add_subject_arguments(b)
    add_settings_arguments(b)
    s = sub.add_parser("show", help="say what a norms file (.toml, .csv, .gcd) holds")
    s.add_argument("file", help="norms file")
    c = sub.add_parser("score", help="GPS, GVS (MAP) and GDI of trials against norms",
                       description="Process trials (pooled as one session) and print their Gait Profile Score, Gait "
                                   "Variable Scores and Gait Deviation Index against the norms.")
    c.add_argument("trials", nargs="+", metavar="TRIAL", help="walking trial(s) (.c3d)")
    c.add_argument("--norms", required=True, help="norms file (.toml from 'gaitid norms build', .csv or .gcd)")
    c.add_argument("--static", help="static (calibration) trial")
    c.add_argument("--band", help="speed band of the norms (default: the one holding the trials' mean speed)")
    c.add_argument("--map", metavar="FILE", help="also save the MAP bar chart (.png, .pdf, .svg)")
    add_subject_arguments(c)
    add_settings_arguments(c)


def _norm_controls(args: argparse.Namespace, settings, opts) -> list:
    """Results of the control C3D files and ControlTables of the result folders among args.controls."""
    from pathlib import Path

    from gaitid.batch.pairing import walking_trials
    from gaitid.batch.session import find_sources
    from gaitid.core.errors import GaitIDError, SettingsError
    from gaitid.norms import control_from_folder
    from gaitid.pipeline import process_safely

    controls, c3d_sources = [], []
    for src in args.controls:
        p = Path(src)
        if p.is_dir() and next(p.rglob("*_curves.csv"), None) is not None:
            controls += control_from_folder(p, convention=args.convention)
        elif p.is_file() and p.name.endswith("_curves.csv"):
            controls += control_from_folder(p.parent, convention=args.convention)
        else:
            c3d_sources.append(src)
    if c3d_sources:
        for skipped in find_sources(c3d_sources)[1]:  # gaitid's own outputs (a shell glob), folders named .c3d
            print(f"  skipped: {skipped.path}: {skipped.reason}", file=sys.stderr)
        walks, pairing = walking_trials(c3d_sources)
        if not walks and not controls:
            raise SettingsError(f"no walking trial among {', '.join(c3d_sources)} (static trials are not controls)")
        for k, path in enumerate(walks, 1):
            static = args.static or pairing[path].static
            print(f"[{k}/{len(walks)}] {path}", file=sys.stderr)
            try:
                trial, given, notes = trial_with_subject(path, opts, settings)
            except GaitIDError as exc:
                print(f"  skipped: {exc.for_cli()}", file=sys.stderr)
                continue
            r = process_safely(trial, subject=given, static=static, settings=settings, warnings=notes)
            if isinstance(r, Exception):
                print(f"  skipped: {r.for_cli() if isinstance(r, GaitIDError) else r}", file=sys.stderr)
            elif not r.cycles:
                print("  skipped: no complete gait cycle", file=sys.stderr)
            else:
                controls.append(r)
    return controls


def cmd_norms(args: argparse.Namespace) -> int:
    """Build, show or score against normative data."""
    from gaitid.norms import build_norms, parse_age_range, read_norms, write_norms

    if args.norms_action == "show":
        print("\n".join(read_norms(args.file).describe()))
        return EXIT_OK
    if args.norms_action not in ("build", "score"):
        print("gaitid norms: choose an action: build, show or score (gaitid norms --help)", file=sys.stderr)
        return EXIT_USAGE
    settings, opts = settings_from_args(args), subject_from_args(args)
    if args.norms_action == "build":
        from gaitid.core.errors import DataError, SettingsError

        bands = None
        if args.speed_bands:
            try:
                bands = [float(v) for v in args.speed_bands.split(",") if v.strip()]
            except ValueError:
                raise SettingsError(f"--speed-bands {args.speed_bands!r}: give speeds in m/s, e.g. 0.8,1.2") from None
        meta = {"source": args.source}
        if args.age_range:
            meta["age_range"] = parse_age_range(args.age_range)
        if args.subjects is not None:
            meta["n_subjects"] = args.subjects
        controls = _norm_controls(args, settings, opts)
        if not controls:
            raise DataError("no control trial could be used (see the messages above)")
        norms = build_norms(controls, speed_bands=bands, meta={k: v for k, v in meta.items() if v is not None},
                            convention=args.convention)
        path = write_norms(norms, args.output)
        print("\n".join(norms.describe()))
        print(f"norms written to {path}")
        return EXIT_OK
    else:  # score
        import pandas as pd

        from gaitid.cycles.scores import gait_scores, summary_lines
        from gaitid.pipeline import process

        norms = read_norms(args.norms)
        results = []
        for t in args.trials:
            trial, given, notes = trial_with_subject(t, opts, settings)
            results.append(process(trial, subject=given, static=args.static, settings=settings, warnings=notes))
        scores = gait_scores(results, norms, band=args.band if args.band is not None else "auto")
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(scores.drop(columns=["variable", "component"]).to_string(index=False, float_format="%.2f"))
        print("\n".join(summary_lines(scores)))
        for w in norms.warnings:
            print(f"  warning: {w}")
        if args.map:
            from gaitid.io.atomic import atomic_path
            from gaitid.report.mapchart import map_figure

            fig = map_figure(scores, title=f"{', '.join(r.name for r in results)}: Movement Analysis Profile")
            with atomic_path(args.map, inputs=tuple(args.trials)) as tmp:
                fig.savefig(tmp, dpi=150)
            print(f"MAP chart: {args.map}")
    return EXIT_OK
