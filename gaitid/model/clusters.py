"""Technical marker clusters (CAST, Cappozzo et al. 1995): rigid least-squares fits.

A cluster is three or more markers on one segment. In a static trial each anatomical
landmark is expressed relative to its cluster (:func:`calibrate_cluster`); in a walking
trial the landmark is rebuilt from the cluster alone (:func:`reconstruct_landmarks`), so
landmarks removed after the static (medial epicondyle and malleolus markers) are not needed.

The fit is the SVD method of Soderkvist & Wedin (1993), vectorised over frames (one batched
``numpy.linalg.svd``): for reference positions ``a_i`` (static) and measured ``b_i``,
find the rotation R (3, 3) and translation d minimising sum_i |R a_i + d - b_i|^2:

    C = sum_i (b_i - b_mean)(a_i - a_mean)^T = U S V^T,
    R = U diag(1, 1, det(U V^T)) V^T,   d = b_mean - R a_mean.

The residual of a frame is the RMS distance (m) between the fitted and measured markers.
All positions in m, lab frame. A frame with fewer than three visible cluster markers, or
with collinear ones, gives NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.errors import DataError

DEFAULT_MAX_RESIDUAL = 0.005  # m: frames whose cluster fit RMS exceeds this are flagged


def rigid_fit(reference: np.ndarray, measured: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares rigid transform from ``reference`` (k, 3) to ``measured`` (n, k, 3).

    Returns (R (n, 3, 3), d (n, 3), rms (n,)) with measured ~ R @ reference + d
    (Soderkvist & Wedin 1993). Markers NaN in a frame are left out of that frame's fit;
    frames with fewer than three markers, or a degenerate (collinear) set, are NaN."""
    a = np.asarray(reference, float)
    b = np.asarray(measured, float)
    if a.ndim != 2 or a.shape[1] != 3 or b.ndim != 3 or b.shape[1:] != a.shape:
        raise ValueError(f"reference (k, 3) and measured (n, k, 3) expected, got {a.shape} and {b.shape}")
    if not np.isfinite(a).all():
        raise ValueError("reference positions must be finite")
    w = np.isfinite(b).all(axis=2)  # (n, k) visible markers
    count = w.sum(axis=1)
    wf = w[..., None].astype(float)
    b0 = np.where(w[..., None], b, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        a_mean = (wf * a).sum(axis=1) / count[:, None]  # per frame: the visible subset's centroid
        b_mean = (wf * b0).sum(axis=1) / count[:, None]
    pa = (a[None] - a_mean[:, None]) * wf
    pb = (b0 - b_mean[:, None]) * wf
    C = np.einsum("nki,nkj->nij", pb, pa)
    ok = count >= 3
    C[~ok] = np.eye(3)
    U, S, Vt = np.linalg.svd(C)
    det = np.linalg.det(U @ Vt)
    D = np.ones((len(C), 3))
    D[:, 2] = np.sign(det)
    R = U @ (D[:, :, None] * Vt)
    # a collinear set leaves the rotation about its line undetermined: second singular value ~ 0
    scale = np.maximum(S[:, 0], 1e-300)
    ok &= S[:, 1] / scale > 1e-6
    d = b_mean - np.einsum("nij,nj->ni", R, a_mean)
    fitted = np.einsum("nij,kj->nki", R, a) + d[:, None, :]
    err2 = np.where(w, np.sum((fitted - b0) ** 2, axis=2), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(err2.sum(axis=1) / count)
    R[~ok], d[~ok], rms[~ok] = np.nan, np.nan, np.nan
    return R, d, rms


@dataclass
class ClusterCalibration:
    """A cluster calibrated in a static trial: reference marker and landmark positions (m),
    both in the static trial's lab frame (only their relative positions matter)."""

    name: str
    markers: list[str]
    reference: np.ndarray  # (k, 3) m: mean static positions of the cluster markers
    landmarks: dict[str, np.ndarray]  # label -> (3,) m: mean static position of the landmark
    static_rms: float  # m: RMS of the static frames' fit to the reference (marker wobble)


def calibrate_cluster(name: str, markers: dict[str, np.ndarray], landmarks: dict[str, np.ndarray],
                      path=None) -> ClusterCalibration:
    """Calibrate a cluster from a static trial's trajectories (label -> (n, 3) m).

    Uses the frames where every cluster marker and landmark is visible; the reference is the
    mean over those frames (the subject stands still)."""
    labels = list(markers)
    if len(labels) < 3:
        raise DataError(f"cluster '{name}' needs three or more markers, has {len(labels)}", path)
    stack = np.stack([markers[m] for m in labels] + [landmarks[l] for l in landmarks], axis=1)
    ok = np.isfinite(stack).all(axis=(1, 2))
    if not ok.any():
        raise DataError(f"cluster '{name}': no static frame shows all of {', '.join(labels + list(landmarks))}",
                        path)
    mean = stack[ok].mean(axis=0)
    reference = mean[: len(labels)]
    sv = np.linalg.svd(reference - reference.mean(axis=0), compute_uv=False)
    if sv[1] < 1e-6 * max(sv[0], 1e-300) or sv[0] < 1e-4:
        raise DataError(f"cluster '{name}': markers {', '.join(labels)} are collinear or coincide in the static "
                        "trial; a rigid fit needs three non-collinear markers", path)
    _, _, rms = rigid_fit(reference, stack[ok][:, : len(labels)])
    return ClusterCalibration(name, labels, reference,
                              {l: mean[len(labels) + i] for i, l in enumerate(landmarks)}, float(np.nanmax(rms)))


def reconstruct_landmarks(cal: ClusterCalibration, markers: dict[str, np.ndarray]
                          ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Landmark trajectories (label -> (n, 3) m, lab) rebuilt from the cluster markers
    (label -> (n, 3) m) of a trial, and the per-frame fit RMS residual (n,) m (NaN where the
    cluster cannot be fitted)."""
    measured = np.stack([markers[m] for m in cal.markers], axis=1)
    R, d, rms = rigid_fit(cal.reference, measured)
    out = {lab: np.einsum("nij,j->ni", R, p) + d for lab, p in cal.landmarks.items()}
    return out, rms


def flag_frames(rms: np.ndarray, threshold: float = DEFAULT_MAX_RESIDUAL) -> np.ndarray:
    """Boolean (n,): frames whose cluster fit RMS residual (m) exceeds ``threshold`` (m)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(rms) > threshold
