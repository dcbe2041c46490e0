"""The store shell: ``SqsJobStore`` and what it keeps between calls.

``sqs_store`` is the public class (its async face), ``blocking`` its ``sync`` face; both
drive the same flows over one ``StoreState`` (``state``: the layout learned so far, the
clock, which message delivered each claim). ``claims`` receives and claims for the async
face and for Lambda, ``background`` batches deletes and hands held messages back,
``config`` declares the configuration (``StoreSettings``, each setting once, its checks in
``checks``) and reads it, ``provision`` makes the resources for ``create``.
"""
