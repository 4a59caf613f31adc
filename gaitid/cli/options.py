"""Command-line options shared by several commands: processing settings and subject data."""

from __future__ import annotations

import argparse
import os

from gaitid.core.vocabulary import NORMS_ENV

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
_LENGTH = {"m": 1.0, "cm": 1e-2, "mm": 1e-3}


def _mass(text: str):
    if text == "plates":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a mass in kg (or 'plates')") from None
    from gaitid.core.errors import SettingsError
    from gaitid.core.subject_record import check_plausible

    try:
        return check_plausible("mass", value, "--mass")
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def _mass_kg(text: str) -> float:
    if text == "plates":
        raise argparse.ArgumentTypeError("'plates' is not accepted here: give the mass in kg")
    return _mass(text)


def _lengths(field: str, option: str, sided: bool):
    """An argparse type: a length with an optional unit (m by default; '920mm', '92cm',
    '0.92'), or for ``sided`` options 'L,R' (one value for both sides; a unit written once,
    '920,915mm', applies to both)."""
    import re

    def parse(text: str):
        from gaitid.core.errors import SettingsError
        from gaitid.core.subject_record import check_plausible

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
                values.append(check_plausible(field, v, option, _unit_hint(field, u.group(1), unit)))
            except SettingsError as exc:
                raise argparse.ArgumentTypeError(exc.reason) from None
        return values * (2 if sided and len(values) == 1 else 1) if sided else values[0]

    return parse


def _unit_hint(field: str, number: str, unit: str | None) -> str:
    """For a length not plausible in ``unit`` (None: m, none written): the unit in which it is
    (``168`` as a height: ``write the unit, e.g. 168cm``; ``168mm``: ``did you mean 168cm?``)."""
    from gaitid.core.subject_record import plausible_range

    lo, hi, _ = plausible_range(field)
    fits = [u for u in ("mm", "cm", "m") if u != (unit or "m") and lo <= float(number) * _LENGTH[u] <= hi]
    if unit is None:
        return f"write the unit, e.g. {number}{fits[0]}" if fits else "write the unit (m, cm or mm)"
    return f"did you mean {number}{fits[0]}?" if fits else ""


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
    """:class:`gaitid.subject.layers.SubjectOptions` from the subject options."""
    from pathlib import Path

    from gaitid.subject.layers import SubjectOptions

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
        from gaitid.subject.readers import read_subjects

        read_subjects(file)  # a bad file is reported once, before any trial
    return SubjectOptions(values or None, file, mass == "plates")


def trial_with_subject(path, opts, settings):
    """The trial read from ``path``, the subject it is processed with, merged from every source
    (command-line values, ``--subject`` file, C3D PROCESSING, subject files beside it; sources
    recorded; :func:`gaitid.subject.stage.gather_subject`), and the notes the merge made: what
    ``run`` and ``norms`` give to ``process``."""
    from pathlib import Path

    from gaitid.pipeline import load_trial
    from gaitid.subject.stage import gather_subject

    trial = load_trial(path, cop_threshold=settings.cop_threshold_n)
    given, notes = gather_subject(trial, opts, Path(path).resolve())
    return trial, given, notes


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Options that map onto :class:`gaitid.core.settings.Settings` (defaults there and in docs/defaults.md)."""
    g = parser.add_argument_group("processing settings (defaults: see docs/defaults.md)")
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
    g.add_argument("--emg", metavar="MAP",
                   help="EMG channels to muscles: 'EMG1=L Rectus femoris,EMG2=L Hamstrings,EMG9=off' or a .csv/.toml "
                        "map file (channels whose label names side and muscle need none; docs/emg.md)")
    g.add_argument("--emg-normalise", choices=["none", "peak"],
                   help="EMG envelopes in the channel's unit (default) or in %% of each channel's peak")
    g.add_argument("--flat-foot", action=argparse.BooleanOptionalAction, default=None,
                   help="Plug-in Gait static: foot flat on the floor (heel lowered to the toe's height) or not "
                        "(default: the files' choice, else off as Nexus)")
    g.add_argument("--no-decompose", dest="decompose", action="store_false", default=True,
                   help="a plate both feet load (treadmill double support, split-belt crossing): both feet's "
                        "loads unknown (NaN) there, instead of each foot's share flagged 'decomposed'")
    g.add_argument("--max-fill", type=float, metavar="S",
                   help="marker gaps up to this long are filled from the other markers (default 0.5 s; 0: only "
                        "gaps of up to 10 frames, by spline); docs/gaps.md")
    g.add_argument("--contact-threshold", type=float, metavar="N",
                   help="vertical force above which a plate is loaded (default 20 N)")
    g.add_argument("--plugin-gait", action="store_true",
                   help="mirror Plug-in Gait: distal frame, external convention, Dempster, unfiltered plates")


def settings_from_args(args: argparse.Namespace):
    from gaitid.core.settings import Settings
    from gaitid.core.vocabulary import parse_plate_overrides

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
                from gaitid.core.errors import SettingsError

                raise SettingsError(f"--force-cutoff {fc!r}: give a frequency in Hz, 'markers' or 0") from None
        changes["force_cutoff_hz"] = fc
    for name in ("frame", "convention", "normalise", "events"):
        if getattr(args, name):
            changes[name] = getattr(args, name)
    if args.plates:
        changes["plates"] = parse_plate_overrides(args.plates)
    if getattr(args, "flat_foot", None) is not None:
        changes["flat_foot"] = args.flat_foot
    if getattr(args, "decompose", True) is False:
        changes["decompose_shared_plates"] = False
    if getattr(args, "emg", None):
        changes["emg_channels"] = emg_map_option(args.emg)
    if getattr(args, "emg_normalise", None):
        changes["emg_normalise"] = args.emg_normalise
    if getattr(args, "max_fill", None) is not None:
        changes["max_fill_s"] = args.max_fill
    if getattr(args, "contact_threshold", None) is not None:
        changes["contact_threshold_n"] = args.contact_threshold
    return base.replace(**changes) if changes else base


def emg_map_option(text: str) -> dict[str, str]:
    """``--emg``: a map file (.csv, .toml, or any existing file) or the pairs themselves."""
    from pathlib import Path

    from gaitid.core.vocabulary import parse_emg_map

    if text.lower().endswith((".csv", ".toml", ".txt")) or ("=" not in text and Path(text).is_file()):
        from gaitid.emg.channels import read_channel_map

        return read_channel_map(text)
    return parse_emg_map(text)


def add_norms_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--norms", default=os.environ.get(NORMS_ENV) or None, metavar="FILE",
                        help="normative data (.toml from 'gaitid norms build', .csv or Vicon .gcd): bands in the "
                             f"report, parameter norms, GPS/GVS (MAP) and GDI in <trial>_scores.csv; default: "
                             f"${NORMS_ENV} when set; 'none' for no norms")


def add_replace_outputs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--replace-outputs", action="store_true",
                        help="in the results C3D, replace the trial's own outputs of the same names (Vicon's "
                             "LAnkleMoment...) with gaitid's; default: keep them, gaitid's get a suffix")


def read_norms_option(path: str | None, convention: str):
    """The norms of ``--norms`` in the moments' ``convention`` (None for none; checked here so that a
    run without norms does not import gaitid.norms)."""
    if path is None or path.lower() == "none":
        return None
    from gaitid.norms import read_norms_setting

    return read_norms_setting(path, convention)


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
    """:class:`gaitid.uncertainty.UncertaintySettings` from the options, or None when
    --uncertainty is not given (SettingsError naming the option for a lone --error-model or
    --plate-kind)."""
    from gaitid.core.errors import SettingsError

    if args.uncertainty is None:
        if args.error_model or args.plate_kind:
            raise SettingsError("--error-model and --plate-kind need --uncertainty")
        return None
    from gaitid.uncertainty import UncertaintySettings

    kw: dict = {"samples": args.uncertainty}
    if args.error_model:
        kw["error_model"] = args.error_model
    if args.plate_kind:
        from gaitid.core.errors import GaitIDError
        from gaitid.uncertainty import load_error_model

        kw["plates"] = args.plate_kind
        try:  # checked before any trial is read, naming the options that fix it
            load_error_model(args.error_model or "default").plate(args.plate_kind)
        except GaitIDError as exc:
            raise SettingsError(f"--plate-kind {args.plate_kind}: {exc} (give a kind the --error-model has, or "
                                "add it to your error model)") from None
    return UncertaintySettings(**kw)


def check_outdir(outdir: str) -> None:
    """-o names a folder, or one that can be made: not a file, nor a path through a file."""
    from pathlib import Path

    from gaitid.core.errors import SettingsError

    for p in (Path(outdir), *Path(outdir).parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                where = "" if p == Path(outdir) else f" ({p} is a file)"
                raise SettingsError(f"-o {outdir}: not a folder{where}; give the folder for the results "
                                    "(made if missing)")
            return
