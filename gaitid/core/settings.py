"""Processing settings: one validated dataclass, defaults chosen as a gait lab would.

The defaults (stated in docs/defaults.md too):

- markers low-pass filtered at 6 Hz, zero-lag 4th-order Butterworth;
- force plates filtered at the same cutoff as the markers (``force_cutoff_hz="markers"``),
  because filtering kinematics and forces at different cutoffs creates artefacts in
  the knee moment at impact (Bisseling & Hof 2006; Kristianslund et al. 2012);
  ``None`` leaves the plates unfiltered, as Plug-in Gait does;
- marker gaps (:mod:`gaitid.model.gap_fill`, docs/gaps.md): up to ``max_gap_frames`` 10 frames filled
  by cubic spline; longer ones up to ``max_fill_s`` 0.5 s (the issue's figure for a lab's raw archive; at
  any rate) from the segment's other markers when three are seen (``fill_rigid``, True; their shape from
  the static trial when one is given, else from the frames bounding the gap), else from the
  trial's whole marker set by principal components (``fill_pca``, True; Gloersen & Federolf 2016);
  longer gaps, gaps at the trial's ends and segments with no marker left NaN; every fill recorded
  (``Result.fills``) and named in the warnings; ``max_fill_s = 0`` turns the long fills off; a
  kinematic event is placed on a filled heel or toe only where the fill is trusted: a rigid or PCA
  fill, a spline up to ``trusted_spline_s`` 0.15 s (the longest that moved the real trials' Zeni
  events by at most 2 frames, docs/gaps.md), never for the heel's impact (:mod:`gaitid.events.fill_trust`);
- moments reported in the distal segment's frame, internal convention
  (the moment the proximal segment's muscles exert on the distal segment;
  'external' is its negative, Plug-in Gait's description);
- kinetics normalised by body mass (N/kg, N.m/kg, W/kg);
- plate contact threshold 20 N, minimum contact 50 ms; centre of pressure
  undefined (NaN) below 10 N;
- events from the file when it has them, else detected from the plates and, for
  steps off the plates, from kinematics (Zeni 2008); disagreements are reported.
- normalisation 'mass': N/kg, N.m/kg, W/kg; 'bw-height': forces in body weights,
  moments in body weight x height, powers in body weight x sqrt(g x height)
  (dimensionless, Hof 1996); 'none': N, N.m, W.
- ``decompose_shared_plates`` True: on frames where one plate carries both feet (a treadmill's
  double support, a split-belt crossing), each foot gets its share of the plate's wrench
  (:mod:`gaitid.contacts.decompose`, docs/contacts.md), flagged 'decomposed' per frame; False
  (CLI ``--no-decompose``): both feet's loads are NaN there.
- ``mass_tolerance`` 0.15: the body mass used and the mass the force plates carry (quiet
  standing, whole treadmill strides, or single support; :func:`gaitid.subject.bodymass.check_mass`)
  may differ by this fraction before a warning names both; the clean real and synthetic trials
  differ by at most 4.3 % (docs/sessions.md); ``math.inf`` turns the warning off.
- marker checks (:func:`gaitid.model.marker_faults.marker_fault_check`, docs/checks.md), each
  ``math.inf`` to turn its part off: ``segment_length_tolerance_m`` 0.05: a thigh, shank or
  foot length (joint centre to joint centre, ankle to toe) more than this off its median over
  the trial is named with its frames (clean real trials: at most 31 mm); ``segment_asymmetry_tolerance``
  0.35: the left and right median lengths of a segment more than this fraction of their mean
  apart (clean: at most 23 %, a foot); ``stuck_marker_s`` 0.2 and ``stuck_marker_m`` 1e-4: a marker
  moving less than 0.1 mm a frame for 0.2 s while every other marker moves more than
  ``segment_length_tolerance_m`` relative to it (clean: none); ``marker_side_margin_m`` 0.1: a
  left marker more than 0.1 m to the right of its right partner, along the line between the hip
  centres (clean: at most 58 mm, the heels of btkdata/PlugInC3D.c3d); ``marker_knock_m`` 0.01: a
  marker knocked or re-placed, its distances to the rest of its segment, averaged over a stride,
  stepping by more than this (root sum square) between the stride before a frame and the stride
  after it (:mod:`gaitid.model.marker_knocks`; clean real and synthetic trials: at most 6 mm, a
  knee marker knocked 5 cm: 12-93 mm); ``marker_turn_deg`` 12: the plane of a three-point segment
  (Plug-in Gait's thigh, shank, foot), its orientation averaged over a stride, turning by more
  than this between the stride before a frame and the stride after it, a marker moved across it
  (same module; clean real and synthetic trials: at most 8 deg, a thigh or tibia wand knocked 5 cm
  or a knee marker 3 cm that the distances miss: 18-68 deg).
- ``residual_tolerance`` 0.25 and ``residual_mean_tolerance`` 0.10: the whole body's residual
  force (its mass times its centre of mass's acceleration minus the feet's measured loads and its
  weight, :mod:`gaitid.contacts.consistency`), over the frames where every loaded foot is on a
  plate, may reach this vertical RMS and this mean vertical part, as fractions of body weight,
  before a warning; the clean real trials reach 3 to 7 % RMS and +-3 % mean, the synthetic
  trials 12 to 19 % and +-3 %, a mass or all plates' gain 30 % off 20 to 25 % mean
  (docs/checks.md); the horizontal part is reported, not judged; ``math.inf`` turns each off.
- Functional calibration (:mod:`gaitid.model.functional`, docs/functional.md):
  ``functional_min_range_deg`` 20: a hip centre needs this range of motion in two directions, a
  knee axis in one, else the fit is refused (Ehrig et al. 2006: SCoRE's error grows fast below
  about 20 deg; on the synthetic trials a 10-degree star arc errs by up to 30 mm);
  ``functional_max_residual_mm`` 10: a fit whose residual exceeds it is used with a warning (SCoRE
  on four-marker clusters: 1.8 mm without soft-tissue artefact, 7.8 mm with 5 mm, 13-14 mm with
  10 mm, where the centre errs by 22-49 mm; docs/functional.md);
  ``functional_max_spread_mm`` 10: a hip fit whose thigh markers, each fitted alone, give centres
  further apart than this is used with a warning (the markers deform on the skin: noise alone
  gives at most 5.2 mm, a 10 mm soft-tissue artefact 11.6-104 mm, where the centre errs by 5-49
  mm; the sphere fit's residual barely grows with the artefact); ``functional_max_spread_deg`` 1:
  the same for the axes of a knee's two shank markers (1 mm of noise alone at most 0.36 deg from
  60 deg of flexion, 2 mm 0.42 deg from 90; a 10 mm artefact 1.2-46 deg); ``functional_max_knee_turn_deg`` 45: a knee axis further
  than this off the pelvis's left-right axis at the static is refused (not a knee's: two
  markers' arcs too flat for their noise lay it along the shank, 55-90 deg off);
  ``functional_max_regression_gap_mm`` 30: a functional hip centre further than this from
  Harrington's regression centre is used with a warning (Harrington errs by 12.3 +- 5.9 mm in
  adults, Mantovani et al. 2016, CT: mean + 3 SD; catches a large artefact that moves the thigh's
  markers rigidly with the joint, which no residual or spread shows);
  ``functional_max_knee_gap_mm`` 30: a functional knee axis passing further than this from the
  knee marker (KNE, on the lateral epicondyle the axis runs through) at the static is used with a
  warning (synthetic trials, truth through KNE: noise alone at most 3.0 mm from 60 deg of flexion,
  two shank markers at 30 deg 35 mm; 10 mm of artefact 14-52 mm; docs/functional.md).
- Force-plate checks (docs/checks.md, "Force plates"; thresholds against the clean real and
  synthetic trials' worst figures there): ``plate_corner_tolerance_m`` 0.005, the plate corners'
  departure from a flat rectangle (clean: <= 1.3 mm); ``plate_origin_offset_m`` 0.02 and
  ``plate_origin_depth_m`` 0.15, FORCE_PLATFORM:ORIGIN's |x|, |y| and |z| (clean: <= 4.4 mm and
  <= 59 mm); ``plate_cop_outside_m`` 0.05, a plate's loaded COP's median distance outside its edge
  (clean: 4.6 cm inside at worst); ``cop_foot_margin_m`` 0.10, a contact's COP's median distance
  from the nearer foot (clean: <= 1.8 cm); ``cop_min_travel`` 0.25, the COP's travel along the foot
  on a step as a fraction of heel-toe (clean: >= 52 %). ``math.inf`` (0 for ``cop_min_travel``)
  turns a warning off.
- ``flat_foot`` None: Plug-in Gait's static foot calibration uses the flat-foot option (heel
  lowered to the toe's height) only where the files say so: a stored ``LFlatFoot``/``RFlatFoot``/
  ``FlatFoot`` flag, or a stored StaticPlantFlex that only this option reproduces;
  else off, as Nexus and pyCGM2 by default. True/False (``--flat-foot``/``--no-flat-foot``)
  force it on both sides (docs/plugin-gait.md).
- EMG (docs/emg.md; SENIAM, Hermens et al. 2000, and the clinical gait literature, Winter 1991):
  ``emg_channels`` {} the lab's channel map (``{'EMG1': 'L Rectus femoris', 'EMG9': 'off'}``; channels
  whose label or description names the side and muscle are found without it); the raw signal's mean
  removed, then band-passed: ``emg_highpass_hz`` 20 Hz (movement artefact; SENIAM's and De Luca et al.
  2010's 20 Hz corner) and ``emg_lowpass_hz`` 450 Hz (where below the Nyquist frequency; else skipped,
  with a note), zero-lag Butterworth of overall order ``emg_filter_order`` 4; full-wave rectified; the
  linear envelope a zero-lag low-pass at ``emg_envelope_hz`` 6 Hz (Winter 1991's 6 Hz for gait; 3-10 Hz
  in use); ``emg_normalise`` 'none' (the channel's unit), 'peak' (% of the channel's peak envelope over
  the trial's cycles) or ``{channel: reference}`` (% of a reference in the channel's unit, e.g. an MVC);
  on-off timing: a single threshold on the envelope (Hodges & Bui 1996 compare such methods) at
  ``emg_onset_fraction`` 0.25 of the channel's envelope range (min + 0.25 x (max - min)) over its cycles,
  bursts shorter than ``emg_min_burst_s`` 0.03 s dropped; each burst's onset and offset then placed
  where the rectified signal low-passed at ``emg_onset_hz`` 50 Hz crosses the threshold (the 6 Hz
  envelope widens a burst by about 25 ms each way; Hodges & Bui's 50 Hz cut-off; None: the envelope's
  own crossings; measured: within 1 % of the cycle on synthetic bursts, docs/emg.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from gaitid.core.errors import SettingsError
from gaitid.core.vocabulary import (
    CONTACT_THRESHOLD_N,
    CONVENTIONS,
    COP_THRESHOLD_N,
    EVENT_SOURCES,
    FRAMES,
    GRAVITY_M_S2,
    KINETIC_NORMALISATIONS,
    MIN_CONTACT_S,
    emg_channel_map,
    plate_overrides,
)


@dataclass(frozen=True)
class Settings:
    """Everything that changes gaitid's numbers. Units in the field names."""

    model: str = "plugin-gait"
    bsip: str | None = None  # None: the model's own table (Dempster for Plug-in Gait)
    marker_cutoff_hz: float | None = 6.0
    force_cutoff_hz: float | str | None = "markers"
    filter_order: int = 4  # zero-lag overall order (a 2nd-order Butterworth run forward and back)
    max_gap_frames: int = 10
    max_fill_s: float = 0.5  # s: a marker gap longer than this stays NaN (rigid-body and PCA fills)
    fill_rigid: bool = True  # long gaps from the segment's other markers (rigid body; the static's shape if given)
    fill_pca: bool = True  # long gaps from the whole marker set (principal components)
    trusted_spline_s: float = 0.15  # s: a longer spline fill of a heel or toe places no kinematic event
    frame: str = "distal"
    convention: str = "internal"
    normalise: str = "mass"
    gravity_m_s2: float = GRAVITY_M_S2
    contact_threshold_n: float = CONTACT_THRESHOLD_N
    min_contact_s: float = MIN_CONTACT_S
    cop_threshold_n: float = COP_THRESHOLD_N
    events: str = "file"  # file events when the file has any, else detected; or "detected", "merge"
    plates: dict[int, str] = field(default_factory=dict)  # plate index (1-based) -> Auto/Left/Right/Invalid
    decompose_shared_plates: bool = True  # a plate both feet load: each foot's share (flagged 'decomposed'); False: NaN
    mass_tolerance: float = 0.15  # fraction: body mass used vs the plates' before a warning
    segment_length_tolerance_m: float = 0.05  # m: a segment's length off its median before a warning
    segment_asymmetry_tolerance: float = 0.35  # fraction of the mean: left vs right segment length
    stuck_marker_s: float = 0.2  # s: a marker still this long while the others move is stuck
    stuck_marker_m: float = 1e-4  # m per frame: "still"
    marker_side_margin_m: float = 0.1  # m: a left marker this far right of its right partner is swapped
    marker_knock_m: float = 0.01  # m: a marker's stride-mean distances to its segment stepping this much: knocked
    marker_turn_deg: float = 12.0  # deg: a three-point segment's stride-mean plane turning this much: knocked
    residual_tolerance: float = 0.25  # fraction of body weight: vertical RMS residual force before a warning
    residual_mean_tolerance: float = 0.10  # fraction of body weight: mean vertical residual force before a warning
    plate_corner_tolerance_m: float = 0.005  # plate corners: off a flat rectangle before a warning
    plate_origin_offset_m: float = 0.02  # FORCE_PLATFORM:ORIGIN |x|, |y| before a warning
    plate_origin_depth_m: float = 0.15  # FORCE_PLATFORM:ORIGIN |z| before a warning
    plate_cop_outside_m: float = 0.05  # a plate's COP: median distance outside its edge before a warning
    cop_foot_margin_m: float = 0.10  # a contact's COP: median distance from the nearer foot before a warning
    cop_min_travel: float = 0.25  # fraction of heel-toe the COP travels along the foot on a step, else a warning
    functional_min_range_deg: float = 20.0  # functional calibration: less motion than this refuses a centre / axis
    functional_max_residual_mm: float = 10.0  # functional calibration: a fit's residual above this warns
    functional_max_spread_mm: float = 10.0  # functional hip: the thigh markers' own centres further apart warn
    functional_max_spread_deg: float = 1.0  # functional knee: two shank markers' own axes further apart warn
    functional_max_knee_turn_deg: float = 45.0  # functional knee: an axis further off left-right is refused
    functional_max_regression_gap_mm: float = 30.0  # functional hip: further from Harrington's centre warns
    functional_max_knee_gap_mm: float = 30.0  # functional knee: an axis further from the knee marker warns
    flat_foot: bool | None = None  # static foot calibration: None = the files' choice, else off; True/False force it
    emg_channels: dict[str, str] = field(default_factory=dict)  # channel label -> 'Left Rectus femoris' or 'off'
    emg_highpass_hz: float | None = 20.0  # band-pass: high-pass corner (None: no high-pass)
    emg_lowpass_hz: float | None = 450.0  # band-pass: low-pass corner, where below Nyquist (None: none)
    emg_envelope_hz: float = 6.0  # linear envelope: low-pass of the rectified signal
    emg_filter_order: int = 4  # zero-lag overall order of each EMG filter
    emg_normalise: str | dict = "none"  # 'none', 'peak' or {channel: reference value in its unit}
    emg_onset_fraction: float = 0.25  # on-off threshold: fraction of the envelope's range above its minimum
    emg_min_burst_s: float = 0.03  # bursts above the threshold shorter than this are dropped
    emg_onset_hz: float | None = 50.0  # on-off edges: low-pass of the rectified signal (None: the envelope's)

    def __post_init__(self) -> None:
        def bad(name: str, value: Any, why: str) -> SettingsError:
            return SettingsError(f"setting {name}={value!r}: {why}")

        for name, allowed in (
            ("frame", FRAMES),
            ("convention", CONVENTIONS),
            ("normalise", KINETIC_NORMALISATIONS),
            ("events", EVENT_SOURCES),
        ):
            if getattr(self, name) not in allowed:
                raise bad(name, getattr(self, name), f"must be one of {', '.join(allowed)}")
        if self.marker_cutoff_hz is not None and not self.marker_cutoff_hz > 0:
            raise bad("marker_cutoff_hz", self.marker_cutoff_hz, "must be a positive frequency or None")
        fc = self.force_cutoff_hz
        if not (fc is None or fc == "markers" or (isinstance(fc, (int, float)) and fc > 0)):
            raise bad("force_cutoff_hz", fc, "must be a positive frequency, 'markers' or None")
        if self.filter_order < 2 or self.filter_order % 2:
            raise bad("filter_order", self.filter_order, "must be an even number >= 2 (zero-lag filtering doubles the order)")
        if self.max_gap_frames < 0:
            raise bad("max_gap_frames", self.max_gap_frames, "must be >= 0")
        mf = self.max_fill_s
        if isinstance(mf, bool) or not isinstance(mf, (int, float)) or not mf >= 0:
            raise bad("max_fill_s", mf, "must be a duration >= 0 s (0: long gaps stay NaN)")
        ts = self.trusted_spline_s
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not ts >= 0:
            raise bad("trusted_spline_s", ts, "must be a duration >= 0 s (0: no spline fill places an event)")
        for name in ("fill_rigid", "fill_pca", "decompose_shared_plates"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, getattr(self, name), "must be True or False")
        for name in ("gravity_m_s2", "contact_threshold_n", "cop_threshold_n"):
            if not getattr(self, name) > 0:
                raise bad(name, getattr(self, name), "must be > 0")
        for names, why in (  # thresholds of the data checks: positive numbers, math.inf turns a warning off
            (("mass_tolerance",), "must be a fraction > 0 (0.15 = 15 %; math.inf: no warning)"),
            (("segment_length_tolerance_m", "segment_asymmetry_tolerance", "stuck_marker_s", "stuck_marker_m",
              "marker_side_margin_m", "marker_knock_m", "marker_turn_deg"), "must be a number > 0 (math.inf: that marker check off)"),
            (("residual_tolerance", "residual_mean_tolerance"),
             "must be a fraction of body weight > 0 (0.25 = 25 %; math.inf: no warning)"),
            (("plate_corner_tolerance_m", "plate_origin_offset_m", "plate_origin_depth_m", "plate_cop_outside_m",
              "cop_foot_margin_m"), "must be a length in m > 0 (math.inf: no warning)"),
            (("functional_min_range_deg", "functional_max_residual_mm", "functional_max_spread_mm",
              "functional_max_spread_deg", "functional_max_knee_turn_deg", "functional_max_regression_gap_mm",
              "functional_max_knee_gap_mm"),
             "must be a number > 0 (degrees of motion; mm of residual or spread, deg of spread or turn; math.inf: "
             "no warning)"),
        ):
            for name in names:
                v = getattr(self, name)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                    raise bad(name, v, why)
        v = self.cop_min_travel
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise bad("cop_min_travel", v, "must be a fraction of the foot's length in [0, 1] (0: no warning)")
        if self.flat_foot is not None and not isinstance(self.flat_foot, bool):
            raise bad("flat_foot", self.flat_foot, "must be True, False or None (the files' choice, else off)")
        if self.min_contact_s < 0:
            raise bad("min_contact_s", self.min_contact_s, "must be >= 0")
        self._check_emg(bad)
        try:
            plates = plate_overrides(self.plates)
        except SettingsError as err:
            raise bad("plates", self.plates, err.reason) from None
        object.__setattr__(self, "plates", plates)

    def _check_emg(self, bad) -> None:
        for name in ("emg_highpass_hz", "emg_lowpass_hz"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
                raise bad(name, value, "must be a positive frequency or None")
        if self.emg_highpass_hz is not None and self.emg_lowpass_hz is not None \
                and not self.emg_lowpass_hz > self.emg_highpass_hz:
            raise bad("emg_lowpass_hz", self.emg_lowpass_hz, f"must be above emg_highpass_hz {self.emg_highpass_hz}")
        ev = self.emg_envelope_hz
        if isinstance(ev, bool) or not isinstance(ev, (int, float)) or not ev > 0:
            raise bad("emg_envelope_hz", ev, "must be a positive frequency")
        if self.emg_filter_order < 2 or self.emg_filter_order % 2:
            raise bad("emg_filter_order", self.emg_filter_order, "must be an even number >= 2 (zero-lag filtering "
                                                                 "doubles the order)")
        norm = self.emg_normalise
        if isinstance(norm, dict):
            refs = {}
            for k, v in norm.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                    raise bad("emg_normalise", norm, f"the reference of {k!r} must be a positive value")
                refs[str(k)] = float(v)
            object.__setattr__(self, "emg_normalise", refs)
        elif norm not in ("none", "peak"):
            raise bad("emg_normalise", norm, "must be 'none', 'peak' or {channel: reference value}")
        if not 0 < self.emg_onset_fraction < 1:
            raise bad("emg_onset_fraction", self.emg_onset_fraction, "must lie between 0 and 1")
        if not self.emg_min_burst_s >= 0:
            raise bad("emg_min_burst_s", self.emg_min_burst_s, "must be >= 0 s")
        edge = self.emg_onset_hz
        if edge is not None and (isinstance(edge, bool) or not isinstance(edge, (int, float)) or not edge >= ev):
            raise bad("emg_onset_hz", edge, f"must be a frequency >= emg_envelope_hz {ev:g} Hz, or None")
        try:
            channels = emg_channel_map(self.emg_channels)
        except SettingsError as err:
            raise bad("emg_channels", self.emg_channels, err.reason) from None
        object.__setattr__(self, "emg_channels", channels)

    @property
    def force_cutoff(self) -> float | None:
        """The force-plate cutoff in Hz after resolving 'markers'."""
        return self.marker_cutoff_hz if self.force_cutoff_hz == "markers" else self.force_cutoff_hz

    def replace(self, **changes: Any) -> "Settings":
        """A copy with some fields changed (validated); unknown names raise SettingsError."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def plugin_gait(cls, **changes: Any) -> "Settings":
        """Settings that mirror Vicon Plug-in Gait: distal frame, external convention,
        Dempster parameters as Plug-in Gait applies them (models/bsip/plugin-gait.toml),
        unfiltered plates, mass-normalised output."""
        base = cls(frame="distal", convention="external", bsip="plugin-gait", force_cutoff_hz=None)
        return base.replace(**changes) if changes else base
