"""Set-up and checks for a fresh clone, with nothing but python3 on the machine.

    python3 dev.py demo               # .venv with the local AWS emulator; the demo
    python3 dev.py test               # .venv with the dev tools; lint, types, fast tests
    python3 dev.py test --all         # the same with every test (what CI runs)
    python3 dev.py test --under-load  # the tests twice at once, as on a busy machine

The fast tests are every test not marked ``slow`` (real processes, real signals and
seconds of real waiting: the chaos run, the upgrade suite, the installs, the commands
as processes, the browser); they run in parallel over 2 workers per core (most of a
test's time is spent waiting on the emulator or a clock). Arguments after the options
go to pytest. Each run ends with its 15 slowest tests.

The virtual environment is reused while pyproject.toml is unchanged; a changed
pyproject.toml reinstalls, so a stale environment never hides a missing dependency.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed"
WORKERS_PER_CORE = 2
MAX_WORKERS = 8  # each worker runs an emulator of its own: more would crowd the machine


def run(*argv: str | Path) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], cwd=ROOT, check=True)


def ensure_venv(extras: str) -> None:
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    run(BIN / "python", "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(BIN / "python", "-m", "pip", "install", "--quiet", "-e", f".[{extras}]")
    STAMP.write_text(wanted)


def demo(args: list[str]) -> None:
    ensure_venv("local")
    run(BIN / "sqsjobs", "demo", *args)


def pytest_argv(args: list[str], *, everything: bool) -> list[str]:
    workers = min(MAX_WORKERS, WORKERS_PER_CORE * (os.cpu_count() or 1))
    # worksteal: a worker that runs out takes tests queued on another, so one long test
    # (the chaos run) no longer leaves its worker's queue waiting behind it.
    argv = [str(BIN / "python"), "-m", "pytest", "-n", str(workers), "--dist", "worksteal"]
    argv.append("--durations=15")
    if not everything and not any(arg == "-m" or arg.startswith("-m=") for arg in args):
        argv += ["-m", "not slow"]
    return argv + args


def test(args: list[str]) -> None:
    everything = "--all" in args
    under_load = "--under-load" in args
    rest = [arg for arg in args if arg not in ("--all", "--under-load")]
    ensure_venv("dev")
    run(BIN / "ruff", "check", ".")
    run(BIN / "ruff", "format", "--check", ".")
    run(BIN / "mypy", "--strict", "src")
    argv = pytest_argv(rest, everything=everything)
    if under_load:
        twice_at_once(argv)
    else:
        run(*argv)


def twice_at_once(argv: list[str]) -> None:
    """Run the tests twice, concurrently: each run is the other's load. Both must pass."""
    logs = Path(tempfile.mkdtemp(prefix="sqsjobs-under-load-"))
    runs = []
    for turn in (1, 2):
        log = (logs / f"run-{turn}.log").open("w")
        command = [*argv, "-p", "no:cacheprovider"]
        print("+", " ".join(command), f"> {log.name}", flush=True)
        runs.append((subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log), log))
    failed = 0
    for turn, (process, log) in enumerate(runs, start=1):
        code = process.wait()
        log.close()
        lines = (logs / f"run-{turn}.log").read_text().splitlines()
        summary = lines[-1] if lines else "(no output)"
        print(f"run {turn} (exit {code}): {summary}  [{logs / f'run-{turn}.log'}]", flush=True)
        failed += code != 0
    if failed:
        raise subprocess.CalledProcessError(1, argv)


COMMANDS = {"demo": demo, "test": test}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} [args...]", file=sys.stderr)
        return 2
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except subprocess.CalledProcessError as failed:
        return failed.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
