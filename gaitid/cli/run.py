"""``gaitid info`` and ``gaitid run``: one trial."""

from __future__ import annotations

import argparse

from gaitid.cli.calibrate import add_functional_argument, functional_lines
from gaitid.cli.options import (
    EXIT_OK,
    add_norms_argument,
    add_replace_outputs_argument,
    add_settings_arguments,
    add_subject_arguments,
    add_uncertainty_arguments,
    check_outdir,
    read_norms_option,
    settings_from_args,
    subject_from_args,
    trial_with_subject,
    uncertainty_from_args,
)
from gaitid.core.vocabulary import COP_THRESHOLD_N


def add_info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="C3D trial to summarise")
    parser.add_argument("--cop-threshold", type=float, default=COP_THRESHOLD_N, metavar="N",
                        help=f"vertical force (N) below which the centre of pressure is undefined (default {COP_THRESHOLD_N:g})")


def cmd_info(args: argparse.Namespace) -> int:
    """Print the trial summary of a C3D file."""
    from gaitid.io.c3d import read_c3d
    from gaitid.io.summary import trial_summary

    trial = read_c3d(args.file, cop_threshold=args.cop_threshold)
    print(trial_summary(trial))
    return EXIT_OK


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trial", help="walking trial (.c3d, or OpenSim .trc with its _grf.mot beside it)")
    parser.add_argument("-o", "--outdir", required=True, help="folder for the results and the report")
    parser.add_argument("--static", metavar="STATIC_OR_auto",
                        help="static (calibration) trial, or 'auto': the one batch would pair with the trial "
                             "(looked for in its folder, the folder above and the subfolders)")
    parser.add_argument("--force", action="store_true",
                        help="use a --static that looks like a walking trial or another subject's (with a warning); "
                             "process a trial that looks like a static one")
    parser.add_argument("--suffix", default=None,
                        help="suffix for the result points in the C3D copy (default: _gaitid when the trial has "
                             "outputs of those names, Vicon's, else none)")
    add_replace_outputs_argument(parser)
    add_functional_argument(parser)
    parser.add_argument("--no-report", action="store_true", help="skip the PDF/HTML report")
    parser.add_argument("--excel", action="store_true", help="also write an Excel workbook")
    parser.add_argument("--parquet", action="store_true", help="also write Parquet tables")
    parser.add_argument("--opensim", action="store_true", help="also write OpenSim GRF .mot and joint moments .sto")
    add_norms_argument(parser)
    add_subject_arguments(parser)
    add_settings_arguments(parser)
    add_uncertainty_arguments(parser)


def resolve_static(trial_path, info, static: str | None, force: bool):
    """(static path or None, warnings) for ``run``: a named static is checked by content and
    subject (an error unless ``force``); 'auto' pairs as batch does."""
    from pathlib import Path

    from gaitid.batch.pairing import check_static, pair_static
    from gaitid.batch.session import scan_trial
    from gaitid.core.errors import SettingsError

    if static is None:
        return None, []
    if static == "auto":
        me = Path(trial_path).resolve()
        near = [*me.parent.glob("*"), *me.parent.glob("*/*"), *me.parent.parent.glob("*")]  # where pairing looks
        candidates = sorted({p for p in near if p.suffix.lower() == ".c3d" and p.is_file() and p != me})
        statics = [i for i in (scan_trial(p) for p in candidates) if i.kind == "static"]
        pairing = pair_static(info, statics)
        if pairing.static is None:
            return None, [f"--static auto: no static trial: {pairing.reason}"]
        return pairing.static, [f"--static auto: {pairing.static.name} ({pairing.reason})"]
    sinfo = scan_trial(static)
    if sinfo.error:
        raise SettingsError(f"--static {static}: {sinfo.error}")
    problems = check_static(info, sinfo)
    if problems and not force:
        raise SettingsError(f"--static {static} for {Path(trial_path).name}: {'; '.join(problems)}; "
                            "give the right static trial, or --force to use this one anyway")
    return Path(static), [f"--static {Path(static).name} used despite: {p} (--force)" for p in problems]


def cmd_run(args: argparse.Namespace) -> int:
    """Process one trial and write its tables, a C3D copy with the results and the report."""
    from pathlib import Path

    from gaitid.batch.session import trial_info
    from gaitid.core.errors import DataError, ModelError
    from gaitid.io.atomic import atomic_path
    from gaitid.pipeline import process
    from gaitid.subject.check import check_subject, explain_markers
    from gaitid.subject.merge import subject_table

    settings = settings_from_args(args)
    uncertainty = uncertainty_from_args(args)
    opts = subject_from_args(args)
    check_outdir(args.outdir)  # a bad -o or --norms fails before the trial is processed and anything written
    norms = read_norms_option(args.norms, settings.convention)
    trial, given, more = trial_with_subject(args.trial, opts, settings)
    info = trial_info(trial, Path(args.trial).resolve())  # (whose trial it is, to pair a static)
    if info.kind == "static" and not args.force:  # by content, as --static refuses a walk
        raise DataError(f"a static trial, not a walk ({'; '.join(info.reasons[:2])}): it has no gait cycle to "
                        f"process; give it as --static STATIC beside a walking trial, or --force to process it "
                        "anyway", args.trial)
    if info.kind == "functional" and not args.force:
        raise DataError(f"a functional calibration trial, not a walk ({info.reasons[0]}): give it as --functional "
                        "beside a walking trial, or --force to process it anyway", args.trial)
    static, notes = resolve_static(args.trial, info, args.static, args.force)
    check_subject(trial, given.subject, settings, static is not None)
    try:
        result = process(trial, subject=given, static=static, settings=settings, uncertainty=uncertainty,
                         warnings=[*notes, *more], functional=args.functional)
    except ModelError as exc:
        raise explain_markers(exc, trial, static is not None) from None
    out = Path(args.outdir)
    if earlier_outputs(out, result.name):
        print(f"replacing the outputs of an earlier run in {out} ({result.name}_*)")
    points = None  # the results C3D's points, before anything is written (a name clash is an error)
    if args.trial.lower().endswith(".c3d"):
        from gaitid.export import result_points, write_results_c3d

        points = result_points(result, args.suffix, args.replace_outputs)
    written = result.to_csv(out)
    with atomic_path(out / f"{result.name}_subject.csv") as tmp:
        subject_table(result.trial.subject).to_csv(tmp, index=False)
    written.append(out / f"{result.name}_subject.csv")
    written.append(write_run_record(result, out, static))
    if result.uncertainty is not None:
        written += write_uncertainty(result, out)
    if points is not None:
        written.append(write_results_c3d(result, out / f"{result.name}_results.c3d", points=points))
    if args.parquet:
        written += result.to_parquet(out)
    if args.excel:
        written.append(result.to_excel(out / f"{result.name}.xlsx"))
    if args.opensim:
        written += result.to_opensim(out)
    scores = None
    if norms is not None:
        from gaitid.cycles.scores import gait_scores, summary_lines

        scores = gait_scores(result, norms)
        with atomic_path(out / f"{result.name}_scores.csv", inputs=(args.trial, args.norms)) as tmp:
            scores.to_csv(tmp, index=False)
        written.append(out / f"{result.name}_scores.csv")
    reports = [] if args.no_report else result.report(out, normative=norms, clinical=scores)
    kinetic = sum(c.kinetic for c in result.cycles)
    print(f"{result.name}: {len(result.cycles)} gait cycles ({kinetic} with kinetics), {len(written)} files in {out}")
    s = result.trial.subject
    body = [f"mass {s.mass:.1f} kg ({s.sources.get('mass', '?')})" if s.mass else "",
            f"height {s.height:.3f} m ({s.sources.get('height', '?')})" if s.height else ""]
    print(f"  subject{' ' + s.name if s.name else ''}: {'; '.join(b for b in body if b)}; every value and its "
          f"source in {result.name}_subject.csv")
    for line in functional_lines(s):
        print(f"  {line}")
    print(f"  {result.verdict}")
    for check in result.checks:
        if check.status != "passed":
            print(f"    {check.name} {check.status}: {check.detail}")
    for line in points.summary() if points is not None else ():
        print(f"  {line}")
    if scores is not None:
        print(f"  against the norms {args.norms}: " + "; ".join(summary_lines(scores)))
    if result.uncertainty is not None:
        u = result.uncertainty
        print(f"  uncertainty: {u.settings.samples or 'first-order'} samples, error model {u.error_model.name}, "
              f"{u.settings.plates} plates, {u.seconds:.2f} s: columns uncertainty_* in the tables, bands in "
              f"the report")
        for note in u.notes:
            print(f"  uncertainty note: {note}")
    for w in [*result.warnings, *(norms.warnings if norms is not None else [])]:
        print(f"  warning: {w}")
    for line in rejected_contact_lines(result.foot_contacts, result.name):
        print(line)
    for r in reports:
        print(f"report: {r}")
    return EXIT_OK


def earlier_outputs(out, name: str) -> list:
    """The outputs of an earlier run of trial ``name`` in the folder ``out`` (its tables, record,
    results C3D): the new run replaces them."""
    from gaitid.core.vocabulary import RUN_RECORD_SUFFIX

    return [p for p in (out / f"{name}_curves.csv", out / f"{name}{RUN_RECORD_SUFFIX}",
                        out / f"{name}_subject.csv", out / f"{name}_results.c3d") if p.exists()]


def write_run_record(result, outdir, static) -> "Path":
    """``<trial>_run.json`` beside the tables: the trial, its static, the settings that give the
    numbers their meaning (convention, frame, normalisation...), the subject's sources and gaitid's
    version; ``gaitid norms build`` reads the settings from it."""
    import dataclasses
    import json
    from pathlib import Path

    import gaitid
    from gaitid.core.vocabulary import RUN_RECORD_SUFFIX
    from gaitid.io.atomic import atomic_path

    target = Path(outdir) / f"{result.name}{RUN_RECORD_SUFFIX}"
    record = {"trial": str(result.trial.path or ""), "static": str(static or ""),
              "settings": result.settings.as_dict(), "subject_sources": dict(result.trial.subject.sources),
              "checks": [dataclasses.asdict(c) for c in result.checks], "verdict": result.verdict,
              "warnings": list(result.warnings), "gaitid": gaitid.__version__}
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(record, indent=1, default=str))
    return target


def rejected_contact_lines(contacts, name: str) -> list[str]:
    """Why a contact gives no kinetics (its loads are NaN where not measured), a line each for the
    first ones (:func:`gaitid.contacts.listed_rejections`), the rest counted. A contact invalid only
    on some of its frames (``frames_only``, docs/contacts.md) keeps the kinetics of its measured
    frames in the per-frame table: its line says so, and that it gives no kinetic cycle."""
    from gaitid.contacts import listed_rejections

    listed, more = listed_rejections(contacts)
    lines = [f"  contact without a kinetic cycle ({c.side or 'foot unknown'}): {c.reason}; its other frames' "
             f"kinetics are in {name}_frames.csv" if c.frames_only else
             f"  contact not used for kinetics ({c.side or 'foot unknown'}): {c.reason}" for c in listed]
    if more:
        lines.append(f"  ... and {more} more contacts without a kinetic cycle ({len(listed) + more} in all, "
                     f"each with its reason in {name}_contacts.csv)")
    return lines


def write_uncertainty(result, outdir) -> list:
    """``<trial>_uncertainty_{contributions,bands,error_model}.csv`` beside the tables (atomically)."""
    from pathlib import Path

    from gaitid.io.atomic import atomic_path

    u, written = result.uncertainty, []
    inputs = (result.trial.path,) if result.trial.path is not None else ()
    for name, table in (("contributions", u.contributions), ("bands", u.bands), ("error_model", u.error_model_table)):
        target = Path(outdir) / f"{result.name}_uncertainty_{name}.csv"
        with atomic_path(target, inputs=inputs) as tmp:
            table.to_csv(tmp, index=False)
        written.append(target)
    return written
