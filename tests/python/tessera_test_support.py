"""What the Python tests share: the built CLI, running it, and exit code 77 (ctest's SKIP_RETURN_CODE)
when the module cannot be imported, so that a missing module shows as skipped, never as passed.

Each test file is run by ctest as: python3 FILE TESSERA_CLI, with PYTHONPATH at build/<preset>/python.
"""

import json
import os
import subprocess
import sys
import unittest

SKIP_RETURN_CODE = 77


def require(module_names):
    """Imports each module or exits with SKIP_RETURN_CODE naming the one missing."""
    for name in module_names:
        try:
            __import__(name)
        except ImportError as error:
            print(f"SKIPPED: cannot import {name} ({error}); PYTHONPATH={os.environ.get('PYTHONPATH', '')}")
            sys.exit(SKIP_RETURN_CODE)


CLI = None  # the built tessera executable, set by main()


def run_cli(*args, expect=0):
    """Runs the built CLI; returns (stdout, stderr). Asserts the exit status."""
    result = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    if result.returncode != expect:
        raise AssertionError(f"tessera {' '.join(args)}: exit {result.returncode}, expected {expect}\n{result.stderr}")
    return result.stdout, result.stderr


def cli_json(*args):
    return json.loads(run_cli(*args, "--json")[0])


def main(modules=("tessera",)):
    """Usage: FILE TESSERA_CLI [unittest arguments]."""
    global CLI
    if len(sys.argv) < 2:
        print(f"usage: {sys.argv[0]} TESSERA_CLI [unittest arguments]", file=sys.stderr)
        sys.exit(2)
    CLI = sys.argv[1]
    require(modules)
    unittest.main(argv=[sys.argv[0], *sys.argv[2:]], verbosity=2)
