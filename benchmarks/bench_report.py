"""Time the report of one trial and of a session (wall and CPU seconds per stage).

    python benchmarks/bench_report.py [TRIAL.c3d ...]

Default: the shipped synthetic sample. A session report is timed on the given trials
(or on the sample repeated four times). The machine's load inflates wall time; CPU
time is the figure to compare.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from gaitid.pipeline import process  # noqa: E402
from gaitid.report.data import gather  # noqa: E402
from gaitid.report.figures import report_figures  # noqa: E402
from gaitid.report.html import write_html  # noqa: E402
from gaitid.report.pdf import write_pdf  # noqa: E402


def timed(fn, *args):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def bench(label: str, results, outdir: Path, repeats: int = 2) -> None:
    best = {}
    for _ in range(repeats):
        data, *t_gather = timed(gather, results)
        figures, *t_figs = timed(report_figures, data)
        _, *t_pdf = timed(write_pdf, data, figures, outdir / "bench_report.pdf", [])
        _, *t_html = timed(write_html, data, figures, outdir / "bench_report.html", [])
        for name, t in (("gather", t_gather), ("figures", t_figs), ("pdf", t_pdf), ("html", t_html)):
            best[name] = min(best.get(name, (1e9, 1e9)), tuple(t), key=lambda x: x[1])
    total = [sum(v[k] for v in best.values()) for k in (0, 1)]
    n_cycles = len(data.cycles)
    print(f"{label}: {len(results)} trial(s), {n_cycles} cycles, "
          f"pdf {(outdir / 'bench_report.pdf').stat().st_size / 1e3:.0f} kB, "
          f"html {(outdir / 'bench_report.html').stat().st_size / 1e3:.0f} kB")
    for name, (wall, cpu) in best.items():
        print(f"  {name:8s} wall {wall:6.2f} s   cpu {cpu:6.2f} s")
    print(f"  {'total':8s} wall {total[0]:6.2f} s   cpu {total[1]:6.2f} s")


def main(paths: list[str]) -> None:
    paths = paths or [str(ROOT / "sample_data" / "walk_synthetic.c3d")]
    results = [process(p) for p in paths]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        bench("trial report", results[:1], out)
        bench("session report", results if len(results) > 1 else results * 4, out)


if __name__ == "__main__":
    main(sys.argv[1:])
