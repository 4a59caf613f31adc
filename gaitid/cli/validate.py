"""``gaitid validate``: agreement with the Plug-in Gait kinetics stored in C3D files."""

from __future__ import annotations

import argparse

from gaitid.cli.options import EXIT_OK, add_subject_arguments, subject_from_args


def add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="C3D files with Plug-in Gait outputs, or folders")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of the table")
    parser.add_argument("--static", metavar="STATIC_OR_auto",
                        help="static (calibration) trial for every file, or 'auto' (default): each file's own, "
                             "paired by content and subject")
    parser.add_argument("--plates", metavar="SPEC", help="plate-to-foot overrides, e.g. '1=Left,2=Invalid,3=Auto'")
    add_subject_arguments(parser, plates=False)


def cmd_validate(args: argparse.Namespace) -> int:
    """Compare gaitid with the Plug-in Gait kinetics stored in C3D files."""
    import json

    from gaitid.core.vocabulary import parse_plate_overrides
    from gaitid.validation.plugin_gait import format_table, validate

    opts = subject_from_args(args)
    plates = parse_plate_overrides(args.plates) if args.plates else None
    records = validate(args.paths, subject=opts.values, subject_file=opts.file, static=args.static, plates=plates)
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
