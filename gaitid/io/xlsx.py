"""Excel workbooks (.xlsx) of numeric tables, written directly as SpreadsheetML.

Why not openpyxl or XlsxWriter: both format each cell in Python (about 7-15 us a cell), so a
10 s trial's per-cycle curves (150,000 cells) took 1-2 s; here each row of a table is formatted
by one C-level string operation from a per-table template (about 0.6 us a cell). The files
follow ECMA-376 (SpreadsheetML, transitional): one worksheet per table, the header row bold and
frozen, numbers as numbers (NaN and infinities as empty cells), text as inline strings, booleans
as booleans. Nothing else (no formulas, no shared strings, no charts).

Excel's limits are checked here: a table longer than :data:`MAX_ROWS` continues on further sheets
(``name (2)``...), one wider than :data:`MAX_COLUMNS` or a text longer than :data:`MAX_TEXT` is
refused with a clear error, sheet names are made valid and unique.
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError

MAX_ROWS = 1_048_576  # per sheet, header included
MAX_COLUMNS = 16_384
MAX_TEXT = 32_767
NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
NS_R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"
STYLES = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet {NS}>'
          '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
          '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
          '<fills count="2"><fill><patternFill patternType="none"/></fill>'
          '<fill><patternFill patternType="gray125"/></fill></fills>'
          '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
          '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
          '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
          '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>'
          '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>')
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def column_letters(n: int) -> list[str]:
    """'A', 'B', ..., 'Z', 'AA'... for the first ``n`` columns."""
    out = []
    for k in range(1, n + 1):
        s = ""
        while k:
            k, r = divmod(k - 1, 26)
            s = chr(65 + r) + s
        out.append(s)
    return out


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    s = _BAD_XML.sub("", str(value))
    if len(s) > MAX_TEXT:
        raise DataError(f"a text of {len(s)} characters exceeds Excel's cell limit of {MAX_TEXT}")
    return escape(s, quote=False)


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s.dtype):
        return "bool"
    if pd.api.types.is_numeric_dtype(s.dtype):
        return "num"
    return "str"


def sheet_xml(table: pd.DataFrame, first: int = 0, last: int | None = None) -> str:
    """The worksheet XML of rows ``first:last`` of ``table`` under its header row."""
    cols = [str(c) for c in table.columns]
    if len(cols) > MAX_COLUMNS:
        raise DataError(f"a table of {len(cols)} columns exceeds Excel's limit of {MAX_COLUMNS}")
    letters = column_letters(len(cols))
    part = table.iloc[first:last]
    kinds = [_kind(table[c]) for c in table.columns]
    cells = {"num": '<c r="{L}#"><v>%.10g</v></c>', "bool": '<c r="{L}#" t="b"><v>%d</v></c>',
             "str": '<c r="{L}#" t="inlineStr"><is><t xml:space="preserve">%s</t></is></c>'}
    row_tpl = '<row r="#">' + "".join(cells[k].replace("{L}", L) for k, L in zip(kinds, letters)) + "</row>"
    numeric = [j for j, k in enumerate(kinds) if k == "num"]
    block = part.iloc[:, numeric].to_numpy(float, na_value=np.nan).T.tolist() if numeric else []
    columns = []
    for j, (c, k) in enumerate(zip(table.columns, kinds)):
        if k == "num":
            columns.append(block[numeric.index(j)])
        elif k == "bool":
            columns.append(part.iloc[:, j].astype(bool).astype(int).tolist())
        else:
            columns.append([_text(v) for v in part.iloc[:, j].tolist()])
    header = '<row r="1">' + "".join(f'<c r="{L}1" s="1" t="inlineStr"><is><t>{_text(c)}</t></is></c>'
                                     for L, c in zip(letters, cols)) + "</row>"
    body = "".join(row_tpl.replace("#", str(i)) % values for i, values in enumerate(zip(*columns), start=2))
    for bad in ("nan", "inf", "-inf"):  # not numbers in SpreadsheetML: leave the cell empty
        body = body.replace(f"<v>{bad}</v>", "")
    body = body.replace(' t="inlineStr"><is><t xml:space="preserve"></t></is></c>', "></c>")  # no text: empty
    widths = "".join(f'<col min="{j}" max="{j}" width="{min(max(len(c) + 2, 9), 40)}" customWidth="1"/>'
                     for j, c in enumerate(cols, start=1))
    view = ('<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" '
            'state="frozen"/></sheetView></sheetViews>')
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet {NS} {NS_R}>{view}'
            + (f"<cols>{widths}</cols>" if cols else "") + f"<sheetData>{header}{body}</sheetData></worksheet>")


def sheet_name(name: str, taken: set[str]) -> str:
    """A valid, unique Excel sheet name (31 characters, none of []:*?/\\)."""
    base = re.sub(r"[\[\]:*?/\\]", "_", name).strip("'") or "sheet"
    out, k = base[:31], 2
    while out.lower() in taken:
        suffix = f" ({k})"
        out, k = base[: 31 - len(suffix)] + suffix, k + 1
    taken.add(out.lower())
    return out


def write_xlsx(path: str | os.PathLike, tables: dict[str, pd.DataFrame]) -> Path:
    """One worksheet per table (in order); a table longer than Excel's row limit continues on
    further sheets. Writes ``path`` directly: callers wrap it in :func:`gaitid.io.atomic.atomic_path`."""
    sheets, taken = [], set()
    for name, table in tables.items():
        table = table if table is not None else pd.DataFrame()
        per_sheet = MAX_ROWS - 1
        for k, first in enumerate(range(0, max(len(table), 1), per_sheet)):
            title = sheet_name(name if k == 0 else f"{name} ({k + 1})", taken)
            sheets.append((title, sheet_xml(table, first, first + per_sheet)))
    n = len(sheets)
    content_types = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                     '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                     '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     '<Default Extension="xml" ContentType="application/xml"/>'
                     f'<Override PartName="/xl/workbook.xml" ContentType="{CT}.sheet.main+xml"/>'
                     f'<Override PartName="/xl/styles.xml" ContentType="{CT}.styles+xml"/>'
                     + "".join(f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{CT}.worksheet+xml"/>'
                               for i in range(1, n + 1)) + "</Types>")
    root_rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                 '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                 f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    workbook = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook {NS} {NS_R}><sheets>'
                + "".join(f'<sheet name="{escape(title)}" sheetId="{i}" r:id="rId{i}"/>'
                          for i, (title, _) in enumerate(sheets, start=1)) + "</sheets></workbook>")
    workbook_rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                     '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                     + "".join(f'<Relationship Id="rId{i}" Type="{REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
                               for i in range(1, n + 1))
                     + f'<Relationship Id="rId{n + 1}" Type="{REL}/styles" Target="styles.xml"/></Relationships>')
    path = Path(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("[Content_Types].xml", content_types)
        z.writestr("_rels/.rels", root_rels)
        z.writestr("xl/workbook.xml", workbook)
        z.writestr("xl/_rels/workbook.xml.rels", workbook_rels)
        z.writestr("xl/styles.xml", STYLES)
        for i, (_, xml) in enumerate(sheets, start=1):
            z.writestr(f"xl/worksheets/sheet{i}.xml", xml)
    return path
