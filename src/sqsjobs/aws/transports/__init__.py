"""Transports: what sends a ``Call`` to AWS. ``boto`` (blocking) and ``aio`` (asyncio).

Both turn botocore's failures into the protocol's ``AwsError`` (``errors``); ``endpoint``
says where and how their clients connect. Importing this package loads nothing: each
transport module loads its client library, ``aio`` only on an async store's first call.
"""
