"""The producer's face: ``JobQueue`` and ``SyncJobQueue`` (``queue``), the tenant views
(``tenant``), the enqueue options (``options``) and ``enqueue``, which validates a
request and builds its job, once for every face.
"""
