"""Archive scale, in one run: process() against a bare ezc3d read per real trial, cost
and peak memory per frame as the trial grows, and the wall time of ``gaitid run --no-report``.

    python benchmarks/bench_scale.py                       # this checkout
    python benchmarks/bench_scale.py --base /work/base     # and another checkout (before), same run
    python benchmarks/bench_scale.py --hour                # also the one-hour 100 Hz treadmill trial
    python benchmarks/bench_scale.py --lengths 1,10,100    # fewer lengths (default 1,10,100,1000)

1. ``process()`` / bare read: per real trial, ``--rounds`` rounds (each round runs every trial once:
   ``ezc3d.c3d(path)`` then ``process(path)``, CPU time) in one worker process; the median times and
   the median of the rounds' ratios (a read and a process() back to back share the machine's state);
   the median ratio over the trials (target: 1.5).
2. Length scaling: the synthetic overground walk (``gaitid.validation.synthetic.write_walkway``, 100 Hz
   markers, 1 kHz plates) at 1x, 10x, 100x and 1000x the sample walk's 380 frames, each
   ``process()`` in a fresh process: seconds, microseconds per frame and its ratio to the
   smallest length (target: flat within 2x), and peak memory (resident set above the process's
   size after a warm-up ``process()`` of the sample walk) per frame. The trial's own arrays
   (markers, analogs, plate wrenches at 1 kHz: 8 plates here) are printed apart: they are the
   input, not the pipeline's cost. ``--hour``: the one-hour split-belt treadmill (360,000
   frames, two plates at 1 kHz) too.
3. CLI: the wall time of ``python -m gaitid.cli run --no-report`` (the ``gaitid`` command) on the sample walk (a new
   interpreter each time: imports included, from compiled bytecode as an installed gaitid has it;
   median of 5 after a warm-up run) and of ``import gaitid.pipeline``.

4. Batch: ``bench_batch.py`` run for the same checkouts (``--base`` first), so one command prints
   the ``--jobs 2`` / ``--jobs 1`` speed-up with and without reports too (``--batch-rounds``).

The generated trials are cached in ``--data`` (default: a ``bench_scale`` folder in the temporary
directory). The machine is shared: compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REALDATA = REPO.parent / "shared" / "realdata"
if not REALDATA.exists():
    REALDATA = Path("/work/shared/realdata")
REAL = ["biomechzoo/HC030A05.c3d", "c3d-parser/MH0222_BP06.c3d", "python-gaitalytics/test_small.c3d",
        "btkdata/PiG_Motion3_FF.c3d", "btkdata/FunctionalWalk.c3d", "btkdata/PiG_Motion-FlatFoot-Full.c3d"]

RATIO_CHILD = r"""
import json, os, statistics, sys, time
repo, rounds = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, repo)
import ezc3d
from gaitid.pipeline import process
process(os.path.join(repo, "sample_data", "walk_synthetic.c3d"))
paths = sys.argv[3:]
times = {path: ([], []) for path in paths}
for path in paths:
    process(path); ezc3d.c3d(path)
for _ in range(rounds):  # round after round over the trials: a busy spell of the machine hits them all alike
    for path in paths:
        t0 = time.process_time(); ezc3d.c3d(path); t1 = time.process_time()
        process(path); t2 = time.process_time()
        times[path][0].append(t1 - t0); times[path][1].append(t2 - t1)
# per trial: the median times, and the median of each round's ratio (a read and a process() run back to back)
out = {path: (statistics.median(b), statistics.median(f), statistics.median([y / x for x, y in zip(b, f)]))
       for path, (b, f) in times.items()}
print(json.dumps(out))
"""

SCALE_CHILD = r"""
import json, os, resource, sys, time
repo, path = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import numpy as np
from gaitid.pipeline import process

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

process(os.path.join(repo, "sample_data", "walk_synthetic.c3d"))
base = max(rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
t0, c0 = time.perf_counter(), time.process_time()
r = process(path)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
def nbytes(o, seen):
    if id(o) in seen:
        return 0
    seen.add(id(o))
    if isinstance(o, np.ndarray):
        return o.nbytes if o.base is None else 0
    if isinstance(o, dict):
        return sum(nbytes(v, seen) for v in o.values())
    if isinstance(o, (list, tuple)):
        return sum(nbytes(v, seen) for v in o)
    if hasattr(o, "__dataclass_fields__"):
        return sum(nbytes(getattr(o, k), seen) for k in o.__dataclass_fields__)
    return 0
t = r.trial
trial_bytes = nbytes([t.markers, t.virtual_points, t.analogs, t.force_plates, t.model_outputs], set())
print(json.dumps(dict(frames=t.n_frames, cycles=len(r.cycles), wall=wall, cpu=cpu, peak=peak,
                      trial_bytes=trial_bytes, plates=len(t.force_plates))))
"""


def child(code: str, repo: Path, *args: str, timeout: float = 7200) -> dict:
    # the 1000x walk (8 plates) needs about 14 GiB: over the reader's default budget of 8 GiB
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(repo))
    env.setdefault("GAITID_MEMORY_BUDGET", "16G")
    res = subprocess.run([sys.executable, "-c", code, str(repo), *args], capture_output=True, text=True,
                         env=env, timeout=timeout, cwd=str(repo))
    if res.returncode != 0:
        raise RuntimeError(f"{repo}: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def synthetic_trials(data: Path, lengths: list[int], hour: bool) -> list[tuple[str, Path]]:
    """The long trials, written by this checkout's gaitid.validation.synthetic once and reused."""
    data.mkdir(parents=True, exist_ok=True)
    out = []
    for m in lengths:
        path = data / f"walk_{m}x.c3d"
        if not path.exists():
            subprocess.run([sys.executable, "-m", "gaitid.validation.synthetic", "walkway", str(path), "--times", str(m),
                            "--no-truth"], check=True, cwd=str(REPO), capture_output=True)
        out.append((f"walk {m}x", path))
    if hour:
        path = data / "treadmill_1h.c3d"
        if not path.exists():
            subprocess.run([sys.executable, "-m", "gaitid.validation.synthetic", "treadmill", str(path), "--duration", "3600",
                            "--no-truth"], check=True, cwd=str(REPO), capture_output=True)
        out.append(("treadmill 1 h", path))
    return out


def ratios(repo: Path, rounds: int) -> None:
    paths = [str(REALDATA / rel) for rel in REAL if (REALDATA / rel).exists()]
    if not paths:
        print("  (no real trials: realdata absent)")
        return
    res = child(RATIO_CHILD, repo, str(rounds), *paths)
    print(f"  {'trial':32s} {'bare read ms':>12s} {'process ms':>11s} {'ratio':>6s}   (CPU; medians of {rounds} "
          f"rounds; ratio: median of each round's process()/read)")
    rs = []
    for path, (bare, full, ratio) in res.items():
        rs.append(ratio)
        print(f"  {Path(path).name:32s} {1e3 * bare:12.1f} {1e3 * full:11.1f} {ratio:6.2f}")
    print(f"  median process()/bare-read ratio: {statistics.median(rs):.2f} (target 1.5)")


def scaling(repo: Path, trials: list[tuple[str, Path]], max_frames: int | None) -> None:
    print(f"  {'trial':14s} {'frames':>8s} {'cycles':>6s} {'plates':>6s} {'s':>8s} {'us/frame':>9s} {'ratio':>6s} "
          f"{'peak MB':>8s} {'B/frame':>8s} {'input B/frame':>13s}")
    first = None
    for name, path in trials:
        try:
            r = child(SCALE_CHILD, repo, str(path))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"  {name:14s} failed: {exc}")
            continue
        per = r["cpu"] / r["frames"]
        first = first or per
        print(f"  {name:14s} {r['frames']:8d} {r['cycles']:6d} {r['plates']:6d} {r['wall']:8.2f} {1e6 * per:9.1f} "
              f"{per / first:6.2f} {r['peak'] / 1e6:8.0f} {r['peak'] / r['frames']:8.0f} "
              f"{r['trial_bytes'] / r['frames']:13.0f}")


def cli(repo: Path, outdir: Path) -> None:
    """Wall time of ``gaitid run --no-report`` as a user's installed gaitid runs it: with its compiled
    bytecode (pip writes it at install, Python on first import), so PYTHONDONTWRITEBYTECODE is
    dropped and one warm-up run comes first; median of 5."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=str(repo))
    sample = repo / "sample_data" / "walk_synthetic.c3d"
    subprocess.run([sys.executable, "-m", "gaitid.cli", "run", "--no-report", str(sample), "-o", str(outdir)],
                   check=True, capture_output=True, env=env, cwd=str(outdir))
    runs, imports = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gaitid.cli", "run", "--no-report", str(sample), "-o", str(outdir)],
                       check=True, capture_output=True, env=env, cwd=str(outdir))
        runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import gaitid.pipeline"], check=True, env=env, cwd=str(outdir))
        imports.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env, cwd=str(outdir))
        imports[-1] -= time.perf_counter() - t0  # the interpreter's own start
    print(f"  gaitid run --no-report (sample walk): {statistics.median(runs):.2f} s wall (target 1 s); "
          f"import gaitid.pipeline: {statistics.median(imports):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", action="append", default=[], help="another checkout to measure in the same run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lengths", default="1,10,100,1000")
    ap.add_argument("--base-lengths", default="1,10,100", help="lengths for --base checkouts (the old code "
                    "needed about 30 kB per frame: 1000x would take 11 GB)")
    ap.add_argument("--hour", action="store_true", help="also the one-hour treadmill trial (this checkout)")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "bench_scale")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: ratio, scale, cli, batch")
    ap.add_argument("--batch-rounds", type=int, default=2, help="rounds of the batch speed-up (bench_batch.py)")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    lengths = [int(x) for x in args.lengths.split(",")]
    base_lengths = [int(x) for x in args.base_lengths.split(",")]
    trials = synthetic_trials(args.data, sorted(set(lengths) | set(base_lengths)), args.hour)
    repos = [(Path(b).resolve(), False) for b in args.base] + [(REPO, True)]
    with tempfile.TemporaryDirectory() as tmp:
        for repo, this in repos:
            print(f"== {repo}{' (this checkout)' if this else ''}")
            if "ratio" not in skip:
                ratios(repo, args.rounds)
            if "scale" not in skip:
                wanted = lengths if this else base_lengths
                chosen = [(n, p) for n, p in trials if (n.startswith("walk") and int(n.split()[1][:-1]) in wanted)
                          or (this and not n.startswith("walk"))]
                scaling(repo, chosen, None)
            if "cli" not in skip:
                out = Path(tmp) / repo.name
                out.mkdir(exist_ok=True)
                cli(repo, out)
    if "batch" not in skip:
        print("== batch speed-up (bench_batch.py)", flush=True)
        codes = [a for repo, _ in repos for a in ("--code", str(repo))]
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_batch.py")), "--rounds",
                        str(args.batch_rounds), *codes], check=True)


if __name__ == "__main__":
    main()
