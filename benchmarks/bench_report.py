"""Report and Excel time per trial, as a ratio to process() measured in the same run.

    python benchmarks/bench_report.py [--base /work/base] [--long SECONDS] [--repeats N]

Trials: the shipped sample (3.8 s), synthetic walks of 3 s, 10 s and ``--long`` s (default 60)
written into a temporary folder, and, when ../shared/realdata is there, HC030A05 (2 s) and
walking2 (5 s at 250 Hz, every contact invalid). Per trial: CPU seconds (best of ``--repeats``) of
process(), of the report (PDF and HTML) and of the Excel export; the report's ratio to process()
(goal <= 2) and the Excel time (goal: well under 1 s for a 10 s trial).

``--base DIR`` measures the same trials with the code in DIR (e.g. /work/base, the code before
this change) in a child process of this run and prints both, so the ratios compare like with
like on a shared, noisy machine. The old Excel writer is timed on trials up to 10 s only (it took
66 s for 12 s and fails beyond Excel's row limit), on one repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REALDATA = Path(os.environ.get("GAITID_REALDATA", ROOT.parent / "shared" / "realdata"))


def trials(tmp: Path, long_s: float) -> list[tuple[str, str, dict]]:
    """(label, path, process() keyword arguments); synthetic walks written once into ``tmp``."""
    sys.path.insert(0, str(ROOT))
    from gaitid.validation.synthetic.params import GaitParams
    from gaitid.validation.synthetic.write import write_sample

    out = [("sample 3.8 s", str(ROOT / "sample_data" / "walk_synthetic.c3d"), {})]
    for seconds in (3.0, 10.0, long_s):
        folder = tmp / f"walk{seconds:g}"
        path = folder / "walk_synthetic.c3d"
        if not path.exists():
            write_sample(folder, GaitParams(n_frames=int(seconds * 100)))
        out.append((f"synthetic {seconds:g} s", str(path), {}))
    if REALDATA.is_dir():
        out.append(("HC030A05 2 s", str(REALDATA / "biomechzoo" / "HC030A05.c3d"), {}))
        out.append(("walking2 5 s", str(REALDATA / "opensim-core" / "walking2.c3d"),
                    {"model": "isb", "subject": "plates"}))
    return out


def cpu(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def measure(todo: list, repeats: int, excel_max_s: float | None) -> dict:
    """{label: {'process', 'report', 'excel' (CPU s or None), 'frames', 'error'}} with the gaitid on sys.path."""
    from gaitid.pipeline import process

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, kwargs in todo:
            row = {"process": None, "report": None, "excel": None, "frames": None, "error": ""}
            try:
                row["process"], r = cpu(lambda: process(path, **kwargs), repeats)
                row["frames"] = r.trial.n_frames
                duration = r.trial.n_frames / r.trial.point_rate
                r.report(tmp)  # warm caches (the per-frame table of the old code, fonts)
                row["report"], _ = cpu(lambda: r.report(tmp), repeats)
                if excel_max_s is None or duration <= excel_max_s:
                    row["excel"], _ = cpu(lambda: r.to_excel(Path(tmp) / "t.xlsx"),
                                          repeats if excel_max_s is None else 1)
            except Exception as exc:  # noqa: BLE001 -- a benchmark reports what failed and goes on
                row["error"] = f"{type(exc).__name__}: {exc}"[:120]
            out[label] = row
    return out


def show(label: str, rows: dict) -> None:
    print(f"\n{label}")
    print(f"  {'trial':16s} {'frames':>6s} {'process':>8s} {'report':>8s} {'ratio':>6s} {'excel':>8s}")
    for name, r in rows.items():
        if r["error"] and r["process"] is None:
            print(f"  {name:16s} failed: {r['error']}")
            continue
        ratio = f"{r['report'] / r['process']:6.2f}" if r["report"] is not None else "     -"
        report = f"{r['report']:8.3f}" if r["report"] is not None else "       -"
        excel = f"{r['excel']:8.3f}" if r["excel"] is not None else "       -"
        print(f"  {name:16s} {r['frames']:6d} {r['process']:8.3f} {report} {ratio} {excel}"
              + (f"   ({r['error']})" if r["error"] else ""))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="a checkout of the code before the change, measured in a child process")
    ap.add_argument("--long", type=float, default=60.0, help="length of the long synthetic walk, s")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)  # JSON file of trials: measure them, print JSON
    args = ap.parse_args(argv)
    if args.child:
        import matplotlib

        matplotlib.use("Agg")  # the old report draws with matplotlib
        todo = json.loads(Path(args.child).read_text())
        print(json.dumps(measure(todo, args.repeats, excel_max_s=10.5)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        todo = trials(Path(tmp), args.long)
        before = None
        if args.base:
            spec = Path(tmp) / "trials.json"
            spec.write_text(json.dumps(todo))
            env = {**os.environ, "PYTHONPATH": str(Path(args.base).resolve())}
            done = subprocess.run([sys.executable, "-c", "import runpy, sys; sys.argv = sys.argv[1:]; "
                                   "runpy.run_path(sys.argv[0], run_name='__main__')", str(Path(__file__).resolve()),
                                   "--child", str(spec), "--repeats", "1"],
                                  capture_output=True, text=True, env=env, cwd=args.base)
            if done.returncode:
                print(done.stderr[-2000:], file=sys.stderr)
            else:
                before = json.loads(done.stdout.strip().splitlines()[-1])
        sys.path.insert(0, str(ROOT))
        after = measure(todo, args.repeats, excel_max_s=None)
    print("CPU seconds (best of repeats); ratio = report / process(); goal: ratio <= 2, Excel well under 1 s at 10 s")
    if before is not None:
        show(f"before ({args.base})", before)
    show("after (this checkout)", after)


if __name__ == "__main__":
    main()
