"""The package version, kept in its own module so that setuptools can read it without importing numpy or xarray."""

__version__ = "0.1.0"
