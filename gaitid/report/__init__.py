"""Per-trial and per-session reports: a PDF and a self-contained HTML page.

:func:`write_report` takes one :class:`gaitid.pipeline.Result` (a trial report) or a
list of them (a session report: every cycle of every trial pooled per side) and
writes ``<name>_report.pdf`` and ``<name>_report.html`` into ``outdir``, atomically.
Content: header (trial(s), subject mass/height, processing date, gaitid version,
settings), spatio-temporal parameters, joint angles and moments of hip, knee and
ankle in three planes, joint powers, ground reaction forces, the moment
contributions (inertial, velocity, gravity, external), the kinetic parameters,
the gait cycles, the force-plate assignment and the warnings. See docs/report.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gaitid.errors import GaitIDError, SettingsError

FORMATS = ("pdf", "html")


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "report"


def write_report(result_or_results, outdir: str | os.PathLike, formats=FORMATS, normative=None,
                 name: str | None = None, title: str | None = None) -> list[Path]:
    """Write the report(s) and return their paths (in the order of ``formats``).

    ``result_or_results``: a Result or a list of Results (session). ``formats``: any of
    'pdf', 'html'. ``normative``: a CSV path, DataFrame or
    :class:`~gaitid.report.normative.NormativeBands` (format in :mod:`gaitid.report.normative`),
    drawn as a grey band. ``name``: file stem (default: the trial's name, or 'session');
    ``title``: the heading (default: the trial name or 'Session: N trials').
    """
    # figures are drawn on matplotlib's Agg canvas directly (no pyplot, no global backend change)
    from gaitid.report.data import gather
    from gaitid.report.figures import report_figures
    from gaitid.report.html import write_html
    from gaitid.report.normative import read_normative
    from gaitid.report.pdf import write_pdf

    if isinstance(formats, str):
        formats = (formats,)
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise SettingsError(f"report formats {list(formats)!r}: each must be one of {', '.join(FORMATS)}")
    import matplotlib

    data = gather(result_or_results, title=title)
    bands = read_normative(normative) if normative is not None else None
    with matplotlib.rc_context({"text.parse_math": False}):  # text from files ('$' in a unit) is never TeX
        figures = report_figures(data, bands)
    warnings = list(data.warnings) + (bands.warnings if bands is not None else [])
    stem = _safe_name(name or (data.trials[0] if not data.is_session else "session"))
    outdir = Path(outdir)
    inputs = tuple(r.trial.path for r in data.results if r.trial.path is not None)
    paths = []
    for fmt in formats:
        target = outdir / f"{stem}_report.{fmt}"
        writer = write_pdf if fmt == "pdf" else write_html
        try:
            with matplotlib.rc_context({"text.parse_math": False}):
                paths.append(writer(data, figures, target, warnings, inputs))
        except OSError as exc:  # unwritable folder, disk full, outdir is a file...
            raise GaitIDError(f"cannot write the {fmt.upper()} report: {exc.strerror or exc}", target) from exc
        except GaitIDError as exc:  # the same, found by gaitid.io.atomic
            raise GaitIDError(f"cannot write the {fmt.upper()} report: {exc}", target) from exc
    return paths
