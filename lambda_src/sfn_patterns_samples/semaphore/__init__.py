"""The semaphore demo worker: a critical section that records its enter and leave times."""
