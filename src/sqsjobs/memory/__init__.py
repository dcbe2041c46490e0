"""``MemoryJobStore``: the whole store contract in process, for tests and single-process
apps. ``store`` is its async and blocking faces; ``state`` the records and indexes under
one lock; ``record`` one job's record; ``slots`` the limit slots.
"""
