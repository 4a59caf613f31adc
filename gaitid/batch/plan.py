"""Planning a batch: the trials found, each one's static trial and session, the subject options (see :mod:`gaitid.batch`)."""


from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import gaitid
from gaitid.errors import SettingsError
from gaitid.io.atomic import atomic_path
from gaitid.pairing import (
    Pairing,
    check_static,
    pair_statics,
    session_key,
    subject_label,
)
from gaitid.session import RULES_VERSION, TrialInfo, find_trials, scan_trial

SCAN_CACHE = "gaitid-scan.json"


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


