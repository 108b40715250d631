"""examples/mesh_vs_ring.py writes its PNG (headless, matplotlib's Agg backend, no DISPLAY) and
prints one line per GPU count and schedule."""

import os
import subprocess
import sys
import tempfile
import unittest

import tessera_test_support as support

support.require(["tessera", "matplotlib"])

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "mesh_vs_ring.py")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Example(unittest.TestCase):
    def test_writes_png(self):
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "figure.png")
            environment = dict(os.environ)
            environment.pop("DISPLAY", None)  # as on a headless machine
            result = subprocess.run([sys.executable, EXAMPLE, "--out", out, "--gpus", "4,16,64"], capture_output=True,
                                    text=True, env=environment, timeout=600)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, "rb") as file:
                data = file.read()
        self.assertEqual(data[:8], PNG_SIGNATURE)
        self.assertGreater(len(data), 10000)
        self.assertIn("wrote " + out, result.stdout)
        lines = [line.split() for line in result.stdout.splitlines() if "GPUs" in line]
        self.assertEqual(len(lines), 6)  # 3 GPU counts x 2 schedules


if __name__ == "__main__":
    support.main()
