"""Table columns that never break a word, at 80 columns as at 200.

rich narrows a table that is too wide by taking a character at a time from its widest
wrapping columns, whatever they hold: at 80 columns a status came out as ``complet`` over
``ed`` and at 120 a last error as ``JobFatalErro…``, its class cut where an operator
looks for it. A ``FitTable`` chooses the widths itself, from what each column's content
can give up without losing a word (``Role``), and hands rich widths that fit:

1. free text (a last error) and identifiers (queue and handler names) narrow first,
   the widest first, down to a comfortable width: an error is cut short, a name folds
   after a ``.``, ``-``, ``_``, ``:`` or ``/`` (``email.send`` becomes ``email.`` over
   ``send``), never inside a part of it;
2. then words wrap between each other (an instant: its date over its time);
3. then the same columns narrow on to their floors: of an error, its class whole and an
   ellipsis; of a name, its longest part;
4. and when even that is too wide, the columns named optional are left out, one at a
   time in their order, which the caption says, rather than every column being cut a
   little.

Only at widths where even the floors cannot fit (60 columns) does rich lay the table
out itself. Identifiers are never cut: join a cell's lines to get one back.

An id is shown whole, on one line, from ``WIDE_TABLE`` columns. Below, it is shown as
its first ``SHORT_ID`` characters (more if two ids of the table share those), also on
one line, which the caption says: a prefix is what an operator copies into ``jobs
show``, which takes one (``_ids``), and an id folded in two halves could not be copied
with one double-click. Among a million live jobs, the chance that any two share their
first twelve hexadecimal characters is about one in 500 (``jobs show`` then lists the
matches, and more characters settle it). A table of ``whole_ids`` (``dlq list``, read to
act on each dead job) folds them into two halves of 16 instead, never a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, replace
from enum import Enum

from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.style import StyleType
from rich.table import Column, Table
from rich.text import Text

from ..core.text import escape_controls

ID_CHARS = 32  # a job id
WIDE_TABLE = 120  # columns from which a table shows whole ids
SHORT_ID = 12  # the prefix of an id shown below WIDE_TABLE, if the table's ids differ in it
COMFORT = 32  # what an error or a name keeps before anything else gives way
NAME_FLOOR = 12  # the most an identifier column keeps of its longest unbroken part
CLASS_FLOOR = 15  # the longest class kept on one line at the narrowest error column
SHOWN = 3  # the least of a message worth showing after its class (an ellipsis included)
BREAK_AFTER = re.compile(r"(?<=[.\-_:/@])")
CLASS_WORDS = re.compile(r"(?<=\.)|(?<=[a-z0-9])(?=[A-Z])")  # ``ConnectionReset|Error``
# Where a message may wrap: after a space, and around a wide (CJK) character, as CJK text
# has no spaces and wraps between any two of its characters.
WIDE = (
    "\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
    "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
)
MESSAGE_WORDS = re.compile(rf"[{WIDE}] *|[^ {WIDE}]+ *| +")
# "ExcName: message" (``Job.last_error``), the class maybe dotted; else no class.
ERROR_CLASS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::\s+|:?$)")


class Role(Enum):
    """What a column holds, so what it may give up to make room."""

    ID = "id"  # a job id: whole from WIDE_TABLE columns, else a prefix (``short_ids``)
    KEEP = "keep"  # short words (a status, ``3/5``): never narrower than its widest cell
    WORDS = "words"  # text that wraps between words only (an instant)
    NAME = "name"  # an identifier: folds at its separators, never cut
    TEXT = "text"  # free text: cut at its end (``ErrorCell``)


def prefix_length(ids: Iterable[str], least: int = SHORT_ID) -> int:
    """The shortest prefix, ``least`` characters or more, that tells ``ids`` apart."""
    distinct = set(ids)
    length = least
    while length < ID_CHARS and len({each[:length] for each in distinct}) < len(distinct):
        length += 1
    return length


def pack(pieces: Iterable[str], width: int) -> list[str]:
    """``pieces`` in lines of at most ``width`` cells, a line ending between two pieces;
    a piece wider than a line is folded anywhere, the only way to keep it whole."""
    width = max(width, 1)
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and cell_len(line + piece) > width:
            lines.append(line.rstrip(" "))
            line = ""
        line += piece
        if cell_len(line) > width:
            *full, line = chop_cells(line, width)
            lines += full
    lines.append(line.rstrip(" "))
    return lines


class Identifier:
    """An id, queue or handler name: folded after its separators, never cut."""

    def __init__(self, value: str) -> None:
        self.text = escape_controls(value)
        self.pieces = [piece for piece in BREAK_AFTER.split(self.text) if piece]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max((cell_len(piece) for piece in self.pieces), default=0)
        return Measurement(longest, cell_len(self.text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(pack(self.pieces, options.max_width)), overflow="fold")


class ErrorCell:
    """A last error, its message cut to fit, never its class (``JobFatalError``).

    A class too long for the column wraps between the words it is made of
    (``ConnectionReset`` over ``Error``); the message follows it and may go on over
    ``most`` lines in all, the height the row has anyway, its last cut with an ellipsis.
    An ``earlier`` error, a completed job's, is history: dim, and said to be. Text with
    no class is cut at its end like any other.
    """

    EARLIER = "earlier: "

    def __init__(self, error: str, *, earlier: bool = False, most: int = 1) -> None:
        self.error, self.earlier, self.most = error, earlier, most
        self.text = escape_controls(error)
        self.marker = self.EARLIER if earlier and error else ""
        self.style = "dim" if self.marker else ""
        found = ERROR_CLASS.match(self.text)
        self.words = [] if found is None else [w for w in CLASS_WORDS.split(found[1]) if w]
        self.message = self.text if found is None else self.text[found.end() :]
        self.plain = self.marker + self.text

    def within(self, most: int) -> ErrorCell:
        """The same error, shown on up to ``most`` lines."""
        return ErrorCell(self.error, earlier=self.earlier, most=most)

    def floor(self) -> int:
        """The narrowest this cell is read at: the marker and the class whole, the class
        on one line up to ``CLASS_FLOOR`` cells, and an ellipsis."""
        marker = cell_len(self.marker.strip())
        name = min(cell_len("".join(self.words)), CLASS_FLOOR)
        return min(cell_len(self.plain), max(marker, name) + 1)

    def lines(self, width: int) -> list[str]:
        """The cell at ``width``: whole if it fits; else the marker and the class, wrapped
        between words if need be, then as much of the message as ``most`` lines hold."""
        if cell_len(self.plain) <= width:
            return [self.plain]
        head = ([self.marker] if self.marker else []) + self.words
        lines = pack(head, width) if head else []
        if not self.message.strip():
            return lines
        most = max(self.most, len(lines), 1)
        joiner = ": " if self.words else " " if self.marker else ""
        room = width - cell_len(lines[-1]) if lines else width
        if lines and room >= len(joiner) + SHOWN:
            flow = [lines.pop() + joiner]  # the message starts on the class's line
        elif len(lines) < most:
            if lines and room >= len(joiner.rstrip()):
                lines[-1] += joiner.rstrip()
            flow = []
        else:
            if room >= 1:
                lines[-1] += "…"
            return lines
        flow = pack(flow + MESSAGE_WORDS.findall(self.message), width)
        shown = flow[: most - len(lines)]
        if len(flow) > len(shown):  # cut where the message goes on, never into the class
            shown[-1] = cut(f"{shown[-1]} {flow[len(shown)]}", width)
        return lines + shown

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.floor(), cell_len(self.plain))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(self.lines(options.max_width)), style=self.style, overflow="fold")


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` cells, ending in an ellipsis if it had to be shortened (with
    no space before it: rich pads where a wide character would have been split)."""
    if cell_len(text) <= width:
        return text
    shown = Text(text, no_wrap=True)
    shown.truncate(max(width, 1), overflow="ellipsis")
    return shown.plain.removesuffix("…").rstrip(" ") + "…"


@dataclass(frozen=True)
class Spec:
    """How wide a column is, and how narrow it may get without breaking a word."""

    role: Role
    natural: int
    floor: int
    lines: int = 1  # the lines its tallest cell takes at ``natural`` (an id in halves: 2)


def fit_widths(specs: Sequence[Spec], room: int) -> list[int] | None:
    """Content widths for ``specs`` within ``room`` cells, giving way in the order the
    module describes; ``None`` when even every floor is too wide."""
    widths = [spec.natural for spec in specs]
    excess = sum(widths) - room
    steps: tuple[tuple[set[Role], Callable[[Spec], int]], ...] = (
        ({Role.TEXT, Role.NAME}, lambda spec: max(spec.floor, min(spec.natural, COMFORT))),
        ({Role.WORDS}, lambda spec: spec.floor),
        ({Role.TEXT, Role.NAME}, lambda spec: spec.floor),
    )
    for roles, target in steps:
        while excess > 0:
            narrower = [
                index
                for index, spec in enumerate(specs)
                if spec.role in roles and widths[index] > target(spec)
            ]
            if not narrower:
                break
            widest = max(narrower, key=lambda index: widths[index])
            widths[widest] -= 1
            excess -= 1
    return widths if excess <= 0 else None


class FitTable(Table):
    """A table whose columns have roles (``Role``) and are given widths that fit them.

    Cells of ``ID`` and ``NAME`` columns given as strings become ``Identifier``s; every
    other string cell is shown as it is (``literal`` text, never markup).
    """

    roles: Mapping[str, Role] = {}
    optional: Sequence[str] = ()
    whole_ids = False  # below WIDE_TABLE, ids in two halves rather than a prefix

    def add_row(
        self,
        *renderables: RenderableType | None,
        style: StyleType | None = None,
        end_section: bool = False,
    ) -> None:
        cells = [
            self._cell(column, cell)
            for column, cell in zip(self.columns, renderables, strict=False)
        ]
        super().add_row(*cells, style=style, end_section=end_section)

    def _cell(self, column: Column, cell: RenderableType | None) -> RenderableType | None:
        if not isinstance(cell, str):
            return cell
        if self.roles.get(str(column.header)) in (Role.ID, Role.NAME):
            return Identifier(cell)
        return Text(escape_controls(cell))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from Table.__rich_console__(self.fitted(console, options.max_width), console, options)

    def fitted(self, console: Console, width: int) -> Table:
        """A copy of this table laid out for ``width`` columns (``fit_widths``)."""
        columns, left_out = list(self.columns), []
        notes: list[str] = []
        if width < WIDE_TABLE and not self.whole_ids:
            columns, notes = self._short_ids(columns)
        spared = [name for name in self.optional if name in self.roles]
        while True:
            specs = [self._spec(console, column, width) for column in columns]
            widths = fit_widths(specs, width - self._chrome(len(columns)))
            if widths is not None or not spared:
                break
            left_out.append(spared.pop(0))
            columns = [column for column in columns if str(column.header) not in left_out]
        made = copy(self)
        made.columns = [
            self._laid_out(column, index, spec, widths, _row_lines(specs, widths))
            for index, (column, spec) in enumerate(zip(columns, specs, strict=True))
        ]
        if left_out:
            notes.append(f"Left out at this width: {', '.join(left_out)}")
        if notes:
            made.caption = Text("\n".join(notes), style="dim")
            made.caption_justify = "left"
        return made

    def _short_ids(self, columns: list[Column]) -> tuple[list[Column], list[str]]:
        """The columns with each id cell cut to the prefix that tells the ids apart, and
        the caption's word on it (none if there is no id to cut)."""
        shortened: list[Column] = []
        notes: list[str] = []
        for column in columns:
            ids = [cell.text for cell in column.cells if isinstance(cell, Identifier)]
            if self.roles.get(str(column.header)) is not Role.ID or not ids:
                shortened.append(column)
                continue
            length = prefix_length(ids)
            cells = [
                Identifier(cell.text[:length]) if isinstance(cell, Identifier) else cell
                for cell in column.cells
            ]
            shortened.append(replace(column, _cells=cells))
            notes.append(
                f"{column.header}: first {length} characters, enough for jobs show "
                f"(whole from {WIDE_TABLE} columns, --json)"
            )
        return shortened, notes

    @staticmethod
    def _laid_out(
        column: Column, index: int, spec: Spec, widths: list[int] | None, lines: int
    ) -> Column:
        """The column with its width, its errors shown on as many lines as a row takes
        anyway; without widths (nothing fits), ids keep their halves and rich narrows
        the rest as it does."""
        width = spec.natural if widths is None and spec.role is Role.ID else None
        if widths is not None:
            width = widths[index]
        cells = [
            cell.within(lines) if isinstance(cell, ErrorCell) else cell for cell in column.cells
        ]
        keep = spec.role is Role.KEEP
        return replace(column, width=width, no_wrap=keep, _index=index, _cells=cells)

    def _spec(self, console: Console, column: Column, width: int) -> Spec:
        role = self.roles.get(str(column.header), Role.WORDS)
        header = console.measure(Text(str(column.header)))
        cells = [console.measure(cell) for cell in column.cells]
        natural = max([header.maximum, *(cell.maximum for cell in cells)])
        if role is Role.ID:  # one line: whole, or a prefix below WIDE_TABLE (``fitted``)
            longest = max((cell.maximum for cell in cells), default=0)
            if self.whole_ids and width < WIDE_TABLE:  # or two halves, whole
                natural = max(header.maximum, -(-longest // 2))
                return Spec(role, natural, natural, lines=2 if longest > natural else 1)
            natural = max(header.maximum, longest)
            return Spec(role, natural, natural)
        if role is Role.KEEP:
            return Spec(role, natural, natural)
        if role is Role.NAME:  # no part between separators folds, up to NAME_FLOOR
            longest = max((cell.minimum for cell in cells), default=0)
            return Spec(role, natural, max(header.maximum, min(longest, NAME_FLOOR)))
        floor = max([header.minimum, *(cell.minimum for cell in cells)])
        return Spec(role, natural, min(natural, floor))

    def _chrome(self, count: int) -> int:
        """The cells a row of ``count`` columns spends on borders and padding."""
        _, right, _, left = self.padding
        lines = (count + 1 if self.show_edge else count - 1) if self.box else 0
        return lines + count * (left + right)


def _row_lines(specs: Sequence[Spec], widths: Sequence[int] | None) -> int:
    """The lines every row takes whatever it holds: two when ids fold into halves or an
    instant wraps its time under its date, else one."""
    if widths is None:
        return 1
    narrowed = [
        spec.role is Role.WORDS and width < spec.natural
        for spec, width in zip(specs, widths, strict=True)
    ]
    return max([2 if any(narrowed) else 1, *(spec.lines for spec in specs)])


def fit_table(
    title: Text,
    columns: Iterable[tuple[str, Role]],
    *,
    optional: Sequence[str] = (),
    whole_ids: bool = False,
) -> FitTable:
    """A ``FitTable`` titled ``title`` with these columns; ``optional`` ones are left out
    when the rest cannot fit otherwise."""
    pairs = list(columns)
    made = FitTable(title=title, title_justify="left")
    made.roles = dict(pairs)
    made.whole_ids = whole_ids
    made.optional = optional
    for header, role in pairs:
        made.add_column(header, overflow="ellipsis" if role is Role.TEXT else "fold")
    return made
