"""``sqsjobs infra package``: a Lambda deployment zip of the application's jobs.

The work is ``sqsjobs.infra.build_package``'s; this turns its refusals into bad usage
(exit 2) and pip's failures into one error line (exit 1), and says what it wrote: the
zip's size, the handler settings of its three entry points, and the template that
deploys it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..infra import (
    DEFAULT_ARCH,
    DEFAULT_PYTHON,
    EXTRAS,
    MACHINES,
    PYTHONS,
    Package,
    PackageFailed,
    PackageRefused,
    PackageRequest,
    Target,
    build_package,
)
from ._errors import CommandFailed, usage_error

MEGABYTE = 1_000_000
# Lambda's limits on a function's code, unzipped (layers included) and zipped when
# uploaded directly; through S3, the zipped size is limited only by the unzipped one.
UNZIPPED_LIMIT = 250 * 1024 * 1024
PURPOSES = {
    "handler": "the job queue's event source mapping",
    "reconcile": "the reconciler's schedule",
    "cron": "the every-minute cron schedule",
}


def index_options(
    index_url: str | None, extra_index_urls: tuple[str, ...], links: tuple[str, ...], no_index: bool
) -> tuple[str, ...]:
    """pip's index options, as given."""
    options: list[str] = []
    if index_url:
        options += ["--index-url", index_url]
    for url in extra_index_urls:
        options += ["--extra-index-url", url]
    for link in links:
        options += ["--find-links", link]
    if no_index:
        options.append("--no-index")
    return tuple(options)


@click.command()
@click.option(
    "--registry",
    required=True,
    metavar="MODULE:REGISTRY",
    help="The application's handlers, as `sqsjobs worker` takes them: app.jobs:registry.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The zip to write (replaced if it exists).",
)
@click.option(
    "--python",
    "python",
    default=DEFAULT_PYTHON,
    show_default=True,
    metavar="X.Y",
    help=f"The function's Python runtime: {', '.join(PYTHONS)}.",
)
@click.option(
    "--arch",
    type=click.Choice(tuple(MACHINES)),
    default=DEFAULT_ARCH,
    show_default=True,
    help="The function's architecture (Lambda's Architectures).",
)
@click.option(
    "--source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path(),
    show_default="the current directory",
    help="The directory holding MODULE's top-level package (or module): only that is "
    "copied, without hidden files, __pycache__ or virtual environments in it.",
)
@click.option(
    "--extra",
    "extras",
    multiple=True,
    type=click.Choice(EXTRAS),
    help="Another extra of sqsjobs to install; cron always is. Repeat for more.",
)
@click.option(
    "--requirement",
    "-r",
    "requirements",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The application's own dependencies, a pip requirements file; installed like "
    "sqsjobs's, as wheels for the target only. Repeat for more.",
)
@click.option(
    "--sqsjobs-from",
    type=click.Path(exists=True, path_type=Path),
    help="Install sqsjobs from this wheel or source directory instead of the index "
    "(default: the index's release of this version), for development and tests.",
)
@click.option("--index-url", metavar="URL", help="pip's --index-url.")
@click.option(
    "--extra-index-url", "extra_index_urls", multiple=True, metavar="URL", help="pip's, repeatable."
)
@click.option("--find-links", "links", multiple=True, metavar="PATH|URL", help="pip's, repeatable.")
@click.option("--no-index", is_flag=True, help="pip's: no package index, --find-links only.")
def package(
    registry: str,
    out: Path,
    python: str,
    arch: str,
    source: Path,
    extras: tuple[str, ...],
    requirements: tuple[Path, ...],
    sqsjobs_from: Path | None,
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    links: tuple[str, ...],
    no_index: bool,
) -> None:
    """Build a Lambda deployment zip of the jobs in MODULE:REGISTRY.

    pip installs sqsjobs (with the cron extra), boto3, botocore and the --requirement
    files into the zip as wheels for the target alone (CPython X.Y on Lambda's Amazon
    Linux for --arch), never the build machine's. Of --source, only the top-level
    package (or module) of MODULE is copied. A generated module, sqsjobs_lambda_handler,
    gives the handlers of the three functions the zip serves: .handler (the queue's
    event source mapping), .reconcile and .cron (schedules). The zip is reproducible:
    the same inputs give the same bytes. Upload it to S3 and deploy the
    sqsjobs-lambda-worker template with it (docs/how-to/workers-lambda.md). Nothing is written
    unless every step succeeds.
    """
    try:
        request = PackageRequest(
            registry=registry,
            out=out,
            source=source,
            target=Target.checked(python, arch),
            extras=extras,
            requirements=requirements,
            sqsjobs_from=sqsjobs_from,
            index_options=index_options(index_url, extra_index_urls, links, no_index),
        )
        request.check()
        click.echo(
            f"Installing sqsjobs[{','.join(request.all_extras())}] and its dependencies "
            f"for {request.target.runtime} on {request.target.arch} with pip",
            err=True,
        )
        built = build_package(request)
    except PackageRefused as refused:
        raise usage_error(str(refused)) from None
    except PackageFailed as failed:
        raise CommandFailed(str(failed)) from None
    report(built)


def report(built: Package) -> None:
    """What was written, and the handler setting of each function the zip serves."""
    click.echo(
        f"Wrote {built.path}: {built.size / MEGABYTE:.1f} MB zipped, "
        f"{built.unpacked / MEGABYTE:.1f} MB unzipped, {built.files} files; "
        f"sqsjobs {built.sqsjobs_version} for {built.target.runtime} on {built.target.arch}"
    )
    for entry, handler in built.handlers.items():
        click.echo(f"Handler: {handler:<34} {PURPOSES[entry]}")
    if built.unpacked > UNZIPPED_LIMIT:
        click.echo(
            f"warning: Lambda takes at most {UNZIPPED_LIMIT // (1024 * 1024)} MiB of code "
            "unzipped; this package is larger",
            err=True,
        )
