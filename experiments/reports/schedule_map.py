"""Which schedule wins where: experiments/schedule-map/REPORT.md."""
from reports.common import *  # noqa: F401,F403 (the helpers every report uses)

WITHIN = 0.10  # "comes within 10 % of the winner": the threshold the reading counts families by


def schedule_map():
    name = "schedule-map"
    md = [header("Which schedule when", ["ib", "torus"], name)]
    md.append(
        "The fastest schedule over (GPUs, sequence length) for one attention layer: 32 query heads of 128, "
        "causal, bf16, forward + backward; MHA (32 KV heads) and GQA (8 KV heads). Every applicable schedule and "
        "tile shape is simulated (`algo: all`, the candidates `tessera plan` ranks: Ring in its layouts, "
        "all-gather, Ulysses, USP u x r, ATTENTION2D rows x cols in both variants, Mesh a x b), flow-level, H100 "
        "compute profile. Each map cell is coloured by the winning schedule family (its best variant and tile); "
        "the number in the cell is the runner-up family's time over the winner's. A family has the same colour "
        "in every map.\n\n"
        "Networks:\n\n"
        "- **h100-ib** (NVSwitch + InfiniBand): servers of 8 H100 on NVSwitch (450 GB/s per direction), 8 x 400 "
        "Gb/s rail-optimised NICs per server, non-blocking leaf-spine; rail-aligned rank order (see "
        "../mesh-attention/REPORT.md, section 6);\n"
        "- **2-D torus**: torus-4x4, 4x8, 8x8, 8x16, 16x16 with wrap-around, 50 GB/s per link direction, 5 us per "
        "hop (TPU-like; one GPU per vertex), linear rank order.\n\n")
    summary = {}
    for stem, label in (("ib", "h100-ib"), ("torus", "2-D torus")):
        all_rows = sweep(name, stem)
        rows = ok(all_rows)
        gpus_list = sorted({row["gpus"] for row in rows})
        seqs = sorted({row["seq_tokens"] for row in rows})
        for kv, kind, short in ((32, "MHA", "mha"), (8, "GQA, 8 KV heads", "gqa")):
            md.append("## %s, %s\n\n" % (label, kind))
            md.append(image("results/%s/figures/map-%s-%s.png" % (stem, stem, short), "%s %s" % (label, kind)))
            table_rows, wins, wins_without_mesh, derived, cell_wins, ring_ratios, lead = [], {}, {}, [], {}, [], []
            for seq in seqs:
                cells = [tokens(seq)]
                for gpus in gpus_list:
                    at = [row for row in rows if row["gpus"] == gpus and row["seq_tokens"] == seq and row["kv_heads"] == kv]
                    winner = best(at)
                    wins[winner["algo"]] = wins.get(winner["algo"], 0) + 1
                    others = [row for row in at if row["algo"] != "mesh"]
                    second = best(others)
                    wins_without_mesh[second["algo"]] = wins_without_mesh.get(second["algo"], 0) + 1
                    ring = best([row for row in at if row["algo"] == "ring"])
                    label_text = " ".join(part for part in (winner["algo"], winner["variant"], winner["tile"]) if part)
                    ratio = num(ring, "time_s") / num(winner, "time_s")
                    cells.append("%s: %s, %s vs Ring" % (label_text, ms(num(winner, "time_s")), times(ratio)))
                    cell_wins.setdefault(winner["algo"], []).append("%d/%s" % (gpus, tokens(seq)))
                    ring_ratios.append((ratio, gpus, seq))
                    family = {}
                    for row in at:
                        family[row["algo"]] = min(family.get(row["algo"], float("inf")), num(row, "time_s"))
                    ordered = sorted(family.values())
                    lead.append((ordered[1] / ordered[0], gpus, seq,
                                 sum(value <= ordered[0] * (1 + WITHIN) for value in ordered[1:]), len(ordered) - 1))
                    derived += [[gpus, seq, row["algo"], row["time_s"]] for row in others]
                table_rows.append(cells)
            md.append("\n" + table(["tokens"] + ["%d GPUs" % g for g in gpus_list], table_rows,
                                   ["l"] + ["l"] * len(gpus_list)))
            path = write_csv(name, "%s-%s-without-mesh" % (stem, short), ["gpus", "seq_tokens", "algo", "time_s"], derived)
            md.append("\nCells won: %s. Without Mesh-Attention (a newer schedule few frameworks ship yet), the "
                      "winners would be: %s.\n\n"
                      % (", ".join("%s %d" % item for item in sorted(wins.items(), key=lambda item: -item[1])),
                         ", ".join("%s %d" % item for item in sorted(wins_without_mesh.items(),
                                                                       key=lambda item: -item[1]))))
            md.append(image(plot(name, path, "%s-%s-without-mesh" % (stem, short), "--kind", "winner", "--x", "gpus",
                                 "--y", "seq_tokens", "--series", "algo", "--value", "time_s", "--title",
                                 "Fastest schedule without Mesh, %s, %s" % (kind, label)),
                            "without mesh"))
            low, high = min(ring_ratios), max(ring_ratios)
            md.append("\nWhere each family wins (GPUs/tokens): %s. The winner is %s (%d GPUs, %s) to %s (%d GPUs, %s) "
                      "faster than the best Ring.\n\n"
                      % ("; ".join("%s: %s" % (family, ", ".join(where)) for family, where in cell_wins.items()),
                         times(low[0]), low[1], tokens(low[2]), times(high[0]), high[1], tokens(high[2])))
            summary[(stem, kv)] = (wins, wins_without_mesh, low, high, lead, cell_wins)
        kv_heads = sorted({row["kv_heads"] for row in rows})
        heads = int(rows[0]["heads"])
        skipped = [row for row in all_rows if row["status"].startswith("skipped")]
        md.append("(%d points of the %s sweep do not apply and are recorded as skipped in results.csv, e.g. Ulysses "
                  "where the GPUs do not divide the heads.)\n\n" % (len(skipped), label))
    ring_low = min(summary[key][2] for key in summary)
    cells = {key: sum(summary[key][0].values()) for key in summary}

    def won(key, family):
        return summary[key][0].get(family, 0)

    def others(key):
        rest = ["%s %d" % (family, count) for family, count in sorted(summary[key][0].items(), key=lambda item: -item[1])
                if family != "mesh"]
        return " (the others: %s)" % ", ".join(rest) if rest else ""

    ib_lead = summary[("ib", 32)][4]
    most, least = max(ib_lead), min(ib_lead)
    ring_cells = ["%s %s: %s" % (stem, "MHA" if kv == 32 else "GQA", ", ".join(summary[(stem, kv)][5]["ring"]))
                  for (stem, kv) in summary if "ring" in summary[(stem, kv)][5]]
    md.append(
        "## Reading\n\n"
        "- On h100-ib, Mesh-Attention with its best tile wins %d of %d cells with MHA%s and %d of %d with GQA%s. "
        "With MHA the runner-up family's time over the winner's is largest at %d GPUs, %s (%s) and smallest at "
        "%d GPUs, %s (%s), where %d of the %d other families come within %s of the winner.\n"
        "- On the 2-D torus with MHA, Mesh wins %d of %d cells%s; the other winners split heads (Ulysses, USP) "
        "or use collectives along torus rows and columns (listed under the map). A plausible reason, not "
        "checked link by link: each torus GPU has four links, and all-to-alls and row/column collectives spread "
        "over them, while a GPU's point-to-point ring transfers use fewer. With GQA (%d KV heads against %d) the "
        "KV traffic is %s smaller and Mesh wins %d of %d cells%s.\n"
        "- %s; the best Ring's time over the winner's is smallest at %s (%d GPUs, %s), where compute hides "
        "nearly all of its traffic. From MHA to GQA the winners' largest lead over Ring goes from %s to %s on "
        "h100-ib and from %s to %s on the torus.\n\n"
        "These maps come from the simulator alone: they rank schedules under the stated assumptions (no NCCL "
        "protocol costs, perfect overlap where a schedule allows it, Tessera's own implementation of every "
        "schedule) and have not been checked against measurements.\n"
        % (won(("ib", 32), "mesh"), cells[("ib", 32)], others(("ib", 32)), won(("ib", 8), "mesh"), cells[("ib", 8)],
           others(("ib", 8)), most[1], tokens(most[2]), times(most[0]), least[1], tokens(least[2]), times(least[0]),
           least[3], least[4], pct(WITHIN),
           won(("torus", 32), "mesh"), cells[("torus", 32)], others(("torus", 32)), kv_heads[0], kv_heads[-1],
           times(kv_heads[-1] / kv_heads[0]), won(("torus", 8), "mesh"), cells[("torus", 8)], others(("torus", 8)),
           ("Ring wins %d cells (%s)" % (sum(len(summary[key][5].get("ring", [])) for key in summary),
                                         "; ".join(ring_cells))) if ring_cells else "Ring never wins a cell",
           times(ring_low[0]), ring_low[1], tokens(ring_low[2]), times(summary[("ib", 32)][3][0]),
           times(summary[("ib", 8)][3][0]), times(summary[("torus", 32)][3][0]), times(summary[("torus", 8)][3][0])))
    write_report(name, "".join(md))
    return summary
