"""The SSL context of the asyncio transport's connections (aiohttp's; the lean path's too).

botocore makes its context for urllib3 (``create_urllib3_context``), which turns the
context's host-name check off because urllib3 matches the name itself. aiohttp and
asyncio do not: with that context as it is, a certificate the CA bundle trusts but
issued for another name would be accepted. Every context here checks the name. And
aiobotocore's connector for an endpoint behind a proxy (``HTTPS_PROXY``) verifies
nothing unless the client has proxy TLS settings; ``transports.aio`` gives that
connector the same context as a direct one, so the endpoint's certificate and name are
checked inside the proxy's tunnel too.

Loading a CA bundle into a context costs about 40 ms of CPU, and aiobotocore loads it
again for every client it makes (a worker has one per service and event loop). A context
is only read once made, so the process makes one per set of TLS settings and every
connection shares it; a bundle changed on disk is read by the next process.
"""

from __future__ import annotations

import functools
import ssl

from botocore.httpsession import (  # type: ignore[import-untyped]
    create_urllib3_context,
    get_cert_path,
)


def checked_context() -> ssl.SSLContext:
    """botocore's context for urllib3, checking the certificate's host name."""
    context: ssl.SSLContext = create_urllib3_context()
    context.check_hostname = True
    return context


@functools.cache
def shared_context(verify: bool | str, cert: str | None, key: str | None) -> ssl.SSLContext:
    """The context for a client's settings, direct or through a proxy, as aiobotocore's
    connector makes it for an endpoint without a proxy (plus the host-name check):
    ``verify`` is ``False``, ``True`` (botocore's CA bundle) or a bundle's path; ``cert``
    and ``key`` a client certificate."""
    if not verify:
        unverified = ssl.create_default_context()
        unverified.check_hostname = False
        unverified.verify_mode = ssl.CERT_NONE
        return unverified
    context = checked_context()
    if cert:
        context.load_cert_chain(cert, key)
    ca_certs = get_cert_path(verify)
    if ca_certs:
        context.load_verify_locations(ca_certs, None, None)
    return context
