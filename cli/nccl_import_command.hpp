#pragma once
// `tessera calibrate --from-nccl-tests FILE...`: the link figures of the calibration file,
// fitted to nccl-tests tables instead of measured by an executor.
#include <string>
#include <vector>

namespace tessera::cli {

struct NcclImportFlags {
  std::vector<std::string> files;
  std::string topology;  // with it: a fit per level (intra-node, inter-node)
  std::string level;     // intra-node or inter-node: tables that do not name their hosts
};

int run_nccl_import(const NcclImportFlags& flags, const std::string& output);

}  // namespace tessera::cli
