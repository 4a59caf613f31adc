"""Butterworth low-pass design and zero-phase (forward-backward) filtering in numpy.

The same filters as ``scipy.signal.butter(N, Wn, fs=rate)`` run by ``scipy.signal.filtfilt``
(or ``sosfiltfilt``) with padtype='odd' and a given ``padlen``: tests/test_butterworth.py
compares them within 1e-13 for orders 1-6 at every cutoff and length gaitid uses; scipy stays
the reference the tests check against.

Why gaitid keeps its own filter (measured on this 2-core machine, medians of 12 alternated runs,
compiled bytecode): ``scipy.signal`` is the only scipy module a trial would need, and importing it
takes 0.6-1.0 s (``python -X importtime -c "import gaitid.pipeline, scipy.signal"``: 0.58-0.95 s
after gaitid's own imports), more than processing the trial. With ``butter`` + ``sosfiltfilt``
instead, a lone ``gaitid run --no-report`` of the sample walk goes from 0.56-0.60 s to 1.22-1.40 s
(x2.15-2.21), with its report from 0.67-0.76 s to 1.40-1.49 s (x1.95-2.00). A batch worker
imports once, so there the import is paid once per worker: the lone run is what it saves. The peak finder
(:func:`gaitid.events.zeni.peaks_apart`) is numpy for the same reason; the only other scipy a
trial can import is ``scipy.interpolate``, by :func:`gaitid.core.signal.fill_gaps` and only
when a gap is filled (neither the sample walk nor any of the 10 real test trials fills one: they
import no scipy at all; a trial that fills one pays 0.4 s, and scipy.signal would add 0.6 s more).
Speed: faster than ``sosfiltfilt`` below about 10,000 frames (0.09 against 0.18 ms for 1,000 x 3,
0.5 against 0.9 ms for 1,000 x 60); 1.5-5x slower on single blocks of 15,000-360,000 frames x 48
columns (360,000 x 48: 1.2-2.3 s against 0.46-0.49 s, 1-3 % of processing such a trial);
over all the filter calls of a trial about the same (a 90,000-frame walk: 0.76-0.89 s against
0.87-0.88 s). Results: the two differ by rounding only (at most 2.1e-15 of the signal's scale),
but through the derivatives that moves 39 of the 49 configurations of
benchmarks/compare_results.py by more than 1e-12 (up to 7.7e-10 in the sample's unnormalised
per-frame table; the plates' body-mass estimates in their 14th digit), so a change of filter
would change published numbers for no gain in accuracy.

The filter runs as first- and second-order sections in cascade (a transfer function of order
above 2 at a low cutoff loses digits to rounding). Each section is the transposed direct form II
of ``scipy.signal.lfilter`` as a state-space recurrence z[n+1] = A z[n] + B x[n],
y[n] = z[n][0] + b0 x[n], evaluated in blocks of 16 samples: a block's outputs are its samples
through the impulse response plus its first state's free response (two matrix products over all
blocks at once), and the blocks' first states follow the same recurrence with A^16, one level up.
Cost linear in the signal's length, no per-sample Python loop.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from gaitid.core.errors import SettingsError

_BLOCK = 16  # samples per block of the blocked recurrence


def _butter_zpk(order: int, cutoff: float, rate: float) -> tuple[float, np.ndarray]:
    """Gain and poles of the digital Butterworth low-pass (zeros: ``order`` at z = -1): the analog
    prototype's poles, pre-warped and mapped by the bilinear transform."""
    if not 0 < cutoff < rate / 2:
        raise SettingsError(f"low-pass cutoff {cutoff} Hz must lie between 0 and the Nyquist frequency "
                            f"{rate / 2} Hz of {rate} Hz samples")
    fs2 = 2.0 * rate
    warped = fs2 * np.tan(np.pi * cutoff / rate)
    poles = -np.exp(1j * np.pi * np.arange(-order + 1, order, 2) / (2 * order)) * warped
    return float(np.real(warped**order / np.prod(fs2 - poles))), (fs2 + poles) / (fs2 - poles)


def butter_sections(order: int, cutoff: float, rate: float) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The same filter as first- and second-order sections (b, a) in cascade: a pair of conjugate
    poles per section, the real pole of an odd order last, the gain in the first section. The
    cascade is what gaitid runs: (b, a) of order > 2 at a low cutoff loses digits to rounding.
    Designed once per (order, cutoff, rate) (a trial's filters share a few designs; the design
    costs more than filtering a short signal): the arrays are read-only."""
    return _designed(int(order), float(cutoff), float(rate))


@lru_cache(maxsize=64)
def _designed(order: int, cutoff: float, rate: float) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    gain, poles = _butter_zpk(order, cutoff, rate)
    upper = poles[np.imag(poles) > 0]
    sections = [(np.array([1.0, 2.0, 1.0]), np.array([1.0, -2 * p.real, abs(p) ** 2])) for p in upper]
    if order % 2:
        real = float(np.real(poles[np.argmin(np.abs(np.imag(poles)))]))
        sections.append((np.array([1.0, 1.0]), np.array([1.0, -real])))
    sections[0] = (gain * sections[0][0], sections[0][1])
    for b, a in sections:
        b.setflags(write=False)
        a.setflags(write=False)
    return tuple(sections)


def butter_highpass_sections(order: int, cutoff: float, rate: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """``scipy.signal.butter(order, cutoff, 'highpass', fs=rate)`` as sections in cascade (as
    :func:`butter_sections`): the analog prototype's poles mapped by s -> warped / s and the bilinear
    transform; ``order`` zeros at z = 1; unit gain at the Nyquist frequency. Used for EMG
    (:mod:`gaitid.emg`); tests/test_emg.py checks it against scipy."""
    if not 0 < cutoff < rate / 2:
        raise SettingsError(f"high-pass cutoff {cutoff} Hz must lie between 0 and the Nyquist frequency "
                            f"{rate / 2} Hz of {rate} Hz samples")
    fs2 = 2.0 * rate
    warped = fs2 * np.tan(np.pi * cutoff / rate)
    analog = warped / (-np.exp(1j * np.pi * np.arange(-order + 1, order, 2) / (2 * order)))  # s -> warped / s
    poles = (fs2 + analog) / (fs2 - analog)
    gain = float(np.real(fs2 ** order / np.prod(fs2 - analog)))
    upper = poles[np.imag(poles) > 1e-300]
    sections = [(np.array([1.0, -2.0, 1.0]), np.array([1.0, -2 * p.real, abs(p) ** 2])) for p in upper]
    if order % 2:
        real = float(np.real(poles[np.argmin(np.abs(np.imag(poles)))]))
        sections.append((np.array([1.0, -1.0]), np.array([1.0, -real])))
    sections[0] = (gain * sections[0][0], sections[0][1])
    return sections


def default_padlen(order: int) -> int:
    """scipy.signal.filtfilt's default padding for a Butterworth of ``order`` given as (b, a):
    3 x the number of coefficients."""
    return 3 * (order + 1)


def zero_phase_filter(sections: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray, padlen: int) -> np.ndarray:
    """``x`` (n, ...) filtered by the cascade ``sections`` forward, then backward, along axis 0
    (scipy.signal.sosfiltfilt, and filtfilt of the whole (b, a), with padtype='odd'): ``padlen``
    samples of odd extension at each end, each pass started in the steady state of its first sample.
    NaN anywhere spreads to the whole column's output, as in scipy: pass finite runs. Needs
    0 <= padlen < n."""
    x = np.asarray(x, float)
    n = x.shape[0]
    if not 0 <= padlen < n:
        raise SettingsError(f"filter padding of {padlen} samples must be >= 0 and smaller than the signal's {n}")
    cols = x.reshape(n, -1).T  # (c, n): each column's samples contiguous once copied
    ext = np.concatenate([2 * cols[:, :1] - cols[:, padlen:0:-1], cols,
                          2 * cols[:, -1:] - cols[:, -2:-(padlen + 2):-1]], axis=1)
    y = _cascade(sections, _cascade(sections, ext)[:, ::-1])[:, ::-1]
    return y[:, padlen:padlen + n].T.reshape(x.shape)


def _cascade(sections: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """x (c, n) through each section in turn, each from the steady state of a constant input equal
    to x[:, 0] times the gain of the sections before it."""
    level = x[:, :1].copy()
    for b, a in sections:
        ops = _section_operators(tuple(b), tuple(a))
        x = _lfilter(ops, x, level * ops[0])
        level = level * (b.sum() / a.sum())
    return x


@lru_cache(maxsize=64)
def _section_operators(b: tuple, a: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For the section (b, a): its unit-step steady state (N,) (scipy.signal.lfilter_zi); the
    block's end state from its samples and a zero start, (L, N); a block's outputs from its
    samples and its start state, (L + N, L); and A^L."""
    A, B = _state_matrices(np.array(b), np.array(a))
    L = _BLOCK
    powers = _powers(A, L)
    g = powers[:L] @ B  # g[j] = A^j B
    h = np.concatenate([[b[0]], g[:-1, 0]])  # impulse response
    outputs = np.concatenate([_lower_blocks(h).T, powers[:L, 0, :].T])  # forced, then free response
    steady = np.linalg.solve(np.eye(len(B)) - A, B)
    return steady, g[::-1].copy(), outputs, powers[L]


def _state_matrices(b: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A (N, N) and B (N,) of scipy.signal.lfilter's transposed direct form II (a[0] = 1):
    z[n+1] = A z[n] + B x[n], y[n] = z[n][0] + b[0] x[n]."""
    A = np.eye(len(a) - 1, k=1)
    A[:, 0] = -a[1:]
    return A, b[1:] - a[1:] * b[0]


def _powers(A: np.ndarray, count: int) -> np.ndarray:
    """A^0 .. A^count, (count + 1, N, N)."""
    out = np.empty((count + 1,) + A.shape)
    out[0] = np.eye(A.shape[0])
    for i in range(count):  # count = _BLOCK: a fixed handful of 2x2 products
        out[i + 1] = A @ out[i]
    return out


@lru_cache(maxsize=64)
def _recurrence_operators(A_bytes: bytes, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For A (its bytes): the block operator (L N, L N) acting on row-stacked inputs, the spread
    of a block's first state over its L states (N, L N), and A^L."""
    A = np.frombuffer(A_bytes).reshape(N, N)
    L = _BLOCK
    powers = _powers(A, L)
    within = _lower_blocks(powers[:L]).transpose(0, 2, 1, 3).reshape(L * N, L * N)
    return within.T.copy(), powers[1:].transpose(2, 0, 1).reshape(N, L * N).copy(), powers[L]


def _lower_blocks(blocks: np.ndarray) -> np.ndarray:
    """(L, L, ...) array whose [i, k] is blocks[i - k] for k <= i, else 0."""
    L = _BLOCK
    i, k = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    lower = (k <= i).reshape((L, L) + (1,) * (blocks.ndim - 1))
    return np.where(lower, blocks[np.clip(i - k, 0, L - 1)], 0.0)


def _lfilter(ops: tuple, x: np.ndarray, z0: np.ndarray) -> np.ndarray:
    """y (c, n) of a section (its _section_operators) on x (c, n) from states z0 (c, N), in blocks
    of L samples: y[bL + i] = sum_{k <= i} h[i - k] x[bL + k] + e0' A^i s_b (h the impulse
    response, s_b the state at block b's start), s_(b+1) = A^L s_b + sum_k A^(L-1-k) B x[bL + k]."""
    _, carry, outputs, step = ops
    c, n = x.shape
    N, L = step.shape[0], _BLOCK
    nb, full = -(-n // L), n // L
    blocks = np.zeros((c, nb, L + N))  # a block's samples, then its start state
    blocks[:, :full, :L] = x[:, :full * L].reshape(c, full, L)
    blocks[:, full:, :n - full * L] = x[:, full * L:].reshape(c, nb - full, n - full * L)
    ends = blocks[:, :, :L].reshape(c * nb, L) @ carry  # each block's end state from a zero start
    blocks[:, :, L:] = _recurrence(step, ends.reshape(c, nb, N), z0)[:, :-1]
    return (blocks.reshape(c * nb, L + N) @ outputs).reshape(c, nb * L)[:, :n]


def _recurrence(A: np.ndarray, W: np.ndarray, z0: np.ndarray) -> np.ndarray:
    """z (c, m + 1, N): z[:, 0] = z0, z[:, j + 1] = A z[:, j] + W[:, j] for W (c, m, N), in blocks of
    L: the states inside a block from its first state by powers of A, the blocks' first states by the
    same recurrence with A^L (one level up, m / L steps)."""
    c, m, N = W.shape
    z = np.empty((c, m + 1, N))
    z[:, 0] = z0
    L = _BLOCK
    if m <= L:
        for j in range(m):  # at most L steps: the top of the recursion
            z[:, j + 1] = z[:, j] @ A.T + W[:, j]
        return z
    nb = -(-m // L)
    Wb = np.zeros((c, nb * L, N))
    Wb[:, :m] = W
    within, spread, step = _recurrence_operators(A.tobytes(), N)
    # s[:, b, i] = sum_{k <= i} A^(i-k) W[:, bL + k]: the state after i + 1 steps from a zero state
    s = (Wb.reshape(c * nb, L * N) @ within).reshape(c, nb, L, N)
    starts = _recurrence(step, s[:, :, -1], z0)[:, :-1]  # (c, nb, N)
    free = starts.reshape(c * nb, N) @ spread
    z[:, 1:] = (free.reshape(c, nb, L, N) + s).reshape(c, nb * L, N)[:, :m]
    return z
