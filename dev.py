"""Set-up and checks for a fresh clone, with nothing but python3 on the machine.

    python3 dev.py demo               # .venv as uv.lock says, with the local AWS emulator
    python3 dev.py test               # .venv as uv.lock says; lint, types, fast tests
    python3 dev.py test --all         # the same with every test (what CI runs)
    python3 dev.py test --under-load  # the tests twice at once, as on a busy machine
    python3 dev.py test --latest      # in a throwaway environment of the newest releases
    python3 dev.py test --lowest      # ... of the lowest releases of every direct dependency
    python3 dev.py lock               # refresh uv.lock to the newest releases allowed
    python3 dev.py docs               # build the documentation site into site/, strictly
    python3 dev.py docs --serve       # ... and serve it at http://127.0.0.1:8000, rebuilt on edits

Two questions, kept apart. "Does this commit pass?" is answered on ``uv.lock``: every
package of every extra, pinned with its hashes, so a run today and a run next month
install the same thing and a red run means the code changed. "Does a new release of a
dependency break us?" is answered on purpose, by ``--latest`` (and ``--lowest`` for the
floors of ``pyproject.toml``'s ranges), which names the packages whose version differs
from the lock, so a failure there says what moved.

uv installs the lock: a wheel of a pinned release, kept in ``.venv-uv`` (or the same
release already on PATH). It uses the interpreter running this script and never
downloads one. ``.venv`` is synced at every run, which costs nothing when it matches.

The fast tests are every test not marked ``slow`` (real processes, real signals and
seconds of real waiting: the chaos run, the upgrade suite, the installs, the commands
as processes, the browser); they run in parallel over 2 workers per core (most of a
test's time is spent waiting on the emulator or a clock). Arguments after the options
go to pytest. Each run ends with its 15 slowest tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
UV_VERSION = "0.13.9"  # the lock's format is this release's; `dev.py lock` writes it
UV_HOME = ROOT / ".venv-uv"
WORKERS_PER_CORE = 2
MAX_WORKERS = 8  # each worker runs an emulator of its own: more would crowd the machine
OPTIONS = ("--all", "--under-load", "--latest", "--lowest")


def bin_dir(environment: Path) -> Path:
    return environment / ("Scripts" if os.name == "nt" else "bin")


def run(*argv: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], cwd=ROOT, check=True, env=env)


def uv() -> Path:
    """The pinned uv: on PATH if it is that release, else installed once into UV_HOME."""
    found = shutil.which("uv")
    if found and _version_of(Path(found)) == UV_VERSION:
        return Path(found)
    pinned = bin_dir(UV_HOME) / "uv"
    if _version_of(pinned) != UV_VERSION:
        venv.EnvBuilder(with_pip=True, clear=True).create(UV_HOME)
        pip = (bin_dir(UV_HOME) / "python", "-m", "pip", "install", "--quiet")
        run(*pip, "--disable-pip-version-check", f"uv=={UV_VERSION}")
    return pinned


def _version_of(binary: Path) -> str | None:
    if not binary.exists():
        return None
    answer = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    words = answer.stdout.split()
    return words[1] if answer.returncode == 0 and len(words) > 1 else None


def uv_env() -> dict[str, str]:
    """uv's settings for every call: this interpreter, none downloaded, no stray venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT")}
    env |= {"UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
    env.setdefault("UV_PROJECT_ENVIRONMENT", str(VENV))
    return env


def sync(extra: str, *, exact: bool) -> None:
    """Make ``.venv`` what the lock says for ``extra``; refuse a lock pyproject outgrew.

    ``exact`` removes what the lock does not list (the test environment is the lock, no
    more); the demo leaves the test tools of an earlier ``test`` where they are.
    """
    argv: list[str | Path] = [uv(), "sync", "--locked", "--extra", extra]
    if not exact:
        argv.append("--inexact")
    try:
        run(*argv, env=uv_env())
    except subprocess.CalledProcessError:
        print(
            "uv.lock does not match pyproject.toml: run `python3 dev.py lock` after "
            "changing dependencies, and commit uv.lock with them.",
            file=sys.stderr,
        )
        raise


def lock(args: list[str]) -> None:
    """Refresh uv.lock to the newest releases pyproject.toml's ranges allow; arguments,
    when given, go to ``uv lock`` instead (``--upgrade-package moto`` moves one)."""
    run(uv(), "lock", *(args or ["--upgrade"]), env=uv_env())


def demo(args: list[str]) -> None:
    sync("local", exact=False)
    run(bin_dir(VENV) / "sqsjobs", "demo", *args)


def docs(args: list[str]) -> None:
    """Build the site with ``--strict``: a broken link or anchor, a page left out of the
    navigation, a name the API reference cannot find or a public name without a
    docstring (``docs/hooks/public_api.py``) fails the build. ``--serve`` serves it."""
    sync("dev", exact=True)
    serving = "--serve" in args
    rest = [arg for arg in args if arg != "--serve"]
    command = ["serve", "--dev-addr", "127.0.0.1:8000"] if serving else ["build", "--clean"]
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}  # the theme's notice of its own future
    run(bin_dir(VENV) / "mkdocs", *command, "--strict", *rest, env=env)


def pytest_argv(bin: Path, args: list[str], *, everything: bool) -> list[str]:
    workers = min(MAX_WORKERS, WORKERS_PER_CORE * (os.cpu_count() or 1))
    # worksteal: a worker that runs out takes tests queued on another, so one long test
    # (the chaos run) no longer leaves its worker's queue waiting behind it.
    argv = [str(bin / "python"), "-m", "pytest", "-n", str(workers), "--dist", "worksteal"]
    argv.append("--durations=15")
    if not everything and not any(arg == "-m" or arg.startswith("-m=") for arg in args):
        argv += ["-m", "not slow"]
    return argv + args


def test(args: list[str]) -> None:
    chosen = {arg for arg in args if arg in OPTIONS}
    rest = [arg for arg in args if arg not in OPTIONS]
    if {"--latest", "--lowest"} <= chosen:
        raise SystemExit("dev.py test: --latest and --lowest are two runs; choose one")
    if "--latest" in chosen or "--lowest" in chosen:
        resolution = "highest" if "--latest" in chosen else "lowest-direct"
        with tempfile.TemporaryDirectory(prefix="sqsjobs-resolved-") as where:
            environment = Path(where) / "venv"
            moved = resolve_fresh(environment, resolution)
            try:
                check(bin_dir(environment), rest, chosen, lint=resolution == "highest")
            except subprocess.CalledProcessError:
                print(f"\nfailed on the {resolution} releases; {summary(moved)}", flush=True)
                raise
            print(f"\npassed on the {resolution} releases; {summary(moved)}", flush=True)
        return
    sync("dev", exact=True)
    check(bin_dir(VENV), rest, chosen, lint=True)


def check(bin: Path, rest: list[str], chosen: set[str], *, lint: bool) -> None:
    if lint:
        run(bin / "ruff", "check", ".")
        run(bin / "ruff", "format", "--check", ".")
        run(bin / "mypy", "--strict", "src")
    argv = pytest_argv(bin, rest, everything="--all" in chosen)
    if "--under-load" in chosen:
        twice_at_once(argv)
    else:
        run(*argv)


def resolve_fresh(environment: Path, resolution: str) -> dict[str, tuple[str | None, str | None]]:
    """Install ``.[dev]`` into ``environment`` resolved anew, ignoring the lock.

    Returns the packages whose version differs from the lock's: name -> (locked, installed),
    None where one side lacks the package. ``--refresh`` makes uv ask the index again
    rather than trust what it cached, so "newest" means newest today.
    """
    env = uv_env()
    run(uv(), "venv", "--quiet", environment, env=env)
    python = bin_dir(environment) / "python"
    install: list[str | Path] = [uv(), "pip", "install", "--python", python, "--refresh"]
    run(*install, "--resolution", resolution, "-e", ".[dev]", env=env)
    listing = output(uv(), "pip", "list", "--python", python, "--format", "json")
    installed = {_name(p["name"]): p["version"] for p in json.loads(listing)}
    installed.pop("sqsjobs", None)
    locked = locked_versions(python)
    moved = {
        name: (locked.get(name), installed.get(name))
        for name in sorted(set(locked) | set(installed))
        if locked.get(name) != installed.get(name)
    }
    print(f"\n{summary(moved)}\n", flush=True)
    return moved


# A requirement a line: what ``locked_versions`` reads of ``uv export``.
EXPORT: tuple[str, ...] = ("export", "--frozen", "--extra", "dev", "--no-emit-project")
EXPORT += ("--no-hashes", "--no-header", "--no-annotate")
# Run by the fresh environment's interpreter, which has ``packaging`` (pytest needs it):
# the pins of ``uv export`` on stdin, the ones whose markers hold for it on stdout.
_PINS_FOR_ME = """
import json, sys
from packaging.requirements import Requirement
pins = {}
for line in sys.stdin:
    line = line.split(" #", 1)[0].strip()
    if line and not line.startswith(("#", "-")):
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate():
            pins[req.name] = str(req.specifier).removeprefix("==")
print(json.dumps(pins))
"""


def locked_versions(python: Path) -> dict[str, str]:
    """What uv.lock pins, for ``python``, of each package ``.[dev]`` installs."""
    exported = output(uv(), *EXPORT)
    evaluated = output(python, "-c", _PINS_FOR_ME, stdin=exported)
    return {_name(name): version for name, version in json.loads(evaluated).items()}


def output(*argv: str | Path, stdin: str | None = None) -> str:
    """What ``argv`` prints; if it fails, what it said on stderr is shown, then it raises."""
    done = subprocess.run(
        [str(a) for a in argv], cwd=ROOT, env=uv_env(), input=stdin, capture_output=True, text=True
    )
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr, flush=True)
        raise subprocess.CalledProcessError(done.returncode, [str(a) for a in argv])
    return done.stdout


def summary(moved: dict[str, tuple[str | None, str | None]]) -> str:
    if not moved:
        return "every package is at its locked version"
    lines = [f"{len(moved)} package(s) differ from uv.lock (locked -> installed):"]
    for name, (locked, installed) in moved.items():
        lines.append(f"  {name}: {locked or '(not locked)'} -> {installed or '(not installed)'}")
    return "\n".join(lines)


def _name(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


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


COMMANDS = {"demo": demo, "test": test, "lock": lock, "docs": docs}


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
