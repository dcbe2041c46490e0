"""The lane picker's plan for a claim, and what it learns from the reads a claim made.

Pure rules (``sqsjobs.aws.store.lanes``): the claim asks once for the SQS queues to read
and tells once what each read yielded; these tests drive that conversation directly.
"""

from __future__ import annotations

from sqsjobs.aws.store.lanes import (
    QUIET_FIRST,
    RECEIVES_FIRST,
    SHARE,
    LanePicker,
    Read,
)

LANES = ((5, "https://sqs/lane-high"), (1, "https://sqs/lane-low"))
HIGH, LOW = (url for _, url in LANES)
T0 = 8_113.402_77  # monotonic seconds, as a long-running host reads them


def queue_read(*, found: bool, jobs: int = 0, received: bool = True) -> Read:
    return Read(None, found=found, received=received and found, jobs=jobs)


def test_a_queue_without_lanes_is_read_alone() -> None:
    assert LanePicker().plan("default", (), T0) == [None]


def test_a_busy_queue_reads_its_lanes_highest_first_then_itself() -> None:
    picker = LanePicker()
    assert picker.plan("default", LANES, T0) == [HIGH, LOW, None]


def test_an_idle_queue_long_polls_alone_until_a_read_finds_messages() -> None:
    picker = LanePicker()
    picker.record("default", [Read(HIGH, False, False, 0), queue_read(found=False)], T0)
    assert picker.plan("default", LANES, T0 + 0.3) == [None]
    picker.record("default", [queue_read(found=True, jobs=1)], T0 + 20.0)
    # Busy again: the lanes are read, but the one found empty stays quiet a while.
    assert picker.plan("default", LANES, T0 + 20.1) == [LOW, None]


def test_an_empty_lane_waits_out_both_its_quiet_time_and_the_queue_s_receives() -> None:
    picker = LanePicker()
    picker.record("default", [Read(HIGH, False, False, 0), queue_read(found=True, jobs=1)], T0)
    assert picker.plan("default", LANES, T0 + 0.1) == [LOW, None]
    # The quiet time has passed, but the queue has not been received from often enough.
    assert picker.plan("default", LANES, T0 + QUIET_FIRST + 0.1) == [LOW, None]
    for n in range(RECEIVES_FIRST):
        picker.record("default", [queue_read(found=True, jobs=1)], T0 + 0.2 + n / 100)
    assert picker.plan("default", LANES, T0 + QUIET_FIRST + 0.1) == [HIGH, LOW, None]


def test_held_messages_do_not_count_as_receives_of_the_queue() -> None:
    picker = LanePicker()
    picker.record("default", [Read(HIGH, False, False, 0)], T0)
    for n in range(RECEIVES_FIRST):
        picker.record("default", [queue_read(found=True, jobs=1, received=False)], T0 + n)
    assert picker.plan("default", LANES, T0 + 60.0) == [LOW, None]


def test_a_lane_that_yields_is_read_again_at_once() -> None:
    picker = LanePicker()
    picker.record("default", [Read(HIGH, True, True, 3)], T0)
    assert picker.plan("default", LANES, T0 + 0.01) == [HIGH, LOW, None]


def test_the_queue_comes_first_after_share_minus_one_jobs_from_lanes() -> None:
    picker = LanePicker()
    picker.record("default", [Read(HIGH, True, True, SHARE - 2)], T0)
    assert picker.plan("default", LANES, T0 + 0.01) == [HIGH, LOW, None]
    picker.record("default", [Read(HIGH, True, True, 1)], T0 + 0.02)
    assert picker.plan("default", LANES, T0 + 0.03) == [None, HIGH, LOW, None]
    # A job from the queue resets the streak.
    picker.record("default", [queue_read(found=True, jobs=1)], T0 + 0.04)
    assert picker.plan("default", LANES, T0 + 0.05) == [HIGH, LOW, None]


def test_queues_are_planned_apart() -> None:
    picker = LanePicker()
    picker.record("default", [queue_read(found=False)], T0)
    other = ((1, "https://sqs/other-lane"),)
    assert picker.plan("default", LANES, T0 + 0.1) == [None]
    assert picker.plan("other", other, T0 + 0.1) == ["https://sqs/other-lane", None]
