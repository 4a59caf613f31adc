"""`gaitid run` writes a PDF and an HTML report for every real walking trial that has a usable
model (tests/report_shapes.py: REAL_TRIALS, with the options each needs); PlugInC3D.c3d, whose
subject data can only be given from Python for now, through Result.report."""

from __future__ import annotations

import pytest
from conftest import realdata_path
from report_shapes import REAL_TRIALS, real_options

from gaitid.cli import main

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


WITH_EMG = {"biomechzoo/HC030A05.c3d", "python-gaitalytics/test_small.c3d", "btkdata/PiG_Motion-FlatFoot-Full.c3d"}


@pytest.mark.parametrize("relative, cli, kwargs", REAL_TRIALS, ids=[t[0] for t in REAL_TRIALS])
def test_every_real_trial_gets_a_report(relative, cli, kwargs, tmp_path, capsys):
    path = realdata_path(relative)
    if cli is not None:
        assert main(["run", str(path), "-o", str(tmp_path), *real_options(cli)]) == 0, capsys.readouterr().err
    else:
        from gaitid.pipeline import process

        process(path, **real_options(kwargs)).report(tmp_path)
    pdf, html = tmp_path / f"{path.stem}_report.pdf", tmp_path / f"{path.stem}_report.html"
    assert pdf.read_bytes().startswith(b"%PDF-") and pdf.stat().st_size > 20_000
    text = html.read_text()
    emg = relative in WITH_EMG  # an EMG page: channels named by side and muscle (not Vicon's unmapped EMG1...)
    assert path.stem in text and text.count("<svg ") == 3 + emg and ('<section id="emg">' in text) == emg


@pytest.mark.parametrize("relative", ["btkdata/Eb015pi.c3d", "btkdata/Gait.c3d"])
def test_trials_without_a_usable_model_fail_clearly(relative, tmp_path, capsys):
    path = realdata_path(relative)
    assert main(["run", str(path), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert path.name in err and "lacks marker" in err and "Traceback" not in err
