"""tessera.plan() against `tessera plan --json` on the default scenario (256 GPUs, 1M tokens, the
Llama-3-8B-like layer, ranked by the flow simulation): the same dict, number for number.

The two go through the same library, but by different roads: the CLI's flags parsed by CLI11
and its JSON printed as text, the module's keyword defaults and its dict built in memory. JSON
writes doubles so that they read back exactly, so equality is exact, not approximate.
"""

import unittest

import tessera_test_support as support


class PlanMatchesCli(unittest.TestCase):
    def test_default_scenario(self):
        expected = support.cli_json("plan")
        import tessera
        got = tessera.plan()
        self.assertEqual(got.keys(), expected.keys())
        # The ranking first, entry by entry, so that a difference names the schedule.
        self.assertGreater(len(expected["ranking"]), 10)
        self.assertEqual([entry["schedule"] for entry in got["ranking"]],
                         [entry["schedule"] for entry in expected["ranking"]])
        for mine, theirs in zip(got["ranking"], expected["ranking"]):
            self.assertEqual(mine, theirs, mine["schedule"])
            self.assertIsInstance(mine["time_s"], float)
        self.assertEqual(got, expected)
        self.assertEqual(got["gpus"], 256)
        self.assertEqual(got["problem"]["seq_len"], 1 << 20)
        self.assertEqual(got["model"], "flow")

    def test_fields_as_the_flags(self):
        # The same scenario typed two ways: keyword arguments and flags, analytic model, top 5.
        expected = support.cli_json("plan", "--gpus", "16", "--seq", "128K", "--kv-heads", "4", "--pass", "forward",
                                    "--bandwidth", "400Gb/s", "--model", "analytic", "--top", "5")
        import tessera
        got = tessera.plan(gpus=16, seq="128K", kv_heads=4, pass_="forward", bandwidth="400Gb/s", model="analytic",
                           top=5)
        self.assertEqual(got, expected)
        self.assertEqual(len(got["ranking"]), 5)
        self.assertEqual(got["hardware"]["link_bytes_per_s"], 400e9 / 8)

    def test_exhaustive(self):
        # exhaustive=True as --exhaustive: every candidate priced, none set aside by its floor; the
        # default sets some aside and ranks the others as the exhaustive plan does.
        flags = ["--gpus", "16", "--seq", "256K", "--model", "analytic"]
        expected = support.cli_json("plan", *flags, "--exhaustive")
        import tessera
        got = tessera.plan(gpus=16, seq="256K", model="analytic", exhaustive=True)
        self.assertEqual(got, expected)
        self.assertEqual(got["set_aside"], [])
        floored = tessera.plan(gpus=16, seq="256K", model="analytic")
        self.assertEqual(floored, support.cli_json("plan", *flags))
        self.assertGreater(len(floored["set_aside"]), 0)
        self.assertEqual(len(floored["ranking"]) + len(floored["set_aside"]), len(got["ranking"]))
        kept = [entry for entry in got["ranking"] if entry["schedule"] in {e["schedule"] for e in floored["ranking"]}]
        self.assertEqual(floored["ranking"], kept)


if __name__ == "__main__":
    support.main()
