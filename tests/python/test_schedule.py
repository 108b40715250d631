"""tessera.schedule(): the schedule object's ops, blocks, transfers and per-GPU figures, checked
against what the problem demands (every block computed once, a ring's n (n - 1) transfers of
known size) and against the schedule's own JSON form and cost report."""

import os
import tempfile
import unittest

import tessera_test_support as support

support.require(["tessera"])
import tessera  # noqa: E402

BF16_BYTES = 2


class ScheduleInspection(unittest.TestCase):
    def test_mesh_computes_every_block_once(self):
        gpus, seq = 8, 16384
        schedule = tessera.schedule(algo="mesh", tile="2x4", gpus=gpus, seq=seq, heads=4, kv_heads=4, head_dim=64,
                                    mask="full", pass_="both")
        self.assertIsInstance(schedule, tessera.Schedule)
        self.assertEqual((schedule.algorithm, schedule.gpus, schedule.tile), ("mesh", gpus, "2x4"))
        form = schedule.to_json()
        self.assertEqual(form["format"], "tessera-schedule")
        self.assertEqual(len(schedule.ops), len(form["ops"]))
        self.assertEqual([op["index"] for op in schedule.ops], list(range(len(schedule.ops))))
        # Full mask: every (q chunk, kv chunk) pair of every head group, once per pass.
        for pass_name in ("forward", "backward"):
            blocks = [(block["head_group"], block["q_chunk"], block["kv_chunk"])
                      for block in schedule.blocks if block["pass"] == pass_name]
            expected = {(group, q, kv) for group in range(schedule.head_groups) for q in range(gpus)
                        for kv in range(gpus)}
            self.assertEqual(len(blocks), len(expected), pass_name)
            self.assertEqual(set(blocks), expected, pass_name)
        # Each block row points at a compute op of its GPU.
        for block in schedule.blocks:
            op = schedule.ops[block["op"]]
            self.assertEqual((op["op"], op["gpu"], op["pass"]), ("compute", block["gpu"], block["pass"]))

    def test_ring_transfers_and_per_gpu_figures(self):
        gpus, seq, kv_heads, head_dim = 4, 8192, 2, 64
        schedule = tessera.schedule(algo="ring", gpus=gpus, seq=seq, heads=8, kv_heads=kv_heads, head_dim=head_dim,
                                    mask="full", pass_="forward")
        transfers = schedule.transfers
        # Pass-KV forward: each GPU sends a KV chunk to its neighbour n - 1 times.
        self.assertEqual(len(transfers), gpus * (gpus - 1))
        kv_chunk_bytes = 2 * (seq // gpus) * kv_heads * head_dim * BF16_BYTES
        for transfer in transfers:
            self.assertEqual((transfer["kind"], transfer["dst"]), ("send", (transfer["src"] + 1) % gpus))
            self.assertEqual(transfer["bytes"], kv_chunk_bytes)
            self.assertEqual(schedule.ops[transfer["op"]]["op"], "send")
        sends = [op for op in schedule.ops if op["op"] == "send"]
        receives = [op for op in schedule.ops if op["op"] == "recv"]
        self.assertEqual(len(sends), len(receives))
        # The per-GPU rows of the cost model agree with the transfers flattened here.
        per_gpu = schedule.per_gpu
        self.assertEqual(len(per_gpu), gpus)
        for row in per_gpu:
            self.assertEqual(row["recv_bytes"], sum(t["bytes"] for t in transfers if t["dst"] == row["gpu"]))
            self.assertEqual(row["sent_bytes"], sum(t["bytes"] for t in transfers if t["src"] == row["gpu"]))
            self.assertGreater(row["compute_s"], 0)
        self.assertEqual(schedule.cost["recv_bytes_max"], (gpus - 1) * kv_chunk_bytes)

    def test_collective_transfers(self):
        # All-gather of KV: the collective's transfers, one per (source, destination) pair.
        gpus = 4
        schedule = tessera.schedule(algo="all-gather", gpus=gpus, seq=4096, mask="full", pass_="forward")
        collective = [t for t in schedule.transfers if t["collective"] is not None]
        self.assertEqual(len(schedule.collectives), 1)
        self.assertEqual({(t["src"], t["dst"]) for t in collective},
                         {(s, d) for s in range(gpus) for d in range(gpus) if s != d})
        self.assertEqual(sum(t["bytes"] for t in collective),
                         sum(row["recv_bytes"] for row in schedule.per_gpu))

    def test_save_writes_what_the_cli_checks(self):
        schedule = tessera.schedule(algo="ring", gpus=4, seq="16K")
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "ring.json")
            schedule.save(path)
            stdout, _ = support.run_cli("check", path)
            self.assertIn("valid ring", stdout)


if __name__ == "__main__":
    support.main()
