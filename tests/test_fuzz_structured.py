"""Structured fuzz (issue 18): mutants of real files, every kind of tests/c3d_mutations.py, driven through
read_c3d, process() (default settings, 70 kg when the file stores no mass), the CSV tables, the results C3D
and Parquet, in a worker process (4 GiB address-space limit, 120 s per case: a longer one counts as a hang). The only acceptable outcomes
are a result or a gaitid error. ``GAITID_FUZZ_CASES`` sets the number of cases (default 160); the
benchmark ``benchmarks/bench_fuzz.py`` runs more and prints the table per kind."""

from __future__ import annotations

import os
from collections import Counter

from tests.c3d_mutations import cases, run_cases
from tests.conftest import REPO

SOURCES = ["btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d", "btkdata/Eb015pi.c3d",
           "c3d-parser/MH0222_BP06.c3d"]


def test_structured_mutants_give_a_result_or_a_gaitid_error(realdata):
    n = int(os.environ.get("GAITID_FUZZ_CASES", "160"))
    sources = [realdata / s for s in SOURCES if (realdata / s).exists()]
    outcomes: Counter = Counter()
    bad = []
    for (src, kind, seed), outcome, detail, what in run_cases(cases(sources, n, seed=2026), REPO):
        outcomes[outcome] += 1
        if outcome not in ("result", "gaitid error"):
            bad.append(f"{kind} / {src.name} / seed {seed}: {what}: {detail}")
    assert sum(outcomes.values()) == n
    assert not bad, "\n".join(bad[:20])
    assert outcomes["result"] > n // 10 and outcomes["gaitid error"] > n // 10  # both paths exercised
