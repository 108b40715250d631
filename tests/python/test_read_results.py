"""tessera.read_results() on a tiny sweep run by the CLI: one dict per point, numbers as numbers,
the same cells as Python's csv module reads, and the ring rows' bytes against the closed form."""

import csv
import os
import tempfile
import unittest

import tessera_test_support as support

support.require(["tessera"])
import tessera  # noqa: E402

SPEC = """fixed:
  seq: 64K
  mask: full
  heads: 8
  kv_heads: 8
  head_dim: 128
  pass: forward
  fidelity: analytic
axes:
  - gpus: [4, 8]
  - algo: [ring, ulysses]
"""


class ReadResults(unittest.TestCase):
    def test_tiny_sweep(self):
        with tempfile.TemporaryDirectory() as directory:
            spec = os.path.join(directory, "spec.yaml")
            with open(spec, "w") as file:
                file.write(SPEC)
            out = os.path.join(directory, "out")
            support.run_cli("sweep", spec, "--out", out, "--quiet", "--jobs", "1")
            rows = tessera.read_results(out)
            self.assertEqual(rows, tessera.read_results(os.path.join(out, "results.csv")))
            with open(os.path.join(out, "results.csv"), newline="") as file:
                cells = list(csv.DictReader(file))
        self.assertEqual(len(rows), 4)  # 2 GPU counts x 2 algorithms
        self.assertEqual(len(cells), 4)
        for row, text in zip(rows, cells):
            self.assertEqual(list(row.keys()), list(text.keys()))
            for column, value in row.items():
                if value is None:
                    self.assertEqual(text[column], "")
                elif isinstance(value, (int, float)):
                    self.assertEqual(value, float(text[column]), column)
                else:
                    self.assertEqual(value, text[column], column)
        self.assertEqual([(row["gpus"], row["algo"]) for row in rows],
                         [(4, "ring"), (4, "ulysses"), (8, "ring"), (8, "ulysses")])
        for row in rows:
            self.assertEqual(row["status"], "ok")
            self.assertIsInstance(row["index"], int)
            self.assertIsInstance(row["time_s"], float)
            if row["algo"] == "ring":
                gpus = row["gpus"]
                self.assertEqual(row["recv_bytes_max"], 2 * (gpus - 1) * (65536 // gpus) * 8 * 128 * 2)

    def test_missing_results(self):
        with tempfile.TemporaryDirectory() as directory:
            with self.assertRaises(ValueError) as raised:
                tessera.read_results(directory)
            self.assertIn("results.csv", str(raised.exception))


if __name__ == "__main__":
    support.main()
