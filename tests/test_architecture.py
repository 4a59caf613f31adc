"""The package's shape: data flows one way (no import cycle), no module reaches into another's
private names, process() stays a short chain of stages, long modules say why they are long."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gaitid"
MAX_LINES = 420  # "about 400"; a longer module states why in its docstring ("Length: ...")


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, list[str], int]]:
    """(module imported, names imported from it, line) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [a.name for a in node.names]
            for n in names:  # 'from gaitid import kinematics' imports the module gaitid.core.signal
                if f"{base}.{n}" in MODULES:
                    out.append((f"{base}.{n}", [], node.lineno))
            out.append((base, [n for n in names if f"{base}.{n}" not in MODULES], node.lineno))
    return [(m, ns, line) for m, ns, line in out if m == "gaitid" or m.startswith("gaitid.")]


def test_no_import_cycle_in_the_package():
    """Every import counts, also those inside functions: data flows one way."""
    graph = {name: sorted({m for m, _, _ in _imports(name, path) if m in MODULES and m != name})
             for name, path in MODULES.items()}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def strongconnect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strongconnect(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    """The check above can fail: two modules importing each other form one component."""
    a, b = tmp_path / "gaitid" / "a.py", tmp_path / "gaitid" / "b.py"
    a.parent.mkdir()
    a.write_text("from gaitid.b import x\n")
    b.write_text("def f():\n    from gaitid.a import y\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "gaitid")
    monkeypatch.setattr(__import__(__name__), "MODULES", {"gaitid.a": a, "gaitid.b": b})
    with pytest.raises(AssertionError, match="gaitid.a.*gaitid.b"):
        test_no_import_cycle_in_the_package()


STAGES = [  # the stage order, lowest first (docs/architecture.md draws the same): no stage imports a later one
    ["core", "__init__"],  # errors, vocabulary, Trial, Subject, Settings, signals and rotations
    ["io"],                # files in and out
    ["dynamics"],          # the mechanics: bodies, chains, loads, the solvers (the model builds in its terms)
    ["model"],             # segment frames, joint centres, inertia, angles
    ["contacts"],          # plates to feet, the load on each foot, progression
    ["subject"],           # mass, height, parameters from every source (the mass may come from the plates)
    ["events"],            # the gait events used
    ["cycles"],            # outputs, cycles, 0-100 % curves, parameters, scores
    ["emg"],               # EMG envelopes on the cycles, on-off timing
    ["uncertainty"],       # the kinetic outputs' uncertainty
    ["norms"],             # normative data (built from Results' folders, read by the report)
    ["pipeline", "export", "report"],  # process() -> Result, and its two writers (siblings)
    ["batch"],             # folders, archives, sessions, pairing trials with statics and subjects
    ["validation"],        # Plug-in Gait and OpenSim comparisons, synthetic trials with exact truth
    ["cli"],               # the command line
]
MAX_TOP_LEVEL = 17


def _stage(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, names in enumerate(STAGES) if top in names)


def test_every_top_level_entry_is_a_stage_and_there_are_few():
    entries = sorted(p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
                     if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").exists()))
    assert len(entries) <= MAX_TOP_LEVEL, entries
    assert sorted(entries) == sorted(n for names in STAGES for n in names if n != "__init__")


def test_no_stage_imports_a_later_one():
    up = [f"{name} (stage {STAGES[_stage(name)][0]}) imports {m} (stage {STAGES[_stage(m)][0]}) at line {line}"
          for name, path in MODULES.items() for m, _, line in _imports(name, path)
          if m in MODULES and _stage(m) > _stage(name)]
    assert not up, "\n".join(up)


def test_the_stage_check_finds_an_import_running_back_up(monkeypatch):
    """The check above can fail: the model importing the cycles stage is reported."""
    fake = {"gaitid.model.x": PACKAGE / "model" / "x.py", "gaitid.cycles.y": PACKAGE / "cycles" / "y.py"}
    monkeypatch.setattr(__import__(__name__), "MODULES", fake)
    monkeypatch.setattr(__import__(__name__), "_imports",
                        lambda name, path: [("gaitid.cycles.y", [], 1)] if name == "gaitid.model.x" else [])
    with pytest.raises(AssertionError, match="gaitid.model.x .stage model. imports gaitid.cycles.y"):
        test_no_stage_imports_a_later_one()


# the command line's modules are named after its commands (cli/norms.py is `gaitid norms`)
SAME_NAME_ALLOWED = {"__init__", "__main__"}


def test_no_two_modules_share_a_name():
    seen: dict[str, list[str]] = {}
    for name in MODULES:
        parts = name.split(".")
        if len(parts) > 1 and parts[1] == "cli":
            continue
        leaf = parts[-1]
        if MODULES[name].name == "__init__.py" and len(parts) > 2:
            continue  # a subpackage is named by its folder, counted below as the stage's own
        seen.setdefault(leaf, []).append(name)
    clashes = {leaf: names for leaf, names in seen.items() if len(names) > 1 and leaf not in SAME_NAME_ALLOWED
               and not all(n == "gaitid" for n in names)}
    assert not clashes, clashes


def test_no_private_names_imported_across_modules():
    bad = []
    for name, path in MODULES.items():
        aliases = {}
        for module, names, line in _imports(name, path):
            bad += [f"{name}:{line} imports {module}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # 'import gaitid.x as m' / 'from gaitid import x as m', then m._private
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    full = a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}"
                    if full in MODULES:
                        aliases[a.asname or a.name] = full
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert not bad, "\n".join(bad)


def test_process_is_a_short_chain_of_stages():
    tree = ast.parse((PACKAGE / "pipeline" / "__init__.py").read_text())
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "process"]
    assert fn.end_lineno - fn.lineno + 1 <= 40


def test_long_modules_say_why():
    long = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    undocumented = [f"{name} ({n} lines)" for name, n in long.items() if n > MAX_LINES
                    and "Length:" not in (ast.get_docstring(ast.parse(MODULES[name].read_text())) or "")]
    assert not undocumented, f"modules over {MAX_LINES} lines without a 'Length:' reason: {undocumented}"
