"""Set-up and checks for a fresh clone, with nothing but python3 on the machine.

    python3 dev.py demo    # create .venv, install sqsjobs with the local AWS emulator, run the demo
    python3 dev.py test    # create .venv, install the dev tools, run linters, type checks and tests

The virtual environment is reused while pyproject.toml is unchanged; a changed
pyproject.toml reinstalls, so a stale environment never hides a missing dependency.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".installed"


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


def test(args: list[str]) -> None:
    ensure_venv("dev")
    run(BIN / "ruff", "check", ".")
    run(BIN / "ruff", "format", "--check", ".")
    run(BIN / "mypy", "--strict", "src")
    run(BIN / "python", "-m", "pytest", *args)


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
