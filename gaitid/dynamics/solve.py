"""``inverse_dynamics``: joint forces and moments of a segment chain, with their contributions.

Checks the inputs (a constant :class:`Chain` and its per-frame :class:`SegmentMotion`), runs
the recursive (default, fast) or block (seed 000) solver, both in the lab frame under the
internal convention, then expresses the moments in the frame and under the convention asked
for (:mod:`gaitid.dynamics.express`).
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import DataError, SettingsError
from gaitid.core.rotation import cross
from gaitid.core.vocabulary import CONVENTIONS, FRAMES
from gaitid.dynamics.block import solve_block
from gaitid.dynamics.express import convention_sign, in_frame, joint_rotations
from gaitid.dynamics.recursive import recursive_newton_euler
from gaitid.dynamics.types import CONTRIBUTIONS, Body, Chain, ExternalLoad, JointLoads, SegmentMotion

METHODS = ("recursive", "block")

# the proximal joint of each named segment
JOINT_OF_SEGMENT = {"foot": "ankle", "shank": "knee", "thigh": "hip", "pelvis": "lumbosacral",
                    "hand": "wrist", "forearm": "elbow", "upperarm": "shoulder", "upper_arm": "shoulder"}


def joint_name(segment_name: str) -> str:
    """Name of a segment's proximal joint: foot -> ankle, shank -> knee, thigh -> hip.

    A side prefix is kept ("left_foot" -> "left_ankle", "R.shank" -> "R.knee");
    any other name gives ``<name>_proximal``.
    """
    low = segment_name.lower()
    if low in JOINT_OF_SEGMENT:
        return JOINT_OF_SEGMENT[low]
    for sep in ("_", " ", ".", "-"):
        head, s, tail = segment_name.rpartition(sep)
        if s and head and tail.lower() in JOINT_OF_SEGMENT:
            return head + sep + JOINT_OF_SEGMENT[tail.lower()]
    return f"{segment_name}_proximal"


def _check_array(arr, shape: tuple, what: str) -> np.ndarray:
    try:
        a = np.asarray(arr, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: not a numeric array ({exc})") from None
    if a.shape != shape:
        raise DataError(f"{what}: expected shape {shape}, got {a.shape}")
    return a


ROTATION_TOL = 1e-6  # max |R^T R - I| and |det R - 1| accepted


def _check_rotations(R: np.ndarray, what: str) -> None:
    """Raise DataError unless R (n, 3, 3) holds proper rotations (orthonormal, det +1).

    Checks ~100 frames spread over the trial (a systematic error, such as unnormalised
    axes or a left-handed frame, shows in all of them) so that the check stays cheap;
    NaN frames are skipped.
    """
    sample = R[:: max(1, R.shape[0] // 100)]
    sample = sample[np.isfinite(sample).all(axis=(1, 2))]
    if not len(sample):
        return
    err = np.abs(np.swapaxes(sample, 1, 2) @ sample - np.eye(3)).max(axis=(1, 2))
    det = np.einsum("ni,ni->n", sample[:, :, 0], cross(sample[:, :, 1], sample[:, :, 2]))
    if (det < 0).any():
        raise DataError(f"{what}: not a proper rotation (determinant {det[det < 0][0]:.3g}): "
                        "left-handed segment axes?")
    if (err > ROTATION_TOL).any():
        raise DataError(f"{what}: not orthonormal (|R^T R - I| up to {err.max():.3g}); "
                        "R must map segment to lab coordinates with unit, orthogonal columns")


def _check_body(body: Body, n: int, name: str) -> tuple[float | np.ndarray, np.ndarray]:
    """(mass, inertia) of a Body, checked: a positive finite mass and a symmetric positive
    semi-definite inertia, constant (a number and (3, 3)) or per frame ((n,) and (n, 3, 3),
    stacked samples; symmetry and definiteness checked on ~100 frames, like the rotations)."""
    if np.ndim(body.mass) == 1:
        m = _check_array(body.mass, (n,), f"{name}: mass (per frame)")
        if not (np.isfinite(m).all() and (m > 0).all()):
            raise DataError(f"{name}: per-frame masses must be positive finite numbers of kg")
        inertia = _check_array(body.inertia_seg, (n, 3, 3), f"{name}: inertia_seg (per frame, with the masses)")
        sample = inertia[:: max(1, n // 100)]
    else:
        try:
            m = float(body.mass)
        except (TypeError, ValueError):
            m = None
        if m is None or not (np.isfinite(m) and m > 0):
            raise DataError(f"{name}: mass must be a positive finite number of kg, got {body.mass!r}")
        inertia = _check_array(body.inertia_seg, (3, 3), f"{name}: inertia_seg")
        sample = inertia[None]
    if not np.isfinite(inertia).all():
        raise DataError(f"{name}: inertia_seg has non-finite entries")
    swapped = np.swapaxes(sample, -1, -2)  # (numpy.allclose's test, rtol 1e-9, atol 1e-12: the entries are finite)
    if not np.all(np.abs(sample - swapped) <= 1e-12 + 1e-9 * np.abs(swapped)):
        raise DataError(f"{name}: inertia_seg is not symmetric")
    if np.linalg.eigvalsh(sample).min() < 0:
        raise DataError(f"{name}: inertia_seg is not positive semi-definite (a negative principal moment)")
    return m, inertia


def _validate(chain, motion, loads, gravity_lab, frame, convention, method, proximal_R):
    if frame not in FRAMES:
        raise SettingsError(f"inverse_dynamics: frame must be one of {FRAMES}, got {frame!r}")
    if convention not in CONVENTIONS:
        raise SettingsError(f"inverse_dynamics: convention must be one of {CONVENTIONS}, got {convention!r}")
    if method not in METHODS:
        raise SettingsError(f"inverse_dynamics: method must be one of {METHODS}, got {method!r}")
    if not isinstance(chain, Chain):
        raise DataError(f"inverse_dynamics: chain must be a Chain of Body, not {type(chain).__name__}")
    if not len(chain):
        raise DataError("inverse_dynamics: the chain has no segments")
    if len(motion) != len(chain):
        raise DataError(f"inverse_dynamics: {len(motion)} segment motion(s) for a chain of {len(chain)} bodies")
    g = _check_array(gravity_lab, (3,), "gravity_lab")
    if not np.isfinite(g).all():
        raise SettingsError(f"inverse_dynamics: gravity_lab must be finite, got {g}")
    try:
        n = np.shape(motion[0].R)[0]
    except (AttributeError, IndexError) as exc:
        raise DataError(f"inverse_dynamics: segment 0 has no per-frame rotation R ({exc})") from None
    bodies, checked = [], []
    for i, (body, seg) in enumerate(zip(chain, motion)):
        name = f"segment {i} ({getattr(body, 'name', '?')})"
        m, inertia = _check_body(body, n, name)
        bodies.append(Body(body.name, m, inertia))
        R = _check_array(seg.R, (n, 3, 3), f"{name}: R")
        _check_rotations(R, f"{name}: R")
        distal = None if seg.distal_lab is None else _check_array(seg.distal_lab, (n, 3), f"{name}: distal_lab")
        checked.append(SegmentMotion(
            R=R,
            com_lab=_check_array(seg.com_lab, (n, 3), f"{name}: com_lab"),
            com_acc_lab=_check_array(seg.com_acc_lab, (n, 3), f"{name}: com_acc_lab"),
            omega_seg=_check_array(seg.omega_seg, (n, 3), f"{name}: omega_seg"),
            alpha_seg=_check_array(seg.alpha_seg, (n, 3), f"{name}: alpha_seg"),
            proximal_lab=_check_array(seg.proximal_lab, (n, 3), f"{name}: proximal_lab"),
            distal_lab=distal,
        ))
    checked_loads = []
    for li, ld in enumerate(loads):
        what = f"external load {li}"
        if not isinstance(ld.segment, (int, np.integer)) or not 0 <= ld.segment < len(chain):
            raise DataError(f"{what}: segment index {ld.segment!r} is not in the chain (0..{len(chain) - 1})")
        free = None if ld.free_moment_lab is None else _check_array(
            ld.free_moment_lab, (n, 3), f"{what}: free_moment_lab")
        checked_loads.append(ExternalLoad(
            segment=int(ld.segment),
            force_lab=_check_array(ld.force_lab, (n, 3), f"{what}: force_lab"),
            point_lab=_check_array(ld.point_lab, (n, 3), f"{what}: point_lab"),
            free_moment_lab=free))
    if proximal_R is not None:
        proximal_R = _check_array(proximal_R, (n, 3, 3), "proximal_R")
        if frame == "proximal":  # only then is it used
            _check_rotations(proximal_R, "proximal_R")
    return Chain(tuple(bodies)), checked, checked_loads, g, proximal_R


def _mask_unknown(forces: dict, moments: dict, no_frame_for: int | None = None) -> None:
    """Make a joint's force, moment and all their parts NaN in frames where any total component is NaN.

    So a joint's loads in a frame are either all known or all NaN (the gravity part of a
    force, say, does not depend on the kinematics, but it is meaningless without them).
    ``no_frame_for``: a joint whose moments are NaN only for want of a frame to express
    them in (the last joint in the proximal frame without ``proximal_R``); its force is kept.
    """
    for j, (f, m) in enumerate(zip(forces["total"], moments["total"])):
        s = f[:, 0] + f[:, 1] + f[:, 2]
        if j != no_frame_for:
            s = s + m[:, 0] + m[:, 1] + m[:, 2]
        bad = np.isnan(s)
        if bad.any():
            for d in (forces, moments):
                for arrays in d.values():
                    arrays[j][bad] = np.nan


def inverse_dynamics(
    chain: Chain,
    motion: list[SegmentMotion],
    loads: list[ExternalLoad],
    *,
    gravity_lab=(0.0, 0.0, -9.81),
    frame: str = "distal",
    convention: str = "internal",
    method: str = "recursive",
    contributions: bool = True,
    proximal_R: np.ndarray | None = None,
) -> JointLoads:
    """Net joint forces and moments of a chain ordered distal to proximal (foot, shank, thigh).

    chain: the bodies' parameters (:class:`Chain` of :class:`Body`: mass, inertia; constant, or
    per frame for stacked samples).
    motion: per-frame motion of each body, same order (:class:`SegmentMotion`; SI units).
    loads: external loads (force, point of application, free moment; lab frame) on
    any segment, e.g. a force plate's force, centre of pressure and Tz on the foot.
    gravity_lab: m/s^2, lab frame (default 9.81 along -Z).
    frame: the frame of the returned moments: "distal" (segment j's own frame for
    joint j; seed 000's and Plug-in Gait's choice), "proximal" (segment j+1's frame;
    for the last joint ``proximal_R`` (n, 3, 3) gives the next segment's rotation,
    e.g. the pelvis for the hip, else that joint's moments are NaN), or "lab".
    convention: "internal" (moment and force of the proximal on the distal segment:
    the muscles' moment) or "external" (their negatives, as Plug-in Gait reports).
    method: "recursive" (block forward substitution, fast) or "block" (seed 000's
    stacked system, eq. (19), one batched ``numpy.linalg.solve``); they agree to rounding.
    contributions: also return the inertial (M a), velocity (omega x I omega),
    gravity and external (ground reaction) parts, which add up to the totals.

    Returns :class:`JointLoads` (forces always lab frame, N; moments N.m, in ``frame`` and
    in the lab). A frame with NaN inputs gives NaN outputs in that frame only (recursive:
    only for the joints that depend on the missing data; block: possibly for every joint
    of the frame). Raises :class:`~gaitid.core.errors.DataError` for malformed inputs and
    :class:`~gaitid.core.errors.SettingsError` for bad options.
    """
    chain, motion, loads, g, proximal_R = _validate(
        chain, motion, loads, gravity_lab, frame, convention, method, proximal_R)
    rotations = joint_rotations(motion, frame, proximal_R)
    if method == "recursive" and frame == "lab":
        forces, moments_lab = recursive_newton_euler(chain, motion, loads, g, contributions)
        moments = {p: list(ms) for p, ms in moments_lab.items()}
    elif method == "recursive":
        forces, moments_lab, moments = recursive_newton_euler(chain, motion, loads, g, contributions, rotations)
    else:
        forces, moments_lab = solve_block(chain, motion, loads, g, contributions)
        parts = list(moments_lab)  # 'total' and the contributions, expressed together joint by joint
        per_joint = [in_frame(np.stack([moments_lab[p][j] for p in parts]), R) for j, R in enumerate(rotations)]
        moments = {p: [per_joint[j][q] for j in range(len(chain))] for q, p in enumerate(parts)}
    no_frame = len(chain) - 1 if (frame == "proximal" and proximal_R is None) else None
    _mask_unknown(forces, moments, no_frame)
    sign = convention_sign(convention)
    if sign < 0:
        for d in (forces, moments, moments_lab):
            for p in d:
                d[p] = [-v for v in d[p]]
    result = JointLoads(
        joints=[joint_name(name) for name in chain.names],
        force_lab=forces["total"],
        moment=moments["total"],
        # unknown where the joint is (its force is masked alike); a missing frame to express in is no matter
        moment_lab=[np.where(np.isnan(f), np.nan, ml) for f, ml in zip(forces["total"], moments_lab["total"])],
        frame=frame,
        convention=convention,
    )
    if contributions:
        result.force_parts = {p: forces[p] for p in CONTRIBUTIONS}
        result.moment_parts = {p: moments[p] for p in CONTRIBUTIONS}
    return result
