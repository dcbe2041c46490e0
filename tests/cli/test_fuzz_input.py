"""Fuzzing what an operator types: whatever arrives, a refusal is one clear line, exit 2.

Every option and argument that takes text is given arbitrary input: every code point
(NUL, terminal controls, bidi overrides, the lone surrogates Python makes of argv bytes
that are not UTF-8), huge values, negative, non-finite and non-numeric numbers, and JSON
at its edges, inline, from ``@FILE`` and from stdin. Whatever it is, the command shows
no traceback. Input it refuses exits 2 with one ``Error:`` line, the last on stderr, that
names the option and says what is allowed, with no control character left raw; stdout
stays empty and the store's items are as they were. Input it takes does what the
command says, and nothing else.

Commands whose valid input would run for long (``--watch``, the worker, ``stats``, the
dead-letter scans) run without a configured store: a value wrongly taken then meets
"No job store configured" instead of a loop, so each test stays fast whatever it finds.
The commands run in process through click's runner, so hypothesis tries hundreds of
inputs in seconds; each ``@example`` is an input that once failed.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.utils import (  # type: ignore[import-untyped]
    is_valid_endpoint_url,
    is_valid_ipv6_endpoint_url,
    validate_region_name,
)
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from sqsjobs.aws import SqsJobStore
from sqsjobs.cli import main
from sqsjobs.core.text import escape_controls
from sqsjobs.core.validation import GROUP, IDEMPOTENCY_KEY, JOB_NAME, TENANT
from tests.property.strategies import json_values

from .conftest import Env
from .process import run_cli


def fuzz(examples: int) -> settings:
    """Settings for ``examples`` inputs. Each runs a command against the emulator, so no
    deadline; the store and directories of the test's fixtures are shared by its examples
    on purpose (each example compares the store's items before and after)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


NO_STORE = "No job store configured"
NO_MODULE = "sqsjobs_fuzz_no_such_module:registry"
FULL_ID = "0123456789abcdef0123456789abcdef"

# Words by which an error line says what is wrong and what would do instead. An extra
# argument has nothing to allow: the usage line above the error shows the form.
ALLOWED = re.compile(
    r"must|allowed|expected|is not|not one of|not in the range|not valid|not both|too short"
    r"|has no|cannot|give |e\.g\.|at most|at least|Expecting|Unterminated|Extra data"
    r"|Invalid control character|nested too deeply|appears twice|Exceeds the limit"
    r"|no module named|pass --|unexpected extra argument",
    re.IGNORECASE,
)

# -- strategies ---------------------------------------------------------------------------

# Every code point, surrogates and controls included: more than a shell can even pass.
anything = st.text(st.characters(exclude_categories=()), max_size=24)
EDGES = [
    "",
    " ",
    "-",
    "--",
    "@",
    "\x00",
    "\n",
    "a\nb",
    "\x1b[2J",
    "\x9b31m",
    "\u202e",
    "\ud800",
    "\udcff",
    "é",
    "🦀",
    "null",
    "default ",
    "9" * 5000,
    "x" * 20_000,
]
junk = st.one_of(anything, st.sampled_from(EDGES))
NUMBER_EDGES = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "-1e400",
    "1e-400",
    "-0",
    "+5",
    "5.",
    ".5",
    " 7 ",
    "0x10",
    "1_000",
    "١٢",
    "1e",
    "--1",
    "9" * 5000,
    "0" * 5000 + "1",
]
numbers = st.one_of(
    st.integers(-(2**80), 2**80).map(str),
    st.floats().map(repr),
    st.sampled_from(NUMBER_EDGES),
    junk,
)


def regex(pattern: re.Pattern[str]) -> st.SearchStrategy[str]:
    """Text a library grammar accepts, or anything at all."""
    return st.one_of(st.from_regex(pattern, fullmatch=True), junk)


instants = st.builds(
    lambda moment, offset: moment.isoformat() + offset,
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.sampled_from(["Z", "+01:00", "-23:59", "", "+24:00", "Q"]),
)
JSON_EDGES = [
    "NaN",
    "-Infinity",
    "[NaN]",
    '{"a": Infinity}',
    "1e400",
    "-1e400",
    "1e-400",
    "-0",
    '{"a": 1, "a": 2}',
    '"\\ud800"',
    '["\\udc00\\ud800"]',
    '{"\\ud800": 1}',
    '"\\u0000"',
    '"\x00"',
    "",
    " ",
    "[1,]",
    "{'a': 1}",
    "01",
    "[] []",
    '"' + "a" * 70_000 + '"',
    "\t[1]\n",
]
json_texts = st.one_of(
    json_values.map(json.dumps),
    json_values.map(lambda value: json.dumps(value, indent=2, ensure_ascii=False)),
    st.sampled_from(JSON_EDGES),
    st.integers(1, 5000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(1, 2000).map(lambda depth: '{"a":' * depth + "1" + "}" * depth),
    st.integers(4000, 5000).map(lambda digits: "9" * digits),
    junk,
)

ENQUEUE_OPTIONS: dict[str, st.SearchStrategy[str]] = {
    "--payload": json_texts,
    "--queue": st.one_of(st.just("default"), junk),
    "--delay": numbers,
    "--run-at": st.one_of(instants, junk),
    "--priority": numbers,
    "--max-attempts": numbers,
    "--timeout": numbers,
    "--lease": numbers,
    "--idempotency-key": regex(IDEMPOTENCY_KEY),
    "--tenant": regex(TENANT),
    "--group": regex(GROUP),
}
# How a refusal names each option: click names the flag, the library the option's words.
NAMED_AS = {
    "NAME": ("job name",),
    "--payload": ("--payload", "payload"),
    "--queue": ("queue",),
    "--delay": ("--delay",),
    "--run-at": ("--run-at", "run_at"),
    "--priority": ("--priority",),
    "--max-attempts": ("--max-attempts",),
    "--timeout": ("--timeout",),
    "--lease": ("--lease",),
    "--idempotency-key": ("idempotency key",),
    "--tenant": ("tenant",),
    "--group": ("group",),
}
enqueue_options = st.lists(
    st.sampled_from(sorted(ENQUEUE_OPTIONS)), unique=True, max_size=4
).flatmap(lambda flags: st.tuples(*(st.tuples(st.just(f), ENQUEUE_OPTIONS[f]) for f in flags)))

# -- checks -------------------------------------------------------------------------------


def run(env: Env, *args: str, stdin: bytes | None = None) -> Result:
    """The command in process; an exception that escaped it fails here, with its stack."""
    result = CliRunner().invoke(main, list(args), env=env, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stack = "".join(traceback.format_exception(result.exception))
        raise AssertionError(f"{args!r} raised instead of exiting:\n{stack}")
    assert "Traceback" not in result.output, result.output
    return result


def refused(result: Result, *names: str) -> str:
    """Check that ``result`` is a refusal naming one of ``names``; its error line."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == "", result.stdout
    lines = result.stderr.split("\n")
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1 and lines[-2:] == [errors[0], ""], result.stderr
    assert all(escape_controls(line) == line for line in lines), result.stderr
    line = errors[0]
    assert any(name.lower() in line.lower() for name in names), (names, line)
    assert ALLOWED.search(line), line
    return line


def failed(result: Result, message: str) -> None:
    """Check that ``result`` is a failure (exit 1): one ``error:`` line starting ``message``."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert result.stderr.startswith(f"error: {message}") and result.stderr.count("\n") == 1
    assert escape_controls(result.stderr[:-1]) == result.stderr[:-1], result.stderr


Written = Callable[[], Counter[str]]


@pytest.fixture
def written(store: SqsJobStore, aws_endpoint: str) -> Iterator[Written]:
    """The store's items by kind (``job``, ``body``...): a refusal must leave them as they
    were. One scan of the keys: far cheaper than listing the jobs after every example."""
    client = boto3.client("dynamodb", endpoint_url=aws_endpoint)

    def items() -> Counter[str]:
        kinds: Counter[str] = Counter()
        page: dict[str, Any] = {"TableName": store.table_name, "ProjectionExpression": "pk"}
        while True:
            answer = client.scan(**page)
            kinds.update(item["pk"]["S"].split("#", 1)[0] for item in answer["Items"])
            if "LastEvaluatedKey" not in answer:
                return kinds
            page["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    yield items
    client.close()


def finite_within(text: str, low: float, high: float = math.inf) -> bool:
    """Whether click reads ``text`` as a finite float within [low, high]."""
    try:
        number = float(text)
    except ValueError:
        return False
    return math.isfinite(number) and low <= number <= high


def int_within(text: str, low: int, high: int | None = None) -> bool:
    """Whether click reads ``text`` as an int within [low, high]."""
    try:
        number = int(text)
    except ValueError:
        return False
    return low <= number and (high is None or number <= high)


@pytest.fixture
def no_store(cli_env: Env) -> Env:
    """The emulator's endpoint and credentials, but no table or queues: nothing to reach."""
    return {**cli_env, "SQSJOBS_TABLE": None, "SQSJOBS_QUEUES": None}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working and home directory, so no ``@FILE`` the fuzzing names can exist."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


# -- enqueue ------------------------------------------------------------------------------


@fuzz(100)
@given(name=regex(JOB_NAME), options=enqueue_options)
@example(name="a.b", options=(("--delay", "nan"),))
@example(name="\ud800", options=(("--idempotency-key", "\udcff"),))
@example(name="a.b", options=(("--run-at", "9999-12-31T23:59:59-01:00"),))
@example(name="9" * 5000, options=())  # the line was cut at 300 characters, rule and all
def test_enqueue_takes_or_refuses_any_input_and_refuses_it_whole(
    cli_env: Env, written: Written, home: Path, name: str, options: tuple[tuple[str, str], ...]
) -> None:
    before = written()
    args = [part for option in options for part in option]
    # After "--" the name is the name even when it starts with "-".
    result = run(cli_env, "enqueue", *args, "--", name)
    event(f"exit {result.exit_code}")
    after = written()
    if result.exit_code == 0:
        duplicate = result.stdout.startswith("Duplicate: job ")
        assert duplicate or result.stdout.startswith("Enqueued job "), result.stdout
        assert after["job"] == before["job"] + (0 if duplicate else 1)
    elif result.exit_code == 1:  # the one refusal of valid input: a key bound to another job
        failed(result, "Idempotency key")
        assert after["job"] == before["job"]
    else:
        given_names = [word for flag, _ in options for word in NAMED_AS[flag]]
        refused(result, *NAMED_AS["NAME"], *given_names)
        assert after == before, "a refused enqueue wrote to the store"


@fuzz(50)
@given(text=json_texts, form=st.sampled_from(["inline", "file", "stdin"]), bom=st.booleans())
@example(text='{"a": 1, "a": 2}', form="file", bom=True)
@example(text='"\\ud800"', form="inline", bom=False)
@example(text="[" * 100_000 + "]" * 100_000, form="stdin", bom=False)
@example(text="[" * 256 + "]" * 256, form="inline", bom=False)  # enqueued, then --json exit 1
def test_a_payload_is_its_json_or_refused_naming_the_payload(
    cli_env: Env, written: Written, home: Path, text: str, form: str, bom: bool
) -> None:
    data = (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8", "surrogatepass")
    stdin = None
    if form == "inline":
        # JSON may start with blanks: keep text that reads as "@FILE" or "-" inline JSON.
        value = f" {text}" if text.startswith("@") or text == "-" else text
    elif form == "file":
        (home / "payload.json").write_bytes(data)
        value = "@payload.json"
    else:
        value, stdin = "-", data
    before = written()
    result = run(cli_env, "enqueue", "fuzz.payload", "--payload", value, "--json", stdin=stdin)
    event(f"exit {result.exit_code}")
    if result.exit_code == 0:
        assert json.loads(result.stdout)["payload"] == json.loads(text)
        assert written()["job"] == before["job"] + 1
    else:
        refused(result, "--payload", "payload")
        assert written() == before


@fuzz(40)
@given(path=junk)
@example(path="x\x00y")  # open() raised ValueError: exit 1, "error: ValueError: ..."
@example(path="\ud800")  # open() raised UnicodeEncodeError, the same way
@example(path="~\x00/payload.json")  # so did expanduser's lookup of the user
@example(path="")
@example(path=".")
@example(path="~")
def test_a_payload_file_that_cannot_be_read_is_named(
    cli_env: Env, written: Written, home: Path, path: str
) -> None:
    result = run(cli_env, "enqueue", "fuzz.file", "--payload", f"@{path}")
    line = refused(result, "--payload")
    assert "payload file" in line or "file name after '@'" in line, line
    assert not written()


# -- job ids ------------------------------------------------------------------------------

hex_text = st.text("0123456789abcdef", max_size=40)


@fuzz(60)
@given(
    command=st.sampled_from(["show", "cancel", "retry"]),
    given_id=st.one_of(hex_text, junk, hex_text.map(lambda h: h + "G"), hex_text.map(str.upper)),
)
@example(command="show", given_id="x" * 5000)  # DynamoDB refuses a key over 2048 bytes
@example(command="retry", given_id="\x00" * 32)
@example(command="cancel", given_id="-" + FULL_ID[1:])
def test_a_job_id_is_looked_up_only_if_it_can_be_one(
    cli_env: Env, written: Written, command: str, given_id: str
) -> None:
    result = run(cli_env, "jobs", command, "--", given_id)
    if re.fullmatch(r"[0-9a-f]{6,32}", given_id):
        failed(result, f"No job {given_id!r}")
    else:
        refused(result, "Job id")
    assert not written()


@fuzz(20)
@given(extra=st.lists(junk.filter(lambda t: not t.startswith("-")), min_size=1, max_size=3))
@example(extra=["x\x07y\nz"])  # click showed the extra argument raw
def test_extra_arguments_are_refused_on_one_escaped_line(cli_env: Env, extra: list[str]) -> None:
    refused(run(cli_env, "jobs", "show", FULL_ID, *extra), "unexpected extra argument")


# -- listing and queues -------------------------------------------------------------------

LIST_OPTIONS: dict[str, st.SearchStrategy[str]] = {
    "--limit": numbers,
    "--status": st.one_of(st.sampled_from(["queued", "dead", "DEAD"]), junk),
    "--queue": st.one_of(st.just("default"), junk),
    "--name": regex(JOB_NAME),
    "--tenant": regex(TENANT),
}
LIST_NAMED_AS = {
    "--limit": ("--limit",),
    "--status": ("--status",),
    "--queue": ("queue",),
    "--name": ("job name",),
    "--tenant": ("tenant",),
}
list_options = st.lists(st.sampled_from(sorted(LIST_OPTIONS)), unique=True, max_size=3).flatmap(
    lambda flags: st.tuples(*(st.tuples(st.just(f), LIST_OPTIONS[f]) for f in flags))
)


@fuzz(60)
@given(options=list_options)
@example(options=(("--limit", "9" * 5000),))
def test_jobs_list_lists_or_refuses_naming_the_option(
    cli_env: Env, options: tuple[tuple[str, str], ...]
) -> None:
    result = run(cli_env, "jobs", "list", *(part for option in options for part in option))
    event(f"exit {result.exit_code}")
    if result.exit_code == 0:
        assert result.stdout.startswith("Jobs"), result.stdout
    else:
        refused(result, *(word for flag, _ in options for word in LIST_NAMED_AS[flag]))


@fuzz(40)
@given(
    command=st.sampled_from(
        [
            ("stats",),
            ("dlq", "list"),
            ("dlq", "list", "--peek"),
            ("dlq", "redrive"),
            ("reconcile",),
            ("jobs", "list"),
        ]
    ),
    queue=junk.filter(lambda q: q != "default"),
)
@example(command=("reconcile",), queue="nope")  # exited 1 where every other command exits 2
@example(command=("stats",), queue="9" * 5000)  # the line was cut before it said which queues
def test_a_queue_the_store_lacks_is_bad_usage_for_every_command(
    cli_env: Env, written: Written, command: tuple[str, ...], queue: str
) -> None:
    refused(run(cli_env, *command, "--queue", queue), "queue")
    assert not written()


# -- numbers and durations ----------------------------------------------------------------

NUMBER_OPTIONS: dict[tuple[str, ...], Callable[[str], bool]] = {
    ("jobs", "list", "--limit"): lambda v: int_within(v, 1, 1000),
    ("dlq", "list", "--limit"): lambda v: int_within(v, 1, 1000),
    ("dlq", "redrive", "--limit"): lambda v: int_within(v, 1),
    ("jobs", "list", "--watch"): lambda v: finite_within(v, 0.1, 86_400),
    ("stats", "--watch"): lambda v: finite_within(v, 0.1, 86_400),
    ("reconcile", "--grace"): lambda v: finite_within(v, 0),
    ("worker", "--grace"): lambda v: finite_within(v, 0),
    ("worker", "--reconcile-every"): lambda v: finite_within(v, 0),
    ("worker", "--concurrency"): lambda v: int_within(v, 1, 1000),
    ("worker", "--tenant-concurrency"): lambda v: int_within(v, 1, 1000),
    ("worker", "--metrics-port"): lambda v: int_within(v, 0, 65535),
}


@fuzz(80)
@given(option=st.sampled_from(sorted(NUMBER_OPTIONS)), value=numbers)
@example(option=("jobs", "list", "--watch"), value="nan")  # refreshed without pause
@example(option=("stats", "--watch"), value="inf")  # time.sleep(inf): OverflowError
@example(option=("reconcile", "--grace"), value="nan")  # re-sent nothing, said nothing
@example(option=("worker", "--grace"), value="inf")
def test_numbers_out_of_range_or_not_finite_are_refused_before_anything_runs(
    no_store: Env, option: tuple[str, ...], value: str
) -> None:
    *command, flag = option
    if flag == "--watch" and value.startswith("-"):
        # --watch takes an optional value: click reads "-1" after it as the next option,
        # even as "--watch=-1", and refuses that as an unknown option instead.
        value = value.lstrip("-") or "0"
    # The worker's registry comes last and does not exist: the worker never starts.
    tail = [NO_MODULE] if command == ["worker"] else []
    result = run(no_store, *command, flag, value, *tail)
    taken = NUMBER_OPTIONS[option](value)
    event("taken" if taken else "refused")
    if taken:  # refused further on, for what the test leaves out
        refused(result, "MODULE:REGISTRY" if command == ["worker"] else NO_STORE)
    else:
        refused(result, f"'{flag}'")


@fuzz(40)
@given(cron=st.one_of(junk, st.just("0 3 * * * reports.nightly")), timezone=junk)
@example(cron="0 3 * * * reports.nightly", timezone="America")  # IsADirectoryError, exit 1
@example(cron="0 3 * * * reports.nightly", timezone="a" * 300)  # name too long, exit 1
@example(cron="61 * * * * a.b", timezone="UTC")
def test_a_cron_or_timezone_is_refused_before_the_worker_starts(
    no_store: Env, cron: str, timezone: str
) -> None:
    result = run(
        no_store,
        "worker",
        "--cron",
        cron,
        "--cron-timezone",
        timezone,
        "tests.cli.handlers:scheduled",
    )
    refused(result, "'--cron'", "'--cron-timezone'", NO_STORE)


# -- where the store is -------------------------------------------------------------------


def valid_region(value: str) -> bool:
    try:
        validate_region_name(value)
    except ValueError:
        return False
    return True


def valid_endpoint(value: str) -> bool:
    try:
        return bool(is_valid_endpoint_url(value) or is_valid_ipv6_endpoint_url(value))
    except ValueError:
        return False


@fuzz(60)
@given(
    flag=st.sampled_from(["--region", "--endpoint-url"]),
    value=st.one_of(junk, st.sampled_from(["eu-west-1", "http://localhost:4566", "localhost"])),
)
@example(flag="--region", value="us east 1")  # botocore refused it at the first call: exit 1
@example(flag="--endpoint-url", value="notaurl")  # "error: ValueError: Invalid endpoint"
@example(flag="--endpoint-url", value="http://[::1")  # "error: ValueError: Invalid IPv6 URL"
@example(flag="--endpoint-url", value="http://user:secret@[::1")
def test_a_region_or_endpoint_botocore_would_refuse_is_bad_usage(
    no_store: Env, flag: str, value: str
) -> None:
    result = run(no_store, "jobs", "list", flag, value)
    valid = valid_region(value) if flag == "--region" else valid_endpoint(value)
    line = refused(result, NO_STORE if valid or not value else f"'{flag}'")
    assert "secret" not in line


@fuzz(20)
@given(
    before=anything,
    surrogate=st.characters(categories=["Cs"]),
    after=anything,
)
@example(before="", surrogate="\udcff", after="")  # an argv byte that is not UTF-8
def test_a_stack_name_that_is_not_text_is_refused_naming_the_option(
    no_store: Env, before: str, surrogate: str, after: str
) -> None:
    result = run(no_store, "jobs", "list", "--stack", before + surrogate + after)
    refused(result, "'--stack'")


def test_argv_bytes_that_are_not_utf8_are_refused_by_the_real_process(
    cli_env: Env, written: Written
) -> None:
    """What the in-process runner cannot show: bytes in a real argv, decoded by Python as
    lone surrogates, and stderr written back as UTF-8 (decoding it here is strict)."""
    result = run_cli(cli_env, "enqueue", "a.b", "--payload", '{"to": "\udcffnote"}')
    assert result.returncode == 2, result.stderr
    error = result.stderr.split("\n")[-2]
    assert error.startswith("Error: Job payload at $.to: a str with a lone surrogate '\\udcff'")
    assert not written()
