"""Cold-start cost of the Lambda handler module, next to boto3 alone.

Each sample is a fresh interpreter (as a Lambda cold start is), timing the import inside
it; the script prints the median of each and the difference, which is what sqsjobs adds
to a function that already uses boto3 (target: at most 150 ms).

    python bench/lambda_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBE = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
CASES = {
    "boto3": "boto3",
    "sqsjobs.aws.lambda_": "sqsjobs.aws.lambda_",
    "sqsjobs (root only)": "sqsjobs",
}


def sample(module: str) -> float:
    code = PROBE.format(module=module)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    medians: dict[str, float] = {}
    for label, module in CASES.items():
        times = [sample(module) for _ in range(runs)]
        medians[label] = statistics.median(times)
        print(f"{label:22} median {medians[label]:7.1f} ms  (min {min(times):6.1f}, {runs} runs)")
    extra = medians["sqsjobs.aws.lambda_"] - medians["boto3"]
    ratio = medians["sqsjobs.aws.lambda_"] / medians["boto3"]
    print(f"sqsjobs.aws.lambda_ over boto3: {extra:+.1f} ms (x{ratio:.2f}; target <= +150 ms)")


if __name__ == "__main__":
    main()
