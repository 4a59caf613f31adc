"""Where each foot's ground reaction goes: the pressure patch under the foot, its split between
force plates (belts, steps) and the plates' C3D channels as the exact sum of the loads on them.

The split rule (documented in docs/synthetic.md). A foot's ground reaction (force F, centre of
pressure P on the support surface, free moment Tz) is spread as a *uniform pressure over a
rectangular patch* lying on the support surface:

- centred on P, aligned with the foot's heading (the foot's X axis projected on the surface);
- half-length ``min(P - rear, front - P, PATCH_HALF_LENGTH)`` along the heading, where
  [rear, front] is the part of the sole that has support under it (heel -0.05 m to metatarsal
  heads +0.17 m in the foot frame, cut by a step edge when the foot overhangs it);
- half-width ``PATCH_HALF_WIDTH`` (0.04 m) across it.

The traction is the same everywhere on the patch (shear proportional to pressure), so the part
of the patch on plate i carries the fraction w_i = (its area / patch area) of F and of Tz, at the
centroid c_i of that part. Since sum w_i c_i = P (the patch is symmetric about P), the loads on
the plates add up exactly to the foot's wrench: sum F_i = F and, about any point,
sum (c_i x F_i + T_i) = P x F + T. Every part has Fz >= 0 and its COP inside the plate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.io.forceplates import plate_frame

PATCH_HALF_LENGTH = 0.11  # m, largest half-length of the pressure patch along the foot
PATCH_HALF_WIDTH = 0.04  # m, half-width across the foot
SOLE_REAR, SOLE_FRONT = -0.05, 0.17  # m, foot frame x of the heel and of the metatarsal heads (sole ends)
SHARE_EPS = 1e-9  # a share of a foot's load below this counts as none (rounding of the clipping)


@dataclass
class PlateOutline:
    """A force plate as the C3D stores it: ``corners`` (4, 3) m lab in FORCE_PLATFORM:CORNERS order
    (plate x = c0 - c1, y = c0 - c3, z = x cross y, pointing down into the plate for corners listed
    clockwise seen from above), ``origin`` (3,) mm: FORCE_PLATFORM:ORIGIN, the plate-frame vector
    from the sensor origin to the centre of the surface (z <= 0). The surface is at corners' z."""

    corners: np.ndarray
    origin: np.ndarray

    @property
    def R(self) -> np.ndarray:
        """(3, 3) plate frame -> lab (the C3D corner rule, as gaitid's reader applies it)."""
        return plate_frame(self.corners)

    @property
    def centre(self) -> np.ndarray:
        return self.corners.mean(axis=0)

    @property
    def height(self) -> float:
        return float(self.corners[0, 2])

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(xmin, xmax, ymin, ymax) m lab; the plates here are rectangles aligned with the lab axes."""
        c = self.corners
        return float(c[:, 0].min()), float(c[:, 0].max()), float(c[:, 1].min()), float(c[:, 1].max())


def rectangle_corners(xmin: float, xmax: float, ymin: float, ymax: float, z: float, x_forward: bool = True) -> np.ndarray:
    """C3D corners (4, 3) of a lab-aligned rectangle at height z, plate z pointing down; plate X along
    lab +X (``x_forward``) or -X (the plate turned by 180 degrees about the vertical)."""
    if x_forward:
        pts = [(xmax, ymin), (xmin, ymin), (xmin, ymax), (xmax, ymax)]
    else:
        pts = [(xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)]
    return np.array([[x, y, z] for x, y in pts])


# ------------------------------------------------------------------------- polygons


def clip_halfplane(poly: np.ndarray, normal: np.ndarray, offset: float) -> np.ndarray:
    """Clip convex polygons (n, m, 2) (vertices in order; repeated vertices allowed) to the
    half-plane normal . x <= offset (Sutherland-Hodgman, vectorised). Returns (n, m + 1, 2), a
    convex polygon gaining at most one vertex; unused slots repeat the last vertex (zero-length
    edges add nothing to areas); a polygon wholly outside becomes all zeros (area 0)."""
    n, m, _ = poly.shape
    nxt = np.roll(poly, -1, axis=1)
    d0 = poly @ normal - offset
    d1 = nxt @ normal - offset
    in0, in1 = d0 <= 0.0, d1 <= 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(in0 != in1, d0 / (d0 - d1), 0.0)
    cand = np.empty((n, m, 2, 2))
    cand[:, :, 0] = poly
    cand[:, :, 1] = poly + u[..., None] * (nxt - poly)
    cand = cand.reshape(n, 2 * m, 2)
    valid = np.stack([in0, in0 != in1], axis=2).reshape(n, 2 * m)
    order = np.argsort(~valid, axis=1, kind="stable")[:, : m + 1]  # the kept vertices first, in order
    count = valid.sum(axis=1)
    slot = np.arange(m + 1)
    last = np.take_along_axis(order, np.clip(count - 1, 0, None)[:, None], axis=1)
    order = np.where(slot[None, :] < count[:, None], order, last)
    res = np.take_along_axis(cand, order[..., None], axis=1)
    res[count == 0] = 0.0
    return res


def polygon_area_centroid(poly: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Signed area (n,) (positive counter-clockwise) and centroid (n, 2) of polygons (n, m, 2);
    centroid NaN where the area is zero."""
    x, y = poly[..., 0], poly[..., 1]
    xn, yn = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    cr = x * yn - xn * y
    area = 0.5 * cr.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cx = ((x + xn) * cr).sum(axis=1) / (6.0 * area)
        cy = ((y + yn) * cr).sum(axis=1) / (6.0 * area)
    return area, np.column_stack([cx, cy])


def clip_rectangle(poly: np.ndarray, bounds: tuple[float, float, float, float]) -> np.ndarray:
    xmin, xmax, ymin, ymax = bounds
    for normal, off in (((1.0, 0.0), xmax), ((-1.0, 0.0), -xmin), ((0.0, 1.0), ymax), ((0.0, -1.0), -ymin)):
        poly = clip_halfplane(poly, np.array(normal), off)
    return poly


# ------------------------------------------------------------------------- patches


def pressure_patch(cop: np.ndarray, heading: np.ndarray, half_length: np.ndarray,
                   half_width: float = PATCH_HALF_WIDTH) -> np.ndarray:
    """Counter-clockwise rectangles (n, 4, 2) m lab, centred on ``cop`` (n, 2+), long axis along
    ``heading`` (n, 2) unit horizontal vectors."""
    u = heading
    v = np.column_stack([-u[:, 1], u[:, 0]])
    c = cop[:, :2]
    hl = half_length[:, None]
    return np.stack([c - hl * u - half_width * v, c + hl * u - half_width * v,
                     c + hl * u + half_width * v, c - hl * u + half_width * v], axis=1)


def patch_half_length(cop_along: np.ndarray, rear: np.ndarray | float = SOLE_REAR,
                      front: np.ndarray | float = SOLE_FRONT) -> np.ndarray:
    """Half-length (n,) of the patch: the COP's distance to the nearer end of the supported sole,
    at most PATCH_HALF_LENGTH; ``cop_along`` is the COP's position along the foot (foot-frame x, m)."""
    return np.clip(np.minimum(np.minimum(cop_along - rear, front - cop_along), PATCH_HALF_LENGTH), 0.0, None)


@dataclass
class PlateShare:
    """The part of one foot's ground reaction on one plate (lab, at the point rate or analog rate):
    force (n, 3) N, cop (n, 3) m (NaN where none), free_moment (n, 3) N.m (z only), share (n,) of
    the foot's load on that plate (0..1)."""

    force: np.ndarray
    cop: np.ndarray
    free_moment: np.ndarray
    share: np.ndarray


def split_load(force: np.ndarray, cop: np.ndarray, free_moment: np.ndarray, patch: np.ndarray,
               plates: list[PlateOutline], support_height: np.ndarray) -> tuple[list[PlateShare], np.ndarray]:
    """Split one foot's ground reaction over ``plates`` by the uniform-pressure patch rule.

    ``patch`` (n, 4, 2) the pressure patch (lab), ``support_height`` (n,) m: the height of the surface
    the foot stands on (only plates at that height can carry it). Returns the shares per plate and
    the share (n,) of the load that is on no plate (not measured). Shares are geometric (the patch's
    area), so they are defined in stance even where the load is zero (at foot strike and foot off).
    ``cop`` is NaN in swing."""
    n = len(force)
    area, _ = polygon_area_centroid(patch)
    stance = ~np.isnan(cop[:, 0])
    point = area <= 0.0  # a patch of no area: the COP alone decides
    out, total = [], np.zeros(n)
    for pl in plates:
        xmin, xmax, ymin, ymax = pl.bounds
        px, py = patch[..., 0], patch[..., 1]
        inside = ((px >= xmin) & (px <= xmax) & (py >= ymin) & (py <= ymax)).all(axis=1)
        outside = (px <= xmin).all(axis=1) | (px >= xmax).all(axis=1) | (py <= ymin).all(axis=1) | (py >= ymax).all(axis=1)
        level = stance & (np.abs(support_height - pl.height) < 1e-9)
        cx, cy = cop[:, 0], cop[:, 1]
        on_point = (cx >= xmin) & (cx <= xmax) & (cy >= ymin) & (cy <= ymax)
        inside = np.where(point, on_point, inside)
        outside = np.where(point, ~on_point, outside)
        w = np.where(level & inside, 1.0, 0.0)
        c = np.where(inside[:, None], cop[:, :2], np.nan)
        cut = level & ~inside & ~outside  # only patches across an edge are clipped
        if cut.any():
            a_cut, c_cut = polygon_area_centroid(clip_rectangle(patch[cut], pl.bounds))
            w[cut] = a_cut / area[cut]
            c[cut] = c_cut
        w = np.where(w > SHARE_EPS, np.where(w > 1.0 - SHARE_EPS, 1.0, w), 0.0)
        total += w
        on = w > 0
        pc = np.full((n, 3), np.nan)
        pc[on, :2] = c[on]
        pc[on, 2] = pl.height
        out.append(PlateShare(force * w[:, None], pc, free_moment * w[:, None], w))
    off = np.where(stance, np.clip(1.0 - total, 0.0, None), 0.0)
    off = np.where(off > SHARE_EPS, off, 0.0)
    return out, off


def plate_wrench_channels(force: np.ndarray, moment_origin: np.ndarray, plate: PlateOutline) -> np.ndarray:
    """Type-2 channels (n, 6): Fx Fy Fz (N), Mx My Mz (N.mm) in the plate frame, the force on the
    subject and its moment about the sensor origin, from the total force (n, 3) N and its moment
    about the lab origin (n, 3) N.m. As the C3D plate equations decode them (ezc3d): the moment
    about the surface centre is M_c = M_o + F x origin."""
    R = plate.R
    c = plate.centre
    m_centre = moment_origin - np.cross(c, force)  # about the surface centre, lab
    F = force @ R
    M_c = m_centre @ R
    o = plate.origin / 1000.0
    M_o = M_c - np.cross(F, o)
    return np.concatenate([F, 1000.0 * M_o], axis=1)


def wrench_about_origin(share: PlateShare) -> np.ndarray:
    """Moment (n, 3) N.m about the lab origin of a plate share (force at its COP plus free moment)."""
    cop = np.where(np.isnan(share.cop), 0.0, share.cop)
    return np.cross(cop, share.force) + share.free_moment
