"""The wire layer, stdlib only: what goes over the wire, and the protocol that carries it.

``items`` is the DynamoDB record codec, ``index_keys`` its list index's keys, ``sqs`` the
message body and SQS request builders, ``dynamo`` the DynamoDB request builders and
``transitions`` those of the status changes that settle a run, end a job or revive one,
``layout`` where a store's jobs live, ``protocol`` the ``Call``/``Flow`` vocabulary and
the two drivers. Importing any of them loads neither boto3, botocore nor asyncio
(``tests/aws/test_layers.py``).
"""
