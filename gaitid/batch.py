"""Batch runs: a session folder or a whole archive, on this machine or a Dask cluster.

Conventions (documented in the README and docs/sessions.md):

- Trials: every ``*.c3d`` found under the given folders or glob patterns (recursively for
  folders). Each is classified by content (:func:`gaitid.session.classify_trial`): static
  trials (markers standing still) calibrate walking trials and are not processed; every other
  trial is processed (a trial that cannot be classified too, so its problem is reported).
- Each walking trial's static trial: :func:`gaitid.session.pair_static`: same subject, then
  same folder, then name; a tie or no match is reported per trial (summary column
  ``pairing`` and a warning in the trial's report), never broken by file time. A ``pairing``
  table (columns ``trial`` or ``path``, and ``static``; e.g. an edited ``batch_summary.csv``)
  overrides the automatic choice for the trials it lists.
- Subject data: :func:`gaitid.session.subject_layers` merged by
  :func:`gaitid.model.subject.merge_subject` (command line > ``--subject`` file > C3D
  PROCESSING > ``.vsk``/``.mp`` of the subject beside the trial); which source gave each value
  is in ``OUTDIR/<trial>/<trial>_subject.csv`` and the summary's ``subject_sources``.
- Outputs: ``OUTDIR/<trial>/`` holds the tables (CSV), the report (PDF, HTML),
  ``<trial>_results.c3d`` and ``gaitid-run.json`` (what the outputs were made from);
  ``OUTDIR/batch_summary.csv`` lists every trial with its subject, session, static, pairing
  reason, status (ok, failed, skipped = up to date), error, time and cycle counts;
  ``OUTDIR/batch_cycles.csv`` (and ``.parquet`` with ``parquet=True``) holds every cycle of
  every trial, one row per cycle and variable component (columns subject, session, trial,
  side, cycle, kinetic, variable, component, unit, pct_0 ... pct_100), and
  ``OUTDIR/batch_parameters.csv`` every discrete parameter of every cycle.
- Reruns: a trial whose inputs (trial, static, subject files), settings, options and gaitid
  version are those recorded in its ``gaitid-run.json`` is not processed again, whether it
  succeeded (status skipped) or failed (status failed, same error) unless ``force``; session
  reports and the combined tables are rebuilt only when one of their trials changed.
- One failing trial is recorded with its error and never stops the batch.
- Session reports: with reports on, the trials of one subject in one folder
  (:func:`gaitid.session.session_key`) get ``OUTDIR/session_<subject>_<folder>_report.pdf/.html``
  pooling their cycles (a session of one trial gets none: its trial report is the same), read from ``OUTDIR/<trial>/gaitid-result.pkl``: the trial's cycles,
  curves, parameters, contacts, ground reactions and the few markers that give the direction
  of progression (a few hundred kB; written by the same gaitid version, rebuilt with --force).
- Parallel: ``jobs`` worker processes on this machine, or a Dask distributed scheduler
  (``scheduler`` address; workers must see the same paths). Each trial is processed by
  the same function whichever way it runs, so the results are identical.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
import pickle
import re
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

import gaitid
from gaitid.errors import GaitIDError, ModelError, SettingsError
from gaitid.io.atomic import atomic_path
from gaitid.session import (
    RULES_VERSION,
    Pairing,
    TrialInfo,
    check_static,
    find_trials,
    pair_statics,
    scan_trial,
    session_key,
    subject_files,
    subject_label,
)
from gaitid.settings import Settings
from gaitid.trial import Subject

SUMMARY_COLUMNS = ["trial", "path", "subject", "session", "static", "pairing", "status", "error", "seconds",
                   "n_cycles", "n_kinetic_cycles", "subject_sources", "outdir"]
SCAN_CACHE = "gaitid-scan.json"

__all__ = ["Job", "SubjectOptions", "find_trials", "plan", "run_job", "run_batch", "describe_plan"]


@dataclass(frozen=True)
class SubjectOptions:
    """Subject data the user gave for every trial: ``values`` typed on the command line (a dict
    of SI values, see :func:`gaitid.model.subject.as_subject`), a ``file`` (``--subject``),
    and ``plates`` (estimate the mass from the force plates)."""

    values: dict | None = None
    file: Path | None = None
    plates: bool = False

    @classmethod
    def from_mass(cls, mass: float | str | None) -> SubjectOptions:
        if mass == "plates":
            return cls(plates=True)
        return cls(values={"mass": float(mass)}) if mass is not None else cls()


@dataclass(frozen=True)
class Job:
    """One trial to process: its path, its static trial (or None), its output folder, why
    that static (``pairing``), whose trial it is and which session it belongs to."""

    path: Path
    static: Path | None
    outdir: Path
    pairing: str = ""
    subject: str = ""
    session: str = ""
    session_label: str = ""
    notes: tuple[str, ...] = ()
    info: TrialInfo | None = field(default=None, compare=False, repr=False)


# ----------------------------------------------------------------------------- planning


def _scan_all(files: list[Path], cache_path: Path | None) -> list[TrialInfo]:
    """TrialInfo of every file, reusing ``cache_path`` entries whose file is unchanged."""
    cache = {}
    if cache_path is not None and cache_path.is_file():
        try:
            data = json.loads(cache_path.read_text())
            if data.get("gaitid") == gaitid.__version__ and data.get("rules") == RULES_VERSION:
                cache = data.get("files", {})
        except (ValueError, OSError):
            cache = {}
    infos, fresh, changed = [], {}, False
    for f in files:
        try:
            st = f.stat()
            stamp = [st.st_size, st.st_mtime_ns]
        except OSError:
            stamp = None
        entry = cache.get(str(f))
        if entry is not None and entry.get("stamp") == stamp:
            info = TrialInfo.from_dict(entry["info"])
        else:
            info = scan_trial(f)
            changed = True
        infos.append(info)
        fresh[str(f)] = {"stamp": stamp, "info": info.as_dict()}
    if cache_path is not None and (changed or set(fresh) != set(cache)):
        try:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(cache_path) as tmp:
                tmp.write_text(json.dumps({"gaitid": gaitid.__version__, "rules": RULES_VERSION, "files": fresh}))
        except OSError:
            pass
    return infos


def read_pairing(path: str | os.PathLike) -> dict[Path, Path | None]:
    """A pairing table (CSV with columns ``trial`` or ``path``, and ``static``; an empty static
    means none): {trial path: static path or None}. Relative paths are taken from the table's
    folder; a trial may be given by file name or stem when that is unambiguous."""
    path = Path(path)
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines()))
    except OSError as exc:
        raise SettingsError(f"--pairing {path}: cannot read: {exc}") from None
    if not rows or "static" not in rows[0] or not ({"path", "trial"} & set(rows[0])):
        raise SettingsError(f"--pairing {path}: needs the columns 'path' (or 'trial') and 'static'")
    out: dict = {}
    for row in rows:
        t = (row.get("path") or row.get("trial") or "").strip()
        s = (row.get("static") or "").strip()
        if not t:
            continue
        tp = Path(t) if Path(t).is_absolute() else (path.parent / t)
        sp = (Path(s) if Path(s).is_absolute() else path.parent / s) if s else None
        out[tp.resolve() if tp.exists() else Path(t)] = sp.resolve() if sp is not None and sp.exists() else sp
    return out


def _apply_pairing(w: TrialInfo, table: dict, infos: dict[Path, TrialInfo], auto: Pairing) -> Pairing:
    key = next((k for k in table if k == w.path), None)
    if key is None:
        named = [k for k in table if not k.is_absolute() and k.name in (w.path.name, w.path.stem)]
        key = named[0] if len(named) == 1 else None
    if key is None:
        return auto
    static = table[key]
    if static is None:
        return Pairing(w.path, None, "no static (pairing table)")
    if not static.exists():
        return Pairing(w.path, None, f"pairing table names {static}, which does not exist")
    info = infos.get(static) or scan_trial(static)
    problems = check_static(w, info)
    if problems:
        return Pairing(w.path, None, f"pairing table's static refused: {'; '.join(problems)}")
    return Pairing(w.path, static, "named in the pairing table")


def plan(sources: Iterable[str | os.PathLike], outdir: str | os.PathLike, *,
         pairing: str | os.PathLike | dict | None = None, cache: bool = True) -> list[Job]:
    """The jobs of a batch: every trial that is not a static, with its static trial, subject
    and session (see the module docstring). ``pairing``: a pairing table (file or dict)."""
    files = find_trials(sources)
    outdir = Path(outdir)
    infos = _scan_all(files, outdir / SCAN_CACHE if cache else None)
    statics = [i for i in infos if i.kind == "static"]
    walks = [i for i in infos if i.kind != "static"]
    pairs = pair_statics([w for w in walks if not w.error], statics)
    table = read_pairing(pairing) if isinstance(pairing, (str, os.PathLike)) else (pairing or {})
    by_path = {i.path: i for i in infos}
    names: dict[str, int] = {}
    jobs = []
    for w in walks:
        name = w.path.stem
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:  # same file name in two folders
            name = f"{name}-{hashlib.sha1(str(w.path.parent).encode()).hexdigest()[:6]}"
        p = pairs.get(w.path) or Pairing(w.path, None, "not paired: the file could not be read")
        if table:
            p = _apply_pairing(w, table, by_path, p)
        skey, label = session_key(w, p)
        notes = []
        if w.kind == "unknown" and not w.error:
            notes.append(f"not recognised as a walking or a static trial ({'; '.join(w.reasons[:2])}); "
                         "processed as a walking trial")
        if p.static is None:
            notes.append(f"no static trial: {p.reason}")
        jobs.append(Job(w.path, p.static, outdir / name, p.reason,
                        subject_label(w) or "", skey, _safe(label), tuple(notes), w))
    return jobs


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "session"


# ----------------------------------------------------------------------------- one trial


def _file_stats(paths) -> list:
    out = []
    for p in paths:
        try:
            s = Path(p).stat()
            out.append([str(p), s.st_size, s.st_mtime_ns])
        except OSError:
            out.append([str(p), None, None])
    return out


def _fingerprint(job: Job, settings: Settings, extra: dict, subject: SubjectOptions) -> dict:
    inputs = [job.path] + ([job.static] if job.static else [])
    subject_inputs = ([subject.file] if subject.file else []) + subject_files(job.path.parent)
    return {"input": _file_stats(inputs), "subject_files": _file_stats(subject_inputs),
            "subject": {"values": subject.values, "plates": subject.plates}, "settings": settings.as_dict(),
            "options": extra, "gaitid": gaitid.__version__}


def prepare_subject(trial, info: TrialInfo, subject: SubjectOptions) -> tuple[Subject, list[str]]:
    """The trial's merged Subject (sources recorded) and notes (sources not used, values on
    which sources disagree)."""
    from gaitid.model.subject import merge_subject, subject_disagreements
    from gaitid.session import subject_layers

    layers, notes = subject_layers(info, trial.subject, cli=subject.values, subject_file=subject.file)
    merged, _ = merge_subject(layers)
    merged.name = trial.subject.name or merged.name  # whose trial it is: the file says, not a subject file
    notes += [f"subject values differ between sources: {d}" for d in subject_disagreements(layers)]
    if subject.plates:
        merged.sources["mass"] = "estimated from the force plates (--mass plates)"
    return merged, notes


def check_subject(trial, settings: Settings, static: bool = False) -> None:
    """Before processing: a ModelError when the trial lacks the model's markers (naming the
    installed models its markers fit) or a required subject parameter (naming the option that
    gives it)."""
    from gaitid.model.markerset import load_model, missing_markers
    from gaitid.model.subject import describe_missing, missing_parameters

    model = load_model(settings.model)
    lacking = missing_markers(model, [*trial.marker_labels, *trial.virtual_labels], static)
    if lacking:
        raise explain_markers(ModelError(f"trial lacks marker(s) {', '.join(lacking)} needed by model "
                                         f"'{model.name}'", trial.path), trial, static)
    missing = missing_parameters(model, trial.subject)
    if missing:
        raise ModelError(describe_missing(model, missing, trial.path), trial.path)


def explain_markers(exc: ModelError, trial, static: bool) -> ModelError:
    """``exc`` (a trial lacking a model's markers) with the installed models the trial's
    markers do fit."""
    from gaitid.model.markerset import models_fitting

    if "lacks marker" not in exc.reason:
        return exc
    fits = models_fitting(list(trial.marker_labels) + list(trial.virtual_labels), static)
    hint = (f"; the trial's markers fit: {', '.join(fits)} (--model {fits[0]})" if fits
            else "; no installed model fits its markers (gaitid models lists what each needs; "
                 "--model FILE.toml takes your own)")
    return ModelError(exc.reason + hint, exc.path)


def slim_result(result):
    """What a session report needs of a Result, to store beside the trial's outputs: cycles,
    curves, parameters, contacts, ground reactions, and the trial without its analogs,
    plates, model outputs and all markers but the few that give the direction of progression."""
    from gaitid.events import GaitMarkers

    t = result.trial
    try:
        gm = GaitMarkers.for_trial(t)
        wanted = {gm.left.heel, gm.left.toe, gm.left.ankle, gm.right.heel, gm.right.toe, gm.right.ankle, *gm.pelvis}
    except GaitIDError:
        wanted = set()
    keep = [i for i, lab in enumerate(t.marker_labels) if lab in wanted]
    trial = dataclasses.replace(t, markers=t.markers[:, keep], marker_labels=[t.marker_labels[i] for i in keep],
                                virtual_labels=[], virtual_points=None, model_outputs={}, analogs=None,
                                force_plates=[])
    frames = result.frames[result.frames["variable"] == "GroundReactionForce"].reset_index(drop=True)
    frames.attrs = dict(result.frames.attrs)
    return dataclasses.replace(result, trial=trial, frames=frames, kinematics=None, joint_loads={}, loads={},
                               curves_summary=None, parameters_summary=None)


_CURVE_KEYS = ["side", "cycle", "kinetic", "variable", "component", "unit"]


def pack_result(result) -> bytes:
    """:func:`slim_result` pickled, its cycle curves stored as one row of values per curve
    (the long table rebuilt by :func:`unpack_result`): a few hundred kB per trial."""
    slim = slim_result(result)
    c = slim.curves
    packed = ("long", c)
    if c is not None and not c.empty and set(_CURVE_KEYS) <= set(c.columns):
        pct = np.sort(c["percent"].unique())
        g = c.sort_values([*_CURVE_KEYS, "percent"], kind="stable")
        n = len(pct)
        if len(g) % n == 0 and (g["percent"].to_numpy().reshape(-1, n) == pct).all():
            packed = ("wide", list(c.columns), g[_CURVE_KEYS].iloc[::n].reset_index(drop=True), pct,
                      g["value"].to_numpy(float).reshape(-1, n))
    return pickle.dumps({"result": dataclasses.replace(slim, curves=None), "curves": packed},
                        protocol=pickle.HIGHEST_PROTOCOL)


def unpack_result(data: bytes):
    """The Result stored by :func:`pack_result`."""
    stored = pickle.loads(data)
    packed = stored["curves"]
    if packed[0] == "long":
        curves = packed[1]
    else:
        _, columns, index, pct, values = packed
        curves = index.loc[index.index.repeat(len(pct))].reset_index(drop=True)
        curves["percent"] = np.tile(pct, len(index))
        curves["value"] = values.reshape(-1)
        curves = curves[columns]
    return dataclasses.replace(stored["result"], curves=curves)


def run_job(job: Job, settings: Settings, mass: float | str | None = None, report: bool = True,
            force: bool = False, subject: SubjectOptions | None = None) -> dict:
    """Process one trial and write its outputs; never raises (the error goes in the row)."""
    subject = subject or SubjectOptions()
    if mass is not None:  # the older keyword: a mass in kg or 'plates'
        extra = SubjectOptions.from_mass(mass)
        subject = dataclasses.replace(subject, values={**(subject.values or {}), **(extra.values or {})},
                                      plates=subject.plates or extra.plates)
    t0 = time.perf_counter()
    row = {"trial": job.outdir.name, "path": str(job.path), "subject": job.subject, "session": job.session_label,
           "static": str(job.static or ""), "pairing": job.pairing, "status": "ok", "error": "", "seconds": 0.0,
           "n_cycles": 0, "n_kinetic_cycles": 0, "subject_sources": "", "outdir": str(job.outdir)}
    stamp = job.outdir / "gaitid-run.json"
    fp = None
    try:
        fp = json.loads(json.dumps(_fingerprint(job, settings, {"report": report}, subject), default=str))
        if not force and stamp.exists():
            try:
                old = json.loads(stamp.read_text())
            except ValueError:
                old = None
            if old is not None and old.get("fingerprint") == fp:
                if old.get("status", "ok") == "failed":
                    row.update(status="failed", error=old.get("error", ""), subject_sources=old.get("subject_sources", ""))
                    row["up_to_date"] = True
                else:
                    row.update(status="skipped", n_cycles=old.get("n_cycles", 0),
                               n_kinetic_cycles=old.get("n_kinetic_cycles", 0),
                               subject_sources=old.get("subject_sources", ""))
                return row
        from gaitid.model.subject import subject_table
        from gaitid.pipeline import load_trial, process
        from gaitid.session import trial_info

        trial = load_trial(job.path, cop_threshold=settings.cop_threshold_n)
        info = job.info or trial_info(trial, job.path)
        merged, notes = prepare_subject(trial, info, subject)
        trial.subject = merged
        row["subject_sources"] = "; ".join(f"{k}: {v}" for k, v in merged.sources.items()
                                           if k in ("mass", "height") or k.startswith(("leg_", "knee_", "ankle_")))
        trial.warnings.extend([*job.notes, *notes])
        check_subject(trial, settings, job.static is not None)
        try:
            result = process(trial, subject="plates" if subject.plates else None, static=job.static,
                             settings=settings)
        except ModelError as exc:
            raise explain_markers(exc, trial, job.static is not None) from None
        result.to_csv(job.outdir)
        with atomic_path(job.outdir / f"{result.name}_subject.csv") as tmp:
            subject_table(result.trial.subject).to_csv(tmp, index=False)
        result.to_c3d(job.outdir / f"{result.name}_results.c3d")
        if report:
            result.report(job.outdir)
            with atomic_path(job.outdir / "gaitid-result.pkl") as tmp:  # for the session report
                tmp.write_bytes(pack_result(result))
        row["n_cycles"] = len(result.cycles)
        row["n_kinetic_cycles"] = sum(c.kinetic for c in result.cycles)
    except GaitIDError as exc:
        row.update(status="failed", error=str(exc))
    except Exception as exc:  # a bug in gaitid: record it, keep the batch going
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row.update(status="failed", error=f"internal error {type(exc).__name__}: {exc} "
                                          f"({Path(last.filename).name}:{last.lineno})")
    row["seconds"] = round(time.perf_counter() - t0, 3)
    if fp is not None and not row["error"].startswith("internal error"):  # a bug is retried next time
        try:
            job.outdir.mkdir(parents=True, exist_ok=True)
            with atomic_path(stamp) as tmp:
                tmp.write_text(json.dumps({"fingerprint": fp, "status": row["status"], "error": row["error"],
                                           "n_cycles": row["n_cycles"], "n_kinetic_cycles": row["n_kinetic_cycles"],
                                           "subject_sources": row["subject_sources"], "static": row["static"],
                                           "pairing": row["pairing"]}, indent=1))
        except OSError:
            pass
    return row


# ----------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress bar on a stream: counts and an estimate of the time left."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.t0 = total, 0, time.perf_counter()
        self.counts = {"ok": 0, "failed": 0, "skipped": 0}
        self.stream = stream if stream is not None else sys.stderr

    def update(self, row: dict) -> None:
        self.done += 1
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1
        elapsed = time.perf_counter() - self.t0
        left = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}  "
                f"ok {self.counts['ok']}  failed {self.counts['failed']}  skipped {self.counts['skipped']}  "
                f"left ~{_fmt(left)}  ")
        end = "\n" if self.done == self.total else ""
        print(line, end=end, file=self.stream, flush=True)


def _fmt(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


# ----------------------------------------------------------------------------- the batch


def describe_subject(subject: Subject) -> list[str]:
    """The subject's anthropometry grouped by source: ``C3D PROCESSING: mass 74 kg, height
    1760 mm, leg length 920/920 mm (L/R), ...``."""
    from gaitid.model.subject import NUMERIC_FIELDS, field_unit

    by_source: dict[str, list[str]] = {}
    done = set()
    for f in NUMERIC_FIELDS:
        v = getattr(subject, f)
        if v is None or f in done:
            continue
        src = subject.sources.get(f, "?")
        text = f"{v:g} kg" if field_unit(f) == "kg" else f"{v * 1000:g} mm"
        name = f.replace("_", " ")
        if f.endswith("_left"):
            other = f[:-5] + "_right"
            w = getattr(subject, other)
            if w is not None and subject.sources.get(other, "?") == src:
                done.add(other)
                name, text = f[:-5].replace("_", " "), f"{v * 1000:g}/{w * 1000:g} mm (L/R)"
        by_source.setdefault(src, []).append(f"{name} {text}")
    return [f"{src}: {', '.join(items)}" for src, items in by_source.items()]


def describe_plan(jobs: list[Job], subject: SubjectOptions | None = None, settings: Settings | None = None) -> str:
    """What a batch will do, trial by trial: the static and why, the session, and the subject
    data each trial will use with the source of each value (``batch --dry-run``)."""
    from gaitid.pipeline import load_trial

    subject = subject or SubjectOptions()
    lines = []
    for job in jobs:
        lines.append(f"{job.path}")
        lines.append(f"  static:  {job.static.name if job.static else 'none'} ({job.pairing})")
        lines.append(f"  subject: {job.subject or 'unknown'}; session: {job.session_label}")
        try:
            trial = load_trial(job.path)
            merged, notes = prepare_subject(trial, job.info, subject)
        except GaitIDError as exc:
            lines.append(f"  subject data: cannot be gathered: {exc}")
            continue
        groups = describe_subject(merged)
        if subject.plates:
            groups.insert(0, "mass: estimated from the force plates (--mass plates)")
        lines += [f"  subject data: {g}" for g in groups] or ["  subject data: none"]
        try:
            trial.subject = merged
            check_subject(trial, settings or Settings(), job.static is not None)
        except ModelError as exc:
            lines.append(f"  cannot run: {exc.reason}")
        if merged.mass is None and not subject.plates:
            lines.append("  cannot run: the body mass is unknown (--mass KG, or --mass plates)")
        for n in (*job.notes, *notes):
            if not n.startswith("no static trial:"):
                lines.append(f"  note: {n}")
    return "\n".join(lines)


def run_batch(
    sources: Iterable[str | os.PathLike],
    outdir: str | os.PathLike,
    settings: Settings | None = None,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    mass: float | str | None = None,
    subject: SubjectOptions | None = None,
    pairing: str | os.PathLike | dict | None = None,
    report: bool = True,
    parquet: bool = False,
    force: bool = False,
    progress: Callable[[dict], None] | None = None,
) -> pd.DataFrame:
    """Process every trial found; returns the summary table (also written to
    ``OUTDIR/batch_summary.csv``). ``jobs``: worker processes here; ``scheduler``: a Dask
    distributed scheduler address (``tcp://host:8786``) or a ``dask.distributed.Client``.
    ``mass`` (kg or 'plates') and ``subject`` (:class:`SubjectOptions`): subject data for
    every trial; ``pairing``: a pairing table overriding the automatic static trials."""
    settings = settings or Settings()
    if jobs < 1:
        raise SettingsError(f"jobs={jobs}: must be at least 1")
    subject = subject or SubjectOptions()
    if mass is not None:
        extra = SubjectOptions.from_mass(mass)
        subject = dataclasses.replace(subject, values={**(subject.values or {}), **(extra.values or {})},
                                      plates=subject.plates or extra.plates)
    todo = plan(sources, outdir, pairing=pairing)
    if not todo:
        raise SettingsError("no walking trial (.c3d) found in the given folders/patterns (static trials, "
                            "recognised by their content, are not processed on their own)")
    bar = Progress(len(todo)) if progress is None else None
    notify = progress or bar.update
    rows = []
    args = (settings, None, report, force, subject)
    if scheduler is not None:
        rows = _run_dask(todo, args, scheduler, notify)
    elif jobs == 1:
        for job in todo:
            rows.append(run_job(job, *args))
            notify(rows[-1])
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_job, job, *args) for job in todo]
            for fut in as_completed(futures):
                rows.append(fut.result())
                notify(rows[-1])
    order = {str(j.path): i for i, j in enumerate(todo)}
    rows = sorted(rows, key=lambda r: order[r["path"]])
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    out = Path(outdir)
    if report:
        _session_reports(todo, summary, out, force)
    write_combined_tables(todo, summary, out, parquet=parquet, force=force)
    with atomic_path(out / "batch_summary.csv") as tmp:
        summary.to_csv(tmp, index=False)
    summary.attrs["up_to_date_failures"] = sum(bool(r.get("up_to_date")) for r in rows)
    return summary


def _stamp_of(job: Job) -> str:
    """A digest of the trial's run record (changes whenever its outputs are rewritten)."""
    try:
        return hashlib.sha1((job.outdir / "gaitid-run.json").read_bytes()).hexdigest()
    except OSError:
        return ""


def _up_to_date(stamp_path: Path, digest: dict, outputs: list[Path]) -> bool:
    try:
        return json.loads(stamp_path.read_text()) == digest and all(p.exists() for p in outputs)
    except (OSError, ValueError):
        return False


def _session_reports(todo: list[Job], summary: pd.DataFrame, outdir: Path, force: bool = False) -> None:
    """One report per session (a subject in a folder), from the saved results of its
    processed trials; rebuilt only when one of its trials changed. A session of one trial has
    no session report: the trial's own report is it."""
    done = set(summary.loc[summary["status"].isin(["ok", "skipped"]), "path"])
    sessions: dict[str, list[Job]] = {}
    for job in todo:
        if str(job.path) in done:
            sessions.setdefault(job.session, []).append(job)
    notes = []
    for key, jobs in sessions.items():
        if len(jobs) < 2:
            continue
        name = f"session_{jobs[0].session_label}"
        stamp = outdir / f"{name}_report.json"
        digest = {"trials": [[str(j.path), _stamp_of(j)] for j in jobs], "gaitid": gaitid.__version__}
        outputs = [outdir / f"{name}_report.pdf", outdir / f"{name}_report.html"]
        if not force and _up_to_date(stamp, digest, outputs):
            continue
        results = []
        for job in jobs:
            try:
                results.append(unpack_result((job.outdir / "gaitid-result.pkl").read_bytes()))
            except (OSError, pickle.UnpicklingError, AttributeError, EOFError, TypeError, KeyError, ValueError):
                notes.append(f"{job.path.name}: no saved result for the session report (rerun with --force)")
        if not results:
            continue
        from gaitid.report import write_report  # (imports matplotlib: only when a report is due)

        subject = jobs[0].subject or "subject unknown"
        try:
            write_report(results, outdir, name=name,
                         title=f"Session {jobs[0].session_label} ({subject}): {len(results)} trial"
                               f"{'s' if len(results) > 1 else ''}")
            with atomic_path(stamp) as tmp:
                tmp.write_text(json.dumps(digest, indent=1))
        except GaitIDError as exc:
            notes.append(f"session report {name}: {exc}")
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def write_combined_tables(todo: list[Job], summary: pd.DataFrame, outdir: Path, *, parquet: bool = False,
                          force: bool = False) -> list[Path]:
    """``batch_cycles`` (one row per cycle and variable component, the curve at 0..100 % as
    columns pct_0..pct_100) and ``batch_parameters`` (one row per cycle and parameter) over
    every trial processed, with subject, session and trial columns; rebuilt only when a trial
    changed."""
    done = summary.loc[summary["status"].isin(["ok", "skipped"]), "path"].tolist()
    jobs = [j for j in todo if str(j.path) in set(done)]
    names = ["batch_cycles", "batch_parameters"]
    outputs = [outdir / f"{n}.{ext}" for n in names for ext in (("csv", "parquet") if parquet else ("csv",))]
    digest = {"trials": [[str(j.path), _stamp_of(j)] for j in jobs], "parquet": parquet, "gaitid": gaitid.__version__}
    stamp = outdir / "batch_tables.json"
    if not force and _up_to_date(stamp, digest, outputs):
        return []
    curves, params = [], []
    for j in jobs:
        ident = {"subject": j.subject, "session": j.session_label, "trial": j.path.stem, "path": str(j.path)}
        c = _read_table(j.outdir / f"{j.path.stem}_curves.csv")
        if c is not None and not c.empty:
            wide = c.set_index([*_CURVE_KEYS, "percent"])["value"].unstack("percent")
            wide.columns = [f"pct_{p:g}" for p in wide.columns]
            wide = wide.reset_index()
            curves.append(wide.assign(**ident)[[*ident, *wide.columns]])
        p = _read_table(j.outdir / f"{j.path.stem}_parameters.csv")
        if p is not None and not p.empty:
            params.append(p.assign(**ident)[[*ident, *p.columns]])
    cols_c = ["subject", "session", "trial", "path", "side", "cycle", "kinetic", "variable", "component", "unit"]
    tables = {"batch_cycles": pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=cols_c),
              "batch_parameters": pd.concat(params, ignore_index=True) if params else pd.DataFrame(
                  columns=["subject", "session", "trial", "path"])}
    written = []
    outdir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        with atomic_path(outdir / f"{name}.csv") as tmp:
            table.to_csv(tmp, index=False)
        written.append(outdir / f"{name}.csv")
        if parquet:
            with atomic_path(outdir / f"{name}.parquet") as tmp:
                table.to_parquet(tmp, index=False)
            written.append(outdir / f"{name}.parquet")
    with atomic_path(stamp) as tmp:
        tmp.write_text(json.dumps(digest, indent=1))
    return written


def _read_table(path: Path) -> pd.DataFrame | None:
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError):
        return None
    for col in ("component", "unit", "variable", "parameter", "side"):  # '' (a scalar), not NaN
        if col in table.columns:
            table[col] = table[col].fillna("").astype(str)
    return table


def _run_dask(todo: list[Job], args: tuple, scheduler, notify) -> list[dict]:
    try:
        from dask.distributed import Client, as_completed as dask_completed
    except ImportError:
        raise SettingsError("--scheduler needs Dask: pip install 'gaitid[cluster]'") from None
    own = not hasattr(scheduler, "submit")
    client = Client(scheduler) if own else scheduler
    try:
        futures = [client.submit(run_job, job, *args, pure=False) for job in todo]
        rows = []
        for fut in dask_completed(futures):
            rows.append(fut.result())
            notify(rows[-1])
        return rows
    finally:
        if own:
            client.close()
