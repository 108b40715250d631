#include "tessera/sim/flow_network.hpp"

#include <algorithm>

namespace tessera::sim {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}

FlowNetwork::FlowNetwork(std::vector<double> capacity_bytes_per_s)
    : capacity_(std::move(capacity_bytes_per_s)),
      flows_on_(capacity_.size()),
      carried_bytes_(capacity_.size(), 0),
      busy_s_(capacity_.size(), 0),
      resource_updated_s_(capacity_.size(), 0),
      resource_mark_(capacity_.size(), 0),
      remaining_capacity_(capacity_.size(), 0),
      unfrozen_count_(capacity_.size(), 0) {}

void FlowNetwork::advance(Flow& flow, double now_s) {
  double moved = flow.rate * (now_s - flow.updated_s);
  flow.remaining_bytes = std::max(0.0, flow.remaining_bytes - moved);
  for (int32_t resource : flow.resources) carried_bytes_[static_cast<size_t>(resource)] += moved;
  flow.updated_s = now_s;
}

void FlowNetwork::touch_resource(int32_t resource, double now_s) {
  auto r = static_cast<size_t>(resource);
  if (!flows_on_[r].empty()) busy_s_[r] += now_s - resource_updated_s_[r];
  resource_updated_s_[r] = now_s;
}

int32_t FlowNetwork::start(std::span<const int32_t> resources, double bytes, double now_s) {
  int32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int32_t>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
  }
  Flow& flow = flows_[static_cast<size_t>(id)];
  flow.resources.assign(resources.begin(), resources.end());
  flow.remaining_bytes = bytes;
  flow.rate = 0;
  flow.updated_s = now_s;
  flow.active = true;
  ++active_count_;
  for (int32_t resource : resources) {
    touch_resource(resource, now_s);
    flows_on_[static_cast<size_t>(resource)].push_back(id);
  }
  if (resources.empty()) {
    // A flow that crosses no link (same GPU) completes at once.
    flow.rate = kInfinity;
    completions_.push(now_s, Completion(id, ++flow.version));
    return id;
  }
  dirty_resources_.insert(dirty_resources_.end(), resources.begin(), resources.end());
  dirty_s_ = now_s;
  return id;
}

void FlowNetwork::flush() {
  if (dirty_resources_.empty()) return;
  seeds_.swap(dirty_resources_);  // both keep their storage from one flush to the next
  dirty_resources_.clear();
  reshare(seeds_, dirty_s_);
}

std::pair<double, int32_t> FlowNetwork::valid_top() {
  while (!completions_.empty()) {
    const Completion& top = completions_.top();
    const Flow& flow = flows_[static_cast<size_t>(top.flow())];
    if (flow.active && flow.version == top.version()) return {completions_.top_time_s(), top.flow()};
    completions_.pop();
  }
  return {kInfinity, -1};
}

std::pair<double, int32_t> FlowNetwork::next_completion() {
  // A flow due at the very instant of the pending changes runs dry then whatever the new
  // rates are, so many flows ending together are retired before a single reshare.
  auto top = valid_top();
  if (dirty_resources_.empty() || top.first <= dirty_s_) return top;
  flush();
  return valid_top();
}

void FlowNetwork::finish(int32_t id, double now_s) {
  if (now_s != dirty_s_) flush();  // changes of an earlier instant are shared out first
  Flow& flow = flows_[static_cast<size_t>(id)];
  advance(flow, now_s);
  flow.active = false;
  ++flow.version;
  --active_count_;
  for (int32_t resource : flow.resources) {
    touch_resource(resource, now_s);
    auto& list = flows_on_[static_cast<size_t>(resource)];
    auto it = std::find(list.begin(), list.end(), id);
    if (it != list.end()) {
      *it = list.back();
      list.pop_back();
    }
  }
  dirty_resources_.insert(dirty_resources_.end(), flow.resources.begin(), flow.resources.end());
  dirty_s_ = now_s;
  flow.resources.clear();
  free_ids_.push_back(id);
}

void FlowNetwork::reshare_all(double now_s) {
  flush();
  std::vector<int32_t> every(capacity_.size());
  for (size_t r = 0; r < every.size(); ++r) every[r] = static_cast<int32_t>(r);
  reshare(every, now_s);
}

// Progressive filling over the component of flows connected to `seeds` through shared
// resources: repeatedly the resource with the smallest fair share (remaining capacity over
// its unfrozen flows) fixes that share as the rate of its unfrozen flows.
void FlowNetwork::reshare(std::span<const int32_t> seeds, double now_s) {
  ++epoch_;
  component_resources_.clear();
  component_flows_.clear();
  for (int32_t seed : seeds) {
    if (resource_mark_[static_cast<size_t>(seed)] == epoch_) continue;
    resource_mark_[static_cast<size_t>(seed)] = epoch_;
    component_resources_.push_back(seed);
  }
  for (size_t next = 0; next < component_resources_.size(); ++next) {
    for (int32_t id : flows_on_[static_cast<size_t>(component_resources_[next])]) {
      if (flow_mark_[static_cast<size_t>(id)] == epoch_) continue;
      flow_mark_[static_cast<size_t>(id)] = epoch_;
      component_flows_.push_back(id);
      for (int32_t resource : flows_[static_cast<size_t>(id)].resources) {
        if (resource_mark_[static_cast<size_t>(resource)] == epoch_) continue;
        resource_mark_[static_cast<size_t>(resource)] = epoch_;
        component_resources_.push_back(resource);
      }
    }
  }
  if (component_flows_.empty()) return;
  for (int32_t id : component_flows_) advance(flows_[static_cast<size_t>(id)], now_s);
  for (int32_t resource : component_resources_) {
    auto r = static_cast<size_t>(resource);
    touch_resource(resource, now_s);
    remaining_capacity_[r] = capacity_[r];
    unfrozen_count_[r] = static_cast<int32_t>(flows_on_[r].size());
  }
  ++epoch_;  // flow_mark_ == epoch_ now means "frozen"
  // A rate that comes out unchanged keeps its completion time: the queued entry is still right.
  auto set_rate = [&](int32_t id, double share) {
    Flow& flow = flows_[static_cast<size_t>(id)];
    const bool unchanged = flow.rate == share;
    flow.rate = share;
    if (!unchanged) completions_.push(now_s + flow.remaining_bytes / flow.rate, Completion(id, ++flow.version));
  };
  // A resource whose flows cross it alone is a component of its own: its share, capacity over
  // its flows, is what the filling below would fix for them whenever it came to it, and nothing
  // else depends on it. Most components are such (every step of a ring), so they skip the heap.
  for (int32_t resource : component_resources_) {
    auto r = static_cast<size_t>(resource);
    if (unfrozen_count_[r] == 0) continue;
    const bool alone = std::all_of(flows_on_[r].begin(), flows_on_[r].end(),
                                   [&](int32_t id) { return flows_[static_cast<size_t>(id)].resources.size() == 1; });
    if (!alone) {
      shares_.push({remaining_capacity_[r] / unfrozen_count_[r], resource});
      continue;
    }
    const double share = remaining_capacity_[r] / unfrozen_count_[r];
    for (int32_t id : flows_on_[r]) set_rate(id, share);
    unfrozen_count_[r] = 0;
  }
  // Lazy min-heap of (share, resource); a popped entry is stale when the share has changed.
  // The order it yields, the smallest (current share, resource) first, is the order of the
  // filling whatever the heap holds besides; so are the rates.
  auto share_of = [&](int32_t resource) {
    auto r = static_cast<size_t>(resource);
    return remaining_capacity_[r] / unfrozen_count_[r];
  };
  while (!shares_.empty()) {
    auto [share, resource] = shares_.top();
    shares_.pop();
    auto r = static_cast<size_t>(resource);
    if (unfrozen_count_[r] == 0 || share != share_of(resource)) continue;
    for (int32_t id : flows_on_[r]) {
      if (flow_mark_[static_cast<size_t>(id)] == epoch_) continue;
      flow_mark_[static_cast<size_t>(id)] = epoch_;
      for (int32_t other : flows_[static_cast<size_t>(id)].resources) {
        auto o = static_cast<size_t>(other);
        remaining_capacity_[o] = std::max(0.0, remaining_capacity_[o] - share);
        --unfrozen_count_[o];
        if (other != resource && unfrozen_count_[o] > 0) shares_.push({share_of(other), other});
      }
      set_rate(id, share);
    }
  }
}

}  // namespace tessera::sim
