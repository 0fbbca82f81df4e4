"""Fuzz targets (tests/fuzz/README.md); a package so its conftest does not shadow tests/conftest.py."""
