#include "tessera/schedules/generators.hpp"

namespace tessera::schedules {

std::vector<Candidate> plan_candidates(const Problem& problem, int32_t gpus, std::optional<Layout> layout,
                                       int32_t buffers) {
  std::vector<Candidate> candidates;
  GeneratorOptions base;
  base.gpus = gpus;
  base.layout = layout;
  base.buffers = buffers;
  auto add = [&](const std::string& algorithm, std::optional<TileShape> tile, const std::string& variant) {
    GeneratorOptions options = base;
    options.tile = tile;
    options.variant = variant;
    candidates.push_back({algorithm, options});
  };
  add("ring", std::nullopt, "");
  add("ring", std::nullopt, "pass-q");  // queries travel: fewer bytes when H/G is small
  if (!layout && problem.mask.kind != MaskKind::full) {
    // Without a chosen layout, show what the balanced layouts buy over the plain one.
    GeneratorOptions contiguous = base;
    contiguous.layout = Layout::contiguous;
    candidates.push_back({"ring", contiguous});
  }
  add("all-gather", std::nullopt, "");
  add("ulysses", std::nullopt, "");
  for (const TileShape& tile : factor_pairs(gpus)) {
    // usp with u = 1 or r = 1 is ring or ulysses, listed already.
    if (tile.first > 1 && tile.second > 1) add("usp", tile, "");
  }
  for (const TileShape& tile : factor_pairs(gpus)) {
    add("attention2d", tile, "collective");
    add("attention2d", tile, "ring");
  }
  for (const TileShape& tile : factor_pairs(gpus)) add("mesh", tile, "");
  return candidates;
}

}  // namespace tessera::schedules
