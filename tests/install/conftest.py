"""The local index and throwaway venvs of tests/test_install.py, for the tests in this folder."""

from tests.test_install import site, venv_template, wheels  # noqa: F401
