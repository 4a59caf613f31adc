"""The PDF and the HTML page show the same sections in the same order (gaitid.report.sections lists
them once), read back from the written files: the HTML page's <h2> headings against the PDF's page
headings and the headings on its 'Tables' pages; the uncertainty toggle takes its sections out of
both; the EMG section is in both when a Result has EMG channels."""

from __future__ import annotations

import html
import re
import zlib

import pytest
from conftest import REPO

from gaitid.report import write_report

WALK = REPO / "sample_data" / "walk_synthetic.c3d"
STATIC = REPO / "sample_data" / "static_synthetic.c3d"
UNCERTAINTY = "Kinetic parameters: uncertainty from the input errors"
PLAIN = ["Summary", "Kinematics", "Kinetics", "Moment contributions", "Kinematic parameters", "Kinetic parameters",
         "Gait cycles", "Force-plate assignment"]
WITH_UNCERTAINTY = [*PLAIN[:6], UNCERTAINTY, *PLAIN[6:]]
WITH_MAP = [PLAIN[0], "Movement Analysis Profile", *PLAIN[1:]]
EVERYTHING = [WITH_MAP[0], *WITH_MAP[1:7], UNCERTAINTY, *WITH_MAP[7:]]
WITH_EMG = [*PLAIN[:4], "EMG", *PLAIN[4:]]
BAND_LEGEND = "95 % band of the mean from input errors"


@pytest.fixture(scope="module")
def trials():
    from gaitid.pipeline import process
    from gaitid.uncertainty import UncertaintySettings

    from gaitid.io.c3d import read_c3d
    from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

    emg = with_emg(read_c3d(WALK), [Burst("Left", "Tib Ant", ((0.0, 12.0), (60.0, 100.0)))])
    return {"nominal": process(WALK, static=STATIC),
            "uncertainty": process(WALK, static=STATIC, uncertainty=UncertaintySettings(samples=40)),
            "emg": process(emg, static=STATIC)}


@pytest.fixture(scope="module")
def norms(trials):
    """Norms from four copies of the walk, every curve shifted 0, 1, 2 and 3 (as in test_norms)."""
    from gaitid.norms import ControlTables, build_norms, control_from_result

    base = control_from_result(trials["nominal"])
    return build_norms([ControlTables(f"c{i}", base.curves.assign(value=base.curves["value"] + i), base.parameters,
                                      base.cycles, base.settings, subject=f"s{i}") for i in range(4)])


def _unescape(s: bytes) -> str:
    """A PDF literal string's bytes (reportlab: WinAnsi, '\\(' '\\)' '\\\\' and octal escapes) as text."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i:i + 1] == b"\\":
            octal = re.match(rb"[0-7]{1,3}", s[i + 1:i + 4])
            if octal:
                out.append(int(octal.group(), 8))
                i += 1 + len(octal.group())
                continue
            out += s[i + 1:i + 2]
            i += 2
        else:
            out += s[i:i + 1]
            i += 1
    return out.decode("cp1252")


def pdf_texts(path) -> list[list[tuple[str, float, str]]]:
    """Per page, every text drawn as (font name, size, text), in drawing order."""
    raw = path.read_bytes()
    fonts = {name.decode(): base.decode() for base, name in re.findall(rb"/BaseFont /([\w-]+) .*?/Name /(F\d+)", raw)}
    pages = []
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", raw, re.S):
        stream, font, texts = zlib.decompress(m.group(1)), ("", 0.0), []
        for t in re.finditer(rb"/(F\d+) ([\d.]+) Tf|\(((?:\\.|[^\\)])*)\) Tj", stream, re.S):
            if t.group(1):
                font = (fonts[t.group(1).decode()], float(t.group(2)))
            else:
                texts.append((*font, _unescape(t.group(3))))
        pages.append(texts)
    assert len(pages) == len(re.findall(rb"/Type /Page\b(?!s)", raw))  # one content stream per page
    return pages


def pdf_sections(path) -> list[str]:
    """The PDF's sections: each page's heading (top right, after the report's title; a page headed
    '... (continued)' starts none), and on the 'Tables' pages each 10 pt bold heading."""
    out = []
    for texts in pdf_texts(path):
        assert texts[0][2].startswith("gaitid report \u2014 ")
        heading = texts[1][2]
        if heading.removesuffix(" (continued)") == "Tables":
            out += [t for font, size, t in texts if font == "Helvetica-Bold" and size == 10.0]
        elif not heading.endswith(" (continued)"):
            out.append(heading)
    return out


def html_sections(path) -> list[str]:
    """The HTML page's <h2> headings; its links at the top must name the same sections in the same order."""
    text = path.read_text(encoding="utf-8")
    ids = re.findall(r'<section id="([a-z-]+)"', text)
    nav = re.search(r"<nav>(.*?)</nav>", text).group(1)
    assert re.findall(r'<a href="#([a-z-]+)">', nav) == ids
    return [html.unescape(h) for h in re.findall(r"<h2>(.*?)</h2>", text)]


def same_sections(pdf: list[str], page: list[str]) -> bool:
    """The same sections in the same order: each PDF heading is the HTML's, or begins with it and a
    colon (the PDF's longer heading of the kinetic parameters)."""
    return len(pdf) == len(page) and all(p == h or p.startswith(h + ": ") for p, h in zip(pdf, page))


CASES = [  # (name, results, write_report options, the sections both show)
    ("walk", lambda t, n: t["nominal"], {}, PLAIN),
    ("uncertainty", lambda t, n: t["uncertainty"], {}, WITH_UNCERTAINTY),
    ("uncertainty and norms", lambda t, n: t["uncertainty"], {"normative": "norms"}, EVERYTHING),
    ("uncertainty off, norms", lambda t, n: t["uncertainty"], {"normative": "norms", "uncertainty": False}, WITH_MAP),
    ("session with uncertainty", lambda t, n: [t["uncertainty"], t["uncertainty"]], {}, WITH_UNCERTAINTY),
    ("EMG", lambda t, n: t["emg"], {}, WITH_EMG),
    ("session, one trial with EMG", lambda t, n: [t["nominal"], t["emg"]], {}, WITH_EMG),
]


@pytest.mark.parametrize("name, results, options, expected", CASES, ids=[c[0] for c in CASES])
def test_pdf_and_html_show_the_same_sections_in_the_same_order(name, results, options, expected, trials, norms,
                                                                tmp_path):
    options = {k: norms if v == "norms" else v for k, v in options.items()}
    pdf, page = write_report(results(trials, norms), tmp_path, **options)
    in_pdf, in_html = pdf_sections(pdf), html_sections(page)
    assert in_html == [*expected, "Settings"]  # every setting: in the HTML page only
    assert same_sections(in_pdf, in_html[:-1]), (in_pdf, in_html)
    assert in_pdf[expected.index("Kinetic parameters")].startswith("Kinetic parameters: peak moments")


def test_turning_uncertainty_off_removes_its_sections_from_both(trials, norms, tmp_path):
    on = write_report(trials["uncertainty"], tmp_path / "on", normative=norms)
    off = write_report(trials["uncertainty"], tmp_path / "off", normative=norms, uncertainty=False)
    for read in (pdf_sections, html_sections):
        fmt = 0 if read is pdf_sections else 1
        assert [s for s in read(on[fmt]) if s not in read(off[fmt])] == [UNCERTAINTY]
        assert [s for s in read(on[fmt]) if s != UNCERTAINTY] == read(off[fmt])
    # and the bands around the kinetic curves: the legend line in the PDF, the paths and their checkbox in HTML
    kinetics = {on_off: [" ".join(t for _, _, t in texts) for texts in pdf_texts(paths[0])
                         if texts[1][2] == "Kinetics"][0] for on_off, paths in (("on", on), ("off", off))}
    assert BAND_LEGEND in kinetics["on"] and BAND_LEGEND not in kinetics["off"]
    text_on, text_off = on[1].read_text(encoding="utf-8"), off[1].read_text(encoding="utf-8")
    assert 'class="uncertainty"' in text_on and 'id="show-uncertainty"' in text_on
    assert 'class="uncertainty"' not in text_off and 'id="show-uncertainty"' not in text_off
