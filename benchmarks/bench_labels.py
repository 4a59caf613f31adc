"""Reading a file with many points: label classification must be linear.

Labels: PiG-style segment quadruples for the first 8192 points, the reader's POINT<n> names after.

Writes a 1-frame C3D with N points (labels in LABELS, LABELS2, ...; PiG-like names so that the
segment-quadruple and model-output rules all run) for N = 8191 and 65535, and prints the read time
of each and their ratio (8x more points: ~8x for a linear reader, ~64x for a quadratic one).

    python benchmarks/bench_labels.py [ROOT]     # ROOT: checkout whose gaitid is timed (default: this one)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def make(path: Path, n: int) -> None:
    """One frame of ``n`` float points (ezc3d writes the 1-point skeleton; tests/c3d_mutations.RawC3D grows it)."""
    import ezc3d
    from c3d_mutations import RawC3D

    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([100.0])
    c["parameters"]["POINT"]["LABELS"]["value"] = ["A"]
    c["data"]["points"] = np.ones((4, 1, 1))
    c.add_parameter("POINT", "ANGLES", [f"S{i}Angles" for i in range(200)])
    c.write(str(path))
    raw = RawC3D(path.read_bytes())
    # labelled as PiG segment quadruples up to what the parameter section holds (255 blocks);
    # the rest get the reader's POINT<n> names
    labels = [f"S{i // 4}{'OALP'[i % 4]}".encode() for i in range(min(n, 8192))]
    for k in range(0, len(labels), 255):
        raw.set_strings("POINT", "LABELS" if k == 0 else f"LABELS{k // 255 + 1}", labels[k : k + 255])
    xyz = np.random.default_rng(0).uniform(-1000, 1000, (n, 4)).astype("<f4")
    xyz[:, 3] = 0.0
    raw.data = bytearray(xyz.tobytes())
    raw.set_word(1, n)
    raw.set_param("POINT", "USED", 2, [], int(n).to_bytes(2, "little"))  # unsigned 16-bit, as the C3D guide allows
    path.write_bytes(raw.to_bytes())


TIMER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from gaitid.io.c3d import read_c3d
t = time.perf_counter(); read_c3d(sys.argv[2]); print(time.perf_counter() - t)
"""


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent
    with tempfile.TemporaryDirectory() as d:
        times = {}
        for n in (8191, 65535):
            path = Path(d) / f"points{n}.c3d"
            make(path, n)
            out = subprocess.run([sys.executable, "-c", TIMER, str(root), str(path)], capture_output=True, text=True)
            try:
                times[n] = float(out.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                print(out.stdout, out.stderr)
                raise
            print(f"{n:6d} points ({path.stat().st_size / 1e6:.2f} MB): read in {times[n]:.3f} s")
        print(f"ratio 65535/8191 points: {times[65535] / times[8191]:.1f} (8 = linear, 64 = quadratic)")


if __name__ == "__main__":
    main()
