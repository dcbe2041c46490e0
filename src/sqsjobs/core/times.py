"""Conversions between the SPI's epoch seconds and the API's aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime


def utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def utc_or_none(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def epoch(moment: datetime) -> float:
    return moment.timestamp()
