"""Agreement with Plug-in Gait on the real trials: prints the tables of docs/validation.md and
writes the overlay figures docs/images/validation_<trial>.png.

    python benchmarks/bench_validation.py [REALDATA_DIR] [--no-plots] [--json OUT.json] [--markdown]

Reads ../shared/realdata in place (or the folder given). Each figure: sagittal, frontal and
transverse ankle/knee/hip moments (N.m/kg, Plug-in Gait's external description) of both sides,
Plug-in Gait (black) and gaitid from Plug-in Gait's own segments (red) and from the markers
(blue dashed), the compared stance frames shaded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gaitid.io.atomic import atomic_path  # noqa: E402
from gaitid.validation.plugin_gait import (  # noqa: E402
    MODES,
    PLANES,
    _stance_mask,
    find_output,
    format_table,
    validate,
)

FIGURE_TRIALS = ["c3d-parser/MH0222_BP06.c3d", "btkdata/PiG_Motion3_FF.c3d", "biomechzoo/HC030A05.c3d",
                 "btkdata/FunctionalWalk.c3d"]


def overlay(path: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gaitid.core.settings import Settings
    from gaitid.io.c3d import read_c3d
    from gaitid.pipeline import process

    trial = read_c3d(path)
    settings = Settings.plugin_gait(marker_cutoff_hz=None)
    from gaitid.batch.pairing import pair_static
    from gaitid.batch.session import find_trials, scan_trial

    statics = [i for i in (scan_trial(f) for f in find_trials([path.parent])) if i.kind == "static"]
    static = pair_static(scan_trial(path.resolve()), statics).static
    runs = {mode: process(trial, model=model, settings=settings, static=static if mode == "markers" else None)
            for mode, model in MODES.items()}
    fig, axes = plt.subplots(3, 6, figsize=(18, 8), sharex=True)
    t = trial.time
    for c, (side, s) in enumerate((("Left", "L"), ("Right", "R"))):
        stance = _stance_mask(trial, runs["pig-segments"], side.lower())
        for r, joint in enumerate(("Ankle", "Knee", "Hip")):
            ref = trial.model_outputs[find_output(trial.model_outputs, f"{s}{joint}Moment")].values
            for k, plane in enumerate(PLANES):
                ax = axes[r, c * 3 + k]
                ax.fill_between(t, 0, 1, where=stance, color="0.92", transform=ax.get_xaxis_transform())
                ax.plot(t, ref[:, k], "k-", lw=2.2, label="Plug-in Gait")
                ax.plot(t, runs["pig-segments"].curve(side, f"{joint}Moment")[:, k], "r-", lw=1.1,
                        label="gaitid, PiG segments")
                ax.plot(t, runs["markers"].curve(side, f"{joint}Moment")[:, k], "b--", lw=1.0,
                        label="gaitid, markers")
                ax.set_title(f"{side} {joint} {plane}", fontsize=9)
                ax.tick_params(labelsize=7)
                if k == 0:
                    ax.set_ylabel("N.m/kg", fontsize=8)
                if r == 2:
                    ax.set_xlabel("time (s)", fontsize=8)
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{path.name}: joint moments, Plug-in Gait vs gaitid (external description, distal frames; "
                 "shaded: compared stance)", fontsize=11)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=70, format="png")
    plt.close(fig)


def markdown_tables(records: list[dict]) -> str:
    """The per-file tables of docs/validation.md (moments: RMS (r) per plane, band-limited
    sagittal, peak difference / shift; powers), then the files not compared."""
    by = {(r["file"], r["mode"], r["side"], r["joint"], r["quantity"], r["plane"]): r
          for r in records if "reason" not in r}
    files = list(dict.fromkeys(r["file"] for r in records if "reason" not in r))
    out = ["| file | mode | side | joint | sagittal RMS (r) | sagittal RMS 6 Hz (r) | peak diff / shift | "
           "frontal RMS (r) | transverse RMS (r) | n |", "|---|---|---|---|---|---|---|---|---|---|"]
    for f in files:
        for mode in MODES:
            for side in ("left", "right"):
                for joint in ("ankle", "knee", "hip"):
                    s = by.get((f, mode, side, joint, "moment", "sagittal"))
                    if s is None:
                        continue
                    fr, tr = (by[(f, mode, side, joint, "moment", p)] for p in ("frontal", "transverse"))
                    out.append(f"| {f} | {mode} | {side} | {joint} | {s['rms']:.3f} ({s['r']:.3f}) | "
                               f"{s['rms_6hz']:.3f} ({s['r_6hz']:.3f}) | {s['peak_diff']:+.3f} / "
                               f"{s['peak_shift_ms']:+.0f} ms | {fr['rms']:.3f} ({fr['r']:.3f}) | "
                               f"{tr['rms']:.3f} ({tr['r']:.3f}) | {s['n_cycles']} |")
    out += ["", "Powers (W/kg), mode pig-segments: RMS (r)", "",
            "| file | left ankle | left knee | left hip | right ankle | right knee | right hip |",
            "|---|---|---|---|---|---|---|"]
    for f in files:
        cells = [by.get((f, "pig-segments", side, joint, "power", "total")) for side in ("left", "right")
                 for joint in ("ankle", "knee", "hip")]
        if any(cells):
            out.append(f"| {f} | " + " | ".join(f"{c['rms']:.3f} ({c['r']:.3f})" if c else "-" for c in cells) + " |")
    out.append("")
    for r in records:
        if "reason" in r:
            reason = r["reason"].split(f"{r['file']}: ", 1)[-1]  # without the folder
            out.append(f"- {r['file']}{' (' + r['mode'] + ')' if 'mode' in r else ''}: {reason}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("realdata", nargs="?", default=str(REPO.parent / "shared" / "realdata"))
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true", help="also print the tables of docs/validation.md")
    args = ap.parse_args(argv)
    root = Path(args.realdata)
    if not root.is_dir():
        print(f"real data folder {root} is absent")
        return 1
    t0 = time.perf_counter()
    records = validate(root)
    seconds = time.perf_counter() - t0
    for q in ("moment", "power", "angle"):
        print(format_table(records, q))
        print()
    rows = [r for r in records if r.get("quantity") == "moment" and r.get("plane") == "sagittal"]
    print("sagittal moments, band-limited (both curves low-passed at 6 Hz): RMS N.m/kg (r)")
    for r in rows:
        print(f"  {r['file']:28s} {r['mode']:12s} {r['side']:5s} {r['joint']:5s} {r['rms_6hz']:.3f} ({r['r_6hz']:.3f})"
              f"  peak diff {r['peak_diff']:+.3f}  peak shift {r['peak_shift_ms']:+.0f} ms")
    if args.markdown:
        print()
        print(markdown_tables(records))
    n_files = len({r["file"] for r in records})
    print(f"\n{n_files} files, {len(records)} records in {seconds:.1f} s")
    if args.json:
        with atomic_path(args.json) as tmp:
            tmp.write_text(json.dumps(records, indent=1))
    if not args.no_plots:
        for rel in FIGURE_TRIALS:
            p = root / rel
            if p.exists():
                out = REPO / "docs" / "images" / f"validation_{p.stem}.png"
                overlay(p, out)
                print("wrote", out.relative_to(REPO))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
