"""process(), the report and the uncertainty stage: this checkout against another, in alternated rounds.

    python benchmarks/bench_checkouts.py --base /path/to/old/checkout [--rounds 5]

Each round runs one child process per checkout (the checkouts' order alternating from round to
round), which measures, per trial, the CPU time (best of ``--repeats``) of ``process()``, of the
PDF + HTML report of its Result, and of ``process(..., uncertainty=200)`` less ``process()``.
Trials: the sample walk, and when ../shared/realdata is there HC030A05 and MH0222_BP06. Printed:
each checkout's median over rounds, and the median of the rounds' ratios this/base (below 1:
this checkout is faster). On a shared machine only the ratios of one run mean anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_report import cpu  # best CPU time of repeats (this folder is first on sys.path)

ROOT = Path(__file__).resolve().parent.parent
REALDATA = Path(os.environ.get("GAITID_REALDATA", ROOT.parent / "shared" / "realdata"))


def trials() -> list[tuple[str, str]]:
    out = [("sample walk", str(ROOT / "sample_data" / "walk_synthetic.c3d"))]
    for label, rel in (("HC030A05", "biomechzoo/HC030A05.c3d"), ("MH0222_BP06", "c3d-parser/MH0222_BP06.c3d")):
        if (REALDATA / rel).exists():
            out.append((label, str(REALDATA / rel)))
    return out


def child(repeats: int) -> dict:
    """Measured with the gaitid first on sys.path (the checkout's)."""
    from gaitid.pipeline import process

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in trials():
            t_proc, r = cpu(lambda: process(path), repeats)
            r.report(tmp)  # warm fonts and caches
            t_rep, _ = cpu(lambda: r.report(tmp), repeats)
            process(path, uncertainty={"samples": 200, "seed": 1})
            t_unc, _ = cpu(lambda: process(path, uncertainty={"samples": 200, "seed": 1}), repeats)
            out[label] = {"process": t_proc, "report": t_rep, "uncertainty": t_unc - t_proc}
    return out


def run_child(checkout: Path, repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--repeats", str(repeats)],
                          capture_output=True, text=True, env=env, cwd=checkout)
    if done.returncode:
        sys.exit(f"{checkout}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, help="the other checkout (e.g. a git worktree of the old commit)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.repeats)))
        return
    if args.base is None:
        ap.error("--base is required")
    runs = {"this": [], "base": []}
    for k in range(args.rounds):
        order = (("this", ROOT), ("base", args.base)) if k % 2 == 0 else (("base", args.base), ("this", ROOT))
        for name, checkout in order:
            runs[name].append(run_child(checkout.resolve(), args.repeats))
    print(f"CPU seconds, median of {args.rounds} rounds (best of {args.repeats} per round); "
          f"ratio: median of the rounds' this/base")
    print(f"{'trial':14s} {'stage':12s} {'base':>8s} {'this':>8s} {'ratio':>6s}")
    for label in runs["this"][0]:
        for stage in ("process", "report", "uncertainty"):
            base = [r[label][stage] for r in runs["base"]]
            this = [r[label][stage] for r in runs["this"]]
            ratio = statistics.median(t / b for t, b in zip(this, base))
            print(f"{label:14s} {stage:12s} {statistics.median(base):8.3f} {statistics.median(this):8.3f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
