"""The worker: ``JobWorker``'s loop (``job_worker``), the run of one job (``run``), its
lease and heartbeats (``lease``), limit permits (``permits``), a tenant's cap, the
queues a worker serves, the drain at stop and the signals that start it.
"""
