"""The SSL context of the asyncio transport's connections, aiohttp's and ``lean_http``'s.

botocore makes its context for urllib3 (``create_urllib3_context``), which turns the
context's host-name check off because urllib3 matches the name itself. aiohttp and
asyncio do not: with that context as it is, a certificate the CA bundle trusts but
issued for another name would be accepted. Every context here checks the name.
"""

from __future__ import annotations

import ssl

from botocore.httpsession import create_urllib3_context  # type: ignore[import-untyped]


def checked_context() -> ssl.SSLContext:
    """botocore's context for urllib3, checking the certificate's host name."""
    context: ssl.SSLContext = create_urllib3_context()
    context.check_hostname = True
    return context
