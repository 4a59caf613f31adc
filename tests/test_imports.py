"""A lean import (issue 17): ``import gaitid.pipeline`` (what ``gaitid run`` and every batch
worker load) leaves out the report's, the cluster's and scipy's slow modules, and processing a
trial imports no scipy at all (the filter, peak finder, decimation and Cardan angles are numpy:
gaitid/core/butterworth.py, tests/test_butterworth.py). Checked in a fresh interpreter."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("matplotlib", "reportlab", "dask", "distributed", "scipy.stats", "scipy.signal", "scipy.interpolate",
         "scipy.spatial", "scipy.ndimage")


def loaded_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_importing_the_pipeline_leaves_out_report_cluster_and_scipy_stats():
    mods = loaded_after("import gaitid.pipeline, gaitid.pipeline.result, gaitid.export, gaitid.cli")
    assert "gaitid.pipeline" in mods and "pandas" in mods  # the probe did import them
    assert heavy(mods) == set()


def test_process_imports_what_it_uses_and_no_more():
    mods = loaded_after("from gaitid.pipeline import process\nfrom gaitid.core.resources import sample_data_dir\n"
                        "process(sample_data_dir() / 'walk_synthetic.c3d')")
    assert "gaitid.core.butterworth" in mods  # the probe did filter the markers
    assert heavy(mods) == set()
    assert not {m for m in mods if m.split(".")[0] == "scipy"}  # scipy only where a gap is filled (CubicSpline)
