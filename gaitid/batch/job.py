"""One trial of a batch: its subject data, its processing and outputs, and what a session report keeps of it (see :mod:`gaitid.batch`)."""


from __future__ import annotations

import dataclasses
import json
import os
import pickle
import time
import traceback
from pathlib import Path

import numpy as np

import gaitid
from gaitid.batch.budget import Budget, OutOfTime, check_memory, time_limit
from gaitid.batch.combined import drop_trial_rows, write_trial_rows
from gaitid.batch.plan import Job
from gaitid.batch.session import RUN_RECORD, TrialInfo, scan_trial
from gaitid.core.errors import BudgetError, GaitIDError, ModelError
from gaitid.core.settings import Settings
from gaitid.core.vocabulary import NORMS_ENV
from gaitid.io.atomic import atomic_path
from gaitid.io.input_files import content_hash
from gaitid.subject.layers import SubjectOptions, subject_files

# What a trial's job writes; a trial run by a job of another version is run again. 2: the session
# report's input keeps the per-frame curves (version 1 kept only the ground reaction: a session
# report drew no joint curve), and the run record's warnings include the trial's own. 3: the results
# C3D holds Plug-in Gait's convention under its names, suffixed beside the trial's own outputs. 4: the
# EMG tables (<trial>_emg.csv, <trial>_emg_timing.csv) and their combined tables. 5: the data-quality
# checks' verdict in the record and in batch_summary.csv (column ``checks``). 6: the EMG on-off edges
# placed on the 50 Hz rectified signal (<trial>_emg_timing.csv's onsets and offsets) and the EMG page
# in the trial's and the session's reports. 7: a plate both feet load decomposed into each foot's load
# (flagged), its contacts and cycles kinetic. 8: functional calibration trials paired and used, the
# subject table's joint-centre rows and methods. 9: the marker gaps filled
# or left NaN (<trial>_fills.csv). 10: the session report's input keeps which frames of each foot's
# load are decomposed (the report marks them); the uncertainty's error model and contributions
# tables gain the decomposition source.
# 11: a filled marker flags only the curves it moves (frames table,
# report), a long gap filled from the static's segment shape, no kinematic event on an untrusted fill.
# 12: a functional calibration's fits judged by their markers' spread, the knee axis's turn and the gap
# to Harrington's centre (warnings), the knee axes' points in the subject table.
# 13: the markers check names a knocked marker (a warning and the check's detail in the run
# record and batch_summary.csv).
# 14: the dynamic consistency check's residual moment (run record, report).
# 15: a trailing foot's decomposed horizontal force follows its line of force turning at its measured
# rate (decomposed frames' loads and kinetics), a shared belt's contacts keep the source 'treadmill'.
OUTPUTS_VERSION = 15


def _file_stats(paths) -> list:
    """Each input's size, time and content hash: a file replaced by one of the same size and time
    (a copy keeping its times, a restore) is still a changed input."""
    out = []
    for p in paths:
        try:
            s = Path(p).stat()
            out.append([str(p), s.st_size, s.st_mtime_ns, content_hash(p)])
        except OSError:
            out.append([str(p), None, None, None])
    return out


def _fingerprint(job: Job, settings: Settings, extra: dict, subject: SubjectOptions) -> dict:
    inputs = [job.path] + ([job.static] if job.static else []) + list(job.functional)
    subject_inputs = ([subject.file] if subject.file else []) + subject_files(job.path.parent)
    return {"input": _file_stats(inputs), "subject_files": _file_stats(subject_inputs),
            "subject": {"values": subject.values, "plates": subject.plates}, "settings": settings.as_dict(),
            "options": extra, "gaitid": gaitid.__version__, "outputs": OUTPUTS_VERSION}


def slim_result(result):
    """What a session report needs of a Result, to store beside the trial's outputs: cycles, the
    per-frame output curves (the report time-normalises them per cycle), the normalised cycle arrays
    (``curves`` is built from them when asked, as for the Result), parameters, contacts, each foot's
    load's per-frame state and source without its samples (the report marks decomposed frames), and
    the trial without its analogs, plates, model outputs and all markers but the gait markers (the
    direction of progression), its plates without their samples. Never builds the long curves table."""
    from gaitid.contacts.foot_loads import FootLoad
    from gaitid.core.trial import PlateWrench

    def no_samples(w: PlateWrench) -> PlateWrench:
        return PlateWrench(w.rate, np.empty((0, 3)), np.empty((0, 3)), np.empty((0, 3)))

    t, gm = result.trial, result.markers
    wanted = {gm.left.heel, gm.left.toe, gm.left.ankle, gm.right.heel, gm.right.toe, gm.right.ankle, *gm.pelvis,
              *gm.pelvis_front, *gm.pelvis_back}
    keep = [i for i, lab in enumerate(t.marker_labels) if lab in wanted]
    plates = [dataclasses.replace(p, analog=no_samples(p.analog), point=no_samples(p.point)) for p in t.force_plates]
    trial = dataclasses.replace(t, markers=t.markers[:, keep], marker_labels=[t.marker_labels[i] for i in keep],
                                virtual_labels=[], virtual_points=None, model_outputs={}, analogs=None,
                                force_plates=plates)  # (the report says whether the trial had plates)
    curves = result.curves if result.curves_built else None  # a table given (uncertainty) is kept as it is
    empty = np.empty((0, 3))
    loads = {s: FootLoad(s, empty, empty, empty, ld.state, ld.source) for s, ld in (result.loads or {}).items()}
    return dataclasses.replace(result, trial=trial, kinematics=None, joint_loads={}, loads=loads, curves=curves,
                               curves_summary=None, parameters_summary=None)


def pack_result(result) -> bytes:
    """:func:`slim_result` pickled (for the sample walk about 1 MB)."""
    return pickle.dumps(slim_result(result), protocol=pickle.HIGHEST_PROTOCOL)


def unpack_result(data: bytes):
    """The Result stored by :func:`pack_result`; a ValueError for one stored by a gaitid before
    :data:`OUTPUTS_VERSION` 2 (it lacked the per-frame curves the report draws)."""
    stored = pickle.loads(data)
    if isinstance(stored, dict):
        raise ValueError("a session report input of an older gaitid, without the trial's curves")
    return stored


def configured_norms() -> str | None:
    """The normative data file of this run (``gaitid batch --norms``, or the ``GAITID_NORMS``
    environment variable, inherited by the worker processes); None for none."""
    path = os.environ.get(NORMS_ENV)
    return path if path and path.lower() != "none" else None


def read_configured_norms(convention: str):
    """The configured norms in the moments' ``convention``, or None (read once per worker)."""
    path = configured_norms()
    if path is None:
        return None
    from gaitid.norms import read_norms_setting

    return read_norms_setting(path, convention)


def run_job(job: Job, settings: Settings, mass: float | str | None = None, report: bool = True,
            force: bool = False, subject: SubjectOptions | None = None, budget: Budget | None = None) -> dict:
    """Process one trial and write its outputs; never raises (the error goes in the row).

    ``budget``: the trial's memory (checked from its header before it is read) and time
    (:func:`time_limit`); a trial over budget fails with a :class:`~gaitid.core.errors.BudgetError`
    and is tried again on the next run. The result is saved (tables, results C3D, the session
    report's input) before the report is rendered; a report that fails is a warning on the
    trial (column ``warnings``), not a failed trial, and is tried again on the next run."""
    subject = subject or SubjectOptions()
    budget = budget or Budget()
    if mass is not None:  # the older keyword: a mass in kg or 'plates'
        extra = SubjectOptions.from_mass(mass)
        subject = dataclasses.replace(subject, values={**(subject.values or {}), **(extra.values or {})},
                                      plates=subject.plates or extra.plates)
    t0 = time.perf_counter()
    row = {"trial": job.outdir.name, "path": str(job.path), "subject": job.subject, "session": job.session_label,
           "static": str(job.static or ""), "pairing": job.pairing, "status": "ok", "error": "", "warnings": "",
           "checks": "", "seconds": 0.0, "n_cycles": 0, "n_kinetic_cycles": 0, "subject_sources": "", "outdir": str(job.outdir)}
    if job.not_a_trial:
        row.update(trial=job.path.name, status="skipped", error=f"not processed: {job.not_a_trial}", outdir="")
        return row
    warnings = [job.renamed] if job.renamed else []
    stamp = job.outdir / RUN_RECORD
    fp, retry = None, False
    try:
        options = {"report": report, "norms": _norms_stamp(), "replace_outputs": job.replace_outputs}
        fp = json.loads(json.dumps(_fingerprint(job, settings, options, subject), default=str))
        if not force and stamp.exists():
            try:
                old = json.loads(stamp.read_text())
            except ValueError:
                old = None
            if old is not None and old.get("fingerprint") == fp and old.get("complete", True):
                if old.get("status", "ok") == "failed":
                    row.update(status="failed", error=old.get("error", ""),
                               subject_sources=old.get("subject_sources", ""))
                    row["up_to_date"] = True
                else:
                    row.update(status="skipped", n_cycles=old.get("n_cycles", 0),
                               n_kinetic_cycles=old.get("n_kinetic_cycles", 0),
                               subject_sources=old.get("subject_sources", ""))
                row["warnings"], row["checks"] = old.get("warnings", ""), old.get("checks", "")
                return row
        drop_trial_rows(job)  # rewritten below, or made again from the tables if this job stops half way
        with time_limit(budget.seconds):
            check_memory(job.path, budget.memory, budget.memory_source)
            result = _process(job, settings, subject, row)
            warnings += result.warnings  # (also in its report; with --no-report, only here)
            warnings += _write_outputs(result, job, report)
        row["checks"] = result.verdict
        row["n_cycles"] = len(result.cycles)
        row["n_kinetic_cycles"] = sum(c.kinetic for c in result.cycles)
    except OutOfTime:
        retry = True
        row.update(status="failed", error=f"{job.path}: stopped after {budget.seconds:g} s, the time one trial may "
                                          f"take here (--time-limit)")
    except BudgetError as exc:
        retry = True
        row.update(status="failed", error=str(exc))
    except GaitIDError as exc:
        row.update(status="failed", error=exc.for_cli())
    except Exception as exc:  # a bug in gaitid: record it, keep the batch going
        retry = True
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row.update(status="failed", error=f"internal error {type(exc).__name__}: {exc} "
                                          f"({Path(last.filename).name}:{last.lineno})")
    row["seconds"] = round(time.perf_counter() - t0, 3)
    row["warnings"] = "; ".join(warnings)
    if fp is not None and not retry:  # a bug or a budget is retried next time
        try:
            job.outdir.mkdir(parents=True, exist_ok=True)
            with atomic_path(stamp) as tmp:
                tmp.write_text(json.dumps({"fingerprint": fp, "status": row["status"], "error": row["error"],
                                           "n_cycles": row["n_cycles"], "n_kinetic_cycles": row["n_kinetic_cycles"],
                                           "subject_sources": row["subject_sources"], "static": row["static"],
                                           "pairing": row["pairing"], "warnings": row["warnings"],
                                           "checks": row["checks"],
                                           "complete": not any(w.startswith(REPORT_FAILED) for w in warnings)},
                                          indent=1))
        except (OSError, GaitIDError):
            pass
    return row


REPORT_FAILED = "report not written"


def _process(job: Job, settings: Settings, subject: SubjectOptions, row: dict):
    """The trial read, its subject merged and checked, and processed (the pipeline's Result)."""
    from gaitid.batch.session import trial_info
    from gaitid.pipeline import load_trial, process
    from gaitid.subject.check import check_subject, explain_markers
    from gaitid.subject.stage import gather_subject

    trial = load_trial(job.path, cop_threshold=settings.cop_threshold_n)
    info = job.info or trial_info(trial, job.path)
    given, notes = gather_subject(trial, subject, info.path)
    row["subject_sources"] = "; ".join(f"{k}: {v}" for k, v in given.subject.sources.items()
                                       if k in ("mass", "height") or k.startswith(("leg_", "knee_", "ankle_")))
    check_subject(trial, given.subject, settings, job.static is not None)
    try:
        return process(trial, subject=given, static=job.static, settings=settings, warnings=[*job.notes, *notes],
                       functional=list(job.functional) or None)
    except ModelError as exc:
        raise explain_markers(exc, trial, job.static is not None) from None


def _norms_stamp() -> list | None:
    path = configured_norms()
    return None if path is None else [path, *_file_stats([Path(path)])]


def _write_outputs(result, job: Job, report: bool) -> list[str]:
    """The trial's tables, subject table, results C3D and (with reports) the session report's
    input, then its report; returns the warnings (a report that could not be written)."""
    from gaitid.subject.merge import subject_table

    result.to_csv(job.outdir)
    write_trial_rows(result, job)  # its rows of the combined tables, here in the worker
    with atomic_path(job.outdir / f"{result.name}_subject.csv") as tmp:
        subject_table(result.trial.subject).to_csv(tmp, index=False)
    result.to_c3d(job.outdir / f"{result.name}_results.c3d", replace_outputs=job.replace_outputs)
    norms = read_configured_norms(result.settings.convention)
    scores = None
    if norms is not None:  # GPS, GVS (MAP) and GDI against the norms (docs/clinical.md)
        from gaitid.cycles.scores import gait_scores

        scores = gait_scores(result, norms)
        with atomic_path(job.outdir / f"{result.name}_scores.csv") as tmp:
            scores.to_csv(tmp, index=False)
    if not report:
        return []
    with atomic_path(job.outdir / "gaitid-result.pkl") as tmp:  # for the session report, before the report
        tmp.write_bytes(pack_result(result))
    try:
        result.report(job.outdir, normative=norms, clinical=scores)
    except GaitIDError as exc:
        return [f"{REPORT_FAILED}: {exc.reason}"]
    except Exception as exc:  # a bug in the report: the results are saved, say so
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return [f"{REPORT_FAILED}: internal error {type(exc).__name__}: {exc} "
                f"({Path(last.filename).name}:{last.lineno})"]
    return []


def scan_within_budget(path: Path, budget: Budget) -> TrialInfo:
    """The file's TrialInfo (:func:`gaitid.batch.session.scan_trial`) within the trial's budget: a file
    whose header promises more memory than one trial may use is not read (its job fails with
    the reason)."""
    try:
        with time_limit(budget.seconds):
            check_memory(path, budget.memory, budget.memory_source)
            return scan_trial(path)
    except OutOfTime:
        error = f"{path}: reading it took more than the {budget.seconds:g} s one trial may take here (--time-limit)"
    except GaitIDError as exc:
        error = str(exc)
    return TrialInfo(path, "unknown", (f"cannot read: {error}",), None, {}, frozenset(), error)


def failed_row(job: Job, reason: str) -> dict:
    """A summary row for a trial whose job gave no row (its worker died), with the reason."""
    return {"trial": job.outdir.name, "path": str(job.path), "subject": job.subject, "session": job.session_label,
            "static": str(job.static or ""), "pairing": job.pairing, "status": "failed",
            "error": f"{job.path}: {reason}", "warnings": job.renamed, "checks": "", "seconds": 0.0, "n_cycles": 0,
            "n_kinetic_cycles": 0, "subject_sources": "", "outdir": str(job.outdir)}


def describe_plan(jobs: list[Job], subject: SubjectOptions | None = None, settings: Settings | None = None) -> str:
    """What a batch will do, trial by trial: the static and why, the session, and the subject
    data each trial will use with the source of each value (``batch --dry-run``)."""
    from gaitid.pipeline import load_trial
    from gaitid.subject.check import check_subject
    from gaitid.subject.merge import describe_subject
    from gaitid.subject.stage import gather_subject

    subject = subject or SubjectOptions()
    lines = []
    for job in jobs:
        lines.append(f"{job.path}")
        if job.not_a_trial:
            lines.append(f"  not processed: {job.not_a_trial}")
            continue
        if job.renamed:
            lines.append(f"  output folder: {job.outdir.name} ({job.renamed})")
        lines.append(f"  static:  {job.static.name if job.static else 'none'} ({job.pairing})")
        if job.functional:
            lines.append(f"  functional: {', '.join(p.name for p in job.functional)} ({job.functional_pairing})")
        lines.append(f"  subject: {job.subject or 'unknown'}; session: {job.session_label}")
        try:
            trial = load_trial(job.path)
            given, notes = gather_subject(trial, subject, job.info.path if job.info is not None else job.path)
        except GaitIDError as exc:
            lines.append(f"  subject data: cannot be gathered: {exc}")
            continue
        merged = given.subject
        groups = describe_subject(merged)
        if subject.plates:
            groups.insert(0, "mass: estimated from the force plates (--mass plates)")
        lines += [f"  subject data: {g}" for g in groups] or ["  subject data: none"]
        try:
            check_subject(trial, merged, settings or Settings(), job.static is not None)
        except ModelError as exc:
            lines.append(f"  cannot run: {exc.reason}")
        if merged.mass is None and not subject.plates:
            lines.append("  cannot run: the body mass is unknown (--mass KG, or --mass plates)")
        for n in (*job.notes, *notes):
            if not n.startswith("no static trial:"):
                lines.append(f"  note: {n}")
    return "\n".join(lines)
