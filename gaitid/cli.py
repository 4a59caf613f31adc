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

from gaitid.vocabulary import COP_THRESHOLD_N

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def add_info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="C3D trial to summarise")
    parser.add_argument("--cop-threshold", type=float, default=COP_THRESHOLD_N, metavar="N",
                        help=f"vertical force (N) below which the centre of pressure is undefined (default {COP_THRESHOLD_N:g})")


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
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a mass in kg (or 'plates')") from None


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Options that map onto :class:`gaitid.settings.Settings` (defaults there and in the README)."""
    g = parser.add_argument_group("processing settings (defaults: see the README)")
    g.add_argument("--model", help="model name (see 'gaitid models') or a model .toml file (default plugin-gait)")
    g.add_argument("--mass", type=_mass, metavar="KG",
                   help="body mass in kg, or 'plates' to estimate it from the force plates "
                        "(default: the file's PROCESSING:Bodymass)")
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
    from gaitid.vocabulary import parse_plate_overrides

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
        changes["plates"] = parse_plate_overrides(args.plates)
    return base.replace(**changes) if changes else base


# --------------------------------------------------------------------------- run


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trial", help="walking trial (.c3d, or OpenSim .trc with its _grf.mot beside it)")
    parser.add_argument("-o", "--outdir", required=True, help="folder for the results and the report")
    parser.add_argument("--static", help="static (calibration) trial")
    parser.add_argument("--suffix", default="", help="suffix for the result points in the C3D copy (e.g. _gid)")
    parser.add_argument("--no-report", action="store_true", help="skip the PDF/HTML report")
    parser.add_argument("--excel", action="store_true", help="also write an Excel workbook")
    parser.add_argument("--parquet", action="store_true", help="also write Parquet tables")
    parser.add_argument("--opensim", action="store_true", help="also write OpenSim GRF .mot and joint moments .sto")
    add_settings_arguments(parser)
    add_uncertainty_arguments(parser)


def add_uncertainty_arguments(parser: argparse.ArgumentParser) -> None:
    """The joint-load uncertainty options (gaitid.uncertainty; docs/uncertainty.md). Nothing is
    imported here: building the parser stays light (``gaitid --version``)."""
    g = parser.add_argument_group("uncertainty of the kinetics (docs/uncertainty.md)")
    g.add_argument("--uncertainty", type=int, nargs="?", const=200, metavar="SAMPLES",
                   help="SD and 95%% interval of every joint force, moment and power from the error model, by a "
                        "Monte Carlo of SAMPLES draws (default 200; 0 = first-order propagation only); off by default")
    g.add_argument("--error-model", metavar="TOML", help="your lab's error model (default: models/uncertainty/default.toml)")
    g.add_argument("--plate-kind", metavar="KIND",
                   help="the force plates' error: floor (default), floor_uncorrected, treadmill, or a kind your "
                        "error model adds")


def uncertainty_from_args(args: argparse.Namespace):
    """UncertaintySettings from the options, or None when --uncertainty is not given."""
    from gaitid.errors import SettingsError
    from gaitid.uncertainty import UncertaintySettings

    if args.uncertainty is None:
        if args.error_model or args.plate_kind:
            raise SettingsError("--error-model and --plate-kind need --uncertainty")
        return None
    kw = {"samples": args.uncertainty}
    if args.error_model:
        kw["error_model"] = args.error_model
    if args.plate_kind:
        kw["plates"] = args.plate_kind
    return UncertaintySettings(**kw)


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


def cmd_run(args: argparse.Namespace) -> int:
    """Process one trial and write its tables, a C3D copy with the results and the report."""
    from pathlib import Path

    from gaitid.pipeline import process

    settings = settings_from_args(args)
    result = process(args.trial, subject=args.mass, static=args.static, settings=settings,
                     uncertainty=uncertainty_from_args(args))
    out = Path(args.outdir)
    written = result.to_csv(out)
    if result.uncertainty is not None:
        written += write_uncertainty(result, out)
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
    if result.uncertainty is not None:
        u = result.uncertainty
        print(f"  uncertainty: {u.settings.samples or 'first-order'} samples, error model {u.error_model.name}, "
              f"{u.settings.plates} plates, {u.seconds:.2f} s: columns uncertainty_* in the tables")
        for note in u.notes:
            print(f"  uncertainty note: {note}")
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
    parser.add_argument("--force", action="store_true", help="reprocess trials whose outputs are up to date")
    parser.add_argument("--no-report", action="store_true", help="skip the per-trial reports")
    add_settings_arguments(parser)


def cmd_batch(args: argparse.Namespace) -> int:
    """Process every trial of a session or archive; exit 1 when some trial failed."""
    from pathlib import Path

    from gaitid.batch import run_batch

    summary = run_batch(args.sources, args.outdir, settings_from_args(args), jobs=args.jobs, scheduler=args.scheduler,
                        mass=args.mass, report=not args.no_report, force=args.force)
    counts = summary["status"].value_counts().to_dict()
    print(f"{len(summary)} trials: {counts.get('ok', 0)} ok, {counts.get('skipped', 0)} up to date, "
          f"{counts.get('failed', 0)} failed; summary in {Path(args.outdir) / 'batch_summary.csv'}")
    for _, row in summary[summary["status"] == "failed"].iterrows():
        print(f"  failed: {row['path']}: {row['error']}", file=sys.stderr)
    return EXIT_FAILURE if counts.get("failed", 0) else EXIT_OK


# --------------------------------------------------------------------------- models


def add_models_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one model (name or .toml path)")


def cmd_models(args: argparse.Namespace) -> int:
    """List the models and the markers each needs."""
    from gaitid.model.markerset import list_models, load_model, required_markers

    for name in [args.name] if args.name else list_models():
        model = load_model(name)
        need = required_markers(model)
        print(f"{model.name}: {getattr(model, 'description', '') or ''}".rstrip())
        print(f"  required: {' '.join(need['required'])}")
        if need["one_of"]:
            print(f"  one of:   {' | '.join('+'.join(group) for group in need['one_of'])}")
        if need["optional"]:
            print(f"  optional: {' '.join(need['optional'])}")
        if need["from_static"]:
            print(f"  rebuilt from the static trial (not needed in walking trials): {' '.join(need['from_static'])}")
    return EXIT_OK


# --------------------------------------------------------------------------- validate


def add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="C3D files with Plug-in Gait outputs, or folders")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of the table")
    parser.add_argument("--mass", type=float, metavar="KG", help="body mass for files that store none")


def cmd_validate(args: argparse.Namespace) -> int:
    """Compare gaitid with the Plug-in Gait kinetics stored in C3D files."""
    import json

    from gaitid.validate import format_table, validate

    records = validate(args.paths, mass=args.mass)
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
    "models": ("list the models and the markers each needs", add_models_arguments, cmd_models),
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
