#include "tessera/sweep/points.hpp"

#include <algorithm>
#include <bit>
#include <unordered_set>

#include "tessera/core/checked_math.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/resource_limits.hpp"
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

size_t PointSet::distinct_count(std::span<const Field> fields) const {
  std::unordered_set<std::string> seen;
  std::string packed;
  for (const auto& ids : points_) {
    packed.clear();
    for (Field field : fields) {
      const uint32_t id = ids[static_cast<size_t>(field)];
      packed.append(reinterpret_cast<const char*>(&id), sizeof id);
    }
    seen.insert(packed);
  }
  return seen.size();
}

bool PointSet::agree(size_t a, size_t b, std::span<const Field> fields) const {
  for (Field field : fields)
    if (points_[a][static_cast<size_t>(field)] != points_[b][static_cast<size_t>(field)]) return false;
  return true;
}

std::span<const Field> schedule_fields() {
  static constexpr Field kFields[] = {Field::gpus,      Field::seq,    Field::heads, Field::kv_heads, Field::head_dim,
                                      Field::head_dim_v, Field::dtype,  Field::mask,  Field::window,   Field::documents,
                                      Field::layout,     Field::pass,   Field::algo,  Field::tile,     Field::variant};
  return kFields;
}

std::vector<size_t> schedule_runs(const PointSet& points, std::span<const size_t> order, size_t most) {
  most = std::max<size_t>(most, 1);
  std::vector<size_t> starts;
  for (size_t position = 0; position < order.size(); ++position)
    if (starts.empty() || position - starts.back() >= most ||
        !points.agree(order[position - 1], order[position], schedule_fields()))
      starts.push_back(position);
  starts.push_back(order.size());
  return starts;
}

bool takes_tile(const std::string& algorithm) {
  return algorithm == "mesh" || algorithm == "attention2d" || algorithm == "usp";
}

uint64_t product_size(const Spec& spec) {
  uint64_t size = 1;
  for (const auto& group : spec.axes)
    size = checked_multiply_unsigned(size, group.size(),
                                     spec.source + ": the number of points (the product of the axes' lengths)");
  return size;
}

bool expands(const Spec& spec) {
  for (const Field field : {Field::algo, Field::tile}) {
    if (spec.fixed[static_cast<size_t>(field)] == "all") return true;
    for (const AxisGroup& group : spec.axes)
      for (size_t f = 0; f < group.fields.size(); ++f)
        if (group.fields[f] == field && std::count(group.values[f].begin(), group.values[f].end(), "all") > 0)
          return true;
  }
  return false;
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

namespace {

// The points no skip rule drops, without enumerating them: by inclusion-exclusion over the
// rules, sum over rule sets S of (-1)^|S| times the points matching every rule of S, which is a
// product over the axis entries (a rule constrains fields, each on one axis or fixed). Per
// axis, the entries matching every rule of S are counted for all S at once from each entry's
// set of matched rules (a sum over supersets).
uint64_t count_by_inclusion_exclusion(const Spec& spec) {
  const size_t rules = spec.skip.size();
  const size_t subsets = size_t{1} << rules;
  auto accepts = [](const std::vector<std::string>& accepted, const std::string& value) {
    return std::find(accepted.begin(), accepted.end(), value) != accepted.end();
  };
  // Rules whose fixed fields match the fixed values (a field on no axis is fixed).
  std::vector<bool> on_axis(kFieldCount, false);
  for (const AxisGroup& group : spec.axes)
    for (const Field field : group.fields) on_axis[static_cast<size_t>(field)] = true;
  size_t fixed_matches = 0;  // bit r: rule r's fixed fields match
  for (size_t r = 0; r < rules; ++r) {
    bool all = true;
    for (const auto& [field, accepted] : spec.skip[r].match)
      if (!on_axis[static_cast<size_t>(field)]) all = all && accepts(accepted, spec.fixed[static_cast<size_t>(field)]);
    if (all) fixed_matches |= size_t{1} << r;
  }
  // matching[g][S]: entries of axis g that match every rule of S on g's fields.
  std::vector<std::vector<uint64_t>> matching;
  for (const AxisGroup& group : spec.axes) {
    std::vector<uint64_t> count(subsets, 0);
    for (size_t k = 0; k < group.size(); ++k) {
      size_t mask = 0;
      for (size_t r = 0; r < rules; ++r) {
        bool all = true;
        for (const auto& [field, accepted] : spec.skip[r].match)
          for (size_t f = 0; f < group.fields.size(); ++f)
            if (group.fields[f] == field) all = all && accepts(accepted, group.values[f][k]);
        if (all) mask |= size_t{1} << r;
      }
      ++count[mask];
    }
    for (size_t bit = 0; bit < rules; ++bit)  // count[S] = entries whose mask contains S
      for (size_t set = 0; set < subsets; ++set)
        if (!(set & (size_t{1} << bit))) count[set] += count[set | (size_t{1} << bit)];
    matching.push_back(std::move(count));
  }
  __int128 total = 0;  // every term is at most the product, which fits in 64 bits
  for (size_t set = 0; set < subsets; ++set) {
    if ((set & fixed_matches) != set) continue;
    unsigned __int128 term = 1;
    for (const auto& count : matching) term *= count[set];
    total += (std::popcount(set) % 2 == 0 ? 1 : -1) * static_cast<__int128>(term);
  }
  return static_cast<uint64_t>(total);
}

constexpr size_t kMostRulesCounted = 16;

// The largest sweep this machine's memory limit allows.
uint64_t most_points() {
  return static_cast<uint64_t>(static_cast<double>(memory_limit_bytes()) / kSweepBytesPerPoint);
}

std::string point_count_text(uint64_t count) { return std::to_string(count) + " points"; }

}  // namespace

uint64_t count_points(const Spec& spec) {
  const uint64_t combinations = product_size(spec);
  if (!expands(spec) && spec.skip.size() <= kMostRulesCounted)
    return spec.skip.empty() ? combinations : count_by_inclusion_exclusion(spec);
  return enumerate_points(spec).size();
}

PointSet enumerate_points(const Spec& spec) {
  PointSet points;
  PointValues values = spec.fixed;
  const uint64_t combinations = product_size(spec);
  // Before anything is enumerated: the axes' product is the number of combinations visited,
  // and the number of points unless skip rules drop some or algo/tile: all add some.
  std::string what = spec.source + ": a sweep of " + point_count_text(combinations);
  if (!spec.skip.empty()) what += " before its skip rules";
  if (expands(spec)) what += " before algo: all and tile: all expand";
  require_memory(static_cast<double>(combinations) * kSweepBytesPerPoint, what);
  const uint64_t most = most_points();
  if (combinations == 0) return points;
  // An odometer over the axis entries, the last one fastest.
  std::vector<size_t> position(spec.axes.size(), 0);
  while (true) {
    for (size_t axis = 0; axis < spec.axes.size(); ++axis) {
      const AxisGroup& group = spec.axes[axis];
      for (size_t f = 0; f < group.fields.size(); ++f) at(values, group.fields[f]) = group.values[f][position[axis]];
    }
    expand(spec, values, points);
    if (points.size() > most)
      require_memory(static_cast<double>(points.size()) * kSweepBytesPerPoint,
                     spec.source + ": a sweep of more than " + point_count_text(points.size()) +
                         " (algo: all and tile: all expanded)");
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
