"""How ``sqsjobs infra deploy --dry-run`` shows a deploy it did not make: the parameters,
then what CloudFormation would add, modify (and whether it replaces) or remove."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ..infra import StackPreview
from ._render import literal, mapping_table, table

ACTION_STYLES = {"Add": "green", "Modify": "yellow", "Remove": "red"}


def preview_view(preview: StackPreview, template: str) -> RenderableType:
    """The parameters, the changes, and one line that says nothing was changed."""
    if preview.changes is None:
        return Text(preview.note)
    verb = "update" if preview.exists else "create"
    heading = f"Dry run: a deploy would {verb} stack {preview.stack} from template {template}"
    parts: list[RenderableType] = [
        literal(heading, "bold"),
        mapping_table("Parameters it would pass", "parameter", "value", preview.parameters),
    ]
    if preview.changes:
        changes = table(
            f"What CloudFormation would change ({len(preview.changes)})",
            "action",
            "resource",
            "type",
            "replaces it",
        )
        for change in preview.changes:
            changes.add_row(
                Text(change.action, style=ACTION_STYLES.get(change.action, "")),
                literal(change.logical_id),
                literal(change.resource_type),
                "-" if change.replacement is None else change.replacement,
            )
        parts.append(changes)
    else:
        parts.append(Text("CloudFormation finds nothing to change."))
    parts.append(literal(f"Nothing was changed: stack {preview.stack} is as it was.", "dim"))
    return Group(*parts)
