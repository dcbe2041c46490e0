"""What every suite shares: a fake clock that reads like ``time.time()`` and a producer
configuration for the pure tests. Test modules import from here; ``tests/conftest.py``
offers the clock as a fixture."""
