"""Plate mutations of real C3D files (FORCE_PLATFORM corners, origin, analog units and scales), each an
edit of :class:`tests.c3d_mutations.RawC3D` as a lab's wrong setup would write it. Used by
``tests/test_plate_checks.py`` and ``benchmarks/bench_plate_checks.py``."""

from __future__ import annotations

import numpy as np

from tests.c3d_mutations import RawC3D


def _corners(c: RawC3D) -> np.ndarray:
    """(3, 4, n_plates) as stored (Fortran order)."""
    r = c.param("FORCE_PLATFORM", "CORNERS")
    return c.numbers("FORCE_PLATFORM", "CORNERS").reshape(r.dims, order="F").copy()


def _set_corners(c: RawC3D, corners: np.ndarray) -> None:
    c.set_numbers("FORCE_PLATFORM", "CORNERS", corners, dims=c.param("FORCE_PLATFORM", "CORNERS").dims)


def corner_order(plate: int, order: tuple[int, int, int, int]):
    """Plate ``plate`` (1-based)'s corners re-ordered: (0, 3, 2, 1) mirrors, (1, 2, 3, 0) rotates by one."""
    def edit(c: RawC3D) -> None:
        k = _corners(c)
        k[:, :, plate - 1] = k[:, list(order), plate - 1]
        _set_corners(c, k)
    return edit


def corners_swapped(a: int, b: int):
    """The corners of plates ``a`` and ``b`` exchanged (each plate's data placed at the other's position)."""
    def edit(c: RawC3D) -> None:
        k = _corners(c)
        k[:, :, [a - 1, b - 1]] = k[:, :, [b - 1, a - 1]]
        _set_corners(c, k)
    return edit


def corners_moved(plate: int, shift_file_units: tuple[float, float, float]):
    """Plate ``plate``'s four corners translated by ``shift`` (file length units, file lab)."""
    def edit(c: RawC3D) -> None:
        k = _corners(c)
        k[:, :, plate - 1] += np.asarray(shift_file_units, float)[:, None]
        _set_corners(c, k)
    return edit


def origin_scaled(plate: int, factor: float):
    """Plate ``plate``'s FORCE_PLATFORM:ORIGIN times ``factor`` (-1: sign flipped, 1000: m taken as mm)."""
    def edit(c: RawC3D) -> None:
        r = c.param("FORCE_PLATFORM", "ORIGIN")
        o = c.numbers("FORCE_PLATFORM", "ORIGIN").reshape(r.dims, order="F").copy()
        o[:, plate - 1] *= factor
        c.set_numbers("FORCE_PLATFORM", "ORIGIN", o, dims=r.dims)
    return edit


def plate_channels(c: RawC3D, plate: int) -> np.ndarray:
    """0-based analog channels of plate ``plate`` in FORCE_PLATFORM:CHANNEL order."""
    rows = c.param("FORCE_PLATFORM", "CHANNEL").dims[0]
    return c.numbers("FORCE_PLATFORM", "CHANNEL").astype(int).reshape(-1, rows)[plate - 1] - 1


def channel_scale(plate: int, which: slice | list[int], factor: float):
    """ANALOG:SCALE of plate ``plate``'s channels ``which`` (positions in its CHANNEL list) times ``factor``."""
    def edit(c: RawC3D) -> None:
        channels = plate_channels(c, plate)[which]
        scale = c.numbers("ANALOG", "SCALE").copy()
        scale[channels] *= factor
        c.set_numbers("ANALOG", "SCALE", scale, dims=c.param("ANALOG", "SCALE").dims)
    return edit


def channel_units(plate: int, which: slice | list[int], unit: bytes):
    """ANALOG:UNITS of plate ``plate``'s channels ``which`` set to ``unit``."""
    def edit(c: RawC3D) -> None:
        units = c.strings("ANALOG", "UNITS")
        for ch in plate_channels(c, plate)[which]:
            units[ch] = unit
        c.set_strings("ANALOG", "UNITS", units)
    return edit


def both(*edits):
    def edit(c: RawC3D) -> None:
        for e in edits:
            e(c)
    return edit
