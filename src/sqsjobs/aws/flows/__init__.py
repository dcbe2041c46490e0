"""The flows: one module per operation family, each a generator of ``Call``s (``wire.protocol``).

A flow touches no client and no clock, so the store drives it on aiobotocore (async face) or
boto3 (blocking face, Lambda), and tests drive it on a script. Like the wire layer, the
flows are stdlib only: importing them loads neither boto3, botocore nor asyncio.
"""
