"""``sqsjobs records formats``: whether records of an older format are still in the table.

An upgrade's last step waits until no record of the format before the switch is left:
0.2's "drop ``by_status``" (``KeepStatusIndex=false``) once no record of format 1 is,
this release's "reads cost what is open" once none of format 2 is (CHANGELOG.md). A
record counts while a reader still sees it: open (not ended), or ended with its
retention still running (``expires_at`` ahead). The table shows, per format, how many
of each there are and when the last ended one expires; open ones stay until their
retention has run after they end.

The exit status answers the question for a deploy pipeline: 0 when no record of a format
below ``--older-than`` is left (by default, below the format this deployment writes), 1
while some are. A failure (AWS refusing the scan) is exit 1 too, with an ``error:`` line.

It reads the whole table (``aws.flows.record_formats``: a ``Scan``, page after page,
billed by the size of every item it reads): about ``READ_UNITS_PER_1000`` read units per
1,000 records with small payloads, more for long payloads' body items. It needs
``dynamodb:Scan`` on the table, which none of the stack's role policies grant (a scan
reads every payload): run it as the role that deploys the stack, or an administrator.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..aws.flows.record_formats import READ_UNITS_PER_1000, FormatCount, RecordFormats
from ..aws.wire.items import RECORD_FORMATS
from ._config import StoreConfig, store_options
from ._render import instant, instant_adapter, literal, output_console, table, write_json

if TYPE_CHECKING:
    from rich.status import Status

COLUMNS = ("format", "open", "ended", "last ended one expires (UTC)")


@click.group()
def records() -> None:
    """Check which record formats the job table still holds."""


FORMATS_HELP = f"""Count the records of each format, open and ended, and when the last one expires.

Exit 0 when no record of a format below --older-than is left, 1 while some are, so an
upgrade's last step can wait for it. Reads the whole table (a Scan): about
{READ_UNITS_PER_1000} read units per 1,000 records, more with long payloads. Needs
dynamodb:Scan on the table.
"""


@records.command(help=FORMATS_HELP)
@click.option(
    "--older-than",
    type=click.IntRange(min(RECORD_FORMATS), max(RECORD_FORMATS)),
    metavar="N",
    help="Exit 1 while records of a format below N are left (default: the format this "
    "deployment writes, so every earlier one).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object (per format: open, ended, expired, last_expires_at; "
    "remaining and clear for the gate) and nothing else on stdout.",
)
@store_options
def formats(older_than: int | None, as_json: bool, store: StoreConfig) -> None:
    """The gate of an upgrade's last step (the module docstring says which); click shows
    ``FORMATS_HELP``, whose cost comes from the flow's measured figure."""
    with store.open() as opened, scanning(Console(stderr=True), opened.table_name) as on_page:
        found = opened.sync.record_formats(on_page=on_page)
    gate = found.writes if older_than is None else older_than
    left = found.older_than(gate)
    if as_json:
        write_json(formats_record(found, gate), sys.stdout)
    else:
        console = output_console()
        console.print(formats_table(found))
        console.print(verdict(left, gate))
    if left:
        raise click.exceptions.Exit(1)


@contextmanager
def scanning(console: Console, table_name: str) -> Iterator[Callable[[int], None]]:
    """A live count of the items scanned, on a terminal only (logs stay clean)."""
    if not console.is_terminal:
        yield lambda items: None
        return
    what = Text.assemble("Scanning table ", literal(table_name, "bold"))
    status: Status = console.status(what)

    def update(items: int) -> None:
        status.update(Text.assemble(what, f": {items:,} items"))

    with status:
        yield update


def formats_table(found: RecordFormats) -> Table:
    """One row per format found, the one this deployment writes marked."""
    title = (
        f"Records by format in table {found.table} ({found.items:,} items scanned; "
        f"stores of this deployment write format {found.writes})"
    )
    made = table(title, *COLUMNS)
    for each in found.formats:
        mark = " (written)" if each.format == found.writes else ""
        made.add_row(f"{each.format}{mark}", f"{each.open:,}", f"{each.ended:,}", _last(each))
    return made


def verdict(left: tuple[FormatCount, ...], gate: int) -> Text:
    """What the exit status says, in words: the gate clear, or what holds it and until when."""
    if not left:
        return Text(f"No record of a format older than {gate} is left.", style="green")
    parts = []
    for each in left:
        until = "" if each.last_expires_at is None else f", the last to expire on {_last(each)} UTC"
        parts.append(f"format {each.format}: {each.open:,} open, {each.ended:,} ended{until}")
    return Text(
        f"Records of a format older than {gate} are left ({'; '.join(parts)}). An open one "
        "stays until its retention has run after it ends: check again later.",
        style="yellow",
    )


def formats_record(found: RecordFormats, gate: int) -> dict[str, Any]:
    """The ``--json`` document: the counts, and the gate's answer."""
    left = found.older_than(gate)
    return {
        "table": found.table,
        "writes": found.writes,
        "older_than": gate,
        "items_scanned": found.items,
        "formats": [
            {
                "format": each.format,
                "open": each.open,
                "ended": each.ended,
                "expired": each.expired,
                "last_expires_at": instant_adapter().dump_python(each.last_expires_at, mode="json")
                if each.last_expires_at is not None
                else None,
            }
            for each in found.formats
        ],
        "remaining": sum(each.remaining for each in left),
        "clear": not left,
    }


def _last(each: FormatCount) -> str:
    return instant(each.last_expires_at) or "-"
