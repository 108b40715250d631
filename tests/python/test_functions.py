"""tessera.cost, simulate and the errors: figures against closed forms (DESIGN.md section 4),
the module against the CLI's --json, and bad input as ValueError with the CLI's message."""

import unittest

import tessera_test_support as support

support.require(["tessera"])
import tessera  # noqa: E402

BF16_BYTES = 2


def plain(value):
    """Whether value is made of dicts, lists, str, int, float, bool and None only."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and plain(member) for key, member in value.items())
    if isinstance(value, list):
        return all(plain(member) for member in value)
    return value is None or isinstance(value, (str, int, float, bool))


class CostClosedForms(unittest.TestCase):
    def test_ring_forward_volume(self):
        # Ring (pass-KV), full mask, forward: each GPU receives the K and V chunks of the n - 1
        # others: 2 (n - 1) N/n tokens x kv_heads x d elements, bf16.
        for gpus, seq, heads, kv_heads, head_dim in ((8, 65536, 8, 8, 128), (16, 131072, 32, 4, 64), (4, 4096, 2, 1, 32)):
            with self.subTest(gpus=gpus, kv_heads=kv_heads):
                report = tessera.cost(algo="ring", gpus=gpus, seq=seq, heads=heads, kv_heads=kv_heads,
                                      head_dim=head_dim, mask="full", pass_="forward")
                expected = 2 * (gpus - 1) * (seq // gpus) * kv_heads * head_dim * BF16_BYTES
                self.assertEqual(report["recv_bytes_max"], expected)
                self.assertEqual(report["recv_bytes_by_kind"]["KV"], expected)
                self.assertEqual(report["gpus"], gpus)

    def test_mesh_forward_volume(self):
        # Mesh a x b, MHA, full mask, forward: Q, KV and partial O make 2 (a + b - 2) N d / n
        # elements per head per GPU (LSE excluded).
        seq, heads, head_dim = 32768, 4, 64
        for tile, (a, b) in (("2x4", (2, 4)), ("4x4", (4, 4)), ("2x8", (2, 8))):
            gpus = a * b
            with self.subTest(tile=tile):
                report = tessera.cost(algo="mesh", tile=tile, gpus=gpus, seq=seq, heads=heads, kv_heads=heads,
                                      head_dim=head_dim, mask="full", pass_="forward")
                by_kind = report["recv_bytes_by_kind"]
                expected = 2 * (a + b - 2) * (seq // gpus) * head_dim * heads * BF16_BYTES
                self.assertEqual(by_kind["Q"] + by_kind["KV"] + by_kind["O"], expected)

    def test_bandwidth_units(self):
        # 400 Gb/s (bits) and 50 GB/s (bytes) are one link: the same report.
        bits = tessera.cost(algo="ring", gpus=8, seq="64K", bandwidth="400Gb/s")
        bytes_ = tessera.cost(algo="ring", gpus=8, seq="64K", bandwidth="50GB/s")
        self.assertEqual(bits["hardware"]["link_bytes_per_s"], 50e9)
        self.assertEqual(bits, bytes_)

    def test_counts_as_text_or_numbers(self):
        self.assertEqual(tessera.cost(algo="ring", gpus="8", seq="64K"), tessera.cost(algo="ring", gpus=8, seq=65536))

    def test_plain_python_objects(self):
        report = tessera.cost(algo="mesh", gpus=16, seq="64K", per_gpu=True, topology="h100-ib:2")
        self.assertTrue(plain(report))
        self.assertEqual(len(report["per_gpu"]), 16)
        self.assertEqual([row["gpu"] for row in report["per_gpu"]], list(range(16)))
        self.assertEqual(max(row["recv_bytes"] for row in report["per_gpu"]), report["recv_bytes_max"])
        self.assertIn("network", report)


class MatchesCli(unittest.TestCase):
    def test_cost(self):
        expected = support.cli_json("cost", "--algo", "mesh", "--tile", "4x4", "--gpus", "16", "--seq", "256K",
                                    "--topology", "h100-ib:2", "--placement", "round-robin", "--per-gpu")
        got = tessera.cost(algo="mesh", tile="4x4", gpus=16, seq="256K", topology="h100-ib:2",
                           placement="round-robin", per_gpu=True)
        self.assertEqual(got, expected)

    def test_simulate(self):
        expected = support.cli_json("simulate", "--algo", "ring", "--gpus", "8", "--seq", "128K", "--fidelity",
                                    "alpha-beta", "--per-gpu")
        got = tessera.simulate(algo="ring", gpus=8, seq="128K", fidelity="alpha-beta", per_gpu=True)
        for timing in ("wall_s", "events_per_s"):  # wall-clock figures of each run
            self.assertGreaterEqual(got.pop(timing), 0)
            expected.pop(timing)
        self.assertEqual(got, expected)
        self.assertGreater(got["makespan_s"], 0)

    def test_collective(self):
        # Ring all-reduce of S bytes over n ranks at bandwidth B takes 2 (n - 1)/n S/B plus
        # latencies (DESIGN.md section 4): at 1 GB, the bandwidth term dominates.
        expected = support.cli_json("simulate", "--collective", "all-reduce", "--size", "1GB", "--gpus", "8",
                                    "--bandwidth", "400Gb/s")
        got = tessera.simulate(collective="all-reduce", size="1GB", gpus=8, bandwidth="400Gb/s")
        self.assertGreaterEqual(got.pop("wall_s"), 0)
        expected.pop("wall_s")
        self.assertEqual(got, expected)
        self.assertEqual(got["size_bytes"], 1e9)
        bandwidth_term_s = 2 * 7 / 8 * 1e9 / 50e9
        self.assertGreaterEqual(got["makespan_s"], bandwidth_term_s)
        self.assertLess(got["makespan_s"], bandwidth_term_s * 1.01)


class Errors(unittest.TestCase):
    def assert_same_error(self, flags, fields, function=tessera.cost, command="cost"):
        _, stderr = support.run_cli(command, *flags, expect=2)
        self.assertTrue(stderr.startswith("tessera: "), stderr)
        with self.assertRaises(ValueError) as raised:
            function(**fields)
        self.assertEqual(str(raised.exception), stderr[len("tessera: "):].rstrip("\n"))

    def test_bad_values_give_the_cli_message(self):
        self.assert_same_error(["--algo", "ring", "--seq", "1X"], {"algo": "ring", "seq": "1X"})
        self.assert_same_error(["--algo", "ring", "--bandwidth", "400"], {"algo": "ring", "bandwidth": "400"})
        self.assert_same_error(["--algo", "ring", "--variant", "zigzag"], {"algo": "ring", "variant": "zigzag"})
        self.assert_same_error(["--algo", "warp"], {"algo": "warp"})
        self.assert_same_error(["--algo", "ulysses", "--gpus", "7"], {"algo": "ulysses", "gpus": 7})
        self.assert_same_error(["--algo", "ring", "--gpus", "64", "--topology", "h100-ib:2"],
                               {"algo": "ring", "gpus": 64, "topology": "h100-ib:2"})
        self.assert_same_error(["--model", "fast"], {"model": "fast"}, tessera.plan, "plan")
        self.assert_same_error(["--collective", "all-reduce", "--size", "0"], {"collective": "all-reduce", "size": 0},
                               tessera.simulate, "simulate")

    def test_fields_that_mean_nothing_together(self):
        # The command line's rules (scenario/field_rules.hpp), with its messages.
        self.assert_same_error(["--algo", "ring", "--gpus", "16", "--topology", "h100-ib:2", "--bandwidth", "400Gb/s"],
                               {"algo": "ring", "gpus": 16, "topology": "h100-ib:2", "bandwidth": "400Gb/s"})
        self.assert_same_error(["--algo", "ring", "--placement", "round-robin"],
                               {"algo": "ring", "placement": "round-robin"})
        self.assert_same_error(["--algo", "ring", "--window", "4K"], {"algo": "ring", "window": "4K"})
        self.assert_same_error(["--model", "analytic", "--gpu", "h100"], {"model": "analytic", "gpu": "h100"},
                               tessera.plan, "plan")
        self.assert_same_error(["--algo", "ring", "--size", "1G"], {"algo": "ring", "size": "1G"},
                               tessera.simulate, "simulate")
        self.assert_same_error(["--collective", "all-reduce", "--algo", "ring"],
                               {"collective": "all-reduce", "algo": "ring"}, tessera.simulate, "simulate")
        self.assert_same_error(["--algo", "ring", "--peak-tflops", "500"], {"algo": "ring", "peak_tflops": 500},
                               tessera.simulate, "simulate")

    def test_wrong_types_name_the_flag(self):
        with self.assertRaisesRegex(ValueError, "^--peak-tflops: expected a number"):
            tessera.cost(algo="ring", peak_tflops="fast")
        with self.assertRaisesRegex(ValueError, "^--gpus: expected text or a number, got a bool"):
            tessera.cost(algo="ring", gpus=True)

    def test_unknown_keyword_is_a_type_error(self):
        with self.assertRaisesRegex(TypeError, "cost\\(\\) got an unexpected keyword argument 'gpu_count'"):
            tessera.cost(algo="ring", gpu_count=8)
        with self.assertRaisesRegex(TypeError, "plan\\(\\) got an unexpected keyword argument 'algo'"):
            tessera.plan(algo="ring")


if __name__ == "__main__":
    support.main()
