"""The package's shape, as docs/explanation/architecture.md states it: no import cycle anywhere, a
root of public faces only, the layers in their order, no module reaching into another
package's private modules, and every import the README shows.

Every import counts, those inside functions and under ``if TYPE_CHECKING:`` too: each is a
dependency a reader has to follow, whenever it loads.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import sqsjobs

PACKAGE = Path(sqsjobs.__file__).parent
README = PACKAGE.parents[1] / "README.md"

# The layers, lowest first: a module imports only from its own layer or those before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("observe", "cron"),
    ("handlers",),
    ("producer", "memory", "testing"),
    ("worker",),
    ("aws",),
    ("infra",),
    ("contrib", "cli"),
)
# Within ``aws``, the same rule over its layers; its ``__init__`` is its public face, on top.
AWS_LAYERS: tuple[tuple[str, ...], ...] = (
    ("wire",),
    ("flows", "transports", "explain"),
    ("store",),
    ("_cron_handler", "_reconcile_handler"),
    ("lambda_",),
)
# ``store.py`` is ``sqsjobs.store``, the store SPI's public face for store authors.
ROOT_FACES = {"__init__.py", "__main__.py", "py.typed", "store.py"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module of ``sqsjobs`` that ``path`` names in an import, wherever it stands."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {
            target
            for target in imported(path)
            if target in files and target != name and not name.startswith(f"{target}.")
        }
        for name, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def rank_in(layers: tuple[tuple[str, ...], ...], part: str | None) -> int | None:
    for rank, names in enumerate(layers):
        if part in names:
            return rank
    return None  # a package's own __init__: its public face, above its layers


def layer_of(module: str) -> int | None:
    return rank_in(LAYERS, module.split(".")[1] if module.count(".") else None)


def aws_layer_of(module: str) -> int | None:
    parts = module.split(".")
    return rank_in(AWS_LAYERS, parts[2] if len(parts) > 2 else None)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_root_holds_only_the_public_faces() -> None:
    root = {path.name for path in PACKAGE.iterdir() if path.is_file()}
    assert root <= ROOT_FACES


def test_every_subpackage_is_in_a_layer() -> None:
    subpackages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert subpackages == {name for names in LAYERS for name in names}


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = {
        name: sorted(
            target
            for target in targets
            if (mine := layer_of(name)) is not None
            and ((theirs := layer_of(target)) is None or theirs > mine)
        )
        for name, targets in import_graph().items()
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}


def test_every_aws_module_is_in_an_aws_layer() -> None:
    aws = [name for name in import_graph() if name.startswith("sqsjobs.aws.")]
    assert len(aws) > 40
    assert [name for name in aws if aws_layer_of(name) is None] == []


def test_no_aws_module_imports_an_aws_layer_above_its_own() -> None:
    upward = {
        name: sorted(
            target
            for target in targets
            if target.startswith("sqsjobs.aws")
            and (mine := aws_layer_of(name)) is not None
            and ((theirs := aws_layer_of(target)) is None or theirs > mine)
        )
        for name, targets in import_graph().items()
        if name.startswith("sqsjobs.aws.")
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}


def private_owner(module: str) -> str | None:
    """The package a private module (a ``_name`` part, not a dunder) belongs to, if any."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def test_private_owner_finds_the_package_of_the_first_private_part() -> None:
    assert private_owner("sqsjobs.contrib.dashboard._fence") == "sqsjobs.contrib.dashboard"
    assert private_owner("sqsjobs.cli._dashboard") == "sqsjobs.cli"
    assert private_owner("sqsjobs.core.store") is None
    assert private_owner("sqsjobs.__main__") is None


def test_no_module_imports_a_private_module_of_another_package() -> None:
    """A package's ``_name`` modules are its own: others import its public face (its
    ``__init__``, or a module without the underscore). Its own modules and subpackages
    may import them."""
    reaching = {
        name: sorted(
            target
            for target in targets
            if (owner := private_owner(target)) is not None
            and name != owner
            and not name.startswith(f"{owner}.")
        )
        for name, targets in import_graph().items()
    }
    assert {name: targets for name, targets in reaching.items() if targets} == {}


def readme_imports() -> list[str]:
    """The import statements of the Python examples of the README and the site's pages."""
    pages = [README, *(README.parent / "docs").rglob("*.md")]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return sorted(
        {
            line.strip()
            for block in blocks
            for line in block.splitlines()
            if re.match(r"\s*(from sqsjobs\S* import |import sqsjobs)", line)
        }
    )


def test_the_readme_shows_imports() -> None:
    assert "from sqsjobs import JobQueue, JobWorker" in readme_imports()


@pytest.mark.parametrize("statement", readme_imports())
def test_every_import_the_readme_shows_works(statement: str) -> None:
    tree = ast.parse(statement)
    node = tree.body[0]
    if isinstance(node, ast.ImportFrom):
        module = importlib.import_module(node.module or "")
        for alias in node.names:
            assert hasattr(module, alias.name) or importlib.import_module(
                f"{node.module}.{alias.name}"
            ), alias.name
    else:
        exec(compile(tree, "README.md", "exec"), {})
