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


# name -> (help, add arguments, run)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "info": ("summarise a C3D trial (rates, markers, plates, events, subject, model outputs)", add_info_arguments, cmd_info),
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


if __name__ == "__main__":
    sys.exit(main())
