"""Parse and validate a C3D file (header, parameter section, data size), then decode its data with numpy.

ezc3d 1.7.2 segfaults on some corrupted parameter sections and reads a file cut
to half its length without complaint, and its Python wrapper copies data slowly.
:func:`check_c3d` walks the file the way
the C3D specification (c3d.org, "The C3D File Format User Guide", ch. 2-3)
describes it, with every offset and size bounds-checked, and raises a
:class:`~gaitid.core.errors.FileFormatError` (or :class:`~gaitid.core.errors.UnsupportedError`)
naming the file and the problem. It reads only the header and parameter blocks
(a few kB). :func:`read_data` then decodes the data section of an accepted file
in a few vectorised numpy operations (no per-frame loop; nothing it reads can
run past a buffer). Values equal ezc3d 1.7.2's on every real file (tests).

Checked:

* the path is an existing, non-empty regular file of at least one 512-byte block (a FIFO or a
  device is refused before it is opened: :func:`gaitid.io.input_files.input_file`);
* header byte 2 is the C3D key 0x50 and the parameter section starts inside the file;
* the processor type is Intel (84) or DEC (85) (MIPS/big-endian: unsupported);
* every parameter/group record stays inside its record (name, data and
  description end before the next record), has a known data type (-1, 1, 2, 4),
  at most 7 dimensions (at least 1 for text), and belongs to a defined group;
  group ids run 1..n without gaps and are not reused by another name (ezc3d
  1.7.2 segfaults or hangs on each of these, found by fuzzing);
* POINT:USED, POINT:RATE (>0), POINT:SCALE, ANALOG:USED agree with the header;
  the header's frame range is non-negative and the frame rate finite;
* analog samples per frame is a whole number and the file holds at least as
  many bytes as the header promises: ``(DATA_START-1)*512 + frames *
  (4*points + analog words) * word size``;
* POINT:RATE lies within 1 Hz - 100 kHz and the analog rate is at most 10 MHz;
* a header whose last frame is 65535 takes its frame count from POINT:LONG_FRAMES,
  a float POINT:FRAMES or TRIAL:ACTUAL_START/END_FIELD (:func:`_long_frames`);
* strings (labels, units, names, software) lose their control characters
  (:func:`clean_text`: NUL padding, terminal escapes);
* decoding fits the memory budget (:func:`memory_budget`, ``GAITID_MEMORY_BUDGET``),
  estimated from the header and parameters before anything is allocated.

Length: one walk through the format's structures, every check beside the structure it guards.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaitid.core.errors import FileFormatError, UnsupportedError
from gaitid.io.input_files import input_file

BLOCK = 512
C3D_KEY = 0x50
INTEL, DEC, MIPS = 84, 85, 86
MIN_POINT_RATE_HZ, MAX_POINT_RATE_HZ = 1.0, 1e5  # outside: a corrupt rate (filters would be singular)
MAX_ANALOG_RATE_HZ = 1e7
MAX_FRAMES = 2**31 - 1
DEFAULT_MEMORY_BUDGET = 8 * 2**30
BUDGET_ENV = "GAITID_MEMORY_BUDGET"


@dataclass
class C3DLayout:
    """What the header and parameter section say about the file (for checks and tests)."""

    processor: int
    n_points: int
    analog_words_per_frame: int  # header word 3: channels x samples per frame
    first_frame: int  # header, 1-based
    last_frame: int
    data_start_block: int  # 1-based
    scale: float
    frame_rate: float
    analog_samples_per_frame: int = 0  # header word 10
    long_frames: int | None = None  # frame count from the long-frame parameters (> 65535 frames), else None
    params: dict[str, dict[str, object]] = field(default_factory=dict)  # GROUP -> PARAM -> flat decoded values
    values: dict[str, dict[str, object]] = field(default_factory=dict)  # GROUP -> PARAM -> shaped (ezc3d-like) value
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # GROUP -> PARAM -> name as stored
    offsets: dict[str, dict[str, int]] = field(default_factory=dict)  # GROUP -> PARAM -> file offset of its data

    @property
    def n_frames(self) -> int:
        if self.long_frames is not None:
            return self.long_frames
        return self.last_frame - self.first_frame + 1

    @property
    def analog_channels(self) -> int:
        return self.analog_words_per_frame // self.analog_samples_per_frame if self.analog_words_per_frame else 0

    def decoded_bytes(self, n_plates: int = 0) -> int:
        """Peak memory (bytes, an upper estimate) of decoding this file and computing its plate
        wrenches: the float64 frame array, points, residuals and validity, the scaled analog
        array twice, and per plate about 40 float64 values per analog sample (channels, plate-
        and lab-frame wrenches at the analog rate, the resampled copy)."""
        frames = self.n_frames
        samples = frames * max(self.analog_samples_per_frame, 1) if self.analog_words_per_frame else 0
        values = frames * (4 * self.n_points + self.analog_words_per_frame) * 8
        points = frames * self.n_points * (7 * 8 + 1)
        analog = samples * self.analog_channels * 8 * 2
        plates = n_plates * samples * 8 * 40
        return values + points + analog + plates

    @property
    def word_bytes(self) -> int:
        return 4 if self.scale < 0 else 2

    @property
    def data_bytes(self) -> int:
        return self.n_frames * (4 * self.n_points + self.analog_words_per_frame) * self.word_bytes


def _float(raw: bytes, processor: int) -> float:
    if processor == DEC:  # VAX F-float: swap 16-bit halves, IEEE value is 4x too big
        return struct.unpack("<f", raw[2:4] + raw[0:2])[0] / 4.0
    return struct.unpack("<f", raw)[0]


def check_c3d(path: str | os.PathLike) -> C3DLayout:
    """Raise a gaitid error naming ``path`` if it is not a complete, well-formed C3D file."""
    path = Path(path)
    size = input_file(path, "C3D file")  # (a FIFO or a device is refused before it is opened)
    try:
        with open(path, "rb") as fh:
            head = fh.read(BLOCK)
            if size == 0:
                raise FileFormatError("file is empty", path)
            if size < BLOCK or len(head) < BLOCK:
                raise FileFormatError(f"file is {size} bytes, shorter than a C3D header (512 bytes)", path)
            if head[1] != C3D_KEY:
                raise FileFormatError("not a C3D file (header byte 2 is not the C3D key 0x50)", path)
            param_block = head[0]
            if param_block < 2 or param_block * BLOCK > size:
                raise FileFormatError(f"parameter section start (block {param_block}) lies outside the file", path)
            fh.seek((param_block - 1) * BLOCK)
            first = fh.read(4)
            if len(first) < 4:
                raise FileFormatError("truncated inside the parameter section", path)
            n_blocks, processor = first[2], first[3]
            if processor == MIPS:
                raise UnsupportedError("big-endian (MIPS/SGI) C3D files are not supported", path)
            if processor not in (INTEL, DEC):
                raise FileFormatError(f"unknown processor type {processor} in the parameter section", path)
            if n_blocks < 1 or (param_block - 1 + n_blocks) * BLOCK > size:
                raise FileFormatError(f"parameter section ({n_blocks} blocks) runs past the end of the file", path)
            fh.seek((param_block - 1) * BLOCK)
            section = fh.read(n_blocks * BLOCK)
    except OSError as exc:
        raise FileFormatError(f"cannot read the file ({exc.strerror or exc})", path) from exc
    layout = _header(head, processor, path)
    layout.params, layout.values, layout.names, offsets = _parameters(section, processor, path)
    layout.offsets = {g: {k: (param_block - 1) * BLOCK + at for k, at in ps.items()} for g, ps in offsets.items()}
    _cross_check(layout, size, param_block, n_blocks, path)
    return layout


def _header(head: bytes, processor: int, path: Path) -> C3DLayout:
    w = struct.unpack("<256H", head)  # 16-bit words (0-based here; spec counts from 1)
    scale = _float(head[12:16], processor)
    rate = _float(head[20:24], processor)
    if not math.isfinite(scale) or not math.isfinite(rate):
        raise FileFormatError("header scale factor or frame rate is not a finite number", path)
    return C3DLayout(
        processor=processor,
        n_points=w[1],
        analog_words_per_frame=w[2],
        first_frame=w[3],
        last_frame=w[4],
        data_start_block=w[8],
        scale=scale,
        frame_rate=rate,
        analog_samples_per_frame=w[9],
    )


_TYPE_SIZE = {-1: 1, 1: 1, 2: 2, 4: 4}


def _parameters(section: bytes, processor: int, path: Path):
    """Walk every group/parameter record with bounds checks; decode the parameters the checks need.
    Returns the decoded values, the shaped values, the names as stored and where each parameter's
    data start in ``section``."""
    end = len(section)
    pos = 4
    groups: dict[int, str] = {}
    raw_params: list[tuple[int, str, int, tuple[int, ...], bytes, str, int]] = []
    n_records = 0
    while pos + 2 <= end:
        n_chars = struct.unpack_from("<b", section, pos)[0]
        gid = struct.unpack_from("<b", section, pos + 1)[0]
        if n_chars == 0 or gid == 0:
            break
        n_chars = abs(n_chars)
        name_end = pos + 2 + n_chars
        if name_end + 2 > end:
            raise FileFormatError(f"parameter record at byte {pos} runs past the parameter section", path)
        try:
            stored = clean_text(section[pos + 2 : name_end].decode("ascii")).strip()
            name = stored.upper()
        except UnicodeDecodeError as exc:
            raise FileFormatError(f"parameter record at byte {pos} has a non-ASCII name", path) from exc
        offset = struct.unpack_from("<h", section, name_end)[0]
        body = name_end + 2
        nxt = name_end + offset if offset != 0 else end
        if offset < 0 or (offset != 0 and (nxt <= pos or nxt > end)):
            raise FileFormatError(f"parameter '{name}' points to its successor outside the parameter section", path)
        if gid < 0:
            if gid == -128:
                raise FileFormatError(f"group '{name}' has the invalid id -128", path)
            if body + 1 > end or body + 1 + section[body] > min(end, nxt):
                raise FileFormatError(f"group '{name}' description runs past its record", path)
            if groups.get(-gid, name) != name:
                raise FileFormatError(f"group '{name}' reuses the id {-gid} of group '{groups[-gid]}'", path)
            groups[-gid] = name
        else:
            if body + 2 > end:
                raise FileFormatError(f"parameter '{name}' is truncated", path)
            dtype = struct.unpack_from("<b", section, body)[0]
            ndim = section[body + 1]
            if dtype not in _TYPE_SIZE:
                raise FileFormatError(f"parameter '{name}' has unknown data type {dtype}", path)
            if ndim > 7:
                raise FileFormatError(f"parameter '{name}' has {ndim} dimensions (at most 7 allowed)", path)
            if dtype == -1 and ndim == 0:  # ezc3d reads the string length from dims[0]
                raise FileFormatError(f"text parameter '{name}' has no dimensions", path)
            dims = tuple(section[body + 2 : body + 2 + ndim])
            if len(dims) != ndim:
                raise FileFormatError(f"parameter '{name}' dimensions run past the parameter section", path)
            n_items = math.prod(dims) if ndim else 1
            data_start = body + 2 + ndim
            data_end = data_start + n_items * _TYPE_SIZE[dtype]
            if data_end + 1 > min(end, nxt):
                raise FileFormatError(f"parameter '{name}' data ({n_items} values) run past its record", path)
            if data_end + 1 + section[data_end] > min(end, nxt):
                raise FileFormatError(f"parameter '{name}' description runs past its record", path)
            raw_params.append((gid, name, dtype, dims, section[data_start:data_end], stored, data_start))
        n_records += 1
        if offset == 0:
            break
        pos = nxt
    if n_records == 0:
        raise FileFormatError("the parameter section holds no parameters", path)
    if sorted(groups) != list(range(1, len(groups) + 1)):  # ezc3d makes nameless groups for the gaps
        raise FileFormatError(f"group ids {sorted(groups)} do not run 1..{len(groups)} without gaps", path)
    params: dict[str, dict[str, object]] = {g: {} for g in groups.values()}
    values: dict[str, dict[str, object]] = {g: {} for g in groups.values()}
    names: dict[str, dict[str, str]] = {g: {} for g in groups.values()}
    offsets: dict[str, dict[str, int]] = {g: {} for g in groups.values()}
    for gid, name, dtype, dims, data, stored, at in raw_params:
        group = groups.get(gid)
        if group is None:
            raise FileFormatError(f"parameter '{name}' belongs to group {gid}, which is not defined", path)
        params[group][name], values[group][name] = _decode_both(dtype, dims, data, processor)
        names[group][name] = stored
        offsets[group][name] = at
    return params, values, names, offsets


# C0 and C1 control characters and DEL: NUL padding, terminal escape sequences (ESC), bells... in a
# C3D string would reach the terminal (gaitid info, run) and the CSV and HTML outputs. Tab, line
# feed and carriage return become a space (a C3D string is one line); the others are removed.
_CONTROLS = {c: (" " if chr(c) in "\t\n\r" else None) for c in (*range(0x20), *range(0x7F, 0xA0))}


def clean_text(text: str) -> str:
    """``text`` without control characters (C0, DEL, C1): what every string read from a C3D
    file (labels, units, subject names, software) goes through."""
    return text.translate(_CONTROLS)


def _shaped(dtype: int, dims: tuple[int, ...], data: bytes, processor: int):
    """A parameter value shaped as ezc3d gives it: list of strings (first dimension = string length)
    or a numpy array with the C3D dimensions (Fortran order; scalars as 1-element arrays)."""
    if dtype == -1:
        text = data.decode("latin-1")
        if len(dims) <= 1:
            return [clean_text(text).rstrip()]
        width = dims[0]
        return [clean_text(text[i * width : (i + 1) * width]).rstrip() for i in range(len(text) // width if width else 0)]
    if dtype == 1:
        arr = np.frombuffer(data, dtype=np.int8).astype(np.int64)
    elif dtype == 2:
        arr = np.frombuffer(data, dtype="<i2").astype(np.int64)
    else:
        arr = decode_floats(np.frombuffer(data, dtype=np.uint8), processor)
    return arr.reshape(dims, order="F") if len(dims) > 1 else arr


def decode_floats(raw: np.ndarray, processor: int) -> np.ndarray:
    """float64 array from raw little-endian bytes (uint8) of 32-bit floats; DEC (VAX F) words swapped and / 4."""
    with np.errstate(invalid="ignore"):  # (a signalling NaN's bytes: cast to a quiet NaN, as struct does)
        if processor == DEC:
            words = raw.view("<u2").reshape(-1, 2)[:, ::-1]
            return np.ascontiguousarray(words).view("<f4").ravel().astype(np.float64) / 4.0
        return raw.view("<f4").astype(np.float64)


def _decode_both(dtype: int, dims: tuple[int, ...], data: bytes, processor: int):
    """(:func:`_decode`, :func:`_shaped`) of one parameter, its floats or int16 words decoded once."""
    if dtype in (2, 4):
        shaped = _shaped(dtype, dims, data, processor)
        flat = shaped.ravel(order="F") if len(dims) > 1 else shaped
        return flat.tolist(), shaped  # (Python ints and floats: the values _decode gives)
    return _decode(dtype, dims, data, processor), _shaped(dtype, dims, data, processor)


def _decode(dtype: int, dims: tuple[int, ...], data: bytes, processor: int):
    if dtype == -1:
        return data.decode("latin-1")
    if dtype == 1:
        return list(data)
    if dtype == 2:
        return list(struct.unpack(f"<{len(data) // 2}h", data))
    return decode_floats(np.frombuffer(data, dtype=np.uint8), processor).tolist()  # (as _float, value by value)


def _first(params, group, name, default=None):
    value = params.get(group, {}).get(name)
    if isinstance(value, list) and value:
        return value[0]
    return default


def _cross_check(layout: C3DLayout, size: int, param_block: int, n_param_blocks: int, path: Path) -> None:
    p = layout.params
    if "POINT" not in p:
        raise FileFormatError("the parameter section has no POINT group", path)
    used = _first(p, "POINT", "USED")
    if used is None:
        raise FileFormatError("POINT:USED is missing", path)
    if used & 0xFFFF != layout.n_points:
        raise FileFormatError(f"header says {layout.n_points} points but POINT:USED says {used}", path)
    rate = _first(p, "POINT", "RATE", layout.frame_rate)
    if not (isinstance(rate, float) and math.isfinite(rate) and rate > 0):
        raise FileFormatError(f"POINT:RATE is {rate!r}, not a positive frame rate", path)
    if not MIN_POINT_RATE_HZ <= rate <= MAX_POINT_RATE_HZ:
        raise FileFormatError(f"POINT:RATE is {rate:g} Hz, outside the plausible {MIN_POINT_RATE_HZ:g}.."
                              f"{MAX_POINT_RATE_HZ:g} Hz of motion capture", path)
    scale = _first(p, "POINT", "SCALE", layout.scale)
    if not (isinstance(scale, float) and math.isfinite(scale)):
        raise FileFormatError("POINT:SCALE is not a finite number", path)
    if (scale < 0) != (layout.scale < 0):
        raise FileFormatError("header and POINT:SCALE disagree on integer vs float storage", path)
    if layout.last_frame < layout.first_frame or layout.first_frame < 1:
        raise FileFormatError(
            f"header frame range {layout.first_frame}..{layout.last_frame} is empty or invalid", path
        )
    layout.long_frames = _long_frames(p, layout, path)
    n_frames = layout.n_frames
    analog_used = _first(p, "ANALOG", "USED", 0) or 0
    if analog_used < 0:
        raise FileFormatError(f"ANALOG:USED is {analog_used}", path)
    if layout.analog_words_per_frame:
        spf = layout.analog_samples_per_frame
        if spf < 1 or layout.analog_words_per_frame % spf:
            raise FileFormatError(
                f"header analog words per frame ({layout.analog_words_per_frame}) is not a multiple "
                f"of the analog samples per frame ({spf})",
                path,
            )
        if analog_used == 0 or layout.analog_words_per_frame != analog_used * spf:
            raise FileFormatError(
                f"header analog words per frame ({layout.analog_words_per_frame}) is not "
                f"ANALOG:USED ({analog_used}) x samples per frame ({spf})",
                path,
            )
        if rate * spf > MAX_ANALOG_RATE_HZ:
            raise FileFormatError(f"the analog rate ({rate:g} Hz x {spf} samples per frame) exceeds "
                                  f"{MAX_ANALOG_RATE_HZ:g} Hz", path)
        analog_rate = _first(p, "ANALOG", "RATE", None)
        if analog_rate is not None and not (isinstance(analog_rate, float) and math.isfinite(analog_rate) and analog_rate > 0):
            raise FileFormatError(f"ANALOG:RATE is {analog_rate!r}, not a positive rate", path)
    elif analog_used:
        pass  # channels declared without samples: ezc3d reads zero analog frames
    _require_values(p, "POINT", "SCALE", 1, float, path)
    _require_values(p, "POINT", "RATE", 1, float, path)
    if layout.analog_words_per_frame:
        n_channels = layout.analog_words_per_frame // layout.analog_samples_per_frame
        _require_values(p, "ANALOG", "GEN_SCALE", 1, float, path)
        _require_values(p, "ANALOG", "SCALE", n_channels, float, path)
        _require_values(p, "ANALOG", "OFFSET", n_channels, int, path)
    data_start = layout.data_start_block
    if data_start < param_block + n_param_blocks:
        raise FileFormatError(
            f"data section start (block {data_start}) overlaps the header/parameter section", path
        )
    needed = (data_start - 1) * BLOCK + layout.data_bytes
    if size < needed:
        raise FileFormatError(
            f"truncated: the header promises {n_frames} frames ({needed} bytes) but the file has {size} bytes", path
        )
    budget = memory_budget()
    n_plates = max(0, min(int(_first(p, "FORCE_PLATFORM", "USED", 0) or 0), 255))
    if layout.decoded_bytes(n_plates) > budget:
        raise FileFormatError(
            f"reading this file would need about {layout.decoded_bytes(n_plates) / 2**20:.0f} MiB "
            f"({n_frames} frames, {layout.n_points} points, {layout.analog_channels} analog channels x "
            f"{layout.analog_samples_per_frame} samples per frame, {n_plates} plates), over the memory budget of "
            f"{budget / 2**20:.0f} MiB; raise it with the environment variable {BUDGET_ENV} (bytes, or e.g. '16G')",
            path,
        )
    for group, names in (("POINT", ("LABELS", "DESCRIPTIONS", "UNITS")), ("ANALOG", ("LABELS", "UNITS"))):
        for name in names:
            value = p.get(group, {}).get(name)
            if value is not None and not isinstance(value, str):
                raise FileFormatError(f"{group}:{name} is numeric, expected text", path)


def _long_frames(p, layout: C3DLayout, path: Path) -> int | None:
    """Frame count of a file longer than the header's 16-bit frame numbers can say, else None.

    When the header's last frame is 65535 (the largest it can hold), POINT:LONG_FRAMES
    (float), POINT:FRAMES (float) and TRIAL:ACTUAL_START_FIELD/ACTUAL_END_FIELD (two
    16-bit words each, low word first) give the real count; the largest of them wins.
    """
    if layout.last_frame != 0xFFFF:
        return None
    header_count = layout.last_frame - layout.first_frame + 1
    counts = []
    for name in ("LONG_FRAMES", "FRAMES"):
        v = _first(p, "POINT", name)
        if isinstance(v, float) and math.isfinite(v):
            counts.append(int(v))
    trial = p.get("TRIAL", {})
    start, end = trial.get("ACTUAL_START_FIELD"), trial.get("ACTUAL_END_FIELD")
    if isinstance(start, list) and isinstance(end, list) and len(start) >= 2 and len(end) >= 2:
        if all(isinstance(w, int) for w in start[:2] + end[:2]):
            first = (start[0] & 0xFFFF) + ((start[1] & 0xFFFF) << 16)
            last = (end[0] & 0xFFFF) + ((end[1] & 0xFFFF) << 16)
            if first >= 1 and last >= first:
                counts.append(last - first + 1)
    count = max(counts, default=0)
    if count <= header_count:
        return None
    if count > MAX_FRAMES:
        raise FileFormatError(f"the long-frame parameters promise {count} frames (more than {MAX_FRAMES})", path)
    return count


def memory_budget() -> int:
    """Bytes one trial may take to decode: the environment variable ``GAITID_MEMORY_BUDGET`` (bytes,
    or with a K/M/G suffix), else :data:`DEFAULT_MEMORY_BUDGET` (8 GiB)."""
    text = os.environ.get(BUDGET_ENV, "").strip().upper()
    if not text:
        return DEFAULT_MEMORY_BUDGET
    mult = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(text[-1:], 1)
    try:
        return int(float(text.rstrip("KMGTB") if mult > 1 else text) * mult)
    except ValueError:
        return DEFAULT_MEMORY_BUDGET


def _require_values(p, group: str, name: str, count: int, kind: type, path: Path) -> None:
    """GROUP:NAME (with NAME2, NAME3... continuations) must hold ``count`` numbers of ``kind`` (ezc3d indexes them)."""
    values: list = []
    for key in [name] + [f"{name}{i}" for i in range(2, 100)]:
        if key not in p.get(group, {}):
            break
        v = p[group][key]
        if isinstance(v, str) or (v and not isinstance(v[0], kind)):
            raise FileFormatError(f"{group}:{key} has the wrong data type (expected {kind.__name__})", path)
        values += v
    if len(values) < count:
        raise FileFormatError(f"{group}:{name} holds {len(values)} values, {count} needed", path)
    if kind is float and not all(math.isfinite(v) for v in values[:count]):
        raise FileFormatError(f"{group}:{name} holds a value that is not a finite number", path)


@dataclass
class C3DData:
    """The data section decoded with numpy (same values as ezc3d 1.7.2, checked in tests)."""

    points: np.ndarray  # (n_frames, n_points, 3) in POINT:UNITS, NaN where the residual is negative
    valid: np.ndarray  # (n_frames, n_points) bool: residual word not negative
    analogs: np.ndarray  # (n_samples, n_channels), (raw - |offset|) * scale * gen_scale


def read_data(path: str | os.PathLike, layout: C3DLayout) -> C3DData:
    """Decode the data section of a file that :func:`check_c3d` accepted, vectorised (C3D guide ch. 4).

    Per frame: points (x, y, z, residual word) then analog samples (subframe-major).
    Float files: the 4th word's high int16 is the residual / |scale| (its low word
    the camera mask); integer files: x, y, z int16 x POINT:SCALE, the 4th word's
    high byte is the residual. A negative residual marks an invalid point (NaN).
    Analogs: ``(raw - |OFFSET|) * SCALE * GEN_SCALE`` (ezc3d's rule).
    """
    n_frames, n_points, n_words = layout.n_frames, layout.n_points, layout.analog_words_per_frame
    per_frame = 4 * n_points + n_words
    is_float = layout.scale < 0
    nbytes = n_frames * per_frame * (4 if is_float else 2)
    raw = np.fromfile(path, dtype=np.uint8, count=nbytes, offset=(layout.data_start_block - 1) * BLOCK)
    if raw.size < nbytes:
        raise FileFormatError(f"truncated: data section holds {raw.size} of {nbytes} bytes", path)
    point_scale = float(layout.params["POINT"]["SCALE"][0])
    if is_float:
        values = decode_floats(raw, layout.processor).reshape(n_frames, per_frame)
        pts = values[:, : 4 * n_points].reshape(n_frames, n_points, 4)
        words = raw.reshape(n_frames, per_frame, 4)[:, : 4 * n_points].reshape(n_frames, n_points, 4, 4)
        # 4th float's bytes as two int16 words: Intel (camera mask, residual); DEC (residual, camera mask)
        w = words[:, :, 3, :].copy().view("<i2")  # (n_frames, n_points, 2)
        residual = (w[:, :, 1] if layout.processor == INTEL else w[:, :, 0]) * -point_scale
        analog = values[:, 4 * n_points :]
    else:
        values = raw.view("<i2").reshape(n_frames, per_frame).astype(np.float64)
        pts = values[:, : 4 * n_points].reshape(n_frames, n_points, 4) * [point_scale, point_scale, point_scale, 1.0]
        fourth = raw.reshape(n_frames, per_frame, 2)[:, : 4 * n_points].reshape(n_frames, n_points, 4, 2)[:, :, 3, :]
        residual = fourth[:, :, 1].view(np.int8).astype(np.float64) * point_scale
        analog = values[:, 4 * n_points :]
    xyz = pts[:, :, :3].copy()
    xyz[residual < 0] = np.nan
    n_ch = n_words // layout.analog_samples_per_frame if n_words else 0
    if n_ch:
        analog = analog.reshape(n_frames * layout.analog_samples_per_frame, n_ch)
        p = layout.params["ANALOG"]
        offset = np.abs(np.asarray(_continued(p, "OFFSET")[:n_ch], dtype=np.float64))
        scale = np.asarray(_continued(p, "SCALE")[:n_ch], dtype=np.float64)
        analog = np.subtract(analog, offset)
        analog *= scale * float(p["GEN_SCALE"][0])
    else:
        analog = np.zeros((n_frames, 0))
    return C3DData(points=xyz, valid=~(residual < 0), analogs=analog)


def _continued(group: dict, name: str) -> list:
    """NAME values followed by NAME2, NAME3... (C3D's way to exceed 255 entries)."""
    out = list(group.get(name, []))
    for i in range(2, 100):
        more = group.get(f"{name}{i}")
        if more is None:
            break
        out += list(more)
    return out
