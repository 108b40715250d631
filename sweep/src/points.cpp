#include "tessera/sweep/points.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/schedules/generators.hpp"
#include "tessera/scenario/scenario.hpp"

namespace tessera::sweep {

using schedules::Candidate;
using schedules::GeneratorOptions;
using schedules::factor_pairs;
using schedules::plan_candidates;

PointValues PointSet::values(size_t point) const {
  PointValues out;
  for (size_t field = 0; field < out.size(); ++field) out[field] = pool_[points_[point][field]];
  return out;
}

void PointSet::add(const PointValues& values) {
  std::array<uint32_t, kFieldCount> ids{};
  for (size_t field = 0; field < values.size(); ++field) {
    auto [it, inserted] = ids_.try_emplace(values[field], static_cast<uint32_t>(pool_.size()));
    if (inserted) pool_.push_back(values[field]);
    ids[field] = it->second;
  }
  points_.push_back(ids);
}

bool takes_tile(const std::string& algorithm) {
  return algorithm == "mesh" || algorithm == "attention2d" || algorithm == "usp";
}

uint64_t product_size(const Spec& spec) {
  uint64_t size = 1;
  for (const auto& group : spec.axes) size *= group.size();
  return size;
}

namespace {

const std::string& at(const PointValues& values, Field field) { return values[static_cast<size_t>(field)]; }
std::string& at(PointValues& values, Field field) { return values[static_cast<size_t>(field)]; }

bool skipped(const Spec& spec, const PointValues& values) {
  for (const SkipRule& rule : spec.skip) {
    bool all = true;
    for (const auto& [field, accepted] : rule.match)
      if (std::find(accepted.begin(), accepted.end(), at(values, field)) == accepted.end()) {
        all = false;
        break;
      }
    if (all) return true;
  }
  return false;
}

// algo: all -> the plan's candidates; tile: all -> factor pairs. A problem that does not
// parse stays one point; its evaluation reports why.
void expand(const Spec& spec, const PointValues& values, PointSet& points) {
  if (at(values, Field::algo) == "all") {
    std::vector<Candidate> candidates;
    try {
      const scenario::ProblemText text = problem_text(values);
      const Problem problem = scenario::make_problem(text);
      const GeneratorOptions base = scenario::make_options(text, scenario::ScheduleText{});
      candidates = plan_candidates(problem, base.gpus, base.layout, base.buffers);
    } catch (const UserError&) {
      if (!skipped(spec, values)) points.add(values);
      return;
    }
    for (const Candidate& candidate : candidates) {
      PointValues expanded = values;
      at(expanded, Field::algo) = candidate.algorithm;
      at(expanded, Field::tile) = candidate.options.tile ? to_string(*candidate.options.tile) : "";
      at(expanded, Field::variant) = candidate.options.variant;
      if (!skipped(spec, expanded)) points.add(expanded);
    }
    return;
  }
  if (at(values, Field::tile) == "all") {
    PointValues expanded = values;
    if (!takes_tile(at(values, Field::algo))) {
      at(expanded, Field::tile) = "";
      if (!skipped(spec, expanded)) points.add(expanded);
      return;
    }
    const auto gpus = static_cast<int32_t>(parse_count(at(values, Field::gpus)));
    for (const TileShape& tile : factor_pairs(gpus)) {
      at(expanded, Field::tile) = to_string(tile);
      if (!skipped(spec, expanded)) points.add(expanded);
    }
    return;
  }
  if (!skipped(spec, values)) points.add(values);
}

}  // namespace

scenario::ProblemText problem_text(const PointValues& values) {
  scenario::ProblemText text;
  text.gpus = at(values, Field::gpus);
  text.seq = at(values, Field::seq);
  text.batch = at(values, Field::batch);
  text.heads = at(values, Field::heads);
  text.kv_heads = at(values, Field::kv_heads);
  text.head_dim = at(values, Field::head_dim);
  text.head_dim_v = at(values, Field::head_dim_v);
  text.dtype = at(values, Field::dtype);
  text.mask = at(values, Field::mask);
  text.window = at(values, Field::window);
  text.documents = at(values, Field::documents);
  text.layout = at(values, Field::layout);
  text.pass = at(values, Field::pass);
  return text;
}

PointSet enumerate_points(const Spec& spec) {
  PointSet points;
  PointValues values = spec.fixed;
  if (product_size(spec) == 0) return points;
  // An odometer over the axis entries, the last one fastest.
  std::vector<size_t> position(spec.axes.size(), 0);
  while (true) {
    for (size_t axis = 0; axis < spec.axes.size(); ++axis) {
      const AxisGroup& group = spec.axes[axis];
      for (size_t f = 0; f < group.fields.size(); ++f) at(values, group.fields[f]) = group.values[f][position[axis]];
    }
    expand(spec, values, points);
    size_t axis = spec.axes.size();
    while (axis > 0) {
      --axis;
      if (++position[axis] < spec.axes[axis].size()) break;
      position[axis] = 0;
      if (axis == 0) return points;
    }
    if (spec.axes.empty()) return points;
  }
}

}  // namespace tessera::sweep
