"""The package's rooms depend one way (README "Layout"): a module imports only from its own layer or the layers
below, and no two packages import each other.  Imports inside functions count too; the few deliberate upward
lazy imports (a plugin loaded by name) are listed here with their reason."""
import ast
from collections import defaultdict
from pathlib import Path

from conftest import REPO

PKG = REPO / "src" / "cloud_edge_privacy"
FOUNDATION = {"spans", "results", "vocabulary", "lexicon", "errors", "randomness", "audit", "sensitivity",
              "registry", "hashing", "wordlists"}
LAYERS = [
    FOUNDATION,
    {"models", "datasets", "eval_sets"},
    {"detection", "desensitization", "metrics"},
    {"core"},
    {"routing", "proxy", "timeseries"},
    {"bench", "reporting"},
    {"federated"},
    {"api", "anonymize", "cli", "__init__", "__main__"},
]
# (importing room, imported room): why an upward import is allowed.  None today: the federated wing registers its
# recognizer into detection's registry itself, and detection names that module only as data
# (detection/catalog.py PLUGINS, imported by name when the 'federated' preset is asked for).
ALLOWED_UPWARD: dict = {}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(room: str) -> int:
    for i, rooms in enumerate(LAYERS):
        if room in rooms:
            return i
    raise AssertionError(f"room {room!r} is in no layer of tests/test_layering.py: add it")


def _submodule_or_package(package: str, name: str) -> str:
    folder = PKG.parent.joinpath(*package.split("."))
    return f"{package}.{name}" if (folder / f"{name}.py").exists() or (folder / name).is_dir() else package


def _imports():
    """(importing module, imported module) for every import of the package by the package."""
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        mod = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        pkg = ".".join(rel.parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                # "from . import x": x is a submodule if a file or folder of that name exists, else an attribute
                names = ([_submodule_or_package(target, a.name) for a in node.names] if not node.module
                         else [target])
                for t in names:
                    if t.startswith("cloud_edge_privacy"):
                        yield mod, t
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("cloud_edge_privacy"):
                        yield mod, a.name


def test_every_room_imports_only_from_its_layer_or_below():
    upward = sorted({(_room(a), _room(b), a, b) for a, b in _imports()
                     if _layer(_room(b)) > _layer(_room(a)) and (_room(a), _room(b)) not in ALLOWED_UPWARD})
    assert not upward, "upward imports:\n" + "\n".join(f"{a} -> {b}" for _, _, a, b in upward)


def test_no_two_rooms_import_each_other():
    edges = defaultdict(set)
    for a, b in _imports():
        ra, rb = _room(a), _room(b)
        if ra != rb and (ra, rb) not in ALLOWED_UPWARD:
            edges[ra].add(rb)
    cycles = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, ())})
    assert not cycles, f"rooms importing each other: {cycles}"


def test_the_package_root_holds_only_the_foundation_and_the_entry_points():
    root = {p.stem for p in PKG.glob("*.py")}
    assert root <= FOUNDATION | LAYERS[-1], sorted(root - FOUNDATION - LAYERS[-1])


def _cycle(edges) -> list:
    """One import cycle of the graph ``edges`` (module -> modules), or [] (depth-first search)."""
    state: dict = {}
    stack: list = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_detection_modules_import_one_another_without_a_circle():
    """The recognizers import the registry (recognizer.py), the catalog imports the recognizers, the pipeline
    and the presets read the catalog: no module of detection imports one that imports it back, not even
    lazily (the registry used to import every recognizer to read its declaration)."""
    edges = defaultdict(set)
    for a, b in _imports():
        if a.startswith("cloud_edge_privacy.detection") and b.startswith("cloud_edge_privacy.detection") and a != b:
            edges[a].add(b)
    assert "cloud_edge_privacy.detection.recognizer" in edges["cloud_edge_privacy.detection.pipeline"]  # the real graph
    assert not _cycle(edges), " -> ".join(_cycle(edges))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the search finds one
