"""Which analog channels are EMG, and of which side and muscle (docs/emg.md).

A channel is EMG when the lab's channel map names it (``Settings.emg_channels``), or when its label
or description says 'EMG' or names a muscle (:data:`MUSCLES`, full names and the abbreviations labs
use: 'L Rect', 'R_TA', 'LVAS', 'Voltage.RGAS', 'L Jum Int'). The side comes from the map, else a
side word at the start or end of the label ('L', 'Right', 'L_', a leading 'L'/'R' glued to a muscle
abbreviation: 'LSOL'), else of the description; the muscle from the map, else the description when it
names one (a lab's words), else the label. Force-plate channels, foot switches and sync channels are
never EMG. An EMG channel without a side or muscle (Vicon's 'EMG1') is found but not placed on a
side's cycles: the map gives it one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gaitid.core.trial import Trial
from gaitid.core.vocabulary import EMG_OFF, SIDES

# muscle -> its names and abbreviations, compared upper case without spaces, dots, '_' or '-'
_NAMES = {
    "Rectus femoris": "RF REC RECT RECTUS RECFEM RECTUSFEMORIS",
    "Vastus lateralis": "VL VASL VASLAT VASTUSLATERALIS VASTEEXT VASTEEXTERNE",
    "Vastus medialis": "VM VMO VASMED VASTUSMEDIALIS VASTEINT VASTEINTERNE",
    "Vastus": "VAS VAST VASTUS",
    "Hamstrings": "HAM HAMS HAMSTRING HAMSTRINGS ISC ISCH ISCHIO ISCHIOJAMBIERS",
    "Medial hamstrings": "MH MEDHAM MEDHAMS MEDIALHAMSTRINGS",
    "Semitendinosus": "ST SEMT SEMITEND SEMITENDINOSUS",
    "Semimembranosus": "SM SEMIMEM SEMIMEMBRANOSUS",
    "Biceps femoris": "BF BIC BICEPS BICFEM BICEPSFEMORIS",
    "Tibialis anterior": "TA TIB TIBA TIBANT TIBIALIS TIBIALISANTERIOR TIBIALANTERIOR",
    "Tibialis posterior": "TP TIBP TIBPOST TIBIALISPOSTERIOR",
    "Gastrocnemius": "GAS GAST GASTR GASTROC GASTROCNEMIUS JUM JUMEAU JUMEAUX",
    "Gastrocnemius medialis": "MG GASMED GASTROCMED MEDGAS GASTROCNEMIUSMEDIALIS JUMINT JUMEAUINTERNE",
    "Gastrocnemius lateralis": "GL GASLAT GASTROCLAT LATGAS GASTROCNEMIUSLATERALIS JUMEXT JUMEAUEXTERNE",
    "Soleus": "SOL SOLEUS",
    "Peroneus longus": "PL PE PER PERON PERONEUS PERONEUSLONGUS FIBULARISLONGUS",
    "Gluteus maximus": "GMAX GLMAX GLUTMAX GLUTEUSMAXIMUS",
    "Gluteus medius": "GMED GLMED GLUTMED GLUTEUSMEDIUS",
    "Adductors": "ADD ADDUCTOR ADDUCTORS",
    "Tensor fasciae latae": "TFL",
    "Erector spinae": "ERS ES ERECTORSPINAE",
}
MUSCLES = {abbr: muscle for muscle, words in _NAMES.items() for abbr in words.split()}
_SIDE_WORDS = {"L": "Left", "LT": "Left", "LEFT": "Left", "R": "Right", "RT": "Right", "RIGHT": "Right"}
_NOT_EMG = re.compile(r"SWITCH|SYNC|TRIG|GRF|FORCE|MOMENT", re.I)
_SPLIT = re.compile(r"[\s_\-.:/]+")


@dataclass(frozen=True)
class EmgChannel:
    """One EMG channel: ``channel`` its analog label (column ``column`` of ``Trial.analogs``), ``side``
    ('Left'/'Right', '' when unknown), ``muscle`` ('' when unknown), ``unit`` the file's, ``found_by``
    ('map', 'label', 'description'), ``problem`` ('' when usable: else why it is not drawn: no side or
    muscle, flat, saturated, mostly missing)."""

    channel: str
    column: int
    side: str
    muscle: str
    unit: str
    found_by: str
    problem: str = ""


def _key(words: list[str]) -> str:
    return "".join(words).upper()


def parse_label(text: str) -> tuple[str, str]:
    """(side, muscle) a label or description names ('' for each it does not): 'Voltage.L Rect' ->
    ('Left', 'Rectus femoris'), 'R_TA' -> ('Right', 'Tibialis anterior'), 'LVAS' -> ('Left', 'Vastus'),
    'EMG1' -> ('', '')."""
    text = re.sub(r"^voltage\.", "", text.strip(), flags=re.I)
    words = [w for w in _SPLIT.split(text) if w]
    if not words:
        return "", ""
    side = ""
    for at in (0, -1):  # a side word first or last
        if len(words) > 1 and words[at].upper() in _SIDE_WORDS:
            side = _SIDE_WORDS[words[at].upper()]
            words = words[1:] if at == 0 else words[:-1]
            break
    muscle = MUSCLES.get(_key(words), "")
    if not muscle:  # 'Tib Ant Prox': the longest leading run of words that names a muscle
        muscle = next((MUSCLES[_key(words[:k])] for k in range(len(words) - 1, 0, -1) if _key(words[:k]) in MUSCLES), "")
    if not muscle and not side and len(words) == 1 and words[0][:1].upper() in "LR":  # 'LSOL', 'RGAS'
        glued = MUSCLES.get(words[0][1:].upper(), "")
        if glued:
            side, muscle = _SIDE_WORDS[words[0][0].upper()], glued
    return side, muscle


def _mapped(target: str) -> tuple[str, str]:
    side, _, muscle = target.partition(" ")
    return side, MUSCLES.get(_key(_SPLIT.split(muscle)), muscle)


def find_channels(trial: Trial, channel_map: dict[str, str]) -> tuple[list[EmgChannel], list[str]]:
    """The trial's EMG channels in the file's order (see the module docstring) and notes: map
    entries naming no channel of the file. ``channel_map``: ``{label: 'Left Rectus femoris' | 'off'}``
    (:func:`gaitid.core.vocabulary.emg_channel_map`)."""
    analogs = trial.analogs
    labels = list(analogs.labels) if analogs is not None else []
    descriptions = list(getattr(analogs, "descriptions", None) or []) + [""] * len(labels)
    plate_channels = {lab for p in trial.force_plates for lab in getattr(p, "channels", ())}
    out = []
    for j, label in enumerate(labels):
        desc = descriptions[j]
        unit = analogs.units[j] if j < len(analogs.units) else ""
        target = channel_map.get(label)
        if target == EMG_OFF:
            continue
        if target is not None:
            out.append(EmgChannel(label, j, *_mapped(target), unit, "map"))
            continue
        if label in plate_channels or _NOT_EMG.search(label) or _NOT_EMG.search(re.sub(r"EMG", "", desc)):
            continue
        (ls, lm), (ds, dm) = parse_label(label), parse_label(desc)
        says_emg = "EMG" in label.upper() or "EMG" in desc.upper()
        if not (lm or dm or says_emg):
            continue
        side, muscle = ls or ds, dm or lm
        found_by = "description" if dm or (ds and not ls) else "label"
        problem = "" if side in SIDES and muscle else "no side or muscle in its label or description"
        out.append(EmgChannel(label, j, side, muscle or label, unit, found_by, problem))
    unknown = sorted(set(channel_map) - set(labels))
    notes = [f"EMG channel map: no analog channel {', '.join(repr(u) for u in unknown)} in the file "
             f"(its channels: {', '.join(labels[:12])}{', ...' if len(labels) > 12 else ''})"] if unknown else []
    return out, notes


def read_channel_map(path) -> dict[str, str]:
    """A lab's EMG channel map file: CSV (``channel,side,muscle`` or ``channel,target`` per line, a
    header line allowed: ``EMG1,L,Rectus femoris``; ``EMG9,off``) or TOML (``EMG1 = "L Rectus
    femoris"``, at the top or in an ``[emg]`` table). DataError naming the file when it is not one."""
    import csv
    import tomllib
    from pathlib import Path

    from gaitid.core.errors import DataError, SettingsError
    from gaitid.core.vocabulary import emg_channel_map

    from gaitid.io.input_files import input_file

    path = Path(path)
    input_file(path, "EMG channel map", max_bytes=1 << 20)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"cannot read the EMG channel map: {err}", path) from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
            return emg_channel_map(data.get("emg", data))
        pairs = {}
        for row in csv.reader(text.splitlines()):
            cells = [c.strip() for c in row if c.strip()]
            if not cells or cells[0].startswith("#") or cells[0].lower() == "channel":
                continue
            if len(cells) < 2:
                raise SettingsError(f"line {', '.join(row)!r} is not 'channel,side,muscle' or 'channel,off'")
            pairs[cells[0]] = " ".join(cells[1:])
        return emg_channel_map(pairs)
    except (tomllib.TOMLDecodeError, SettingsError, AttributeError) as err:
        raise DataError(f"EMG channel map: {getattr(err, 'reason', err)}", path) from None
