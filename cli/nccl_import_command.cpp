#include "nccl_import_command.hpp"

#include <iostream>
#include <optional>

#include "table.hpp"
#include "tessera/backend/link_fit.hpp"
#include "tessera/backend/nccl_tests_table.hpp"
#include "tessera/core/calibration_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/units.hpp"
#include "tessera/scenario/network.hpp"

namespace tessera::cli {

namespace {

using backend::NcclTestsTable;

enum class Level { intra_node, inter_node };
const char* to_string(Level level) { return level == Level::intra_node ? "intra-node" : "inter-node"; }

// Hosts named by the Rank lines decide; else --level; else the ranks against the topology's
// GPUs per server (a run of no more ranks than a server holds is taken to stay inside one).
Level level_of(const NcclTestsTable& table, const std::optional<Level>& flag, int32_t gpus_per_node) {
  if (!table.hosts.empty()) return table.hosts.size() == 1 ? Level::intra_node : Level::inter_node;
  if (flag) return *flag;
  if (table.ranks > 0) return table.ranks <= gpus_per_node ? Level::intra_node : Level::inter_node;
  throw UserError(table.path + ": cannot tell intra-node from inter-node (no '# Rank ... on HOST' lines, no rank "
                               "count): give --level intra-node or --level inter-node");
}

CalibratedLink to_link(const backend::LinkFit& fit) { return {fit.bytes_per_s, fit.latency_s}; }

void print_fit(Table& table, const std::string& what, const backend::LinkFit& fit) {
  table.add_row({what, format_fixed(fit.bytes_per_s / 1e9, 2) + " GB/s (" + format_fixed(fit.bytes_per_s * 8 / 1e9, 1) +
                           " Gb/s)",
                 format_fixed(fit.latency_s * 1e6, 2) + " us", std::to_string(fit.samples),
                 format_fixed(fit.rms_relative_error * 100, 1) + " %"});
}

}  // namespace

int run_nccl_import(const NcclImportFlags& flags, const std::string& output) {
  std::optional<Level> level_flag;
  if (flags.level == "intra-node") level_flag = Level::intra_node;
  else if (flags.level == "inter-node") level_flag = Level::inter_node;
  else if (!flags.level.empty())
    throw UserError("--level: expected intra-node or inter-node, got " + tessera::quoted(flags.level));
  int32_t gpus_per_node = 0;
  if (!flags.topology.empty()) {
    const scenario::NetworkText text{flags.topology, "linear", ""};
    const std::optional<int32_t> gpus = scenario::topology_gpu_count(text);
    if (!gpus) throw UserError("--topology: '" + flags.topology + "' takes its size from a GPU count; name one (e.g. h100-ib:2)");
    gpus_per_node = scenario::make_network(text, *gpus).topology->gpus_per_node;
  } else if (level_flag) {
    throw UserError("--level: only with --topology (without one, every table feeds the one link)");
  }

  std::vector<NcclTestsTable> tables, intra, inter;
  Table inputs({"file", "test", "ranks", "hosts", "rows", "level"});
  for (const std::string& path : flags.files) {
    NcclTestsTable table = backend::read_nccl_tests_table(path);
    std::string level = "-";
    if (!flags.topology.empty()) {
      const Level found = level_of(table, level_flag, gpus_per_node);
      level = to_string(found);
      (found == Level::intra_node ? intra : inter).push_back(table);
    }
    inputs.add_row({path, to_string(table.test), table.ranks > 0 ? std::to_string(table.ranks) : "-",
                    table.hosts.empty() ? "-" : std::to_string(table.hosts.size()), std::to_string(table.rows.size()),
                    level});
    tables.push_back(std::move(table));
  }

  CalibrationFile file;
  file.device = "nccl-tests tables (" + std::to_string(tables.size()) + " files)";
  const backend::LinkFit all = backend::fit_link(tables);
  file.link = to_link(all);
  std::optional<backend::LinkFit> intra_fit, inter_fit;
  if (!intra.empty()) file.intra_node_link = to_link(*(intra_fit = backend::fit_link(intra)));
  if (!inter.empty()) file.inter_node_link = to_link(*(inter_fit = backend::fit_link(inter)));
  write_calibration_file(output, file);

  inputs.print(std::cout);
  std::cout << "\nFitted: time = steps x latency + size x busbw factor / bandwidth (nccl-tests conventions; least "
               "squares over every time)\n\n";
  Table fits({"link", "bandwidth", "latency per message", "times", "rms error"});
  print_fit(fits, "link (all tables)", all);
  if (intra_fit) print_fit(fits, "intra_node_link", *intra_fit);
  if (inter_fit) print_fit(fits, "inter_node_link", *inter_fit);
  fits.print(std::cout);
  std::cout << "\nwrote " << output << " (bandwidths in bytes per second, latencies in seconds)\n";
  return 0;
}

}  // namespace tessera::cli
