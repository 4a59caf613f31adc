"""``python -m gaitid.validation.synthetic``: write the sample files, or a treadmill, stair or walkway trial."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gaitid.validation.synthetic.write import write_sample

USAGE = """usage: python -m gaitid.validation.synthetic OUTDIR
       python -m gaitid.validation.synthetic treadmill OUT.c3d [--duration S] [--layout split|tandem|single] [--no-truth]
       python -m gaitid.validation.synthetic stairs OUT.c3d [--direction ascent|descent] [--no-truth]
       python -m gaitid.validation.synthetic walkway OUT.c3d [--frames N | --times M] [--plate-every K]
                                  [--max-plate-pairs P] [--no-truth]
OUTDIR: write the sample files (walk, static, truth, segments); the other forms write one trial
(C3D + _truth.csv + _events.csv + _segments.json)."""


def _trial_command(kind: str, argv: list[str]) -> list[Path]:

    ap = argparse.ArgumentParser(prog=f"python -m gaitid.validation.synthetic {kind}", add_help=True)
    ap.add_argument("out", help="the C3D file to write")
    ap.add_argument("--no-truth", action="store_true", help="do not write the truth CSV (long trials)")
    if kind == "treadmill":
        from gaitid.validation.synthetic.treadmill_trial import LAYOUTS, write_treadmill

        ap.add_argument("--duration", type=float, default=12.0, help="trial length (s), default 12")
        ap.add_argument("--layout", choices=LAYOUTS, default="split")
        a = ap.parse_args(argv)
        return write_treadmill(a.out, duration_s=a.duration, layout=a.layout, truth=not a.no_truth)
    if kind == "stairs":
        from gaitid.validation.synthetic.stairs import write_stairs

        ap.add_argument("--direction", choices=("ascent", "descent"), default="ascent")
        a = ap.parse_args(argv)
        return write_stairs(a.out, direction=a.direction, truth=not a.no_truth)
    from gaitid.validation.synthetic.walkway import SAMPLE_FRAMES, write_walkway

    size = ap.add_mutually_exclusive_group()
    size.add_argument("--frames", type=int, help="number of frames at 100 Hz")
    size.add_argument("--times", type=int, default=10, help="length as a multiple of the sample walk's 380 frames")
    ap.add_argument("--plate-every", type=int, default=4, help="strides between plate pairs (default 4)")
    ap.add_argument("--max-plate-pairs", type=int, default=4, help="at most this many pairs (default 4; 0: none)")
    a = ap.parse_args(argv)
    n = a.frames if a.frames is not None else SAMPLE_FRAMES * a.times
    return write_walkway(a.out, n_frames=n, plate_every=a.plate_every, max_plate_pairs=a.max_plate_pairs,
                         truth=not a.no_truth)


def main(argv: list[str] | None = None) -> int:
    from gaitid.core.errors import GaitIDError

    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    try:
        if argv[0] in ("treadmill", "stairs", "walkway"):
            paths = _trial_command(argv[0], argv[1:])
        elif len(argv) == 1:
            paths = write_sample(argv[0])
        else:
            print(USAGE, file=sys.stderr)
            return 2
    except GaitIDError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0
