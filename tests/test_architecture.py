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
            for n in names:  # 'from gaitid import kinematics' imports the module gaitid.kinematics
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


LAYERS = [  # lowest first; docs/architecture.md states the same list
    ["errors", "vocabulary", "butterworth", "__init__"],
    ["trial", "settings", "resources", "kinematics"],
    ["io", "dynamics", "multibody"],
    ["model"],
    ["progression", "contacts", "events", "loads", "bodymass", "subjects", "cycles", "parameters", "outputs",
     "clinical", "scores", "norms", "uncertainty"],
    ["result", "pipeline"],
    ["export", "report", "validate", "crosscheck", "session", "pairing", "batch", "info", "synthetic", "cli"],
]


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, names in enumerate(LAYERS) if top in names)


# Result's documented entry points (result.to_csv(), result.report()) import the writers when
# called; the writers never import result or pipeline, so no cycle.
ALLOWED_UP = {("gaitid.result", "gaitid.export"), ("gaitid.result", "gaitid.report")}


def test_modules_import_only_from_their_layer_or_below():
    up = [f"{name} (layer {_layer(name)}) imports {m} (layer {_layer(m)}) at line {line}"
          for name, path in MODULES.items() for m, _, line in _imports(name, path)
          if m in MODULES and _layer(m) > _layer(name) and (name, m) not in ALLOWED_UP]
    assert not up, "\n".join(up)


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
    tree = ast.parse((PACKAGE / "pipeline.py").read_text())
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "process"]
    assert fn.end_lineno - fn.lineno + 1 <= 40


def test_long_modules_say_why():
    long = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    undocumented = [f"{name} ({n} lines)" for name, n in long.items() if n > MAX_LINES
                    and "Length:" not in (ast.get_docstring(ast.parse(MODULES[name].read_text())) or "")]
    assert not undocumented, f"modules over {MAX_LINES} lines without a 'Length:' reason: {undocumented}"
