"""The wire layer, stdlib only: what goes over the wire, and the protocol that carries it.

``items`` is the DynamoDB record codec, ``sqs`` the message body and SQS request
builders, ``dynamo`` the DynamoDB request builders, ``layout`` where a store's jobs live,
``protocol`` the ``Call``/``Flow`` vocabulary and the two drivers. Importing any of them
loads neither boto3, botocore nor asyncio (``tests/aws/test_layers.py``).
"""
