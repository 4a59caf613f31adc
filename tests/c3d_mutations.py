"""Structured mutations of real C3D files, reproducible from a seed (issue 18's fuzz kinds).

:class:`RawC3D` parses a C3D file into its header words, its parameter records and its
data bytes, lets a mutation edit them as C3D objects (a parameter's type, dimensions or
values; a header field; the data), and serialises the result back into a file with
consistent block counts. :func:`mutant` applies one mutation kind chosen from
:data:`KINDS` with a ``numpy`` generator, so ``(source, kind, seed)`` always gives the
same bytes. Used by ``tests/test_fuzz_structured.py`` and ``benchmarks/bench_fuzz.py``.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BLOCK = 512


@dataclass
class Record:
    """A group (``dtype`` None) or a parameter record of the parameter section."""

    gid: int  # group id (positive for both; a group record stores it negated)
    name: bytes
    desc: bytes = b""
    locked: bool = False
    dtype: int | None = None  # -1 char, 1 byte, 2 int16, 4 float
    dims: list[int] = field(default_factory=list)
    data: bytes = b""

    @property
    def is_group(self) -> bool:
        return self.dtype is None


class RawC3D:
    def __init__(self, blob: bytes):
        self.header = bytearray(blob[:BLOCK])
        pstart = blob[0]
        sec = blob[(pstart - 1) * BLOCK :]
        self.param_head = bytearray(sec[:4])
        n_blocks = sec[2]
        self.processor = sec[3]
        section = sec[: n_blocks * BLOCK]
        self.records: list[Record] = []
        pos = 4
        while pos + 2 <= len(section):
            n = struct.unpack_from("<b", section, pos)[0]
            gid = struct.unpack_from("<b", section, pos + 1)[0]
            if n == 0 or gid == 0:
                break
            locked = n < 0
            n = abs(n)
            name = bytes(section[pos + 2 : pos + 2 + n])
            off_at = pos + 2 + n
            offset = struct.unpack_from("<h", section, off_at)[0]
            body = off_at + 2
            if gid < 0:
                dl = section[body]
                self.records.append(Record(-gid, name, bytes(section[body + 1 : body + 1 + dl]), locked))
            else:
                dtype = struct.unpack_from("<b", section, body)[0]
                nd = section[body + 1]
                dims = list(section[body + 2 : body + 2 + nd])
                size = abs(dtype) * (math.prod(dims) if nd else 1)
                d0 = body + 2 + nd
                data = bytes(section[d0 : d0 + size])
                dl = section[d0 + size]
                desc = bytes(section[d0 + size + 1 : d0 + size + 1 + dl])
                self.records.append(Record(gid, name, desc, locked, dtype, dims, data))
            if offset == 0:
                break
            pos = off_at + offset
        ds = struct.unpack_from("<H", self.header, 16)[0]
        self.data = bytearray(blob[(ds - 1) * BLOCK :])

    # ---- access
    def group_id(self, group: str) -> int | None:
        for r in self.records:
            if r.is_group and r.name.upper() == group.encode():
                return r.gid
        return None

    def param(self, group: str, name: str) -> Record | None:
        gid = self.group_id(group)
        for r in self.records:
            if not r.is_group and r.gid == gid and r.name.upper() == name.encode():
                return r
        return None

    def set_param(self, group: str, name: str, dtype: int, dims: list[int], data: bytes) -> Record:
        gid = self.group_id(group)
        if gid is None:
            gid = max([r.gid for r in self.records if r.is_group] + [0]) + 1
            self.records.append(Record(gid, group.encode()))
        r = self.param(group, name)
        if r is None:
            r = Record(gid, name.encode(), dtype=dtype)
            self.records.append(r)
        r.dtype, r.dims, r.data = dtype, list(dims), bytes(data)
        return r

    def set_numbers(self, group: str, name: str, values, dtype: int = 4, dims: list[int] | None = None) -> Record:
        arr = np.asarray(values, dtype=float).ravel(order="F")
        if dims is None:
            dims = [arr.size] if np.ndim(values) else []
        if dtype == 4:
            data = arr.astype("<f4").tobytes()
        elif dtype == 2:
            data = np.clip(arr, -32768, 32767).astype("<i2").tobytes()
        else:
            data = np.clip(arr, -128, 127).astype("<i1").tobytes()
        return self.set_param(group, name, dtype, dims, data)

    def set_strings(self, group: str, name: str, strings: list[bytes]) -> Record:
        width = max([len(s) for s in strings] + [1])
        data = b"".join(s.ljust(width, b" ") for s in strings)
        return self.set_param(group, name, -1, [width, len(strings)], data)

    def strings(self, group: str, name: str) -> list[bytes]:
        r = self.param(group, name)
        if r is None or r.dtype != -1:
            return []
        if len(r.dims) < 2:
            return [r.data]
        w = r.dims[0]
        return [r.data[i * w : (i + 1) * w] for i in range(len(r.data) // w if w else 0)]

    def numbers(self, group: str, name: str) -> np.ndarray:
        r = self.param(group, name)
        if r is None:
            return np.zeros(0)
        if r.dtype == 4:
            return np.frombuffer(r.data, "<f4").astype(float)
        if r.dtype == 2:
            return np.frombuffer(r.data, "<i2").astype(float)
        return np.frombuffer(r.data, "<i1").astype(float)

    def word(self, i: int) -> int:
        return struct.unpack_from("<H", self.header, 2 * i)[0]

    def set_word(self, i: int, v: int) -> None:
        struct.pack_into("<H", self.header, 2 * i, int(v) & 0xFFFF)

    def header_float(self, byte: int) -> float:
        return struct.unpack_from("<f", self.header, byte)[0]

    def set_header_float(self, byte: int, v: float) -> None:
        struct.pack_into("<f", self.header, byte, v)

    @property
    def is_float(self) -> bool:
        return self.header_float(12) < 0

    @property
    def frame_words(self) -> int:
        return 4 * self.word(1) + self.word(2)

    @property
    def n_frames(self) -> int:
        return self.word(4) - self.word(3) + 1

    # ---- serialise
    def to_bytes(self) -> bytes:
        out = bytearray()
        recs = self.records
        for k, r in enumerate(recs):
            name = r.name[:127]
            n = len(name) * (-1 if r.locked else 1)
            if r.is_group:
                body = bytes([min(len(r.desc), 255)]) + r.desc[:255]
                gid = -r.gid
            else:
                dims = bytes(d & 0xFF for d in r.dims[:255])
                body = struct.pack("<bB", r.dtype, len(dims)) + dims + r.data + bytes([min(len(r.desc), 255)]) + r.desc[:255]
                gid = r.gid
            last = k == len(recs) - 1
            offset = 0 if last else 2 + len(body)
            out += struct.pack("<bb", n, max(-127, min(127, gid))) + name + struct.pack("<h", max(-32768, min(32767, offset))) + body
        n_blocks = max(1, math.ceil((len(out) + 4) / BLOCK))
        n_blocks = min(n_blocks, 255)
        section = bytearray(self.param_head[:2]) + bytes([n_blocks, self.processor]) + out
        section = section[: n_blocks * BLOCK].ljust(n_blocks * BLOCK, b"\0")
        pstart = self.header[0]
        self.set_word(8, pstart + n_blocks)
        ds = self.param("POINT", "DATA_START")
        if ds is not None and ds.dtype == 2 and len(ds.data) >= 2:
            ds.data = struct.pack("<h", min(pstart + n_blocks, 32767)) + ds.data[2:]
        gap = b"\0" * ((pstart - 2) * BLOCK)
        return bytes(self.header) + gap + bytes(section) + bytes(self.data)


# --------------------------------------------------------------------------- mutation kinds


def _param_records(c: RawC3D) -> list[Record]:
    return [r for r in c.records if not r.is_group]


def _frames_bytes(c: RawC3D) -> tuple[int, int]:
    wb = 4 if c.is_float else 2
    return c.frame_words * wb, c.n_frames


def m_dimensions(c, rng):
    r = rng.choice(_param_records(c))
    choice = rng.integers(4)
    if choice == 0 and r.dims:  # shorter first/last dimension (e.g. ANALOG:LABELS shorter than the channels)
        i = int(rng.integers(len(r.dims)))
        r.dims[i] = int(rng.integers(0, max(1, r.dims[i])))
    elif choice == 1:  # odd dimensions over the same bytes
        r.dims = [int(x) for x in rng.integers(1, 6, int(rng.integers(1, 4)))]
    elif choice == 2:
        r.dims = []
    else:  # keep the product, reshape
        n = math.prod(r.dims) if r.dims else 1
        r.dims = [1, n] if n <= 255 else r.dims[::-1]
    size = abs(r.dtype) * (math.prod(r.dims) if r.dims else 1)
    r.data = r.data[:size].ljust(size, b"\0")
    return f"{r.name.decode('latin-1')} dims {r.dims}"


def m_data_types(c, rng):
    targets = [(g, n) for g, n in [("POINT", "ANGLES"), ("POINT", "LABELS"), ("POINT", "UNITS"), ("POINT", "RATE"),
                                   ("POINT", "SCALE"), ("ANALOG", "LABELS"), ("ANALOG", "SCALE"), ("ANALOG", "OFFSET"),
                                   ("FORCE_PLATFORM", "TYPE"), ("FORCE_PLATFORM", "CHANNEL"), ("EVENT", "TIMES"),
                                   ("EVENT", "LABELS"), ("PROCESSING", "Bodymass"), ("POINT", "MOMENTS")]
               if c.param(g, n) is not None]
    if not targets:
        return "none"
    g, n = targets[int(rng.integers(len(targets)))]
    r = c.param(g, n)
    new = int(rng.choice([-1, 1, 2, 4]))
    count = math.prod(r.dims) if r.dims else 1
    if r.dtype == -1 and new != -1:  # strings stored as integers (POINT:ANGLES as int16, ...)
        r.dims = [max(1, len(r.data) // abs(new))] if r.data else [1]
        r.data = r.data[: r.dims[0] * abs(new)].ljust(r.dims[0] * abs(new), b"\0")
    elif new == -1:
        text = b" ".join(str(v).encode() for v in c.numbers(g, n)) or b"x"
        r.dims, r.data = [len(text)], text
    else:
        vals = c.numbers(g, n) if r.dtype != -1 else np.zeros(count)
        c.set_numbers(g, n, vals.reshape(-1), dtype=new, dims=[max(1, vals.size)])
    r.dtype = new
    return f"{g}:{n} as type {new}"


def m_header(c, rng):
    i = int(rng.choice([1, 2, 3, 4, 5, 8, 9]))
    v = int(rng.choice([0, 1, 2, 255, 256, 32767, 32768, 65535, c.word(i) + 1, max(0, c.word(i) - 1)]))
    if rng.random() < 0.25:
        byte = int(rng.choice([12, 20]))
        f = float(rng.choice([0.0, -0.0, 1e20, -1e20, np.nan, np.inf, 1e-30, -1.0, 1.0]))
        c.set_header_float(byte, f)
        return f"header float at byte {byte} = {f}"
    c.set_word(i, v)
    return f"header word {i + 1} = {v}"


def m_huge_points(c, rng):
    """POINT:USED (and the header) promise 65535 points, or many points stored for real."""
    if rng.random() < 0.5:
        c.set_word(1, 65535)
        c.set_numbers("POINT", "USED", [65535], dtype=2, dims=[])
        return "65535 points promised"
    n_old, frames = c.word(1), c.n_frames
    n_new = int(rng.integers(300, 2000))
    wb = 4 if c.is_float else 2
    fw = c.frame_words
    data = np.frombuffer(bytes(c.data[: frames * fw * wb]), dtype=np.uint8).reshape(frames, fw * wb)
    pts = data[:, : 4 * n_old * wb]
    extra = np.tile(pts[:, : 4 * wb], (1, n_new - n_old)) if n_old else np.zeros((frames, 4 * wb * (n_new - n_old)), np.uint8)
    new = np.hstack([pts, extra, data[:, 4 * n_old * wb :]])
    c.data = bytearray(new.tobytes())
    c.set_word(1, n_new)
    c.set_numbers("POINT", "USED", [n_new], dtype=2, dims=[])
    labels = [s.strip() for s in c.strings("POINT", "LABELS")] + [b"X%d" % i for i in range(n_new)]
    c.set_strings("POINT", "LABELS", labels[:255])
    c.set_strings("POINT", "LABELS2", labels[255:n_new][:255])
    if n_new > 510:
        c.set_strings("POINT", "LABELS3", labels[510:n_new][:255])
    return f"{n_new} points stored"


def m_huge_analogs(c, rng):
    choice = rng.integers(3)
    if choice == 0:
        rate = float(rng.choice([1e9, 1e7, 1e30]))
        c.set_numbers("ANALOG", "RATE", [rate], dims=[])
        return f"ANALOG:RATE = {rate:g}"
    if choice == 1:
        c.set_numbers("ANALOG", "USED", [32767], dtype=2, dims=[])
        c.set_word(2, 65535)
        return "65535 analog words promised"
    rate = float(rng.choice([1e20, 1e9, 1e-9, 0.0, -100.0]))
    c.set_numbers("POINT", "RATE", [rate], dims=[])
    c.set_header_float(20, rate)
    return f"POINT:RATE = {rate:g}"


def m_plates(c, rng):
    if c.param("FORCE_PLATFORM", "USED") is None:
        c.set_numbers("FORCE_PLATFORM", "USED", [1], dtype=2, dims=[])
    used = int(max(1, c.numbers("FORCE_PLATFORM", "USED")[:1].sum() if c.numbers("FORCE_PLATFORM", "USED").size else 1))
    choice = rng.integers(7)
    if choice == 0:
        t = [int(rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 21, -1, 100])) for _ in range(used)]
        c.set_numbers("FORCE_PLATFORM", "TYPE", t, dtype=2)
        return f"FORCE_PLATFORM:TYPE = {t}"
    if choice == 1:
        ch = c.numbers("FORCE_PLATFORM", "CHANNEL")
        ch = ch + rng.integers(-3, 40, ch.size) if ch.size else np.array([99.0])
        r = c.param("FORCE_PLATFORM", "CHANNEL")
        c.set_numbers("FORCE_PLATFORM", "CHANNEL", ch, dtype=2, dims=r.dims if r is not None and r.dims else [ch.size])
        return "FORCE_PLATFORM:CHANNEL shifted"
    if choice == 2:
        r = c.param("FORCE_PLATFORM", "CORNERS")
        v = c.numbers("FORCE_PLATFORM", "CORNERS")
        v = v * float(rng.choice([0.0, np.nan, 1e30, -1.0])) if v.size else v
        c.set_numbers("FORCE_PLATFORM", "CORNERS", v, dims=r.dims if r is not None else [v.size])
        return "FORCE_PLATFORM:CORNERS degenerate"
    if choice == 3:
        c.set_numbers("FORCE_PLATFORM", "ORIGIN", rng.normal(0, 100, 3 * used), dims=[3, used])
        return "FORCE_PLATFORM:ORIGIN random"
    if choice == 4:
        k = int(rng.choice([6, 8, 12, 5]))
        c.set_numbers("FORCE_PLATFORM", "CAL_MATRIX", rng.normal(0, 1, k * k * used), dims=[k, k, used])
        t = [int(rng.choice([4, 5, 6, 7])) for _ in range(used)]
        c.set_numbers("FORCE_PLATFORM", "TYPE", t, dtype=2)
        return f"CAL_MATRIX {k}x{k}, types {t}"
    if choice == 5:
        z = [int(v) for v in rng.choice([0, 1, 10, 50, 65535, -5, 100000], 2)]
        c.set_numbers("FORCE_PLATFORM", "ZERO", z, dtype=2)
        return f"FORCE_PLATFORM:ZERO = {z}"
    c.set_numbers("FORCE_PLATFORM", "USED", [int(rng.choice([0, 2, 5, 127, -1]))], dtype=2, dims=[])
    return "FORCE_PLATFORM:USED changed"


def m_processor(c, rng):
    c.processor = int(rng.choice([83, 84, 85, 86, 0, 255, 87]))
    return f"processor {c.processor}"


def m_non_utf8(c, rng):
    name = bytes(rng.choice([b"Jos\xe9", b"\xff\xfe\xfd", b"M\xfcller", b"\x80\x81", b"caf\xe9 \xe0 la"]))
    g, n = [("SUBJECTS", "NAMES"), ("POINT", "LABELS"), ("ANALOG", "LABELS"), ("EVENT", "LABELS"), ("POINT", "UNITS"),
            ("MANUFACTURER", "SOFTWARE"), ("EVENT", "CONTEXTS"), ("ANALOG", "UNITS")][int(rng.integers(8))]
    strings = c.strings(g, n) or [b"x"]
    strings[int(rng.integers(len(strings)))] = name
    c.set_strings(g, n, strings)
    return f"{g}:{n} holds {name!r}"


def m_duplicate_group(c, rng):
    groups = [r for r in c.records if r.is_group]
    g = groups[int(rng.integers(len(groups)))]
    new_id = max(r.gid for r in groups) + 1
    c.records.append(Record(new_id, g.name, g.desc))
    for r in list(c.records):
        if not r.is_group and r.gid == g.gid:
            c.records.append(Record(new_id, r.name, r.desc, r.locked, r.dtype, list(r.dims), r.data))
    return f"group {g.name.decode('latin-1')} duplicated"


def m_events(c, rng):
    choice = rng.integers(4)
    if choice == 0:
        n = 500
        c.set_numbers("EVENT", "USED", [n], dtype=2, dims=[])
        c.set_strings("EVENT", "LABELS", [b"Foot Strike"] * 255)
        c.set_numbers("EVENT", "TIMES", rng.uniform(0, 10, 2 * 255), dims=[2, 255])
        return "500 events"
    if choice == 1:
        c.set_param("EVENT", "SUBJECTS", -1, [3, 2, 2], b"abcdefghijkl")
        return "EVENT:SUBJECTS with odd dimensions"
    if choice == 2:
        t = c.numbers("EVENT", "TIMES")
        t = t.copy() if t.size else np.zeros(2)
        t[rng.integers(0, t.size, max(1, t.size // 3))] = rng.choice([np.nan, np.inf, -1e9, 1e9])
        c.set_numbers("EVENT", "TIMES", t, dims=[t.size])
        return "EVENT:TIMES corrupted"
    c.set_strings("EVENT", "CONTEXTS", [b"Left", b"Right", b"", b"\x00"])
    c.set_numbers("EVENT", "USED", [int(rng.integers(-5, 40))], dtype=2, dims=[])
    return "EVENT:USED/CONTEXTS disagree"


def m_strings(c, rng):
    choice = rng.integers(5)
    if choice == 0:
        unit = bytes(rng.choice([b"$N$", b"N$m", b"$\\frac{a}{b}$", b"$$", b"^_{}"]))
        g, n = [("POINT", "UNITS"), ("ANALOG", "UNITS"), ("POINT", "MOMENT_UNITS"), ("POINT", "ANGLE_UNITS"),
                ("FORCE_PLATFORM", "UNITS")][int(rng.integers(5))]
        c.set_strings(g, n, [unit])
        return f"{g}:{n} = {unit!r}"
    if choice == 1:  # a NUL byte in a parameter name
        r = rng.choice(_param_records(c))
        r.name = r.name[:1] + b"\x00" + r.name[1:]
        return "NUL in a parameter name"
    if choice == 2:
        labels = c.strings("POINT", "LABELS")
        c.set_strings("POINT", "LABELS", [b""] * len(labels) if rng.random() < 0.5 else labels[: len(labels) // 2])
        return "POINT:LABELS empty or short"
    if choice == 3:
        labels = c.strings("ANALOG", "LABELS")
        c.set_strings("ANALOG", "LABELS", labels[: len(labels) // 2] or [b"x"])
        return "ANALOG:LABELS shorter than the channels"
    c.set_strings("SUBJECTS", "NAMES", [b"A" * 255, b"../../etc/passwd", b"<script>"])
    return "odd subject names"


def m_scale(c, rng):
    choice = rng.integers(4)
    if choice == 0:
        v = float(rng.choice([0.0, 1e30, np.nan, -1.0, 1e-30]))
        sc = c.numbers("ANALOG", "SCALE")
        r = c.param("ANALOG", "SCALE")
        if sc.size:
            sc = sc.copy()
            sc[rng.integers(0, sc.size)] = v
            c.set_numbers("ANALOG", "SCALE", sc, dims=r.dims)
        return f"ANALOG:SCALE entry = {v}"
    if choice == 1:
        v = float(rng.choice([0.0, 1e30, -1e30, np.nan]))
        c.set_numbers("ANALOG", "GEN_SCALE", [v], dims=[])
        return f"ANALOG:GEN_SCALE = {v}"
    if choice == 2:
        v = float(rng.choice([0.0, 1e30, np.nan])) * (-1 if c.is_float else 1)
        c.set_numbers("POINT", "SCALE", [v], dims=[])
        return f"POINT:SCALE = {v}"
    off = c.numbers("ANALOG", "OFFSET")
    if off.size:
        r = c.param("ANALOG", "OFFSET")
        c.set_numbers("ANALOG", "OFFSET", np.full(off.size, -32768.0), dtype=2, dims=r.dims)
    return "ANALOG:OFFSET extreme"


def m_truncated(c, rng):
    """Cut a record or the data: returns bytes through the ``cut`` attribute."""
    choice = rng.integers(3)
    if choice == 0 and c.records:  # a record's data cut short (dims promise more)
        r = rng.choice(_param_records(c))
        r.data = r.data[: len(r.data) // 2]
        return f"{r.name.decode('latin-1')} data cut"
    if choice == 1:
        c.data = c.data[: int(rng.integers(0, max(1, len(c.data))))]
        return "data section cut"
    c.records = c.records[: int(rng.integers(1, max(2, len(c.records))))]
    return "parameter section cut"


def m_long_frames(c, rng):
    """Header says 65535 frames; TRIAL:ACTUAL_END_FIELD and POINT:LONG_FRAMES say more. The data
    hold them (the first frames repeated) or not (``short``)."""
    wb = 4 if c.is_float else 2
    fb = c.frame_words * wb
    frames = c.n_frames
    total = int(rng.choice([70000, 200000])) if rng.random() < 0.3 else 70000
    if fb * total > 60e6:  # keep mutants small: drop the analogs and all but 4 points
        keep = min(4, c.word(1))
        raw = np.frombuffer(bytes(c.data[: frames * fb]), np.uint8).reshape(frames, fb)[:, : 4 * keep * wb]
        c.data = bytearray(raw.tobytes())
        c.set_word(1, keep)
        c.set_word(2, 0)
        c.set_numbers("POINT", "USED", [keep], dtype=2, dims=[])
        c.set_numbers("ANALOG", "USED", [0], dtype=2, dims=[])
        c.set_numbers("FORCE_PLATFORM", "USED", [0], dtype=2, dims=[])
        fb = 4 * keep * wb
    short = rng.random() < 0.3
    stored = 65535 if short else total
    raw = np.frombuffer(bytes(c.data[: frames * fb]), np.uint8).reshape(frames, fb)
    reps = math.ceil(stored / frames)
    c.data = bytearray(np.tile(raw, (reps, 1))[:stored].tobytes())
    c.set_word(3, 1)
    c.set_word(4, 65535)
    c.set_numbers("TRIAL", "ACTUAL_START_FIELD", [1, 0], dtype=2)
    c.set_numbers("TRIAL", "ACTUAL_END_FIELD", [total & 0xFFFF, total >> 16], dtype=2)
    c.set_numbers("POINT", "LONG_FRAMES", [total], dims=[])
    c.set_param("EVENT", "USED", 2, [], b"\0\0")
    return f"{total} frames{' (only 65535 stored)' if short else ''}"


def m_many_points_labels2(c, rng):
    """More than 255 points, their labels in POINT:LABELS and LABELS2."""
    return m_huge_points_real(c, rng)


def m_huge_points_real(c, rng):
    n_old = c.word(1)
    target = int(rng.integers(256, 400))
    if n_old >= target:
        target = n_old + 10
    wb = 4 if c.is_float else 2
    frames, fw = c.n_frames, c.frame_words
    data = np.frombuffer(bytes(c.data[: frames * fw * wb]), dtype=np.uint8).reshape(frames, fw * wb)
    pts = data[:, : 4 * n_old * wb]
    extra = np.tile(pts[:, : 4 * wb], (1, target - n_old))
    c.data = bytearray(np.hstack([pts, extra, data[:, 4 * n_old * wb :]]).tobytes())
    c.set_word(1, target)
    c.set_numbers("POINT", "USED", [target], dtype=2, dims=[])
    labels = [s.rstrip() for s in c.strings("POINT", "LABELS") + c.strings("POINT", "LABELS2")][:n_old]
    labels += [b"EXTRA%d" % i for i in range(target - n_old)]
    c.set_strings("POINT", "LABELS", labels[:255])
    c.set_strings("POINT", "LABELS2", labels[255:])
    return f"{target} points with LABELS2"


def m_nan_plate_samples(c, rng):
    if not c.is_float or c.word(2) == 0:
        return m_scale(c, rng)
    wb, fw, frames = 4, c.frame_words, c.n_frames
    vals = np.frombuffer(bytes(c.data[: frames * fw * wb]), "<f4").reshape(frames, fw).copy()
    first = 4 * c.word(1)
    cols = first + rng.integers(0, c.word(2), 3)
    rows = rng.integers(0, frames, max(1, frames // 10))
    vals[np.ix_(rows, cols)] = np.nan
    c.data = bytearray(vals.tobytes()) + c.data[frames * fw * wb :]
    return "NaN plate samples"


KINDS = {
    "dimensions": m_dimensions,
    "data types": m_data_types,
    "header fields": m_header,
    "huge point count": m_huge_points,
    "huge analog count/rate": m_huge_analogs,
    "plate parameters": m_plates,
    "processor type": m_processor,
    "non-UTF-8 strings": m_non_utf8,
    "duplicated groups": m_duplicate_group,
    "events": m_events,
    "strings": m_strings,
    "scale": m_scale,
    "truncated structures": m_truncated,
    "long frames": m_long_frames,
    ">255 points": m_many_points_labels2,
    "NaN plate samples": m_nan_plate_samples,
}


def mutated(source: Path, folder: Path, name: str, edit) -> Path:
    """A copy of ``source`` in ``folder`` with ``edit(RawC3D)`` applied (the input is not touched)."""
    c = RawC3D(source.read_bytes())
    edit(c)
    out = folder / name
    out.write_bytes(c.to_bytes())
    return out


def mutant(source: Path | bytes, kind: str, seed: int) -> tuple[bytes, str]:
    """The mutant of ``source`` for ``kind`` and ``seed`` (same inputs, same bytes) and what was done."""
    blob = source if isinstance(source, bytes) else Path(source).read_bytes()
    rng = np.random.default_rng(seed)
    c = RawC3D(blob)
    what = KINDS[kind](c, rng)
    return c.to_bytes(), what


def cases(sources: list[Path], n: int, seed: int) -> list[tuple[Path, str, int]]:
    """``n`` reproducible ``(source, kind, case_seed)`` triples cycling through every kind."""
    rng = np.random.default_rng(seed)
    kinds = list(KINDS)
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        out.append((sources[int(rng.integers(len(sources)))], kind, int(rng.integers(2**31))))
    return out


# --------------------------------------------------------------------------- running cases

_WORKER = r'''
import os, resource, sys, tempfile, traceback
root, tests_dir, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path[:0] = [root, tests_dir]
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import warnings
warnings.simplefilter("ignore")
import matplotlib
matplotlib.use("Agg")
from c3d_mutations import mutant
from gaitid.core.errors import GaitIDError
from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
work = tempfile.mkdtemp(prefix="gaitid-fuzz-")
for line in sys.stdin:
    src, kind, seed, report = line.rstrip("\n").split("\t")
    blob, what = mutant(src, kind, int(seed))
    case = os.path.join(work, "case%s" % seed)
    os.makedirs(case, exist_ok=True)
    path = os.path.join(case, "mutant.c3d")
    with open(path, "wb") as fh:
        fh.write(blob)
    stage = "read"
    try:
        trial = read_c3d(path)
        stage = "process"
        result = process(path, subject=70.0 if trial.subject.mass is None else None)
        out = os.path.join(case, "out")
        stage = "csv"
        result.to_csv(out)
        stage = "c3d"
        result.to_c3d(os.path.join(out, "results.c3d"))
        stage = "parquet"
        result.to_parquet(out)
        if report == "1":
            stage = "report"
            result.report(out)
        msg = "RESULT"
    except GaitIDError as exc:
        msg = "GAITID %s %s" % (stage, type(exc).__name__)
    except BaseException as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = "%s:%s" % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else "?"
        msg = "OTHER %s %s at %s: %s" % (stage, type(exc).__name__, where, str(exc).replace("\n", " ").replace("\t", " ")[:160])
    import shutil
    shutil.rmtree(case, ignore_errors=True)
    sys.stdout.write(msg + "\t" + what.replace("\t", " ").replace("\n", " ") + "\n")
    sys.stdout.flush()
'''


def run_cases(case_list, root: Path, *, timeout_s: float = 120.0, memory_limit: int = 4 << 30, report_every: int = 0):
    """Run each case (read, process, CSV, results C3D, Parquet; the report every ``report_every``-th
    case) in a worker process using the gaitid found in ``root``. Yields ``(case, outcome, detail, what)``
    with outcome 'result', 'gaitid error', 'other', 'crash' or 'hang'."""
    import select
    import subprocess
    import sys

    tests_dir = str(Path(__file__).resolve().parent)

    def start():
        return subprocess.Popen([sys.executable, "-c", _WORKER, str(root), tests_dir, str(memory_limit)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, bufsize=1)

    proc = start()
    try:
        for i, (src, kind, seed) in enumerate(case_list):
            rep = "1" if report_every and i % report_every == 0 else "0"
            try:
                proc.stdin.write(f"{src}\t{kind}\t{seed}\t{rep}\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
                line = proc.stdout.readline() if ready else None
            except BrokenPipeError:
                line = ""
            if line is None or not line:
                outcome = "hang" if line is None else "crash"
                yield (src, kind, seed), outcome, outcome, ""
                proc.kill()
                proc.wait()
                proc = start()
                continue
            msg, what = line.rstrip("\n").split("\t", 1)
            outcome = {"RESULT": "result", "GAITID": "gaitid error"}.get(msg.split(" ", 1)[0], "other")
            yield (src, kind, seed), outcome, msg, what
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
