"""Cold-start cost of the Lambda handler module, next to boto3 and pydantic alone.

Each sample is a fresh interpreter (as a Lambda cold start is), timing the imports inside
it; the cases take turns, so a busy machine slows them alike. The script prints the
median of each and what sqsjobs adds to a function that already uses boto3 and pydantic
(target: at most 40 ms). That baseline is "pydantic.BaseModel": ``import pydantic`` alone
is lazy and loads none of the model machinery, which ``Job`` (a pydantic model with JSON
fields, by contract) and any function's own model need; the difference over plain
``import boto3, pydantic`` is printed too. "with a model" adds a pydantic model with a
JSON field, the cost any function with a payload model pays to pydantic.

Samples run with bytecode caches, as a deployed function has them (pip compiles a
package's modules when it installs it): ``PYTHONDONTWRITEBYTECODE`` is dropped and one
warm-up run per case writes the caches first, else every sample would time sqsjobs'
modules being compiled from source while boto3 and pydantic load compiled.

    python bench/lambda_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

PROBE = "import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
MODEL = (
    "import boto3, pydantic; from pydantic import BaseModel, JsonValue; "
    "type('Payload', (BaseModel,), {'__annotations__': {'data': JsonValue}})"
)
CASES = {
    "boto3": "import boto3",
    "boto3, pydantic": "import boto3, pydantic",
    "pydantic.BaseModel": "import boto3, pydantic; from pydantic import BaseModel, JsonValue",
    "... with a model": MODEL,
    "sqsjobs.aws.lambda_": "import boto3, pydantic; import sqsjobs.aws.lambda_",
    "sqsjobs (root only)": "import sqsjobs",
}


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def sample(code: str) -> float:
    probe = PROBE.format(code=code)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=ENV
    )
    return float(out.stdout) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    times: dict[str, list[float]] = {label: [] for label in CASES}
    for code in CASES.values():
        sample(code)  # writes the bytecode caches
    for _ in range(runs):
        for label, code in CASES.items():
            times[label].append(sample(code))
    medians = {label: statistics.median(taken) for label, taken in times.items()}
    for label, taken in times.items():
        print(f"{label:22} median {medians[label]:7.1f} ms  (min {min(taken):6.1f}, {runs} runs)")
    own = medians["sqsjobs.aws.lambda_"] - medians["pydantic.BaseModel"]
    print(f"sqsjobs.aws.lambda_ over boto3 + pydantic.BaseModel: {own:+.1f} ms (target <= +40)")
    lazy = medians["sqsjobs.aws.lambda_"] - medians["boto3, pydantic"]
    print(f"sqsjobs.aws.lambda_ over boto3 + pydantic (lazy, no BaseModel): {lazy:+.1f} ms")
    model = medians["sqsjobs.aws.lambda_"] - medians["... with a model"]
    print(f"sqsjobs.aws.lambda_ over boto3 + a pydantic model: {model:+.1f} ms")


if __name__ == "__main__":
    main()
