"""The ``gaitid`` command line: ``gaitid <command> ...``.

Each command is one function ``cmd_<name>(args) -> int`` registered in
:data:`COMMANDS` with a function that adds its arguments, one module per command family
(``trial``: info, run; ``archive``: batch; ``models``; ``validate``; ``norms``), with the options
several share in ``options``; a new command is added without touching the
others. Exit codes: 0 success, 1 failure (a :class:`~gaitid.core.errors.GaitIDError`:
its message on stderr, no traceback), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from gaitid.cli.archive import add_batch_arguments, cmd_batch
from gaitid.cli.calibrate import add_calibrate_arguments, cmd_calibrate
from gaitid.cli.models import add_models_arguments, cmd_models
from gaitid.cli.norms import add_norms_arguments, cmd_norms
from gaitid.cli.options import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from gaitid.cli.run import add_info_arguments, add_run_arguments, cmd_info, cmd_run
from gaitid.cli.validate import add_validate_arguments, cmd_validate

# name -> (help, add arguments, run)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "info": ("summarise a C3D trial (rates, markers, plates, events, subject, model outputs)", add_info_arguments, cmd_info),
    "run": ("process one trial: joint kinetics, tables, C3D with results, report", add_run_arguments, cmd_run),
    "calibrate": ("a session's functional calibration: hip centres (SCoRE) and knee axes (SARA) from "
                  "functional trials, written as <static>_subject.csv", add_calibrate_arguments, cmd_calibrate),
    "batch": ("process a session or an archive (folders or globs), in parallel or on a Dask cluster",
              add_batch_arguments, cmd_batch),
    "models": ("list the models, the markers and the subject parameters each needs", add_models_arguments,
               cmd_models),
    "validate": ("compare gaitid with the Plug-in Gait kinetics stored in C3D files", add_validate_arguments, cmd_validate),
    "norms": ("build normative data from control trials, show a norms file, or score trials (GPS, MAP, GDI)",
              add_norms_arguments, cmd_norms),
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
    from gaitid.core.errors import GaitIDError

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
        print(f"gaitid {args.command}: error: {exc.for_cli()}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into a program that stopped reading (e.g. head)
        sys.stderr.close()
        return EXIT_OK
