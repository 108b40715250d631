"""README's pip route, offline: a virtual environment that sees Debian's setuptools, and
`pip install --no-build-isolation --no-index` of the repository (setup.py runs CMake on this
build tree, TESSERA_BUILD_DIR). The installed module is imported from outside the source tree
and gives the build tree's figures. Without the venv module (python3-venv), exit 77: skipped."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import tessera_test_support as support

support.require(["tessera", "venv", "ensurepip"])
import tessera  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class PipInstall(unittest.TestCase):
    def test_install_into_a_venv(self):
        build_dir = os.path.dirname(os.path.dirname(os.path.abspath(support.CLI)))  # BUILD/cli/tessera
        with tempfile.TemporaryDirectory() as directory:
            environment_dir = os.path.join(directory, "env")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", environment_dir], check=True)
            python = os.path.join(environment_dir, "bin", "python")
            environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
            environment["TESSERA_BUILD_DIR"] = build_dir
            result = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                                     "--quiet", ROOT], capture_output=True, text=True, env=environment, timeout=1200)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            probe = ("import json, tessera; print(json.dumps([tessera.__file__, "
                     "tessera.cost(algo='ring', gpus=4, seq='16K')['time_s']]))")
            result = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=environment,
                                    cwd=directory, timeout=600)
            self.assertEqual(result.returncode, 0, result.stderr)
            path, time_s = json.loads(result.stdout)
        self.assertTrue(path.startswith(environment_dir), path)
        self.assertEqual(time_s, tessera.cost(algo="ring", gpus=4, seq="16K")["time_s"])


if __name__ == "__main__":
    support.main()
