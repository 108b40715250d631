"""Mesh-Attention versus Ring: experiments/mesh-attention/REPORT.md."""
from reports.common import *  # noqa: F401,F403 (the helpers every report uses)


def mesh_attention():
    name = "mesh-attention"
    volume = ok(sweep(name, "volume"))
    strong = ok(sweep(name, "strong"))
    weak = ok(sweep(name, "weak"))
    gqa = ok(sweep(name, "gqa"))
    ring_linear = ok(sweep(name, "ring-placement"))
    md = [header("Mesh-Attention versus Ring-Attention", ["volume", "strong", "weak", "gqa", "ring-placement", "sensitivity"], name)]
    md.append(
        "What the paper claims (arXiv 2512.20968; quoted from `/work/shared/research/papers.md` A.5-A.6, tags as "
        "there: [P] the paper's abstract, [S] a secondary source, [I] an inference of the digest):\n\n"
        "- communication volume: up to **85.4 %** less than Ring at 256 GPUs, **79.0 %** on average [P]; "
        "85.5 % per GPU in the breakdown experiment [S];\n"
        "- speedup over Ring: up to **3.4x**, **2.9x** on average [P]; at 1M tokens Ring degrades sharply beyond "
        "64 GPUs while Mesh scales to 128, and the best Mesh time is **3.15x** the best Ring time [S];\n"
        "- communication is still 86.6 % of Mesh's run time at 256 GPUs, its waiting 74.9 % below Ring's [S];\n"
        "- GQA: Mesh always beats Ring; at GQA degrees 4 and 8 it still cuts communication a lot but gains less "
        "end to end [S].\n\n"
        "`/work/shared/papers/mesh-attention-overview.txt` also has a per-GPU-count table (64, 128, 256 GPUs: "
        "71 %, 77 %, 85 % less volume; 2.2x, 2.8x, 3.4x); that summary makes the \"provably-correct\" "
        "scheduler claim by which research/papers.md identifies the AI-generated summaries it classes as "
        "unreliable, so the table is quoted here for reference only and not compared.\n\n"
        "The paper's cluster (GPU type, GPUs per server, network) is not known [NF]; the model is 32 heads of 128, "
        "MHA by default, causal mask [S]. Tessera's runs use that layer, bf16, forward + backward for times.\n\n")

    # Volume.
    md.append("## 1. Communication volume versus Ring, 16 to 256 GPUs (1M tokens, MHA, causal)\n\n")
    md.append(
        "Analytical model, bytes received by the busiest GPU. Mesh takes every tile a x b (a x b = GPUs) and the "
        "table keeps the one that moves the fewest bytes. The *Q+KV+O* column counts what the paper's formula "
        "counts (Q, K, V and partial O, no LSE; research/papers.md A.5), *all* adds the LSE statistics.\n\n")
    rows, derived = [], []
    theory = {16: 60.0, 32: 67.7, 64: 77.8, 128: 82.7, 256: 88.2}
    reductions = []
    for gpus in sorted({row["gpus"] for row in volume}):
        forward = [row for row in volume if row["gpus"] == gpus and row["pass"] == "forward"]
        ring = next(row for row in forward if row["algo"] == "ring")
        mesh = best([row for row in forward if row["algo"] == "mesh"], "recv_bytes_max")
        qkvo = lambda row: num(row, "recv_q_bytes_mean") + num(row, "recv_kv_bytes_mean") + num(row, "recv_o_bytes_mean")
        reduction = 1 - qkvo(mesh) / qkvo(ring)
        reductions.append((gpus, reduction))
        both = [row for row in volume if row["gpus"] == gpus and row["pass"] == "both"]
        ring_both = next(row for row in both if row["algo"] == "ring")
        mesh_both = best([row for row in both if row["algo"] == "mesh"], "recv_bytes_max")
        rows.append([gpus, gb(num(ring, "recv_bytes_max")), mesh["tile"], gb(num(mesh, "recv_bytes_max")),
                     pct(reduction), pct(1 - num(mesh, "recv_bytes_max") / num(ring, "recv_bytes_max")),
                     "%.1f %%" % theory[gpus],
                     pct(1 - num(mesh_both, "recv_bytes_max") / num(ring_both, "recv_bytes_max")) + " (" + mesh_both["tile"] + ")",
                     "85.4 % [P]" if gpus == 256 else ""])
        derived.append([gpus, "%.1f" % theory[gpus], "closed form, forward (papers.md A.5)"])
        derived.append([gpus, "%.4f" % (100 * reduction), "Tessera, forward, Q+KV+O"])
        derived.append([gpus, "%.4f" % (100 * (1 - num(mesh_both, "recv_bytes_max") / num(ring_both, "recv_bytes_max"))),
                        "Tessera, fwd+bwd, all bytes"])
    derived.append([256, "85.4", "paper, 256 GPUs [P]"])
    md.append(table(["GPUs", "Ring, fwd", "best tile", "Mesh, fwd", "reduction Q+KV+O", "reduction all",
                     "closed form", "reduction fwd+bwd (tile)", "paper"], rows))
    average = sum(r for _, r in reductions) / len(reductions)
    average_64 = sum(r for g, r in reductions if g >= 64) / len([g for g, _ in reductions if g >= 64])
    path = write_csv(name, "volume-reduction", ["gpus", "reduction_pct", "source"], derived)
    md.append("\n" + image(plot(name, path, "volume-reduction", "--x", "gpus", "--y", "reduction_pct", "--series",
                                "source", "--title", "Mesh-Attention: bytes saved versus Ring, 1M tokens",
                                "--ylabel", "reduction of bytes received per GPU (%)"), "volume reduction"))
    md.append(image("results/volume/figures/volume-forward.png", "bytes per GPU"))
    tile_256 = [row for row in volume if row["gpus"] == 256 and row["pass"] == "forward" and row["algo"] == "mesh"]
    ring_256 = next(row for row in volume if row["gpus"] == 256 and row["pass"] == "forward" and row["algo"] == "ring")
    by_tile = {row["tile"]: 1 - num(row, "recv_bytes_max") / num(ring_256, "recv_bytes_max") for row in tile_256}
    qkvo_256 = reductions[-1][1]  # the least-bytes tile at 256 GPUs
    md.append(
        "\n**Reading.** Tessera's counts equal the closed form 2(a+b-2)·N·d/n to the byte (the sweep tests check "
        "the ring's 2(n-1)/n·N·d), so the reduction at 256 GPUs with the square 16x16 tile is %s (Q+KV+O), against "
        "the paper's measured 85.4 %%. Averaged over 16-256 GPUs it is %s (over 64-256: %s) against the paper's "
        "79.0 %%, whose set of settings is not known. Two readings fit the gap, neither confirmed: the paper may "
        "not have run the square tile (8x32 gives %s, 32x8 %s here, both within half a point of 85.4 %%), or "
        "it counted traffic the model leaves out (LSE costs only %.2f points here; headers, padding, "
        "re-layouts). Forward plus backward the reduction is a few points larger: Ring's backward pass sends "
        "both KV and the dK/dV partials around the whole ring, a larger addition than Mesh's backward traffic.\n\n"
        % (pct(qkvo_256), pct(average), pct(average_64), pct(by_tile["8x32"]), pct(by_tile["32x8"]),
           100 * (qkvo_256 - by_tile["16x16"])))

    # Strong scaling.
    md.append("## 2. Strong scaling at 1M tokens and speedup over Ring\n\n")
    md.append(
        "Flow-level simulation (max-min fair sharing of every link, compute from the H100 profile: 989 TFLOP/s "
        "bf16 at up to 70 % efficiency) on **h100-ib**: servers of 8 H100 on NVSwitch (450 GB/s per direction "
        "per GPU), 8 x 400 Gb/s rail-optimised InfiniBand NICs per server into a non-blocking leaf-spine fabric "
        "(DGX H100 datasheet figures; `tessera topo show h100-ib:32`). Ranks are placed in *rail-aligned ring order* "
        "(see section 6). Mesh runs every tile shape; the fastest is kept.\n\n")
    rows, speedups, derived = [], [], []
    for gpus in sorted({row["gpus"] for row in strong}):
        at = [row for row in strong if row["gpus"] == gpus]
        ring = next(row for row in at if row["algo"] == "ring")
        mesh = best([row for row in at if row["algo"] == "mesh"])
        linear = next(row for row in ring_linear if row["gpus"] == gpus)
        speedup = num(ring, "time_s") / num(mesh, "time_s")
        speedups.append((gpus, speedup))
        analytic = num(ring, "analytic_time_s") / min(num(row, "analytic_time_s") for row in at if row["algo"] == "mesh")
        rows.append([gpus, ms(num(ring, "time_s")), ms(num(linear, "time_s")), mesh["tile"], ms(num(mesh, "time_s")),
                     times(speedup), times(analytic),
                     pct(num(ring, "sim_exposed_wait_s_max") / num(ring, "time_s")),
                     pct(num(mesh, "sim_exposed_wait_s_max") / num(mesh, "time_s"))])
        derived += [[gpus, "%.4f" % num(ring, "time_s"), "ring (rail-aligned)"],
                    [gpus, "%.4f" % num(linear, "time_s"), "ring (linear placement)"],
                    [gpus, "%.4f" % num(mesh, "time_s"), "mesh (best tile)"]]
    md.append(table(["GPUs", "Ring", "Ring, linear placement", "best tile", "Mesh", "speedup", "speedup, analytic model",
                     "Ring waiting", "Mesh waiting"], rows))
    path = write_csv(name, "strong", ["gpus", "time_s", "schedule"], derived)
    md.append("\n" + image(plot(name, path, "strong", "--x", "gpus", "--y", "time_s", "--series", "schedule", "--logy",
                                "--title", "Strong scaling, 1M tokens, causal, fwd+bwd, h100-ib"), "strong scaling"))
    # Tile shape x GPUs: each tile's time over the best tile's at that GPU count.
    derived = []
    for gpus in sorted({row["gpus"] for row in strong}):
        tiles = [row for row in strong if row["gpus"] == gpus and row["algo"] == "mesh"]
        fastest = num(best(tiles), "time_s")
        for row in tiles:
            derived.append([gpus, int(row["tile"].split("x")[0]), "%.4f" % (num(row, "time_s") / fastest)])
    path = write_csv(name, "strong-tiles", ["gpus", "query_chunks_per_tile", "time_over_best"], derived)
    md.append(image(plot(name, path, "strong-tiles", "--kind", "heatmap", "--x", "gpus", "--y", "query_chunks_per_tile",
                         "--value", "time_over_best", "--ylabel", "tile a x (GPUs / a): query chunks a",
                         "--title", "Mesh tile shapes, 1M tokens: time over the best tile at each GPU count"),
                    "mesh tiles"))
    best_ring = min(num(row, "time_s") for row in strong if row["algo"] == "ring")
    best_mesh = min(num(row, "time_s") for row in strong if row["algo"] == "mesh")
    mean_speedup = sum(s for _, s in speedups) / len(speedups)
    mean_64 = sum(s for g, s in speedups if g >= 64) / len([1 for g, _ in speedups if g >= 64])
    md.append(
        "\n**Reading.** The speedup over Ring grows with the GPU count, from %s at 16 GPUs to %s at 256 (mean %s over "
        "16-256, %s over 64-256); the paper reports up to 3.4x and 2.9x on average. The best Mesh time over all GPU "
        "counts is %s the best Ring time (paper: 3.15x [S]).\n\n"
        "Why Tessera's top speedup is higher and its small-scale speedups lower than the paper's:\n\n"
        "- At 16-32 GPUs a 1M-token causal layer is compute-bound (Ring waits %s of its time at 16 GPUs): "
        "nothing is left to save. The paper's average over its (unknown) settings is therefore not comparable "
        "to an average over 16-256.\n"
        "- At 256 GPUs the simulated Mesh is nearly compute-bound (it waits %s of its time), while the paper "
        "measured communication at 86.6 %% of Mesh's run time [S]. The paper's network was thus much slower "
        "relative to its GPUs than 400 Gb/s per H100, and/or its overlap of communication with compute was far "
        "from the simulator's ideal (each op starts the instant its inputs arrive; no kernel-launch jitter, "
        "no NCCL channel limits, no memory-bandwidth contention between copies and attention kernels). A slower "
        "network alone does not explain it: in this model it raises the speedup (section 5).\n"
        "- Ring's time stops improving beyond 64 GPUs (its bytes per GPU, 2(n-1)/n·N·d, do not shrink with n), "
        "the qualitative finding of the paper's Figure 8 [S]. With the plain linear placement it even gets "
        "slower (column *Ring, linear placement*), as the paper describes: see section 6.\n\n"
        % (times(speedups[0][1]), times(speedups[-1][1]), times(mean_speedup), times(mean_64),
           times(best_ring / best_mesh),
           pct(num(next(r for r in strong if r["gpus"] == speedups[0][0] and r["algo"] == "ring"), "sim_exposed_wait_s_max")
               / num(next(r for r in strong if r["gpus"] == speedups[0][0] and r["algo"] == "ring"), "time_s")),
           pct(num(best([r for r in strong if r["gpus"] == 256 and r["algo"] == "mesh"]), "sim_exposed_wait_s_max")
               / num(best([r for r in strong if r["gpus"] == 256 and r["algo"] == "mesh"]), "time_s"))))

    # Weak scaling.
    md.append("## 3. Weak scaling, 512K to 1.414M tokens (causal)\n\n")
    md.append("Tokens grow by sqrt(2) per doubling of GPUs (attention FLOPs per GPU constant): 512K on 32 GPUs, "
              "724K (741 376) on 64, 1M on 128, 1448K (1 482 752, the paper's 1.414M) on 256. Same cluster.\n\n")
    rows = []
    for gpus in sorted({row["gpus"] for row in weak}):
        at = [row for row in weak if row["gpus"] == gpus]
        ring = next(row for row in at if row["algo"] == "ring")
        mesh = best([row for row in at if row["algo"] == "mesh"])
        rows.append([gpus, tokens(ring["seq_tokens"]), ms(num(ring, "time_s")), mesh["tile"], ms(num(mesh, "time_s")),
                     times(num(ring, "time_s") / num(mesh, "time_s")), ms(num(mesh, "sim_compute_s_max"))])
    md.append(table(["GPUs", "tokens", "Ring", "best tile", "Mesh", "speedup", "Mesh compute, busiest GPU"], rows))
    md.append("\n" + image("results/weak/figures/weak-scaling.png", "weak scaling"))
    md.append(
        "\n**Reading.** With constant compute per GPU, Mesh's time stays near its compute time while Ring's grows "
        "with the sequence (its per-GPU bytes grow with N and not with 1/n). The paper shows the same trend "
        "(Figure 8, weak-scaling panel [S]); its numbers for this panel are not available to us [NF].\n\n")

    # GQA.
    md.append("## 4. GQA degrees 1, 2, 4, 8 (1M tokens, causal)\n\n")
    md.append("32 query heads share 32, 16, 8 or 4 KV heads. Same cluster and placement.\n\n")
    rows, gqa_speedups = [], []
    for gpus in sorted({row["gpus"] for row in gqa}):
        for kv in sorted({row["kv_heads"] for row in gqa}, reverse=True):
            at = [row for row in gqa if row["gpus"] == gpus and row["kv_heads"] == kv]
            ring = next(row for row in at if row["algo"] == "ring")
            mesh = best([row for row in at if row["algo"] == "mesh"])
            least = best([row for row in at if row["algo"] == "mesh"], "recv_bytes_max")
            gqa_speedups.append(num(ring, "time_s") / num(mesh, "time_s"))
            rows.append([gpus, 32 // kv, kv, gb(num(ring, "recv_bytes_max")), least["tile"],
                         pct(1 - num(least, "recv_bytes_max") / num(ring, "recv_bytes_max")),
                         ms(num(ring, "time_s")), mesh["tile"], ms(num(mesh, "time_s")),
                         times(num(ring, "time_s") / num(mesh, "time_s"))])
    md.append(table(["GPUs", "GQA degree", "KV heads", "Ring bytes/GPU", "least-bytes tile", "volume reduction",
                     "Ring", "fastest tile", "Mesh", "speedup"], rows))
    md.append("\n" + image("results/gqa/figures/gqa-time-256.png", "gqa time"))
    md.append(
        "\n**Reading.** As in the paper [S], Mesh is faster than Ring at every GQA degree (smallest margin %s) and "
        "its end-to-end gain shrinks as the degree grows: KV chunks get g times smaller, so Ring's communication "
        "falls below its compute and there is less to hide. The volume reduction shrinks too, because Mesh's Q "
        "and O traffic (which GQA does not shrink) becomes the larger share; the least-bytes tile moves toward "
        "fewer query chunks and more KV chunks per tile (a ~ sqrt(n/g), b ~ sqrt(n·g); research/papers.md A.5).\n\n"
        % times(min(gqa_speedups)))

    # Sensitivity to the network.
    sensitivity = ok(sweep(name, "sensitivity"))
    md.append("## 5. Sensitivity to the network at 256 GPUs\n\n")
    md.append(
        "The paper measured communication at 86.6 % of Mesh's run time at 256 GPUs [S]; on h100-ib the simulated "
        "Mesh waits far less. The strong-scaling point at 256 GPUs again, on the same 32 servers with slower "
        "NICs ([`clusters/`](clusters/); [`sensitivity.yaml`](sensitivity.yaml)):\n\n")
    rows = []
    for row_nic in sorted({row["topology"] for row in sensitivity}, key=lambda t: -int(t.split("ib")[-1].split(".")[0])):
        at = [row for row in sensitivity if row["topology"] == row_nic]
        ring = next(row for row in at if row["algo"] == "ring")
        mesh = best([row for row in at if row["algo"] == "mesh"])
        rows.append(["%s Gb/s" % row_nic.split("ib")[-1].split(".")[0], ms(num(ring, "time_s")), mesh["tile"],
                     ms(num(mesh, "time_s")), times(num(ring, "time_s") / num(mesh, "time_s")),
                     pct(num(mesh, "sim_exposed_wait_s_max") / num(mesh, "time_s")),
                     pct(num(ring, "sim_exposed_wait_s_max") / num(ring, "time_s"))])
    md.append(table(["NIC per GPU", "Ring", "best tile", "Mesh", "speedup", "Mesh waiting", "Ring waiting"], rows))
    md.append(
        "\n**Reading.** In this model a slower network makes the speedup larger, approaching the byte ratio "
        "(Mesh moves about 89 % fewer bytes forward + backward, so up to ~9x once both are communication-bound). "
        "Mesh waiting most of its time, as the paper measured, comes with speedups near 8x here, not 3.4x. One "
        "reading consistent with both numbers (not confirmed): the paper's Mesh turned its byte savings into time "
        "less completely than the simulator does, its communication running below "
        "the link rate that Ring's large point-to-point transfers reach (several concurrent smaller messages per "
        "GPU, NCCL channel limits, imperfect overlap), effects this model leaves out. The paper's numbers thus "
        "bound how much of the ideal saving its implementation realised; they do not contradict the volume "
        "result.\n\n")

    # Placement.
    md.append("## 6. Placement on a rail-optimised fabric (why Ring needs a rail-aligned order)\n\n")
    md.append(
        "On h100-ib, GPU i of every server has its NIC on rail i (leaf switch i). With the linear placement "
        "(rank r on GPU r) each of Ring's hops between servers goes from GPU 7 to GPU 0 of the next server: from "
        "rail 7 to rail 0, through a spine switch. Routing picks one of the equal-cost spines by a fixed hash of "
        "(source, destination), and several of these hops land on the same spine link, which then carries "
        "several KV streams at once. The rail-aligned order (servers alternate direction: ranks 0..7 on GPUs "
        "0..7, ranks 8..15 on GPUs 15..8, ...) makes every hop between servers join equal GPU indices, so it "
        "stays inside one leaf. It only permutes GPUs inside a server, so the server groupings of Mesh's Q- and "
        "KV-rings are unchanged. Keeping ring edges between servers on one rail is the usual practice on rail-optimised "
        "fabrics.\n\n")
    rows = []
    for gpus in sorted({row["gpus"] for row in ring_linear}):
        linear = next(row for row in ring_linear if row["gpus"] == gpus)
        aligned = next(row for row in strong if row["gpus"] == gpus and row["algo"] == "ring")
        rows.append([gpus, ms(num(linear, "time_s")), ms(num(aligned, "time_s")), ms(num(linear, "analytic_time_s")),
                     gb(num(linear, "busiest_link_bytes")), gb(num(aligned, "busiest_link_bytes"))])
    md.append(table(["GPUs", "Ring, linear", "Ring, rail-aligned", "analytic (no contention)",
                     "busiest link, linear", "busiest link, rail-aligned"], rows))
    md.append(
        "\nThe linear placement reproduces the paper's \"Ring degrades sharply beyond 64 GPUs\" [S]; whether the "
        "paper's Ring suffered from this (or from another bottleneck) is not known. The comparison in section 2 "
        "uses the rail-aligned order for both schedules, i.e. the stronger Ring baseline.\n\n")

    md.append(
        "## What the model includes and leaves out\n\n"
        "- Included: exact per-block work under the causal mask and zigzag layout; every Q/KV/O/LSE/dO/dQ/dKV "
        "transfer of the generated schedule, routed hop by hop over the topology with max-min fair sharing; a "
        "roofline compute model whose efficiency grows with block size; launch overhead per block.\n"
        "- Left out: NCCL protocol overheads and channel limits, kernel-launch jitter, memory-bandwidth "
        "contention between copies and kernels, stragglers, the rest of the transformer layer (the paper times "
        "attention only, as far as the sources say).\n"
        "- Assumed: the cluster (the paper's is [NF]); bf16; batch 1; the mesh tile is the fastest of all a x b, "
        "where the paper uses its greedy scheduler's choice.\n")
    write_report(name, "".join(md))
