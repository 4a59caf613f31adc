"""Structured fuzz of the C3D reader, process() and the writers.

Runs ``N`` reproducible mutants (tests/c3d_mutations.py: every kind in turn, sources
drawn from the real files) through read_c3d, process() (default settings; 70 kg when
the file stores no mass), the CSV tables, the results C3D and Parquet (and the report
on every 10th case), each in a worker process with a 4 GiB address-space limit, and
prints per mutation kind: cases, results, gaitid errors, anything else (other
exceptions, crashes, hangs), then the "anything else" details.

    python benchmarks/bench_fuzz.py [N] [SEED] [ROOT]

``ROOT`` is the checkout whose gaitid is run (default: this one), e.g. an older
checkout for a before/after comparison.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from c3d_mutations import KINDS, cases, run_cases  # noqa: E402

REALDATA = HERE.parent.parent / "shared" / "realdata"
if not REALDATA.exists():
    REALDATA = Path("/work/shared/realdata")
SOURCES = ["btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d", "btkdata/Eb015pi.c3d",
           "c3d-parser/MH0222_BP06.c3d", "btkdata/Gait.c3d", "biomechzoo/HC030A05.c3d"]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 18
    root = Path(sys.argv[3]) if len(sys.argv) > 3 else HERE.parent
    sources = [REALDATA / s for s in SOURCES if (REALDATA / s).exists()]
    table: dict[str, Counter] = defaultdict(Counter)
    others: list[str] = []
    t0 = time.time()
    for (src, kind, s), outcome, detail, what in run_cases(cases(sources, n, seed), root, report_every=10):
        table[kind]["cases"] += 1
        table[kind][outcome if outcome in ("result", "gaitid error") else "anything else"] += 1
        if outcome not in ("result", "gaitid error"):
            others.append(f"{kind} | {Path(src).name} seed {s} | {what} | {detail}")
    print(f"gaitid from {root}; {n} cases, seed {seed}, {time.time() - t0:.0f} s")
    print("| kind | cases | results | gaitid errors | anything else |")
    print("|---|---|---|---|---|")
    total = Counter()
    for kind in KINDS:
        c = table[kind]
        total.update(c)
        print(f"| {kind} | {c['cases']} | {c['result']} | {c['gaitid error']} | {c['anything else']} |")
    print(f"| **all** | {total['cases']} | {total['result']} | {total['gaitid error']} | {total['anything else']} |")
    print()
    for line in others:
        print(line)


if __name__ == "__main__":
    main()
