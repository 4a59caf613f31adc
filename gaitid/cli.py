"""The ``gaitid`` command line: ``gaitid <command> ...``.

Each command is one function ``cmd_<name>(args) -> int`` registered in
:data:`COMMANDS` with a function that adds its arguments, so later commands
(``run``, ``batch``, ``models``, ``validate``) are added without touching the
others. Exit codes: 0 success, 1 failure (a :class:`~gaitid.errors.GaitIDError`:
its message on stderr, no traceback), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def add_info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="C3D trial to summarise")
    parser.add_argument("--cop-threshold", type=float, default=10.0, metavar="N",
                        help="vertical force (N) below which the centre of pressure is undefined (default 10)")


def cmd_info(args: argparse.Namespace) -> int:
    """Print the trial summary of a C3D file."""
    from gaitid.info import trial_summary
    from gaitid.io.c3d import read_c3d

    trial = read_c3d(args.file, cop_threshold=args.cop_threshold)
    print(trial_summary(trial))
    return EXIT_OK


# --------------------------------------------------------------------------- settings options (run, batch)


def _mass(text: str):
    if text == "plates":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a mass in kg (or 'plates')") from None
    from gaitid.errors import SettingsError
    from gaitid.model.subject import check_plausible

    try:
        return check_plausible("mass", value, "--mass")
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def _mass_kg(text: str) -> float:
    if text == "plates":
        raise argparse.ArgumentTypeError("'plates' is not accepted here: give the mass in kg")
    return _mass(text)


_LENGTH = {"m": 1.0, "cm": 1e-2, "mm": 1e-3}


def _lengths(field: str, option: str, sided: bool):
    """An argparse type: a length with an optional unit (m by default; '920mm', '92cm',
    '0.92'), or for ``sided`` options 'L,R' (one value for both sides; a unit written once,
    '920,915mm', applies to both)."""
    import re

    def parse(text: str):
        from gaitid.errors import SettingsError
        from gaitid.model.subject import check_plausible

        parts = [p.strip() for p in text.split(",")]
        if not sided and len(parts) != 1 or sided and len(parts) not in (1, 2):
            raise argparse.ArgumentTypeError(f"{option} {text!r}: give {'L,R or one value' if sided else 'one value'}")
        units = [re.fullmatch(r"([-+0-9.eE]+)\s*(m|cm|mm)?", p) for p in parts]
        if not all(units):
            raise argparse.ArgumentTypeError(f"{option} {text!r}: a length such as 0.92, 920mm or 92cm")
        given = {u.group(2) for u in units if u.group(2)}
        if len(given) > 1:
            raise argparse.ArgumentTypeError(f"{option} {text!r}: one unit for both values")
        unit = given.pop() if given else None
        values = []
        for u in units:
            v = float(u.group(1)) * _LENGTH[u.group(2) or unit or "m"]
            try:
                values.append(check_plausible(field, v, option, "" if unit else
                                              f"write the unit, e.g. {u.group(1)}mm"))
            except SettingsError as exc:
                raise argparse.ArgumentTypeError(exc.reason) from None
        return values * (2 if sided and len(values) == 1 else 1) if sided else values[0]

    return parse


def add_subject_arguments(parser: argparse.ArgumentParser, plates: bool = True) -> None:
    """Subject data: values that fill what the trial's file does not store (the file's own
    values are kept unless a value is typed here)."""
    g = parser.add_argument_group(
        "subject (command line > --subject file > the C3D's PROCESSING > .vsk/.mp beside the trial)")
    g.add_argument("--subject", metavar="FILE",
                   help="subject file: Vicon .vsk or .mp, or a table (.csv/.json/.toml, one row per subject, "
                        "picked by the trial's subject name)")
    g.add_argument("--mass", type=_mass if plates else _mass_kg,
                   metavar="KG", help="body mass in kg" + (", or 'plates' to estimate it from the force plates"
                                                           if plates else ""))
    g.add_argument("--height", type=_lengths("height", "--height", False), metavar="M",
                   help="height (m, or with a unit: 1760mm, 176cm)")
    g.add_argument("--leg-length", type=_lengths("leg_length", "--leg-length", True), metavar="L,R",
                   help="leg lengths ASIS-medial malleolus, left,right (m, or 920mm,915mm; one value for both)")
    g.add_argument("--knee-width", type=_lengths("knee_width", "--knee-width", True), metavar="L,R",
                   help="knee widths, left,right (m, or 105mm,104mm)")
    g.add_argument("--ankle-width", type=_lengths("ankle_width", "--ankle-width", True), metavar="L,R",
                   help="ankle widths, left,right (m, or 70mm,68mm)")


def subject_from_args(args: argparse.Namespace):
    """:class:`gaitid.batch.SubjectOptions` from the subject options."""
    from pathlib import Path

    from gaitid.batch import SubjectOptions

    values: dict = {}
    mass = getattr(args, "mass", None)
    if mass is not None and mass != "plates":
        values["mass"] = mass
    if getattr(args, "height", None) is not None:
        values["height"] = args.height
    for name in ("leg_length", "knee_width", "ankle_width"):
        v = getattr(args, name, None)
        if v is not None:
            values[f"{name}_left"], values[f"{name}_right"] = v
    file = Path(args.subject) if getattr(args, "subject", None) else None
    if file is not None:
        from gaitid.model.subject import read_subjects

        read_subjects(file)  # a bad file is reported once, before any trial
    return SubjectOptions(values or None, file, mass == "plates")


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Options that map onto :class:`gaitid.settings.Settings` (defaults there and in the README)."""
    g = parser.add_argument_group("processing settings (defaults: see the README)")
    g.add_argument("--model", help="model name (see 'gaitid models') or a model .toml file (default plugin-gait)")
    g.add_argument("--bsip", help="body-segment parameter table (default: the model's; dempster, de_leva_1996_male...)")
    g.add_argument("--cutoff", type=float, metavar="HZ", help="marker low-pass cutoff in Hz (default 6; 0 = unfiltered)")
    g.add_argument("--force-cutoff", metavar="HZ",
                   help="force-plate cutoff in Hz, 'markers' (default: same as the markers) or 0 (unfiltered)")
    g.add_argument("--frame", choices=["distal", "proximal", "lab"], help="frame of the joint moments (default distal)")
    g.add_argument("--convention", choices=["internal", "external"],
                   help="internal (muscle) moments (default) or external, as Plug-in Gait reports")
    g.add_argument("--normalise", choices=["mass", "bw-height", "none"], help="kinetics per kg (default), per BW x height, or raw")
    g.add_argument("--events", choices=["file", "detected", "merge"],
                   help="gait events: the file's when it has them (default), detected ones, or both")
    g.add_argument("--plates", metavar="SPEC", help="plate-to-foot overrides, e.g. '1=Left,2=Invalid,3=Auto'")
    g.add_argument("--plugin-gait", action="store_true",
                   help="mirror Plug-in Gait: distal frame, external convention, Dempster, unfiltered plates")


def settings_from_args(args: argparse.Namespace):
    from gaitid.settings import Settings

    base = Settings.plugin_gait() if args.plugin_gait else Settings()
    changes: dict = {}
    if args.model:
        changes["model"] = args.model
    if args.bsip:
        changes["bsip"] = args.bsip
    if args.cutoff is not None:
        changes["marker_cutoff_hz"] = args.cutoff or None
    if args.force_cutoff is not None:
        fc = args.force_cutoff
        if fc != "markers":
            try:
                fc = float(fc) or None
            except ValueError:
                from gaitid.errors import SettingsError

                raise SettingsError(f"--force-cutoff {fc!r}: give a frequency in Hz, 'markers' or 0") from None
        changes["force_cutoff_hz"] = fc
    for name in ("frame", "convention", "normalise", "events"):
        if getattr(args, name):
            changes[name] = getattr(args, name)
    if args.plates:
        from gaitid.plates import parse_plate_overrides  # (imports scipy.signal: only when needed)

        changes["plates"] = {k: v.lower() for k, v in parse_plate_overrides(args.plates).items()}
    return base.replace(**changes) if changes else base


# --------------------------------------------------------------------------- run


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trial", help="walking trial (.c3d, or OpenSim .trc with its _grf.mot beside it)")
    parser.add_argument("-o", "--outdir", required=True, help="folder for the results and the report")
    parser.add_argument("--static", metavar="STATIC_OR_auto",
                        help="static (calibration) trial, or 'auto': the one batch would pair with the trial "
                             "(looked for in its folder, the folder above and the subfolders)")
    parser.add_argument("--force", action="store_true",
                        help="use a --static that looks like a walking trial or another subject's (with a warning)")
    parser.add_argument("--suffix", default="", help="suffix for the result points in the C3D copy (e.g. _gid)")
    parser.add_argument("--no-report", action="store_true", help="skip the PDF/HTML report")
    parser.add_argument("--excel", action="store_true", help="also write an Excel workbook")
    parser.add_argument("--parquet", action="store_true", help="also write Parquet tables")
    parser.add_argument("--opensim", action="store_true", help="also write OpenSim GRF .mot and joint moments .sto")
    add_subject_arguments(parser)
    add_settings_arguments(parser)


def resolve_static(trial_path, info, static: str | None, force: bool):
    """(static path or None, warnings) for ``run``: a named static is checked by content and
    subject (an error unless ``force``); 'auto' pairs as batch does."""
    from pathlib import Path

    from gaitid.errors import SettingsError
    from gaitid.session import check_static, pair_static, scan_trial

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

    from gaitid.batch import check_subject, explain_markers, prepare_subject
    from gaitid.errors import ModelError
    from gaitid.io.atomic import atomic_path
    from gaitid.model.subject import subject_table
    from gaitid.pipeline import load_trial, process
    from gaitid.session import trial_info

    settings = settings_from_args(args)
    opts = subject_from_args(args)
    trial = load_trial(args.trial, cop_threshold=settings.cop_threshold_n)
    info = trial_info(trial, Path(args.trial).resolve())
    static, notes = resolve_static(args.trial, info, args.static, args.force)
    merged, more = prepare_subject(trial, info, opts)
    trial.subject = merged
    trial.warnings.extend([*notes, *more])
    check_subject(trial, settings, static is not None)
    try:
        result = process(trial, subject="plates" if opts.plates else None, static=static, settings=settings)
    except ModelError as exc:
        raise explain_markers(exc, trial, static is not None) from None
    out = Path(args.outdir)
    written = result.to_csv(out)
    with atomic_path(out / f"{result.name}_subject.csv") as tmp:
        subject_table(result.trial.subject).to_csv(tmp, index=False)
    written.append(out / f"{result.name}_subject.csv")
    if args.trial.lower().endswith(".c3d"):
        written.append(result.to_c3d(out / f"{result.name}_results.c3d", suffix=args.suffix))
    if args.parquet:
        written += result.to_parquet(out)
    if args.excel:
        written.append(result.to_excel(out / f"{result.name}.xlsx"))
    if args.opensim:
        written += result.to_opensim(out)
    reports = [] if args.no_report else result.report(out)
    kinetic = sum(c.kinetic for c in result.cycles)
    print(f"{result.name}: {len(result.cycles)} gait cycles ({kinetic} with kinetics), {len(written)} files in {out}")
    s = result.trial.subject
    body = [f"mass {s.mass:.1f} kg ({s.sources.get('mass', '?')})" if s.mass else "",
            f"height {s.height:.3f} m ({s.sources.get('height', '?')})" if s.height else ""]
    print(f"  subject{' ' + s.name if s.name else ''}: {'; '.join(b for b in body if b)}; every value and its "
          f"source in {result.name}_subject.csv")
    for w in result.warnings:
        print(f"  warning: {w}")
    for r in reports:
        print(f"report: {r}")
    return EXIT_OK


# --------------------------------------------------------------------------- batch


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
    add_subject_arguments(parser)
    add_settings_arguments(parser)


def cmd_batch(args: argparse.Namespace) -> int:
    """Process every trial of a session or archive; exit 1 when some trial failed."""
    from pathlib import Path

    from gaitid.batch import describe_plan, plan, run_batch

    settings = settings_from_args(args)
    opts = subject_from_args(args)
    if args.dry_run:
        jobs = plan(args.sources, args.outdir, pairing=args.pairing, cache=False)
        print(describe_plan(jobs, opts, settings))
        print(f"{len(jobs)} trials to process (dry run: nothing processed)")
        return EXIT_OK
    summary = run_batch(args.sources, args.outdir, settings, jobs=args.jobs, scheduler=args.scheduler,
                        subject=opts, pairing=args.pairing, report=not args.no_report,
                        parquet=args.parquet, force=args.force)
    counts = summary["status"].value_counts().to_dict()
    again = summary.attrs.get("up_to_date_failures", 0)
    print(f"{len(summary)} trials: {counts.get('ok', 0)} ok, {counts.get('skipped', 0)} up to date, "
          f"{counts.get('failed', 0)} failed{f' ({again} unchanged since the last run: --force retries)' if again else ''}"
          f"; summary in {Path(args.outdir) / 'batch_summary.csv'}")
    for _, row in summary[summary["status"] == "failed"].iterrows():
        error = str(row["error"])
        print(f"  failed: {error if error.startswith(str(row['path'])) else row['path'] + ': ' + error}",
              file=sys.stderr)
    return EXIT_FAILURE if counts.get("failed", 0) else EXIT_OK


# --------------------------------------------------------------------------- models


def add_models_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one model (name or .toml path)")


def cmd_models(args: argparse.Namespace) -> int:
    """List the models, the markers and the subject parameters each needs."""
    from gaitid.model.markerset import list_models, load_model, model_parameters, required_markers

    for name in [args.name] if args.name else list_models():
        model = load_model(name)
        need = required_markers(model)
        print(f"{model.name}: {getattr(model, 'title', '') or ''}".rstrip())
        print(f"  markers required: {' '.join(need['required'])}")
        if need["one_of"]:
            print(f"  one of:   {' | '.join('+'.join(group) for group in need['one_of'])}")
        if need["optional"]:
            print(f"  optional: {' '.join(need['optional'])}")
        if need["from_static"]:
            print(f"  rebuilt from the static trial (not needed in walking trials): {' '.join(need['from_static'])}")
        print("  subject: mass (--mass KG) always; height only for --normalise bw-height (--height M)")
        params = model_parameters(model)
        for p in params:
            if not p["required"]:
                continue
            sides = [("left", "L"), ("right", "R")] if p["per_side"] else [("left", "")]
            vicon = sorted({x.replace("{S}", model.sides[side]) for x in p["sources"] if x[:1].isupper() or "{S}" in x
                            for side, _ in sides})
            si = sorted({x.replace("{side}", side) for x in p["sources"] if x[:1].islower() for side, _ in sides})
            how = p["option"] or "--subject FILE"
            print(f"  needs {p['name']}{' per side' if p['per_side'] else ''}: {how}, or "
                  f"{'/'.join(vicon)} (C3D PROCESSING, .vsk, .mp; mm)"
                  + (f", or {'/'.join(si)} (a --subject table; m)" if si else ""))
        optional = []
        for p in params:
            if p["required"]:
                continue
            d = p["default"]
            if isinstance(d, str) and d.startswith("markers:"):
                dflt = f"measured {d[8:].replace(',', '-')}"
            elif p["static"]:
                dflt = "from the static trial, else the file's, else 0"
            elif d is None:
                dflt = "the model computes it when not given"
            else:
                dflt = f"default {d:g}"
            optional.append(f"{p['name']} ({dflt})")
        if optional:
            print(f"  optional parameters: {'; '.join(optional)}")
    return EXIT_OK


# --------------------------------------------------------------------------- validate


def add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="C3D files with Plug-in Gait outputs, or folders")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of the table")
    add_subject_arguments(parser, plates=False)


def cmd_validate(args: argparse.Namespace) -> int:
    """Compare gaitid with the Plug-in Gait kinetics stored in C3D files."""
    import json

    from gaitid.validate import format_table, validate

    opts = subject_from_args(args)
    records = validate(args.paths, subject=opts.values, subject_file=opts.file)
    if args.json:  # strict JSON: NaN (metric undefined) becomes null, numpy scalars plain numbers
        print(json.dumps(_jsonable(records), indent=1, allow_nan=False))
    else:
        print(format_table(records))
    return EXIT_OK


def _jsonable(value):
    import math

    import numpy as np

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(value) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


# name -> (help, add arguments, run)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "info": ("summarise a C3D trial (rates, markers, plates, events, subject, model outputs)", add_info_arguments, cmd_info),
    "run": ("process one trial: joint kinetics, tables, C3D with results, report", add_run_arguments, cmd_run),
    "batch": ("process a session or an archive (folders or globs), in parallel or on a Dask cluster",
              add_batch_arguments, cmd_batch),
    "models": ("list the models, the markers and the subject parameters each needs", add_models_arguments,
               cmd_models),
    "validate": ("compare gaitid with the Plug-in Gait kinetics stored in C3D files", add_validate_arguments, cmd_validate),
}


def build_parser() -> argparse.ArgumentParser:
    from gaitid import __version__

    parser = argparse.ArgumentParser(prog="gaitid", description="3D joint kinetics from motion-capture gait trials.")
    parser.add_argument("--version", action="version", version=f"gaitid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(p)
        p.set_defaults(run=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gaitid`` console script; returns the exit code."""
    from gaitid.errors import GaitIDError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, bad usage exits 2
        return int(exc.code or 0)
    if not getattr(args, "run", None):
        parser.print_usage(sys.stderr)
        print("gaitid: error: a command is required", file=sys.stderr)
        return EXIT_USAGE
    try:
        return args.run(args)
    except GaitIDError as exc:
        print(f"gaitid {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into a program that stopped reading (e.g. head)
        sys.stderr.close()
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
