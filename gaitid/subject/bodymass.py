"""Body mass from the force plates, for trials whose file stores none.

:func:`estimate_mass` returns a :class:`MassEstimate` (kg, with the method, the time window
used and notes); opt-in (``process(..., subject="plates")``), never called unasked. Three methods, tried in this order
by ``auto``:

- ``standing``: quiet standing on the plates (a static trial, or the first/last
  ``window_s`` of a trial): the summed vertical force is steady (SD below ``max_cv`` of
  its mean) and the markers do not move (mean speed below ``max_speed``); mass = mean Fz / g.
  It assumes the whole body rests on the plates (both feet on plates).
- ``dynamic``: single support on a plate. Over the frames where exactly one foot stands on a
  plate and the other swings, Newton's second law for the whole body, vertically:
  Fz = m (g + z''_com), fitted by least squares for m over all such frames, with z''_com
  approximated by the vertical acceleration of the mean of the trunk/pelvis/head markers
  (median height above 0.8 m; 4th-order zero-lag Butterworth at 6 Hz, twice differentiated).
  A frame counts when (1) the stance foot has a complete contact whose centre of pressure is
  under that foot alone (the contacts stage, :func:`gaitid.contacts.assign_contacts`, with its
  plate overrides; "two feet" or unassigned contacts are rejected), (2) its heel and toe markers,
  where on the ground, lie inside the contact's plate(s) at that frame, at most
  ``foot_tolerance`` outside an edge (a heel marker sits 1-3 cm behind the heel's contact
  area): a foot partly off the plate rejects its frames, not the whole contact, and (3) the
  other foot's heel and toe are off the ground (not within 3 cm of their lowest height while
  slower than 0.5 m/s, the plate assignment's rule) from ``margin_s`` before to ``margin_s``
  after the frame. Plates without an outline (corners NaN, e.g. OpenSim's GRF files) skip
  check (2). Accuracy: within 4 % of the stored mass on seven real trials
  (docs/opensim-crosscheck.md).
- ``steps``: two consecutive foot contacts on two plates (foot A, then foot B) in steady
  walking. Over the interval of one step period T (A's strike to B's strike) that ends
  when A comes off its plate, every ground force is on a plate (the foot before A is off
  the ground), and the centre of mass has the same vertical velocity at both ends (steady
  gait), so the mean summed Fz over it is the body weight (impulse-momentum); the change
  of the trunk markers' vertical velocity over the interval is accounted for
  (J = m g T + m dv). Accuracy a few per cent (the trunk is not the centre of mass).

Each plate's unloaded offset (median Fz while |Fz| < 50 N) is removed first, and noted.

:func:`check_mass` turns the same machinery round, on every trial with plates: the body mass a
trial is processed with against what the plates carry (quiet standing; on a treadmill, the
mean summed vertical force over whole strides, which is the body weight; else single support
fitted to m (g + a_trunk)). A relative difference beyond ``tolerance`` (``Settings.mass_tolerance``)
is a warning with both numbers (:class:`MassCheck`). When the plates cannot tell (none of
these windows), the check says so in its :attr:`MassCheck.note` and warns nothing. The steps
method is not used there: one step period is too short a window to judge a stored mass by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gaitid.contacts import FootContact, feet_ground_points
from gaitid.contacts.geometry import inside_distances
from gaitid.core.butterworth import butter_sections, default_padlen, zero_phase_filter
from gaitid.core.errors import DataError
from gaitid.core.rotation import norm
from gaitid.core.signal import column_median_above, finite_rows, median
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import GRAVITY_M_S2, SIDES
from gaitid.model.gait_markers import GaitMarkers

G = GRAVITY_M_S2  # m/s^2
UNLOADED_N = 50.0  # |Fz| below this: plate unloaded (offset estimate)
CONTACT_N = 50.0  # Fz above this: foot on the plate
TRUNK_HEIGHT_M = 0.8  # markers whose median height exceeds this approximate the centre of mass
COM_CUTOFF_HZ = 6.0
MIN_SUPPORT_S = 0.1  # fewer single-support frames than this: no dynamic estimate
METHODS = ("auto", "standing", "dynamic", "steps")


@dataclass
class MassEstimate:
    """Body mass (kg) estimated from the plates; ``window_s`` (start, end) on the trial clock."""

    mass: float
    method: str
    window_s: tuple[float, float]
    notes: list[str] = field(default_factory=list)


def _vertical_forces(trial: Trial) -> tuple[np.ndarray, list[str]]:
    """(n_frames, n_plates) vertical force on the subject (N), each plate's unloaded offset removed."""
    if not trial.force_plates:
        raise DataError("no force plates: body mass cannot be estimated; give the mass (kg)", trial.path)
    cols, notes = [], []
    for p in trial.force_plates:
        fz = np.asarray(p.point.force[:, 2], float)
        idle = np.abs(fz) < UNLOADED_N
        if np.count_nonzero(idle) >= max(5, 0.05 * len(fz)):
            off = median(fz[idle])  # no NaN among them (|NaN| < 50 is False)
            if abs(off) > 2.0:
                notes.append(f"plate {p.index}: unloaded offset {off:.1f} N removed")
                fz = fz - off
        cols.append(fz)
    return np.stack(cols, axis=1), notes


def _standing(trial: Trial, total: np.ndarray, window_s: float, max_cv: float, max_speed: float):
    """Quiet standing over the first or last ``window_s`` of ``total`` (n_frames,), the plates' summed
    vertical force (N): (mass, window) or None."""
    rate = trial.point_rate
    n = trial.n_frames
    k = min(n, max(3, int(round(window_s * rate))))
    moving = False  # the markers' mean speed: computed when a window first needs it
    for a, b in ((0, k), (n - k, n)):
        f = total[a:b]
        if not np.isfinite(f).all() or f.mean() < 200.0:
            continue
        if f.std() > max_cv * f.mean():
            continue
        if moving is False:
            moving = _markers_speed(trial)
        if moving is not None:
            v = moving[a:b]
            if np.isfinite(v).any() and np.nanmean(v) > max_speed:
                continue
        t = trial.time
        return float(f.mean() / G), (float(t[a]), float(t[b - 1]))
    return None


def _markers_speed(trial: Trial) -> np.ndarray | None:
    """(n_frames,) speed (m/s) of the mean of the markers seen in every frame; None without such markers."""
    if not (trial.markers.size and np.isfinite(trial.markers).any()):
        return None
    keep = np.isfinite(trial.markers).all(axis=2).all(axis=0)
    if not keep.any():
        return None
    centre = trial.markers[:, keep].mean(axis=1)
    return norm(np.gradient(centre, 1.0 / trial.point_rate, axis=0))


def _contacts(f: np.ndarray) -> list[tuple[int, int]]:
    on = np.nan_to_num(f) > CONTACT_N
    edges = np.flatnonzero(np.diff(on.astype(int)))
    starts = ([0] if on[0] else []) + [e + 1 for e in edges if not on[e]]
    ends = [e + 1 for e in edges if on[e]] + ([len(f)] if on[-1] else [])
    return [(s, e) for s, e in zip(starts, ends) if e - s >= 3]


def _trunk_vertical_velocity_change(trial: Trial, a: int, b: int) -> float:
    """Vertical velocity change (m/s) of the trunk and pelvis (the mean of the markers above
    0.8 m that are seen around both frames) from frame a to frame b: the centre of mass's,
    approximately. 0 when no such markers."""
    n = trial.n_frames
    ia, ib = slice(max(a - 2, 0), min(a + 3, n)), slice(max(b - 3, 0), min(b + 2, n))
    z = trial.markers[..., 2]
    seen = np.isfinite(z).any(axis=0)
    high = np.zeros(z.shape[1], bool)
    high[seen] = column_median_above(z[:, seen], TRUNK_HEIGHT_M)
    keep = high & np.isfinite(z[ia]).all(axis=0) & np.isfinite(z[ib]).all(axis=0)
    if not keep.any():
        return 0.0
    zc = z[:, keep].mean(axis=1)
    rate = trial.point_rate
    va = np.polyfit(np.arange(len(zc[ia])) / rate, zc[ia], 1)[0]
    vb = np.polyfit(np.arange(len(zc[ib])) / rate, zc[ib], 1)[0]
    return float(vb - va)


def _trunk_vertical_acceleration(trial: Trial, frames: np.ndarray, pad_s: float = 0.2) -> np.ndarray | None:
    """(n_frames,) vertical acceleration (m/s^2) of the mean of the markers above 0.8 m seen from
    ``pad_s`` before the first to ``pad_s`` after the last of ``frames`` (NaN outside), low-pass
    6 Hz; None when no such marker."""
    n, rate = trial.n_frames, trial.point_rate
    pad = int(round(pad_s * rate))
    span = slice(max(int(frames[0]) - pad, 0), min(int(frames[-1]) + pad + 1, n))
    z = trial.markers[..., 2]
    # the markers seen over the span, then which of them are high (a marker's median over the trial):
    # the others' medians are not needed
    keep = np.isfinite(z[span]).all(axis=0)
    keep[keep] = column_median_above(z[:, keep], TRUNK_HEIGHT_M)
    if not keep.any():
        return None
    zc = z[span][:, keep].mean(axis=1)
    filter_pad = default_padlen(4)
    if zc.size <= filter_pad:
        return None
    out = np.full(n, np.nan)
    smooth = zero_phase_filter(butter_sections(4, COM_CUTOFF_HZ, rate), zc, filter_pad)
    out[span] = _gradient(_gradient(smooth)) * rate**2
    return out


def _gradient(x: np.ndarray) -> np.ndarray:
    """np.gradient(x) of a 1-D array of at least 2 samples, unit spacing: its numbers (central
    differences halved, one-sided at the ends) without its argument handling."""
    out = np.empty_like(x)
    np.subtract(x[2:], x[:-2], out=out[1:-1])
    out[1:-1] /= 2.0
    out[0], out[-1] = x[1] - x[0], x[-1] - x[-2]
    return out


def _single_support(trial: Trial, fz: np.ndarray, total: np.ndarray, contacts: list[FootContact],
                    markers: GaitMarkers, foot_tolerance: float, margin_s: float) -> np.ndarray:
    """Frames (bool, n_frames) of single support on a valid plate contact, the other foot in the
    air (module docstring); ``total``: the plates' summed vertical force (n_frames,)."""
    n = trial.n_frames
    k = int(round(margin_s * trial.point_rate))
    seen = np.ones(n, bool)
    for side in SIDES:
        foot = markers.foot(side)
        seen &= finite_rows(trial.point(foot.heel)) & finite_rows(trial.point(foot.toe))
    lows = feet_ground_points(trial, markers, 0.03, 0.5)  # heel, toe: NaN unless on the ground
    low = np.array([[x[:, :2] for x in lows[side]] for side in SIDES])  # (side, heel/toe, frame, 2)
    grounded = np.isfinite(low[..., 0])  # (side, heel/toe, frame)
    # the contacts whose COP is under their foot alone; one invalid only because the foot is partly off
    # the plate is checked frame by frame below (its other frames are usable)
    own = [c for c in contacts if c.side in SIDES and c.feet == (c.side,) and c.complete]
    ends = trial.index_of_time(np.array([(c.strike_time, c.off_time) for c in own]).reshape(-1, 2))
    spans = [(c, SIDES.index(c.side), slice(max(a, 0), min(b, n - 1) + 1)) for c, (a, b) in zip(own, ends.tolist())
             if min(b, n - 1) >= max(a, 0)]  # each contact's frames (trial.indices_between), the empty ones left out
    on_plate, outside = np.zeros((len(SIDES), n), bool), np.zeros((len(SIDES), n), bool)
    for _, s, fr in spans:
        on_plate[s, fr] = True
    # each heel and toe on the ground during its foot's contacts against every plate of these contacts, in one call
    plates = sorted({p for c in own for p in c.plates})
    corners = {fp.index: fp.corners for fp in trial.force_plates}
    need = np.flatnonzero(grounded & on_plate[:, None])  # (side, heel/toe, frame) as flat indices
    inside = np.full(low.shape[:3] + (len(plates),), np.nan)  # NaN: off the ground or off the contacts
    if need.size:
        inside.reshape(-1, len(plates))[need] = inside_distances(low.reshape(-1, 2)[need], [corners[p] for p in plates])
    for c, s, fr in spans:
        # a heel or toe on the ground outside the contact's plate(s): part of the load missed
        j = [plates.index(p) for p in c.plates]
        reach = inside[s, :, fr, j[0]] if len(j) == 1 else inside[s, :, fr][..., j].max(axis=-1)  # (heel/toe, frame)
        outside[s, fr] |= (reach < -foot_tolerance).any(axis=0)
    carried = on_plate & ~outside
    loose = _widen(grounded.any(axis=1) & ~carried, k)  # on the ground, not (wholly) on a valid contact's plate
    loaded = finite_rows(fz) & (total > CONTACT_N)  # a NaN force is unknown, not 0
    # one foot carried, the other not: with neither foot loose, the other one swings (neither carried nor loose)
    return seen & loaded & (carried[0] ^ carried[1]) & ~(loose[0] | loose[1])


def _dynamic(trial: Trial, fz: np.ndarray, total: np.ndarray, contacts: list[FootContact], markers: GaitMarkers,
             foot_tolerance: float, margin_s: float):
    idx = np.flatnonzero(_single_support(trial, fz, total, contacts, markers, foot_tolerance, margin_s))
    if idx.size < MIN_SUPPORT_S * trial.point_rate:
        return None
    acc = _trunk_vertical_acceleration(trial, idx)
    if acc is None:
        return None
    f, ga = total[idx], G + acc[idx]  # (every plate finite on these frames)
    ok = np.isfinite(ga)
    used = np.count_nonzero(ok)
    if used < MIN_SUPPORT_S * trial.point_rate:
        return None
    f, ga = f[ok], ga[ok]
    # least squares: Fz = m (g + z''_com); np.sum and np.mean's arithmetic, without their wrappers
    mass = float(np.add.reduce(f * ga) / np.add.reduce(ga * ga))
    rms = math.sqrt(np.add.reduce((f - mass * ga) ** 2) / used)
    t = trial.time
    return mass, (float(t[idx[0]]), float(t[idx[-1]])), rms, used / trial.point_rate


def _steps(trial: Trial, fz: np.ndarray):
    total = np.nansum(fz, axis=1)
    contacts = []
    for j in range(fz.shape[1]):
        for s, e in _contacts(fz[:, j]):
            if s > 0 and e < len(total):  # whole contact seen: strike and off on the plate
                contacts.append((s, e, j))
    contacts.sort()
    best = None
    for (sa, ea, ja), (sb, eb, jb) in zip(contacts, contacts[1:]):
        if ja == jb or not (sa < sb < ea):  # two plates, B strikes while A is on its plate
            continue
        T = sb - sa
        a = ea - T
        if a < 0:
            continue
        window = total[a:ea]
        if np.isfinite(fz[a:ea]).all():
            impulse = float(window.sum()) / trial.point_rate  # N.s over T
            dv = _trunk_vertical_velocity_change(trial, a, ea)
            mass = impulse / (G * T / trial.point_rate + dv)  # J = m g T + m dv  (impulse-momentum)
            best = (mass, (float(trial.time[a]), float(trial.time[ea - 1])), dv)
            break
    return best


def estimate_mass(trial: Trial, method: str = "auto", *, contacts: list[FootContact] | None = None,
                  markers: GaitMarkers | None = None, window_s: float = 1.0, max_cv: float = 0.02,
                  max_speed: float = 0.05, foot_tolerance: float = 0.03, margin_s: float = 0.04) -> MassEstimate:
    """Body mass (kg) from the trial's force plates (see the module docstring).

    ``method``: 'standing', 'dynamic', 'steps', or 'auto' (standing, else dynamic, else steps).
    ``contacts`` and ``markers``: the trial's plate contacts (:func:`gaitid.contacts.assign_contacts`,
    overrides applied) and the model's gait markers, which the 'dynamic' method needs (without
    them it is skipped, with a note). Raises :class:`~gaitid.core.errors.DataError` naming the
    trial when no window qualifies. ``window_s`` (start, end) of a dynamic estimate spans its
    first to last single-support frame (the frames between are not all used)."""
    if method not in METHODS:
        raise DataError(f"mass estimate method must be one of {', '.join(map(repr, METHODS))}, not {method!r}",
                        trial.path)
    if method == "dynamic" and (contacts is None or markers is None):
        raise DataError("the 'dynamic' mass estimate needs the plate contacts and gait markers (contacts=, markers=)",
                        trial.path)
    fz, notes = _vertical_forces(trial)
    total = np.sum(fz, axis=1)
    if method in ("auto", "standing"):
        got = _standing(trial, total, window_s, max_cv, max_speed)
        if got is not None:
            return MassEstimate(got[0], "standing", got[1], notes)
    if method in ("auto", "dynamic") and (contacts is None or markers is None):
        notes.append("single support not tried: no plate contacts and gait markers given")
    elif method in ("auto", "dynamic"):
        got = _dynamic(trial, fz, total, contacts, markers, foot_tolerance, margin_s)
        if got is not None and math.isfinite(got[0]):
            notes.append(f"Fz = m (g + a_trunk) fitted over {got[3]:.2f} s of single support wholly on a plate, "
                         f"the other foot in the air (residual RMS {got[2]:.0f} N)")
            return MassEstimate(got[0], "dynamic", got[1], notes)
    if method in ("auto", "steps"):
        got = _steps(trial, fz)
        if got is not None and math.isfinite(got[0]):
            notes.append(f"from one step period of walking (two consecutive contacts on two plates); trunk "
                         f"vertical velocity change {got[2]:+.3f} m/s accounted for")
            return MassEstimate(got[0], "steps", got[1], notes)
    single = f"no {MIN_SUPPORT_S:g} s of single support on a valid plate contact with the other foot in the air"
    what = {"standing": "no quiet standing on the plates in the first or last "
                        f"{window_s:g} s", "steps": "no two consecutive foot contacts on two plates",
            "dynamic": single,
            "auto": f"no quiet standing on the plates (first/last {window_s:g} s), {single}, and no two "
                    "consecutive foot contacts on two plates"}[method]
    raise DataError(f"body mass cannot be estimated from the plates: {what}; give the mass (kg)", trial.path)


@dataclass(frozen=True)
class MassCheck:
    """The body mass a trial is processed with (``mass``, kg, from ``source``) against the plates'
    (``plates``, kg; None when they cannot tell), by ``method`` ('quiet standing', 'treadmill
    strides', 'single support'; '' when not run) over ``window_s``; ``tolerance``: the relative
    difference beyond which it warns; ``note``: what was compared, or why not."""

    mass: float
    source: str
    plates: float | None
    method: str
    window_s: tuple[float, float] | None
    tolerance: float
    note: str

    @property
    def difference(self) -> float:
        """(plates - mass) / mass; NaN when the plates cannot tell."""
        return self.plates / self.mass - 1.0 if self.plates is not None else math.nan

    @property
    def warning(self) -> str | None:
        """The warning when the difference exceeds the tolerance, else None."""
        if not abs(self.difference) > self.tolerance:
            return None
        return (f"body mass {self.mass:.1f} kg from {self.source}, but the plates carry {self.plates:.1f} kg in "
                f"{self.method} ({100 * self.difference:+.0f} %, more than the {100 * self.tolerance:g} % "
                "tolerated, Settings.mass_tolerance): check the mass (its unit, the subject) or the plate gains "
                "(calibration, amplifier range); the kinetics scale with both")


def _treadmill_strides(trial: Trial, fz: np.ndarray, contacts: list[FootContact]):
    """(mass, window) from the mean summed vertical force over the whole strides of one foot on a
    treadmill (first to last strike of that foot, every plate sample finite): the body weight,
    as the centre of mass returns to its height every stride. None when not a treadmill or no stride."""
    best = None
    for side in SIDES:
        strikes = sorted(c.strike_time for c in contacts
                         if c.source == "treadmill" and c.side == side and np.isfinite(c.strike_time))
        if len(strikes) < 2:
            continue
        a, b = trial.indices_between(strikes[0], strikes[-1])[[0, -1]]
        window = fz[a:b]
        if not np.isfinite(window).all() or (best is not None and b - a <= best[2]):
            continue
        best = (float(window.sum(axis=1).mean() / G), (float(trial.time[a]), float(trial.time[b])), b - a)
    return best[:2] if best is not None else None


def check_mass(trial: Trial, mass: float, source: str, *, contacts: list[FootContact] | None = None,
               markers: GaitMarkers | None = None, tolerance: float = 0.15) -> MassCheck:
    """The body mass used (``mass`` kg, from ``source``) against the plates (module docstring):
    quiet standing, else whole treadmill strides, else single support (which needs the
    ``contacts`` and ``markers``). Never raises for want of a window: the check then says so."""
    def result(plates=None, method="", window=None, note=""):
        return MassCheck(float(mass), source, plates, method, window, tolerance, note)

    if not trial.force_plates:
        return result(note="no force plates: the body mass was not checked against the plates")
    fz, _ = _vertical_forces(trial)
    total = np.sum(fz, axis=1)
    got = _standing(trial, total, 1.0, 0.02, 0.05)
    if got is not None:
        return result(got[0], "quiet standing", got[1], "mean vertical force of quiet standing")
    got = _treadmill_strides(trial, fz, contacts or [])
    if got is not None:
        return result(got[0], "treadmill strides", got[1], "mean summed vertical force over whole strides")
    got = (_dynamic(trial, fz, total, contacts, markers, 0.03, 0.04) if contacts is not None and markers is not None
           else None)
    if got is not None and math.isfinite(got[0]):
        return result(got[0], "single support", got[1], f"Fz = m (g + a_trunk) over {got[3]:.2f} s of single support")
    return result(note="the plates cannot tell the body mass (no quiet standing, treadmill stride or "
                       f"{MIN_SUPPORT_S:g} s of single support wholly on a plate): the mass was not checked")


def _widen(mask: np.ndarray, k: int) -> np.ndarray:
    """``mask`` (..., n) with every True frame widened by ``k`` frames each way along the last axis (a
    binary dilation; nothing beyond the ends)."""
    n = mask.shape[-1]
    count = np.zeros(mask.shape[:-1] + (n + 2 * k + 1,), np.intp)  # [k + j]: True frames before j, j = -k .. n + k
    np.cumsum(mask, axis=-1, out=count[..., k + 1:n + k + 1])
    count[..., n + k + 1:] = count[..., n + k:n + k + 1]
    return count[..., 2 * k + 1:] > count[..., :n]  # any True frame from i - k to i + k
