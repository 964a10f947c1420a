"""The job-poller sample job (seed 000's asynchronous job runner) and its adapter."""
