"""What the data checks cost, as a share of process(), measured in one run (docs/checks.md).

    python benchmarks/bench_checks.py [--rounds 7] [--each] [--ab]

For the synthetic sample walk, the clean real trials of ../shared/realdata and the synthetic stairs
and treadmill (written into a temporary folder), each round times process() once and then each
check on that Result (CPU time, best of 3): the quality stage
(gaitid.pipeline.quality: plate geometry, plate units, COP under the foot, body mass, markers,
dynamic consistency), the body mass against the plates (gaitid.subject.bodymass.check_mass, run in
the subject stage) and the reader's marker-extent check. Prints each trial's median over the rounds
of the checks' sum over process() (which includes them), and each check's time. The body mass check
reuses the feet's ground points the contacts stage computed (gaitid.contacts.assign keeps the last
ones, compared value by value), as it does inside process(); the plate-outline figures are computed
once per outline, as over a lab's trials. The last column, "in situ", times the same three stages
inside process() itself (the quality stage, the subject stage's mass check and the reader's extent
check, wrapped where process() calls them): one cold call each, as a user's run pays them, against
that run's process() time; median over the rounds. ``--each`` then times each check alone on one
processed Result (the least of 15 batches of 20 calls, CPU ms). ``--ab`` then times process()
with the checks and with the same three stages replaced by stubs that return at once (no check
run), in ``--rounds`` x 4 pairs of calls: the share is the median of the pairs' differences over
the median time with them, whatever the checks cost beyond their own calls (memory, caches).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import gaitid
from gaitid.core.resources import sample_data_dir
from gaitid.io.marker_units import marker_extent
from gaitid.model.markerset import load_model
import gaitid.pipeline.quality as quality
from gaitid.pipeline.quality import quality_checks
from gaitid.subject.bodymass import check_mass

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
TRIALS = {
    "sample walk": (sample_data_dir() / "walk_synthetic.c3d", {}),
    "HC030A05": (REAL / "biomechzoo/HC030A05.c3d", {}),
    "FunctionalWalk": (REAL / "btkdata/FunctionalWalk.c3d", {}),
    "MH0222_BP06": (REAL / "c3d-parser/MH0222_BP06.c3d", {}),
    "test_small": (REAL / "python-gaitalytics/test_small.c3d", {}),
    "walking2 (1249 frames)": (REAL / "opensim-core/walking2.c3d", {"model": "isb", "subject": 70.0}),
}


def add_synthetic(folder: Path) -> None:
    """Add the synthetic stairs (288 frames, 4 plates, a subject standing still between steps: the
    checks' largest share) and a 6 s split-belt treadmill to TRIALS, written into ``folder``."""
    from gaitid.validation.synthetic.stairs import write_stairs
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    write_stairs(folder / "stairs.c3d", truth=False)
    write_treadmill(folder / "treadmill.c3d", duration_s=6.0, truth=False)
    TRIALS["synthetic stairs"] = (folder / "stairs.c3d", {})
    TRIALS["synthetic treadmill"] = (folder / "treadmill.c3d", {})


def cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def each_check(r, model) -> dict:
    """Each check of the quality stage on the Result ``r`` (as gaitid.pipeline.quality calls them), the
    body mass against the plates and the marker extent, as callables."""
    s, trial = r.settings, r.trial
    return {
        "geometry": lambda: quality.plate_geometry_check(trial, s.plate_corner_tolerance_m, s.plate_origin_offset_m,
                                                         s.plate_origin_depth_m),
        "units": lambda: quality.plate_units_check(trial, s.plate_cop_outside_m),
        "COP": lambda: quality.cop_foot_check(trial, r.markers, r.foot_contacts, s.cop_foot_margin_m, s.cop_min_travel),
        "markers": lambda: quality.marker_fault_check(
            trial, model, r.kinematics, length_tolerance_m=s.segment_length_tolerance_m,
            asymmetry_tolerance=s.segment_asymmetry_tolerance, stuck_s=s.stuck_marker_s, stuck_m=s.stuck_marker_m,
            side_margin_m=s.marker_side_margin_m, knock_m=s.marker_knock_m),
        "consistency": lambda: quality.consistency_check(r.kinematics, r.loads, r.subject.subject.mass, trial, s),
        "mass": lambda: check_mass(trial, r.subject.subject.mass, "bench", contacts=r.foot_contacts, markers=r.markers),
        "extent": lambda: marker_extent(trial.markers),
    }


def least(fn, batches: int = 15, calls: int = 20) -> float:
    best = float("inf")
    for _ in range(batches):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best


class InSitu:
    """The CPU time spent in the checks' stages inside process(): each wrapped where process() calls it."""

    def __init__(self):
        import gaitid.io.c3d as c3d
        import gaitid.pipeline as pipeline
        import gaitid.subject.stage as stage

        self.spent = 0.0
        for module, name in ((pipeline, "quality_checks"), (stage, "check_mass"), (c3d, "check_marker_extent")):
            setattr(module, name, self._timed(getattr(module, name)))

    def _timed(self, fn):
        def timed(*args, **kwargs):
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent += time.process_time() - t0
        return timed

    def share(self, path, options) -> float:
        """The checks' share of one process() call."""
        self.spent = 0.0
        t0 = time.process_time()
        gaitid.process(path, **options)
        return self.spent / (time.process_time() - t0)


class Stubbed:
    """The checks' three stages replaced, in the modules process() calls them from, by stubs that
    return a result saying nothing was checked; ``on()`` and ``off()`` switch."""

    def __init__(self):
        from gaitid import pipeline
        from gaitid.io import c3d
        from gaitid.subject import stage
        from gaitid.subject.bodymass import MassCheck

        self.places = ((pipeline, "quality_checks"), (stage, "check_mass"), (c3d, "check_marker_extent"))
        self.real = [getattr(module, name) for module, name in self.places]
        self.stubs = [lambda *a, **k: [],
                      lambda trial, mass, source, **k: MassCheck(mass, source, None, "", None, 0.15, "not checked"),
                      lambda *a, **k: None]

    def _set(self, functions) -> None:
        for (module, name), fn in zip(self.places, functions):
            setattr(module, name, fn)

    def on(self) -> None:
        self._set(self.real)

    def off(self) -> None:
        self._set(self.stubs)


def ab_share(path, options, rounds: int, stubbed: Stubbed) -> tuple[float, float, float]:
    """process() CPU time with the checks and without them (medians of ``rounds`` calls each, s,
    in pairs, alternately first) and the checks' share: the median of the pairs' differences over
    the median time with them (a pair's two calls see the same load on a shared machine)."""
    times = {True: [], False: []}
    for i in range(rounds):
        for with_checks in ((True, False) if i % 2 else (False, True)):
            stubbed.on() if with_checks else stubbed.off()
            t0 = time.process_time()
            gaitid.process(path, **options)
            times[with_checks].append(time.process_time() - t0)
    stubbed.on()
    a, b = statistics.median(times[True]), statistics.median(times[False])
    return a, b, statistics.median(x - y for x, y in zip(times[True], times[False])) / a


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--each", action="store_true", help="then each check alone, CPU ms")
    ap.add_argument("--ab", action="store_true", help="then process() with and without the checks, alternated")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        add_synthetic(Path(tmp))
        return run(args)


def run(args) -> int:
    print("CPU ms, median of the rounds; share = the checks' sum / process() (which includes them)")
    print(f"{'trial':24s} {'process':>8s} {'quality':>8s} {'mass':>6s} {'extent':>7s} {'share':>7s} {'in situ':>8s}")
    situ = InSitu()
    for name, (path, options) in TRIALS.items():
        if not path.is_file():
            print(f"{name:24s} skipped: {path} absent")
            continue
        rows = []
        for _ in range(args.rounds):
            p = cpu(lambda: gaitid.process(path, **options))
            r = gaitid.process(path, **options)
            model = load_model(r.settings.model)
            q = cpu(lambda: quality_checks(r.trial, model, r.markers, r.subject, r.kinematics, r.foot_contacts,
                                           r.loads, r.settings))
            m = cpu(lambda: check_mass(r.trial, r.subject.subject.mass, "bench", contacts=r.foot_contacts,
                                       markers=r.markers))
            e = cpu(lambda: marker_extent(r.trial.markers))
            rows.append((p, q, m, e, (q + m + e) / p, situ.share(path, options)))
        p, q, m, e, share, in_situ = (statistics.median(col) for col in zip(*rows))
        print(f"{name:24s} {1e3 * p:8.1f} {1e3 * q:8.2f} {1e3 * m:6.2f} {1e3 * e:7.2f} {100 * share:6.1f} % "
              f"{100 * in_situ:6.1f} %")
    if args.each:
        print("each check alone, CPU ms (the least of 15 batches of 20 calls)")
        for name, (path, options) in TRIALS.items():
            if path.is_file():
                r = gaitid.process(path, **options)
                times = {k: least(f) for k, f in each_check(r, load_model(r.settings.model)).items()}
                print(f"{name:24s} " + " | ".join(f"{k} {1e3 * t:.2f}" for k, t in times.items()))
    if args.ab:
        print("process() with and without the checks, CPU ms, medians of alternated calls")
        stubbed = Stubbed()
        for name, (path, options) in TRIALS.items():
            if path.is_file():
                with_, without, share = ab_share(path, options, 4 * args.rounds, stubbed)
                print(f"{name:24s} with {1e3 * with_:6.1f}  without {1e3 * without:6.1f}  share {100 * share:5.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
