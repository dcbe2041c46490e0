"""The CloudFormation templates shipped inside the package, by name.

They live next to this module (``sqsjobs.yaml``, ``sqsjobs-queue.yaml``) so that an
installed wheel carries them: ``sqsjobs infra deploy`` needs no checkout of the repository.
"""

from __future__ import annotations

from importlib import resources

TEMPLATES = ("sqsjobs", "sqsjobs-queue")


def template_text(name: str = "sqsjobs") -> str:
    """The YAML of template ``name``: ``sqsjobs`` (table + one queue) or ``sqsjobs-queue``.

    Raises:
        ValueError: ``name`` is not one of ``TEMPLATES``.
    """
    if name not in TEMPLATES:
        known = ", ".join(TEMPLATES)
        raise ValueError(f"Unknown template {name!r}: must be one of {known}")
    return resources.files(__package__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
