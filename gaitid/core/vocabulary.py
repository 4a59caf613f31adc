"""gaitid's words: side names, event labels, plate overrides, frames, conventions and thresholds.

The single source for the vocabulary every stage shares. Data values are spelt as C3D files
and Plug-in Gait spell them: sides ``'Left'``/``'Right'`` (EVENT:CONTEXTS), events
``'Foot Strike'``/``'Foot Off'``. Model files (``models/*.toml``) key per-side values by
``left``/``right``, and the model layer names per-side items ``'left.hip'``,
``'right.thigh'``: :func:`side_key` and :func:`side_path` are the one translation. Words typed by a user (settings,
command-line options) are accepted in any case and stored canonically by :func:`parse_side`
and :func:`parse_plate_override` (:func:`plate_overrides` for a whole ``{plate: word}`` mapping).

"Normalise" means one thing in gaitid: dividing kinetics by body mass (or weight and height),
:data:`KINETIC_NORMALISATIONS`. Resampling a gait cycle to 0-100 % is *time normalisation*.
"""

from __future__ import annotations

from gaitid.core.errors import SettingsError

SIDES = ("Left", "Right")
JOINTS = ("Ankle", "Knee", "Hip")  # the foot-shank-thigh chain's joints, distal to proximal

FOOT_STRIKE = "Foot Strike"
FOOT_OFF = "Foot Off"
GAIT_EVENTS = (FOOT_STRIKE, FOOT_OFF)

# plate-to-foot override words (Plug-in Gait / pyCGM2): a side, 'Invalid' or 'Auto' (the rules)
AUTO, INVALID = "Auto", "Invalid"
PLATE_OVERRIDES = (AUTO, *SIDES, INVALID)

FRAMES = ("distal", "proximal", "lab")  # the frame joint moments are expressed in
CONVENTIONS = ("internal", "external")  # moment of the proximal on the distal segment, or its negative
KINETIC_NORMALISATIONS = ("mass", "bw-height", "none")
EVENT_SOURCES = ("file", "detected", "merge")

# thresholds (defaults of Settings; the reader's and the contact detection's)
COP_THRESHOLD_N = 10.0  # |Fz| below this: the centre of pressure is undefined (NaN)
CONTACT_THRESHOLD_N = 20.0  # Fz above this on a plate: a contact
MIN_CONTACT_S = 0.05  # shorter contacts are noise
# the plate-to-foot tolerances (defaults of gaitid.contacts' assign_contacts and plate_ownership)
COP_TOLERANCE_M = 0.06  # the centre of pressure this close to the heel-toe-ankle triangle is under the foot
COP_MIN_FORCE_N = 50.0  # the centre of pressure is tested where the plate's Fz reaches this
PLATE_TOLERANCE_M = 0.01  # how far inside a plate's outline a marker is over the plate (its edge's slack)
GROUND_CLEARANCE_M = 0.03  # a marker this close to its standing height is low (on the ground if also slow)
GROUND_SPEED_M_S = 0.5  # horizontal speed below which a low marker is on the ground
GRAVITY_M_S2 = 9.81
CYCLE_POINTS = 101  # 0, 1, ..., 100 % of a gait cycle

# the environment variable naming a lab's normative data file (run / batch use it when --norms is not
# given; docs/report.md)
NORMS_ENV = "GAITID_NORMS"


def parse_side(word: str) -> str:
    """'Left' or 'Right' from any spelling ('left', 'L', 'RIGHT'); SettingsError otherwise."""
    low = str(word).strip().lower()
    for side in SIDES:
        if low in (side.lower(), side[0].lower()):
            return side
    raise SettingsError(f"side {word!r} is not one of {', '.join(SIDES)}")


def other_side(side: str) -> str:
    """The other foot: 'Left' <-> 'Right'."""
    return SIDES[1 - SIDES.index(side)]


def side_key(side: str) -> str:
    """The key a model file uses for a side: 'Left' -> 'left' (``sides = { left = "L" }``)."""
    return parse_side(side).lower()


def side_path(side: str, name: str) -> str:
    """A per-side item's key in the model layer's dicts: ('Left', 'hip') -> 'left.hip'
    (``ModelKinematics.joint_centres``, ``frames``, per-segment parameter overrides)."""
    return f"{side_key(side)}.{name}"


def parse_plate_override(word: str) -> str:
    """'Auto', 'Left', 'Right' or 'Invalid' from any case; SettingsError otherwise."""
    low = str(word).strip().lower()
    for choice in PLATE_OVERRIDES:
        if low == choice.lower():
            return choice
    raise SettingsError(f"plate override {word!r} is not one of {', '.join(PLATE_OVERRIDES)}")


def parse_plate_overrides(text: str) -> dict[int, str]:
    """``"1=Left,2=Invalid,3=AUTO"`` (any case) -> ``{1: 'Left', 2: 'Invalid', 3: 'Auto'}``
    (:func:`plate_overrides` of the pairs)."""
    pairs = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        if "=" not in item:
            raise SettingsError(f"plate override {item!r} is not of the form PLATE={'|'.join(PLATE_OVERRIDES[1:])}"
                                f"|{AUTO}")
        k, v = (s.strip() for s in item.split("=", 1))
        if not k.isdigit():
            raise SettingsError(f"plate override {item!r}: {k!r} is not a plate number")
        pairs.append((k, v))
    return plate_overrides(dict(pairs))


def plate_overrides(overrides) -> dict[int, str]:
    """The one reading of plate overrides (Settings.plates, the contact assignment, the command
    line): ``{plate: word}`` with plate numbers 1, 2, ... (int or its text) and the words of
    :func:`parse_plate_override` -> ``{int: 'Auto'|'Left'|'Right'|'Invalid'}``; None -> {}.
    SettingsError naming the first key or word that is not one."""
    try:
        pairs = dict(overrides or {})
    except (TypeError, ValueError):
        raise SettingsError(f"plate overrides {overrides!r} are not a mapping {{plate: word}}") from None
    out = {}
    for key, word in pairs.items():
        try:
            plate = int(key)
        except (TypeError, ValueError):
            raise SettingsError(f"plate override key {key!r} is not a plate number (1, 2, ...)") from None
        if plate < 1:
            raise SettingsError(f"plate override key {key!r} is not a plate number (1, 2, ...)")
        out[plate] = parse_plate_override(word)
    return out


EMG_OFF = "off"  # a channel map's word for a channel to leave out
EMG_MIN_RATE_HZ = 500.0  # EMG sampled slower than this loses most of its 20-450 Hz band: warned


def parse_emg_target(channel: str, text: str) -> str:
    """A channel map's value: ``'L Rectus femoris'``, ``'Right Soleus'``, ``'left, TA'`` -> ``'Left Rectus
    femoris'`` (the side word first, then the muscle as given), or ``'off'`` (the channel left out).
    SettingsError naming the channel when the side or the muscle is missing."""
    words = str(text).replace(",", " ").split()
    if len(words) == 1 and words[0].lower() == EMG_OFF:
        return EMG_OFF
    try:
        side = parse_side(words[0]) if words else None
    except SettingsError:
        side = None
    if side is None or len(words) < 2:
        raise SettingsError(f"EMG channel {channel!r}: {text!r} is not a side and a muscle "
                            f"(e.g. 'L Rectus femoris', 'Right Soleus') or '{EMG_OFF}'")
    return f"{side} {' '.join(words[1:])}"


def emg_channel_map(mapping) -> dict[str, str]:
    """The one reading of a lab's EMG channel map (Settings.emg_channels, ``--emg``, a map file):
    ``{channel label: 'L Rectus femoris' | 'off'}`` -> ``{label: 'Left Rectus femoris' | 'off'}``
    (:func:`parse_emg_target`); None -> {}."""
    try:
        pairs = dict(mapping or {})
    except (TypeError, ValueError):
        raise SettingsError(f"EMG channel map {mapping!r} is not a mapping {{channel: 'side muscle'}}") from None
    out = {}
    for key, value in pairs.items():
        if not isinstance(key, str) or not key.strip():
            raise SettingsError(f"EMG channel map key {key!r} is not a channel label")
        out[key.strip()] = parse_emg_target(key, value)
    return out


def parse_emg_map(text: str) -> dict[str, str]:
    """``"EMG1=L Rectus femoris,EMG2=L Hamstrings,EMG9=off"`` -> :func:`emg_channel_map` of the pairs."""
    pairs = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        if "=" not in item:
            raise SettingsError(f"EMG channel {item!r} is not of the form CHANNEL=SIDE MUSCLE (e.g. EMG1=L Rectus "
                                f"femoris) or CHANNEL={EMG_OFF}")
        k, v = (s.strip() for s in item.split("=", 1))
        pairs[k] = v
    return emg_channel_map(pairs)


# ``gaitid run -o OUT`` records what a trial's outputs were made from (its settings: the moments'
# convention, frame, normalisation...) in OUT/<trial> + this; gaitid norms build reads it
RUN_RECORD_SUFFIX = "_run.json"
