"""The AWS package's layers: the wire and flow layers are stdlib only, and nothing cycles."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sqsjobs.aws

AWS = Path(sqsjobs.aws.__file__).parent
PURE_LAYERS = ("wire", "flows")


def modules(layer: str) -> list[str]:
    found = pkgutil.iter_modules([str(AWS / layer)])
    return sorted(f"sqsjobs.aws.{layer}.{module.name}" for module in found)


@pytest.mark.parametrize("layer", PURE_LAYERS)
def test_importing_a_pure_layer_loads_no_boto_nor_asyncio(layer: str) -> None:
    imports = "; ".join(f"import {name}" for name in modules(layer))
    script = (
        f"import sys; {imports}\n"
        "heavy = ('boto3', 'botocore', 'aioboto3', 'aiobotocore', 'asyncio')\n"
        "print(','.join(sorted(m for m in heavy if m in sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""


def test_every_layer_has_modules() -> None:
    for layer in (*PURE_LAYERS, "store", "transports"):
        assert modules(layer), layer


def internal_imports(path: Path, package: str) -> set[str]:
    """The ``sqsjobs.aws`` modules ``path`` imports at module level, type-only ones too.

    Imports inside functions are left out: they load on first use, after every module.
    """
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    nodes = [*tree.body, *(n for top in tree.body if isinstance(top, ast.If) for n in top.body)]
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            if node.module is None:
                found |= {f"{target}.{alias.name}" for alias in node.names}
            else:
                found.add(target)
    return {name for name in found if name.startswith("sqsjobs.aws")}


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in AWS.rglob("*.py"):
        parts = path.relative_to(AWS.parent.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = name if parts[-1] == "__init__" else ".".join(parts[:-1])
        graph[name] = internal_imports(path, package)
    return graph


def test_no_aws_module_imports_itself_in_a_cycle() -> None:
    graph = import_graph()
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph.get(name, ())):
            if target in path:
                cycles.append([*path[path.index(target) :], target])
            elif len(path) < len(graph):
                visit(target, [*path, target])

    for start in sorted(graph):
        visit(start, [start])
    assert cycles == []


def test_the_pure_layers_import_no_shell_nor_transport() -> None:
    graph = import_graph()
    shells = ("sqsjobs.aws.store", "sqsjobs.aws.transports", "sqsjobs.aws.lambda_")
    reaching = {
        name: sorted(t for t in targets if t.startswith(shells))
        for name, targets in graph.items()
        if name.startswith(("sqsjobs.aws.wire", "sqsjobs.aws.flows"))
    }
    assert {name: targets for name, targets in reaching.items() if targets} == {}
