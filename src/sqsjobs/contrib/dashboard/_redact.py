"""What a page shows of a job's text that can carry its payload's data: errors and keys.

``show_payloads=False`` hides payloads and results, and with them what is often made
from them: an error's message quotes what the handler was handed (``PaymentDeclined:
card ending 4242``) and an idempotency key is often built from the payload (``receipt:
<email>:<month>``). So with payloads hidden an error shows only its exception's class,
read off the ``"ExcName: message"`` form every failure is stored in (``describe_error``),
and a key shows as hidden. The library's own fixed errors (a lease that expired on the
last attempt, ...) hold nothing of a payload and are shown whole.

``error_redactor``, when given, decides instead what each error shows, payloads shown
or hidden: it gets the stored text and returns the text to show.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...core.lifecycle import CUTOFF_ERROR, LEASE_EXPIRED_ERROR, STOPPING_ERROR

ErrorRedactor = Callable[[str], str]

HIDDEN_MESSAGE = "(message hidden)"
# The lines of a traceback that are the runtime's own words, never a job's data.
_SEPARATORS = (
    "Traceback (most recent call last):",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_FRAME = re.compile(r'  File ".*", line \d+, in ')
_LEFT_OUT = re.compile(r"  … \d+ lines left out …$")
LIBRARY_ERRORS = frozenset({LEASE_EXPIRED_ERROR, STOPPING_ERROR, CUTOFF_ERROR})


def exception_class(text: str) -> str:
    """``ExcName`` of ``"ExcName: message"``; a library error whole; else a placeholder."""
    if text in LIBRARY_ERRORS:
        return text
    head, colon, _ = text.partition(":")
    if head.isidentifier() and (colon or head == text):
        return head
    return HIDDEN_MESSAGE


def checked_redactor(redactor: object) -> ErrorRedactor | None:
    """``error_redactor`` as given, refused at once when it cannot be called."""
    if redactor is not None and not callable(redactor):
        raise TypeError(
            "error_redactor must be a callable taking a job's error text and returning the "
            f"text to show, got {redactor!r}"
        )
    return redactor


@dataclass(frozen=True)
class Redaction:
    """One dashboard's rule for errors and idempotency keys."""

    show_payloads: bool
    error_redactor: ErrorRedactor | None

    @property
    def errors_cut(self) -> bool:
        """True when errors show their class only (the job page says so)."""
        return not self.show_payloads and self.error_redactor is None

    def error(self, text: str | None) -> str:
        """What a page shows of a stored ``last_error`` (empty for none)."""
        if not text:
            return ""
        if self.error_redactor is not None:
            shown = self.error_redactor(text)
            if not isinstance(shown, str):
                raise TypeError(
                    f"error_redactor returned {shown!r}; it must return the text to show (a str)"
                )
            return shown
        return text if self.show_payloads else exception_class(text)

    def traceback(self, text: str | None) -> str:
        """What a page shows of a stored traceback (empty for none).

        Its frames are code, shown whole; each exception's message is shown as
        ``error`` shows an error, so a hidden message stays hidden here too. Lines that
        are neither (a message's continuation cut off by the size bound) are left out.
        """
        if not text:
            return ""
        if self.show_payloads and self.error_redactor is None:
            return text
        shown: list[str] = []
        message: list[str] = []
        in_frame = False
        for line in text.split("\n"):
            if in_frame and line.startswith("    "):
                shown.append(line)  # the frame's source line, and its carets
                continue
            in_frame = bool(_FRAME.match(line))
            if in_frame or not line or line in _SEPARATORS or _LEFT_OUT.match(line):
                if message:
                    shown.append(self._raised("\n".join(message)))
                    message = []
                shown.append(line)
            elif message or not line.startswith(" "):
                message.append(line)  # an exception's message, or the rest of one
            # else: the rest of a message whose start the size bound cut off: left out
        if message:
            shown.append(self._raised("\n".join(message)))
        return "\n".join(shown)

    def _raised(self, text: str) -> str:
        """An exception's lines in a traceback, as ``error`` shows an error; the class is
        named with its module there (``billing.gateway.GatewayError: ...``)."""
        if self.error_redactor is not None:
            return self.error(text)
        head, colon, _ = text.partition(":")
        if all(part.isidentifier() for part in head.split(".")) and (colon or head == text):
            return head
        return HIDDEN_MESSAGE
