"""KMS decided for role sessions and services: the key policy, then IAM, as AWS KMS does.

When a service uses a resource's customer managed key on a request's behalf (a DynamoDB
table, an SQS queue, an S3 object, a Lambda function's environment, a state machine, a
log group), this package decides the KMS actions AWS documents for that use on the key
policy and the acting principal's identity policies (``keys``, ``uses``), and refuses
with the service's own error (``errors``). Wired into the IAM handler, so it follows
``SFNP_IAM`` (enforce, audit, off). See README.md.
"""
