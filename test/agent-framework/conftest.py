"""Starts cmd/testenv (MinIO and the real skillsvc binary with the example
library for alice) through the Python client's pytest plugin, loaded from
its file: this venv has Agent Framework and the MCP SDK, not the client's
gRPC dependencies, and the plugin needs only the standard library."""

import importlib.util
import pathlib
import sys

_plugin = pathlib.Path(__file__).resolve().parents[2] / "clients/python/src/skillsvc/testing.py"
_spec = importlib.util.spec_from_file_location("skillsvc_testing", _plugin)
testing = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = testing
_spec.loader.exec_module(testing)

skillsvc_env = testing.skillsvc_env
