"""Text that others control, made safe to store, log and print.

An exception's message comes from a handler, a dependency or a remote service. Stored
as ``last_error`` or written into a log line it must stay one line (a line break in it
would let the text end the record and start a forged one, a terminal control sequence
could rewrite what an operator sees, and a bidi override could show it in another
order), and it must not carry the credentials some libraries put into the URLs they
quote in their errors. The same escapes apply wherever the command line and the log
formats print stored text (``cli/_render``, ``observe.log_format``), so a record written
before them, or by another writer, is shown safely too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Every C0 and C1 control character but tab, DEL, and the two Unicode line separators:
# all that str.splitlines() breaks at, and all a terminal may act on.
_LINE_AND_TERMINAL = [*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]
# Unicode's Bidi_Control characters: the embeddings and overrides (U+202A-U+202E), the
# isolates (U+2066-U+2069) and the marks (U+200E, U+200F, U+061C). Invisible, they
# reorder what is shown around them ("payout_\u202efdp.exe" reads "payout_exe.pdf", the
# Trojan Source trick), so text from others must not carry them to a terminal, a log or
# an operator's table. The marks go too: they reorder less, but no one can see them
# either, and right-to-left text reads without them (its letters carry their direction).
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_CONTROLS = [*_LINE_AND_TERMINAL, *_BIDI]
_NAMED = {0x0A: "\\n", 0x0D: "\\r"}
_ESCAPES = {
    code: _NAMED.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in _CONTROLS
}

# What json.dumps(ensure_ascii=False) leaves raw of them (it escapes the C0 controls):
# in JSON text they can only stand inside strings, where ``\uXXXX`` means the same, so
# escaping them there loses nothing.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _CONTROLS if code >= 0x7F}

# ``scheme://userinfo@``: everything between ``//`` and ``@`` before the host.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@\"'<>]+@")
# A query parameter whose name says it carries a secret: presigned AWS URLs
# (X-Amz-Credential, X-Amz-Signature, X-Amz-Security-Token, AWSAccessKeyId, Signature)
# and the usual token, password and API key parameters.
_SECRET_PARAMETER = re.compile(
    r"(?i)([?&;][^=&;\s#\"'<>]*(?:credential|signature|token|secret|password|passwd"
    r"|api[_-]?key|accesskeyid)[^=&;\s#\"'<>]*=)[^&;\s#\"'<>]*"
)
REDACTED = "***"


def escape_controls(text: str) -> str:
    """``text`` on one line, each control character shown as its escape (``\\n``, ``\\x1b``,
    ``\\u202e`` for a bidi control).

    Backslashes are left alone, so escaping twice changes nothing and ordinary text such
    as a Windows path reads as it did.
    """
    return text.translate(_ESCAPES)


def escape_json_controls(json_text: str) -> str:
    """JSON text (never other text) with DEL, the C1 controls, the Unicode line
    separators and the bidi controls written as ``\\uXXXX``: still the same JSON, and one
    line a terminal shows in its order."""
    return json_text.translate(_JSON_ESCAPES)


def redact_credentials(text: str) -> str:
    """``text`` with URL user info and secret-bearing query values replaced by ``***``."""
    text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    return _SECRET_PARAMETER.sub(rf"\1{REDACTED}", text)


def safe_line(text: str) -> str:
    """One line without credentials: how sqsjobs stores and logs text it did not write."""
    return escape_controls(redact_credentials(text))


def listed_names(names: Iterable[str], most: int = 20) -> str:
    """``names`` sorted and comma-separated, the first ``most`` of them: an error that
    says what is allowed stays one readable line however many there are."""
    ordered = sorted(names)
    shown = ", ".join(ordered[:most]) or "none"
    return shown if len(ordered) <= most else f"{shown}, and {len(ordered) - most} more"
