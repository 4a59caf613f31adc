"""Batch speed-up: ``gaitid batch`` wall time at --jobs 1 and --jobs 2, with and without reports.

    python benchmarks/bench_batch.py [--trials 12] [--rounds 2] [--code DIR [--code DIR]]

Builds a temporary archive of ``--trials`` walking trials (copies of the synthetic sample walk)
in three session folders, each with its static trial, and runs the command line on it the
way a user does (a fresh interpreter per run, so the imports are counted; ``--force`` and a
fresh output folder every run). The four configurations alternate within each round (the
machine is shared: only ratios measured in one run mean anything); the figures are medians
over the rounds. ``--code DIR`` runs another checkout through ``PYTHONPATH``; given twice
(the code before a change, then after), both run alternately in the same rounds.

Prints the wall time per configuration, the --jobs 2 / --jobs 1 speed-up with and without
reports (measured, and what two free cores would give: the gaitid process's own CPU time plus
its workers' CPU time shared by two, the figure to read when the machine is loaded), the cost
per trial (wall time / trials at --jobs 1 and 2) and what a 5,000-trial archive would take.
Each round also times the start-up every batch pays before its first trial (interpreter and
imports, in a fresh interpreter: serial whatever --jobs says), and prints the speed-up of the
trials after it, the ceiling that start-up sets on two cores ((S + T) / (S + T / 2)) and from
how many trials it allows 1.8x.

    python benchmarks/bench_batch.py --memory

instead measures what one trial's job really takes (peak resident memory of the whole batch job:
processing, tables, its rows of the combined tables, results C3D, the session report's input and
its report; per frame, on synthetic walkways of 1x, 10x and 40x the sample's 380 frames (8
plates) and a 6-minute treadmill trial (36,000 frames, 2 plates), each in a fresh interpreter)
against the batch's estimate (:func:`gaitid.batch.trial_memory`), the
figure behind ``PROCESS_BYTES_PER_FRAME``.
"""

from __future__ import annotations

import argparse
import os
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


_CLI = """
import atexit, resource, sys
def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    sys.stderr.write(f"\\nBENCHCPU {s.ru_utime + s.ru_stime} {c.ru_utime + c.ru_stime}\\n")
atexit.register(_cpu)
from gaitid.cli import main
sys.exit(main())
"""


def user_env(code: Path) -> dict:
    """The environment of a user's run of the checkout ``code``: bytecode written and used."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(code)
    return env


def compile_once(code: Path) -> None:
    """Import what a batch run imports, so the bytecode exists before anything is timed."""
    subprocess.run([sys.executable, "-c", "import gaitid.cli, gaitid.batch, gaitid.pipeline, gaitid.report"],
                   env=user_env(code), cwd=str(code), check=True, capture_output=True)


_STARTUP = """
import importlib, sys
import gaitid.cli, gaitid.batch
from gaitid.batch.workers import _modules
for name in _modules(sys.argv[1] == "report"):
    importlib.import_module(name)
"""


def startup(code: Path, report: bool) -> float:
    """Wall time of what every batch does before its first trial, one process after the other:
    the interpreter and the imports of the command, the pipeline and (with reports) the report
    (a worker forked from the batch process shares them; at --jobs 1 they are the same)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", _STARTUP, "report" if report else "-"], env=user_env(code),
                   cwd=str(code), check=True, capture_output=True)
    return time.perf_counter() - t0


def run_cli(code: Path, src: Path, out: Path, jobs: int, report: bool) -> tuple[float, float, float]:
    """Wall time, and CPU time (user + system) of the gaitid process itself and of its worker
    processes, of one ``gaitid batch``. Python may write and use compiled bytecode, as an installed
    gaitid does (a machine that sets PYTHONDONTWRITEBYTECODE would otherwise recompile every
    module in every run; :func:`compile_once` writes it before the first round)."""
    env = user_env(code)
    cmd = [sys.executable, "-c", _CLI, "batch", str(src), "-o", str(out), "--jobs", str(jobs), "--force"]
    if not report:
        cmd.append("--no-report")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=str(code), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1) or not (out / "batch_summary.csv").exists():
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    line = [x for x in proc.stderr.splitlines() if x.startswith("BENCHCPU ")][-1].split()
    return wall, float(line[1]), float(line[2])


_MEMORY_PROBE = r"""
import importlib, resource, sys, tempfile
from pathlib import Path
from gaitid.batch import run_batch, trial_memory
from gaitid.batch.workers import _modules
for name in _modules(True):  # what a batch worker imports before its first trial
    importlib.import_module(name)
from gaitid.io.c3d_check import check_c3d
path = Path(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
with tempfile.TemporaryDirectory() as d:  # the trial's whole job, as a batch runs it (--jobs 1: in this process)
    summary = run_batch([path], d, jobs=1, report=True, progress=lambda r: None)
assert list(summary["status"]) == ["ok"], summary["error"].tolist()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(check_c3d(path).n_frames, peak - base, trial_memory(path))
"""


def memory(code: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(code))
    print(f"{'frames':>7s} {'peak above imports (MiB)':>25s} {'per frame (kB)':>15s} {'estimate (MiB)':>15s} "
          f"{'estimate/peak':>14s}")
    cases = [(f"walk{times}", ["walkway", "--times", str(times)]) for times in (1, 10, 40)]
    cases.append(("treadmill360s", ["treadmill", "--duration", "360"]))  # two plates, 36,000 frames
    with tempfile.TemporaryDirectory() as tmp:
        for name, how in cases:
            path = Path(tmp) / f"{name}.c3d"
            subprocess.run([sys.executable, "-m", "gaitid.validation.synthetic", how[0], str(path), *how[1:], "--no-truth"],
                           env=env, check=True, capture_output=True)
            out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)], env=env, check=True, cwd=tmp,
                                 capture_output=True, text=True).stdout.split()  # (cwd: not a checkout's gaitid)
            n, peak, est = int(out[0]), int(out[1]), int(out[2])
            print(f"{n:7d} {peak / 2**20:25.0f} {peak / n / 1000:15.1f} {est / 2**20:15.0f} {est / peak:14.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", action="store_true", help="measure one trial's peak memory against the estimate")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--code", type=Path, action="append",
                    help="checkout to run (default: this one); give it twice (before, after) to compare in one run")
    args = ap.parse_args()
    codes = args.code or [REPO]
    if args.memory:
        memory(codes[-1])
        return
    pairs = ((1, False), (2, False), (1, True), (2, True))
    configs = [(code, jobs, report) for code in codes for jobs, report in pairs]
    times: dict[tuple, list[float]] = {c: [] for c in configs}
    cpus: dict[tuple, list[float]] = {c: [] for c in configs}
    free: dict[tuple, list[float]] = {c: [] for c in configs}
    owns: dict[tuple, list[float]] = {c: [] for c in configs}
    starts: dict[tuple, list[float]] = {(code, report): [] for code in codes for report in (False, True)}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src = make_archive(root, args.trials)
        for code in codes:
            compile_once(code)
        for r in range(args.rounds):
            order = configs if r % 2 == 0 else configs[::-1]  # alternate, so drift hits every configuration
            for k, (code, jobs, report) in enumerate(order):
                out = root / f"out_{r}_{k}"
                wall, own, workers = run_cli(code, src, out, jobs, report)
                times[(code, jobs, report)].append(wall)
                cpus[(code, jobs, report)].append(own + workers)
                free[(code, jobs, report)].append(own + workers / jobs)  # on `jobs` free cores
                owns[(code, jobs, report)].append(own)
                shutil.rmtree(out, ignore_errors=True)
            for code in codes:
                for report in (False, True):
                    starts[(code, report)].append(startup(code, report))
    med = {c: statistics.median(v) for c, v in times.items()}
    cpu = {c: statistics.median(v) for c, v in cpus.items()}
    print(f"{args.trials} trials in 3 sessions; {args.rounds} rounds (medians); {os.cpu_count()} cores; "
          f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after")
    for code in codes:
        print(f"\ncode: {code}")
        print(f"{'configuration':28s} {'wall (s)':>9s} {'CPU (s)':>8s} {'of it gaitid (s)':>17s} {'CPU/wall':>9s} "
              f"{'wall per trial':>15s}  runs")
        for (c_, jobs, report), t in med.items():
            if c_ != code:
                continue
            runs = ", ".join(f"{x:.1f}" for x in times[(code, jobs, report)])
            c = cpu[(code, jobs, report)]
            own = statistics.median(owns[(code, jobs, report)])
            print(f"--jobs {jobs} {'with reports' if report else 'no reports':18s} {t:9.2f} {c:8.1f} {own:17.1f} "
                  f"{c / t:9.2f} {t / args.trials:15.3f}  {runs}")
        for report in (False, True):
            ratios = [a / b for a, b in zip(times[(code, 1, report)], times[(code, 2, report)])]
            work = cpu[(code, 1, report)] / cpu[(code, 2, report)]
            bound = [a / b for a, b in zip(free[(code, 1, report)], free[(code, 2, report)])]
            print(f"speed-up --jobs 2 vs --jobs 1, {'with' if report else 'without'} reports: "
                  f"{statistics.median(ratios):.2f}x measured (per round: {', '.join(f'{x:.2f}' for x in ratios)}); "
                  f"on 2 free cores {statistics.median(bound):.2f}x (gaitid's own CPU + its workers' CPU / 2); "
                  f"CPU time --jobs 1 / --jobs 2: {work:.2f}")
        for report in (False, True):
            # Amdahl: the start-up is serial at any --jobs, the trials after it are what workers share
            start = statistics.median(starts[(code, report)])
            one, two = med[(code, 1, report)] - start, med[(code, 2, report)] - start
            per_one = one / args.trials
            ceiling = (start + one) / (start + one / 2)
            print(f"{'with' if report else 'without'} reports: start-up before the first trial {start:.2f} s "
                  f"(interpreter and imports; serial); the trials after it {one:.2f} s at --jobs 1, {two:.2f} s at "
                  f"--jobs 2 ({one / two:.2f}x); the ceiling with this start-up on 2 cores "
                  f"{ceiling:.2f}x; 1.8x from about {8 * start / per_one:.0f} trials of "
                  f"{per_one:.2f} s (n >= 8 x start-up / time per trial)")
        for report in (False, True):
            start = statistics.median(starts[(code, report)])
            per = (med[(code, 2, report)] - start) / args.trials
            per_cpu = cpu[(code, 1, report)] / args.trials
            print(f"5,000 trials {'with' if report else 'without'} reports: about {(start + 5000 * per) / 60:.0f} "
                  f"min at --jobs 2 as measured ({per:.2f} s per trial after the start-up); "
                  f"{5000 * per_cpu / 2 / 60:.0f} min on 2 free cores ({per_cpu:.2f} CPU-s per trial at --jobs 1)")


if __name__ == "__main__":
    main()
