"""tokcourse: the reference package of the course."""

__version__ = "0.1.0"
