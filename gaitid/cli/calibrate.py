"""``gaitid calibrate``: a session's functional calibration (hip centres, knee axes) without a walk,
and the ``--functional`` option ``run`` shares."""

from __future__ import annotations

import argparse

from gaitid.cli.options import (
    EXIT_OK,
    add_subject_arguments,
    check_outdir,
    subject_from_args,
)


def add_functional_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--functional", action="append", metavar="C3D", default=None,
                        help="functional calibration trial (hip star arc or knee flexion; told apart by their "
                             "motion); repeat for several. Hip centres by SCoRE (a sphere fit with two thigh "
                             "markers) replace the regression; knee axes by SARA turn the thigh (ThighRotation; "
                             "docs/functional.md)")


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("static", help="static (calibration) trial of the session (.c3d)")
    add_functional_argument(parser)
    parser.add_argument("-o", "--outdir", required=True, help="folder for <static>_subject.csv")
    parser.add_argument("--min-range", type=float, default=None, metavar="DEG",
                        help="range of motion under which a fit is refused (default 20)")
    parser.add_argument("--max-residual", type=float, default=None, metavar="MM",
                        help="fit residual over which a warning is given (default 10)")
    add_subject_arguments(parser, plates=False)


def functional_lines(subject) -> list[str]:
    """One line per joint centre the subject's functional values give (method, residual, range)."""
    out = []
    for joint, stem in (("hip centre", "hip_centre"), ("knee axis", "knee_axis")):
        for side in ("left", "right"):
            source = subject.sources.get(f"{stem}_{side}_x")
            if source:
                out.append(f"{side} {joint}: {source}")
    return out


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Calibrate the session from its static and functional trials; write ``<static>_subject.csv``."""
    from dataclasses import replace
    from pathlib import Path

    from gaitid.core.errors import SettingsError
    from gaitid.core.settings import Settings
    from gaitid.io.atomic import atomic_path
    from gaitid.io.c3d import read_c3d
    from gaitid.model.functional import session_calibration
    from gaitid.subject.merge import subject_table
    from gaitid.subject.stage import gather_subject

    if not args.functional:
        raise SettingsError("gaitid calibrate needs one or more --functional C3D trials (hip star arc, knee flexion)")
    check_outdir(args.outdir)
    limits = {k: v for k, v in (("functional_min_range_deg", args.min_range),
                                ("functional_max_residual_mm", args.max_residual)) if v is not None}
    settings = Settings(**limits)
    static = read_c3d(args.static)
    given, notes = gather_subject(static, subject_from_args(args), Path(args.static).resolve())
    cal = session_calibration(args.functional, static, settings)
    values, sources = cal.subject_values()
    s = given.subject
    subject = replace(s, extra={**s.extra, **values}, sources={**s.sources, **sources})
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{Path(args.static).stem}_subject.csv"
    with atomic_path(path, inputs=(args.static, *args.functional)) as tmp:
        subject_table(subject).to_csv(tmp, index=False)
    for line in functional_lines(subject):
        print(f"  {line}")
    for note in [*notes, *cal.notes()]:
        print(f"  {note}")
    print(f"calibration: {path}")
    return EXIT_OK
