"""job-poller: run an async job, wait, poll its status with a per-loop timeout (seeds 000/001)."""
