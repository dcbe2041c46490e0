"""Integrations with web frameworks; each module imports its framework's types only."""
