"""The CloudFormation templates shipped inside the package, by name.

They live next to this module (``sqsjobs.yaml``, ``sqsjobs-queue.yaml``) so that an
installed wheel carries them: ``sqsjobs infra deploy`` needs no checkout of the repository.
"""

from __future__ import annotations

import re
from importlib import resources

TEMPLATES = ("sqsjobs", "sqsjobs-queue", "sqsjobs-ecs-worker", "sqsjobs-lambda-worker")
"""The shipped templates' names: the job table and a queue, one more queue for a table,
and the worker stacks (an ECS service, a Lambda function) that follow a job stack."""


def template_text(name: str = "sqsjobs") -> str:
    """The YAML of template ``name``: ``sqsjobs`` (table + one queue) or ``sqsjobs-queue``.

    Raises:
        ValueError: ``name`` is not one of ``TEMPLATES``.
    """
    if name not in TEMPLATES:
        known = ", ".join(TEMPLATES)
        raise ValueError(f"Unknown template {name!r}: must be one of {known}")
    return resources.files(__package__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")


def template_parameters(name: str = "sqsjobs") -> tuple[str, ...]:
    """The parameter names template ``name`` declares, in its order.

    Read from the YAML's text (the top-level ``Parameters:`` block, one two-space
    indented key per parameter), so a deploy can refuse an unknown key before anything
    is sent, without a YAML parser that would have to know CloudFormation's ``!Ref`` tags.

    Raises:
        ValueError: ``name`` is not one of ``TEMPLATES``.
    """
    names: list[str] = []
    inside = False
    for line in template_text(name).splitlines():
        if line and not line[0].isspace():
            inside = line.rstrip() == "Parameters:"
        elif inside and (found := _PARAMETER.match(line)):
            names.append(found[1])
    return tuple(names)


def parameters_without_default(name: str) -> tuple[str, ...]:
    """The parameters of template ``name`` that declare no ``Default``: a stack of it
    cannot be made without them. Read from the text as ``template_parameters`` is.

    Raises:
        ValueError: ``name`` is not one of ``TEMPLATES``.
    """
    defaults: dict[str, bool] = {}
    inside = False
    current: str | None = None
    for line in template_text(name).splitlines():
        if line and not line[0].isspace():
            inside = line.rstrip() == "Parameters:"
        elif inside and (found := _PARAMETER.match(line)):
            current = found[1]
            defaults[current] = False
        elif inside and current is not None and _DEFAULT.match(line):
            defaults[current] = True
    return tuple(key for key, has_default in defaults.items() if not has_default)


def declared_outputs(body: str) -> dict[str, str | None]:
    """The outputs a template's YAML declares, each with its ``Condition`` (``None``: it
    has none, so every stack of the template has it).

    Read from the text as ``template_parameters`` reads parameters: the top-level
    ``Outputs:`` block, one two-space indented key per output, its ``Condition:`` four
    spaces in. A deploy checks a stack's outputs against them (``_stack.missing_outputs``).
    """
    declared: dict[str, str | None] = {}
    inside = False
    current: str | None = None
    for line in body.splitlines():
        if line and not line[0].isspace():
            inside = line.rstrip() == "Outputs:"
        elif inside and (found := _PARAMETER.match(line)):
            current = found[1]
            declared[current] = None
        elif inside and current is not None and (condition := _CONDITION.match(line)):
            declared[current] = condition[1]
    return declared


_PARAMETER = re.compile(r"^  ([A-Za-z0-9]+):\s*$")
_CONDITION = re.compile(r"^    Condition:\s*(\S+)\s*$")
_DEFAULT = re.compile(r"^    Default:")
