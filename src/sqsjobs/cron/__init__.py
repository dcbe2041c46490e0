"""Cron schedules: ``schedule.Cron`` (needs croniter), ``keys`` (a tick's idempotency key,
without croniter) and ``declared`` (crons gathered from a registry, a worker and the
command line, loading the parser only when one is declared).
"""
