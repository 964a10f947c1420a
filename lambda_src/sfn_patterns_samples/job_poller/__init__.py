"""The job-poller sample job (an asynchronous job runner) and its adapter."""
