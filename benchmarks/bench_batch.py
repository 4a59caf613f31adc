"""Batch speed-up: ``gaitid batch`` wall time at --jobs 1 and --jobs 2, with and without reports.

    python benchmarks/bench_batch.py [--trials 12] [--rounds 2] [--code DIR]

Builds a temporary archive of ``--trials`` walking trials (copies of the synthetic sample walk)
in three session folders, each with its static trial, and runs the command line on it the
way a user does (a fresh interpreter per run, so the imports are counted; ``--force`` and a
fresh output folder every run). The four configurations alternate within each round (the
machine is shared: only ratios measured in one run mean anything); the figures are medians
over the rounds. ``--code DIR`` runs another checkout (e.g. ``/work/base``, the code before
this change) through ``PYTHONPATH``.

Prints the wall time per configuration, the --jobs 2 / --jobs 1 speed-up with and without
reports, the cost per trial (wall time / trials at --jobs 1 and 2) and what a 5,000-trial
archive would take at that rate.

    python benchmarks/bench_batch.py --memory

instead measures what one trial's job really takes (peak resident memory of processing, tables
and results C3D, per frame, on synthetic walkways of 1x, 10x and 40x the sample's 380 frames, each
in a fresh interpreter) against the batch's estimate (:func:`gaitid.batch.trial_memory`), the
figure behind ``PROCESS_BYTES_PER_FRAME``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data"


def make_archive(root: Path, n_trials: int, n_sessions: int = 3) -> Path:
    """``n_trials`` copies of the sample walk in ``n_sessions`` folders, each with the static."""
    src = root / "archive"
    for s in range(n_sessions):
        folder = src / f"session{s + 1}"
        folder.mkdir(parents=True)
        shutil.copy(SAMPLE / "static_synthetic.c3d", folder / "static.c3d")
    for i in range(n_trials):
        shutil.copy(SAMPLE / "walk_synthetic.c3d", src / f"session{i % n_sessions + 1}" / f"walk{i + 1:02d}.c3d")
    return src


def run_cli(code: Path, src: Path, out: Path, jobs: int, report: bool) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the workers included) of one ``gaitid batch``."""
    env = dict(os.environ, PYTHONPATH=str(code))
    cmd = [sys.executable, "-c", "import sys; from gaitid.cli import main; sys.exit(main())", "batch", str(src),
           "-o", str(out), "--jobs", str(jobs), "--force"]
    if not report:
        cmd.append("--no-report")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=str(code), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1) or not (out / "batch_summary.csv").exists():
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return wall, cpu


_MEMORY_PROBE = r"""
import resource, sys, tempfile
from pathlib import Path
from gaitid.pipeline import load_trial, process
from gaitid.batch import trial_memory
path = Path(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
trial = load_trial(path)
result = process(trial, subject={"mass": 70.0} if trial.subject.mass is None else None)
with tempfile.TemporaryDirectory() as d:
    result.to_csv(d)
    result.to_c3d(Path(d) / "x_results.c3d")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(trial.n_frames, peak - base, trial_memory(path))
"""


def memory(code: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(code))
    print(f"{'frames':>7s} {'peak above imports (MiB)':>25s} {'per frame (kB)':>15s} {'estimate (MiB)':>15s} "
          f"{'estimate/peak':>14s}")
    with tempfile.TemporaryDirectory() as tmp:
        for times in (1, 10, 40):
            path = Path(tmp) / f"walk{times}.c3d"
            subprocess.run([sys.executable, "-m", "gaitid.synthetic", "walkway", str(path), "--times", str(times),
                            "--no-truth"], env=env, check=True, capture_output=True)
            out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            n, peak, est = int(out[0]), int(out[1]), int(out[2])
            print(f"{n:7d} {peak / 2**20:25.0f} {peak / n / 1000:15.1f} {est / 2**20:15.0f} {est / peak:14.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", action="store_true", help="measure one trial's peak memory against the estimate")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--code", type=Path, default=REPO, help="checkout to run (default: this one)")
    args = ap.parse_args()
    if args.memory:
        memory(args.code)
        return
    configs = [(1, False), (2, False), (1, True), (2, True)]
    times: dict[tuple[int, bool], list[float]] = {c: [] for c in configs}
    cpus: dict[tuple[int, bool], list[float]] = {c: [] for c in configs}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src = make_archive(root, args.trials)
        for r in range(args.rounds):
            order = configs if r % 2 == 0 else configs[::-1]  # alternate, so drift hits every configuration
            for jobs, report in order:
                out = root / f"out_{r}_{jobs}_{int(report)}"
                wall, cpu = run_cli(args.code, src, out, jobs, report)
                times[(jobs, report)].append(wall)
                cpus[(jobs, report)].append(cpu)
                shutil.rmtree(out, ignore_errors=True)
    med = {c: statistics.median(v) for c, v in times.items()}
    cpu = {c: statistics.median(v) for c, v in cpus.items()}
    print(f"code: {args.code}; {args.trials} trials in 3 sessions; {args.rounds} rounds (medians); "
          f"{os.cpu_count()} cores; load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'configuration':28s} {'wall (s)':>9s} {'CPU (s)':>8s} {'CPU/wall':>9s} {'wall per trial':>15s}  runs")
    for (jobs, report), t in med.items():
        runs = ", ".join(f"{x:.1f}" for x in times[(jobs, report)])
        c = cpu[(jobs, report)]
        print(f"--jobs {jobs} {'with reports' if report else 'no reports':18s} {t:9.2f} {c:8.1f} {c / t:9.2f} "
              f"{t / args.trials:15.3f}  {runs}")
    for report in (False, True):
        ratios = [a / b for a, b in zip(times[(1, report)], times[(2, report)])]
        work = cpu[(1, report)] / cpu[(2, report)]
        print(f"speed-up --jobs 2 vs --jobs 1, {'with' if report else 'without'} reports: "
              f"{statistics.median(ratios):.2f}x (per round: {', '.join(f'{x:.2f}' for x in ratios)}); "
              f"CPU time --jobs 1 / --jobs 2: {work:.2f} (1.00: no work added by the workers)")
    for report in (False, True):
        per = med[(2, report)] / args.trials
        per_cpu = cpu[(1, report)] / args.trials
        print(f"5,000 trials {'with' if report else 'without'} reports: about {5000 * per / 60:.0f} min at --jobs 2 "
              f"as measured ({per:.2f} s per trial); {5000 * per_cpu / 2 / 60:.0f} min on 2 free cores "
              f"({per_cpu:.2f} CPU-s per trial)")


if __name__ == "__main__":
    main()
