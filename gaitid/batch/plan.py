"""Planning a batch: the trials found, each one's static trial and session, the subject options (see :mod:`gaitid.batch`)."""


from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import gaitid
from gaitid.batch.pairing import (
    Pairing,
    check_static,
    folder_subjects,
    pair_functional,
    pair_statics,
    session_key,
    subject_label,
)
from gaitid.batch.session import (
    RULES_VERSION,
    RUN_RECORD,
    TrialInfo,
    find_sources,
    scan_trial,
)
from gaitid.core.errors import GaitIDError, SettingsError
from gaitid.io.atomic import atomic_path
from gaitid.io.input_files import content_hash

SCAN_CACHE = "gaitid-scan.json"


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
    not_a_trial: str = ""  # why this *.c3d name is recorded but not processed (a folder, a dangling link)
    renamed: str = ""  # why the output folder is not named after the trial (another trial has that name)
    replace_outputs: bool = False  # the results C3D replaces the trial's own outputs of the same names
    functional: tuple[Path, ...] = ()  # the session's functional calibration trials (hip, knee)
    functional_pairing: str = ""  # why those


def _scan_all(files: list[Path], cache_path: Path | None,
              scan: Callable[[list[Path]], list[TrialInfo]] | None = None) -> list[TrialInfo]:
    """TrialInfo of every file, reusing ``cache_path`` entries whose file is unchanged (size, time and
    content hash, :func:`~gaitid.io.input_files.content_hash`); the others
    are read by ``scan`` (a list of paths -> their TrialInfo in order; default: one after another
    here; the batch gives its worker processes)."""
    cache = {}
    if cache_path is not None and cache_path.is_file():
        try:
            data = json.loads(cache_path.read_text())
            if data.get("gaitid") == gaitid.__version__ and data.get("rules") == RULES_VERSION:
                cache = data.get("files", {})
        except (ValueError, OSError):
            cache = {}
    stamps, known = {}, {}
    for f in files:  # a file replaced by one of the same size and time is read again: its content differs
        try:
            st = f.stat()
            stamps[f] = [st.st_size, st.st_mtime_ns, content_hash(f) if stat.S_ISREG(st.st_mode) else None]
        except OSError:
            stamps[f] = None
        entry = cache.get(str(f))
        if entry is not None and entry.get("stamp") == stamps[f]:
            known[f] = TrialInfo.from_dict(entry["info"])
    unknown = [f for f in files if f not in known]
    if unknown:
        known.update(zip(unknown, (scan or (lambda fs: [scan_trial(f) for f in fs]))(unknown)))
    infos = [known[f] for f in files]
    fresh = {str(f): {"stamp": stamps[f], "info": known[f].as_dict()} for f in files}
    if cache_path is not None and (unknown or set(fresh) != set(cache)):
        try:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(cache_path) as tmp:
                tmp.write_text(json.dumps({"gaitid": gaitid.__version__, "rules": RULES_VERSION, "files": fresh}))
        except (OSError, GaitIDError):
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
        t = _unquote((row.get("path") or row.get("trial") or "").strip())
        s = _unquote((row.get("static") or "").strip())
        if not t:
            continue
        tp = Path(t) if Path(t).is_absolute() else (path.parent / t)
        sp = (Path(s) if Path(s).is_absolute() else path.parent / s) if s else None
        out[tp.resolve() if tp.exists() else Path(t)] = sp.resolve() if sp is not None and sp.exists() else sp
    return out


def _unquote(cell: str) -> str:
    """A cell as written before ``batch_summary.csv`` made it spreadsheet-safe (``'=x`` -> ``=x``)."""
    return cell[1:] if cell.startswith("'") and cell[1:2] in ("=", "+", "-", "@", "\t", "\r") else cell


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
         pairing: str | os.PathLike | dict | None = None, cache: bool = True,
         scan: Callable[[list[Path]], list[TrialInfo]] | None = None) -> list[Job]:
    """The jobs of a batch: every trial that is neither a static nor a functional calibration
    trial, with its static trial, its session's functional trials (:func:`pair_functional`), subject
    and session (see the module docstring), then the ``*.c3d`` names that are not files (jobs
    with ``not_a_trial`` set: recorded, not processed). ``pairing``: a pairing table (file or dict);
    ``scan``: reads the files not in the scan cache (see :func:`_scan_all`)."""
    files, rejected = find_sources(sources)
    outdir = Path(outdir)
    infos = _scan_all(files, outdir / SCAN_CACHE if cache else None, scan)
    statics = [i for i in infos if i.kind == "static"]
    functionals = [i for i in infos if i.kind == "functional"]
    walks = [i for i in infos if i.kind not in ("static", "functional")]
    pairs = pair_statics([w for w in walks if not w.error], statics)
    by_folder = folder_subjects(infos)
    table = read_pairing(pairing) if isinstance(pairing, (str, os.PathLike)) else (pairing or {})
    by_path = {i.path: i for i in infos}
    names = output_names([w.path for w in walks], outdir)
    jobs = []
    for w in walks:
        name, renamed = names[w.path]
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
        if renamed:
            notes.append(renamed)
        functional, why = pair_functional(w, functionals, by_folder) if functionals else ((), "")
        jobs.append(Job(w.path, p.static, outdir / name, p.reason,
                        subject_label(w) or "", skey, _safe(label), tuple(notes), w, renamed=renamed,
                        functional=functional, functional_pairing=why))
    for r in rejected:
        jobs.append(Job(r.path, None, outdir, "", not_a_trial=r.reason))
    return jobs


_UNSAFE = re.compile(r'[\x00-\x1f<>:"/\\|?*]+')


def folder_name(stem: str) -> str:
    """A trial's output folder name from its file stem: the stem itself, with characters no
    file system accepts replaced by ``_`` and leading dots replaced (``..`` from a file named
    ``...c3d`` would be the output folder's parent; a leading dot hides the folder), shortened as
    the trial's output files are (:func:`gaitid.io.atomic.output_stem`)."""
    from gaitid.io.atomic import output_stem

    name = _UNSAFE.sub("_", output_stem(stem)).rstrip(" ")
    if name.startswith(".") or not name.strip():
        name = "_" + name.lstrip(".")
    return name if name not in ("", "_") else "_trial"


def _recorded_input(folder: Path) -> str | None:
    """The trial a batch output folder was made from (its run record), or None."""
    try:
        return json.loads((folder / RUN_RECORD).read_text())["fingerprint"]["input"][0][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def output_names(paths: list[Path], outdir: Path) -> dict[Path, tuple[str, str]]:
    """{trial path: (output folder name, why it is not the trial's own name or '')}.

    Two trials whose names give the same folder (same file name in two folders; names
    differing only in case, which macOS and Windows do not tell apart) never share one: each
    gets its name followed by the shortest tail of its folder path that tells them apart
    (``walk01-S01``, ``walk01-S02``). A folder already holding another trial's outputs (an
    earlier run from another source) is not reused either."""
    groups: dict[str, list[Path]] = {}
    for p in paths:
        groups.setdefault(folder_name(p.stem).lower(), []).append(p)
    out: dict[Path, tuple[str, str]] = {}
    for group in groups.values():
        base = folder_name(group[0].stem)
        if len(group) == 1:
            owner = _recorded_input(outdir / base)
            if owner is None or owner == str(group[0]):
                out[group[0]] = (folder_name(group[0].stem), "")
                continue
            out[group[0]] = (_tail_names(group, [owner])[group[0]],
                             f"the output folder {base} holds the outputs of another trial ({owner}); this "
                             f"trial's outputs are in a folder of their own")
            continue
        tails = _tail_names(group, [])
        for p in group:
            others = ", ".join(str(q) for q in group if q != p)
            out[p] = (tails[p], f"another trial has the same name ({others}): this trial's outputs are in "
                                f"{tails[p]}, not {folder_name(p.stem)}")
    return out


def _tail_names(group: list[Path], taken: list[str]) -> dict[Path, str]:
    """Each trial's name followed by the shortest tail of its folder path that no other trial
    of the group (nor a path in ``taken``) shares; a digest of the path when none does."""
    everyone = [*group, *(Path(t) for t in taken)]
    depth = max(len(p.parent.parts) for p in everyone)
    for k in range(1, depth + 1):
        tails = {p: _safe("_".join(p.parent.parts[-k:])) for p in everyone}
        names = {p: f"{folder_name(p.stem)}-{tails[p]}" for p in group}
        keys = [n.lower() for n in names.values()] + [f"{folder_name(Path(t).stem)}-{tails[Path(t)]}".lower()
                                                       for t in taken]
        if len(set(keys)) == len(keys):
            return names
    return {p: f"{folder_name(p.stem)}-{hashlib.sha1(str(p).encode()).hexdigest()[:8]}" for p in group}


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "session"
