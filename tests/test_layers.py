"""The apps depend one way: core ← annotation ← crowd ← analysis ← diversity ← demo.

Each module's imports (also those inside functions) are read with ``ast``; a module may
import its own layer and the layers before it, never a later one. ``config`` (settings,
URLs) wires everything and is exempt. A second test fails on any import cycle between
the project's modules.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["core", "annotation", "crowd", "analysis", "diversity", "demo"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Project modules this file imports, as dotted names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in LAYERS}


def _project_modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for layer in LAYERS
        if (ROOT / layer).exists()
        for path in (ROOT / layer).rglob("*.py")
        if "migrations" not in path.parts
    }


def test_no_layer_imports_a_later_one():
    modules = _project_modules()
    assert len(modules) > 50
    wrong = []
    for name, path in modules.items():
        own = LAYERS.index(name.split(".")[0])
        for imported in _imports(path):
            if LAYERS.index(imported.split(".")[0]) > own:
                wrong.append(f"{name} imports {imported}")
    assert sorted(set(wrong)) == []


def test_no_import_cycles_between_modules():
    modules = _project_modules()
    graph = {
        name: {target for target in _imports(path) if target in modules and target != name}
        for name, path in modules.items()
    }
    cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(trail[trail.index(target) :] + [target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def _all_imports(path: Path) -> set[str]:
    """Every top-level package this file imports (third-party ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def _impurities(path: Path, allowed) -> list[str]:
    """What keeps the module at ``path`` from being pure: importing Django, or a project
    module for which ``allowed(name)`` is false."""
    name = _module_name(path)
    wrong = [f"{name} imports django"] if "django" in _all_imports(path) else []
    return wrong + [
        f"{name} imports {imported}" for imported in _imports(path) if not allowed(imported)
    ]


def test_the_statistics_core_is_pure():
    """``analysis.stats`` works on arrays only: no Django, and of the project only itself
    (the database-facing code loads the arrays and hands them over)."""
    stats = ROOT / "analysis" / "stats"
    paths = sorted(stats.rglob("*.py"))
    assert len(paths) >= 10
    wrong = []
    for path in paths:
        wrong += _impurities(path, lambda imported: imported.startswith("analysis.stats"))
    assert wrong == []


# The pure cores of the diversity apps (every study type's ``core/`` package, found, so a
# new type is held to the rule without a line here), and the project modules (themselves
# pure, checked here too) that they may use besides themselves.
PURE_CORES = sorted(
    str(path.relative_to(ROOT)) for path in ROOT.glob("diversity/*/core") if path.is_dir()
) + ["diversity/homogeneity"]
PURE_SHARED = ["analysis/stats", "annotation/normalisers/census.py", "core/blas.py"]


def _pure_paths(relative: str) -> list[Path]:
    path = ROOT / relative
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def test_the_diversity_cores_are_pure():
    """The figures of the census, Genie, lengths and homogeneity take records and arrays,
    never the database: no Django, and of the project only pure modules (a Django app module would
    bring Django in with it)."""
    allowed = tuple(
        _module_name(path)
        for relative in PURE_CORES + PURE_SHARED
        for path in _pure_paths(relative)
    )

    def is_pure(imported: str) -> bool:
        return any(imported == a or imported.startswith(f"{a}.") for a in allowed)

    wrong = []
    for relative in PURE_CORES + PURE_SHARED:
        paths = _pure_paths(relative)
        assert paths, relative
        for path in paths:
            wrong += _impurities(path, is_pure)
    assert wrong == []


def test_every_study_type_has_its_pure_core_checked():
    assert {"diversity/census/core", "diversity/genie/core", "diversity/lengths/core"} <= set(
        PURE_CORES
    )
