"""Shared by the infra tests: templates as plain data, and a job record the store writes.

Templates are parsed with cfn-lint's own YAML loader, which turns the short-form tags
(``!Ref``, ``!Sub``, ``!GetAtt``) into their long form (``{"Ref": ...}``), and then
copied into plain dicts and lists so comparisons see only the data.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from cfnlint.decode import cfn_yaml  # type: ignore[import-untyped]

from sqsjobs import Job, JobStatus
from sqsjobs.infra import template_text


def load_template(name: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(json.dumps(cfn_yaml.loads(template_text(name))))
    return parsed


def resources(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    """The template's resources of one type, by logical id."""
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_name}


def references(node: Any) -> set[str]:
    """Logical ids (and parameters) that ``node`` refers to through Ref, GetAtt or Sub."""
    found: set[str] = set()
    if isinstance(node, list):
        for item in node:
            found |= references(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref":
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0] if isinstance(value, list) else value.split(".")[0])
            elif key == "Fn::Sub":
                text = value if isinstance(value, str) else value[0]
                local = set() if isinstance(value, str) else set(value[1])  # Sub's own names
                names = {part.split("}")[0].split(".")[0] for part in text.split("${")[1:]}
                found |= names - local
            found |= references(value)
    return found


def sample_job(job_id: str = "0123456789abcdef0123456789abcdef") -> Job:
    """A queued job as ``enqueue`` would make it, for writing records by hand."""
    now = datetime(2030, 1, 1, tzinfo=UTC)
    return Job(
        id=job_id,
        queue="default",
        name="emails.send",
        payload={"to": "a@example.com"},
        status=JobStatus.QUEUED,
        attempts=0,
        max_attempts=5,
        run_at=now,
        created_at=now,
        updated_at=now,
        lease_until=None,
        locked_by=None,
        lease_token=None,
        lease=30.0,
        timeout=30.0,
        priority=0,
        idempotency_key=None,
        tenant=None,
        last_error=None,
        completed_at=None,
        result=None,
    )
