"""The release: the one place it is written (``pyproject.toml`` reads it from here).

Bump it with every release, and say in CHANGELOG.md what changed and how to upgrade;
a change to what is stored or sent also says which releases can read it.
"""

__version__ = "0.2.0"
