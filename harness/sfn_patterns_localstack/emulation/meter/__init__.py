"""The request meter: what a run asked of LocalStack, counted where LocalStack serves it.

A benchmark's per-item costs (DynamoDB, SQS, Step Functions and Lambda requests) must
come from what the services received, not from reading the code under test. While
switched on (``POST /_sfnp/meter``), a response handler counts every request by
(service, operation, calling role, resource), records the size of the largest
DynamoDB item a write left behind, and a sampler thread records the peak resident
memory of the LocalStack process and of its process tree (Lambda workers included).
``GET /_sfnp/meter`` reads the counters, ``DELETE`` switches the meter off. Switched
off (the default), the handler returns on its first line.
"""
