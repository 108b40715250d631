// The schedule cache: its key separates every field a schedule depends on and nothing else, it
// builds each key once however many threads ask, it keeps within its bound, and what it returns
// prices exactly as a schedule generated afresh.
#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/scenario/evaluate.hpp"
#include "tessera/scenario/schedule_cache.hpp"
#include "tessera/schedules/schedule_json.hpp"

using namespace tessera;
using scenario::ScheduleCache;
using scenario::schedule_key;

namespace {

Problem small_problem() {
  Problem problem;
  problem.seq_len = 8192;
  problem.heads = 8;
  problem.kv_heads = 2;
  problem.head_dim = problem.head_dim_v = 64;
  problem.pass = Pass::both;
  return problem;
}

schedules::GeneratorOptions options_for(int32_t gpus) {
  schedules::GeneratorOptions options;
  options.gpus = gpus;
  return options;
}

scenario::Scenario scenario_of(const std::string& algorithm, int32_t gpus, double link_bytes_per_s) {
  scenario::Scenario result;
  result.algorithm = algorithm;
  result.problem = small_problem();
  result.options = options_for(gpus);
  result.hardware.link_bytes_per_s = link_bytes_per_s;
  return result;
}

// Every figure of the analytical report that a sweep row shows.
void require_same_cost(const costmodel::CostReport& a, const costmodel::CostReport& b) {
  REQUIRE(a.time_s == b.time_s);
  REQUIRE(a.compute_s_max == b.compute_s_max);
  REQUIRE(a.comm_s_max == b.comm_s_max);
  REQUIRE(a.recv_bytes_max == b.recv_bytes_max);
  REQUIRE(a.flops_total == b.flops_total);
  REQUIRE(a.peak_memory_bytes_max == b.peak_memory_bytes_max);
  REQUIRE(a.lower_bound_time.total_s() == b.lower_bound_time.total_s());
}

// Evaluates each scenario through the cache and afresh (the same figures), and checks how many
// schedules the cache built and how many it reused.
void require_builds(ScheduleCache& cache, const std::vector<scenario::Scenario>& scenarios, size_t builds,
                    size_t reuses) {
  const auto before = cache.stats();
  for (const auto& scenario : scenarios)
    require_same_cost(scenario::evaluate(scenario, &cache).figures.cost, scenario::evaluate(scenario).figures.cost);
  CHECK(cache.stats().misses - before.misses == builds);
  CHECK(cache.stats().hits - before.hits == reuses);
}

}  // namespace

TEST_CASE("the cache key changes with every schedule field and not with the network", "[scenario][schedule_cache]") {
  const Problem base_problem = small_problem();
  const schedules::GeneratorOptions base_options = options_for(8);
  const auto base = schedule_key("ring", base_problem, base_options);
  std::vector<std::pair<const char*, std::function<void(Problem&, schedules::GeneratorOptions&)>>> changes = {
      {"seq", [](Problem& p, auto&) { p.seq_len = 16384; }},
      {"heads", [](Problem& p, auto&) { p.heads = 16; }},
      {"kv heads", [](Problem& p, auto&) { p.kv_heads = 4; }},
      {"head dim", [](Problem& p, auto&) { p.head_dim = 128; }},
      {"head dim v", [](Problem& p, auto&) { p.head_dim_v = 128; }},
      {"dtype", [](Problem& p, auto&) { p.dtype = DType::fp32; }},
      {"mask", [](Problem& p, auto&) { p.mask.kind = MaskKind::full; }},
      {"window", [](Problem& p, auto&) { p.mask.window_tokens = 512; }},
      {"documents", [](Problem& p, auto&) { p.mask.document_lengths = {4096, 4096}; }},
      {"pass", [](Problem& p, auto&) { p.pass = Pass::forward; }},
      {"gpus", [](Problem&, auto& o) { o.gpus = 16; }},
      {"layout", [](Problem&, auto& o) { o.layout = Layout::striped; }},
      {"tile", [](Problem&, auto& o) { o.tile = TileShape{2, 4}; }},
      {"variant", [](Problem&, auto& o) { o.variant = "pass-q"; }},
      {"buffers", [](Problem&, auto& o) { o.buffers = 3; }},
      {"mesh hops", [](Problem&, auto& o) { o.mesh_hops = schedules::GeneratorOptions::MeshHops{"kq", ""}; }},
  };
  for (const auto& [field, change] : changes) {
    INFO(field);
    Problem problem = base_problem;
    schedules::GeneratorOptions options = base_options;
    change(problem, options);
    CHECK(schedule_key("ring", problem, options) != base);
  }
  CHECK(schedule_key("mesh", base_problem, base_options) != base);
  // The batch: only Mesh's planner reads it (schedules::generator_reads_batch).
  Problem batched = base_problem;
  batched.batch = 2;
  CHECK(schedule_key("ring", batched, base_options) == base);
  CHECK(schedule_key("mesh", batched, base_options) != schedule_key("mesh", base_problem, base_options));

  // The planner's hardware: only Mesh's planner reads it.
  schedules::GeneratorOptions faster = base_options;
  faster.plan_hardware.kv_ring_bytes_per_s *= 2;
  CHECK(schedule_key("ring", base_problem, faster) == base);
  CHECK(schedule_key("mesh", base_problem, faster) != schedule_key("mesh", base_problem, base_options));
}

TEST_CASE("points that differ only in bandwidth share one schedule; mesh plans per bandwidth",
          "[scenario][schedule_cache]") {
  ScheduleCache cache;
  for (const std::string algorithm : {"ring", "usp", "attention2d", "ulysses"}) {
    INFO(algorithm);
    const auto before = cache.stats();
    for (double bandwidth : {12.5e9, 25e9, 50e9}) {
      const auto scenario = scenario_of(algorithm, 8, bandwidth);
      const auto cached = scenario::evaluate(scenario, &cache);
      const auto fresh = scenario::evaluate(scenario);
      require_same_cost(cached.figures.cost, fresh.figures.cost);
    }
    // One build, two reuses.
    CHECK(cache.stats().misses - before.misses == 1);
    CHECK(cache.stats().hits - before.hits == 2);
  }
  // Mesh weighs hops against compute with the link's bandwidth: one plan per bandwidth.
  std::vector<scenario::Scenario> meshes;
  for (double bandwidth : {12.5e9, 25e9, 50e9, 25e9}) meshes.push_back(scenario_of("mesh", 8, bandwidth));
  require_builds(cache, meshes, 3, 1);
}

TEST_CASE("one schedule serves every batch size and prices as one generated at that batch; mesh plans per batch",
          "[scenario][schedule_cache]") {
  ScheduleCache cache;
  for (const std::string algorithm : {"ring", "usp", "attention2d", "ulysses", "all-gather"}) {
    INFO(algorithm);
    const auto before = cache.stats();
    double flops_one = 0;
    for (int64_t batch : {1, 3, 2, 3}) {
      INFO(batch);
      for (const bool simulated : {false, true}) {
        scenario::Scenario scenario = scenario_of(algorithm, 8, 50e9);
        scenario.problem.batch = batch;
        if (simulated) scenario.simulation = scenario::make_simulation(scenario::SimulationText{}, scenario.hardware);
        const auto cached = scenario::evaluate(scenario, &cache);
        const auto fresh = scenario::evaluate(scenario);
        CHECK(cached.schedule().problem.batch == batch);
        CHECK(cached.schedule().ops.size() == fresh.schedule().ops.size());
        require_same_cost(cached.figures.cost, fresh.figures.cost);
        if (simulated) REQUIRE(cached.figures.simulated_s == fresh.figures.simulated_s);
        // FLOPs scale with the batch: b sequences do b times one's work.
        if (batch == 1) flops_one = cached.figures.cost.flops_total;
        CHECK(cached.figures.cost.flops_total == Approx(static_cast<double>(batch) * flops_one).epsilon(1e-12));
      }
    }
    // Eight evaluations of one schedule: one build, seven reuses.
    CHECK(cache.stats().misses - before.misses == 1);
    CHECK(cache.stats().hits - before.hits == 7);
  }
  // Mesh's planner prices tiles by bytes and FLOPs, which the batch scales: one plan per batch.
  std::vector<scenario::Scenario> meshes;
  for (int64_t batch : {1, 3, 1}) {
    meshes.push_back(scenario_of("mesh", 8, 50e9));
    meshes.back().problem.batch = batch;
  }
  require_builds(cache, meshes, 2, 1);
}

TEST_CASE("a Mesh plan that comes out the same at another batch size is checked once", "[scenario][schedule_cache]") {
  // 32 GPUs, 16K tokens, 32 heads (8 KV heads) of 128: the planner weighs a block, which grows
  // with the batch, against a hop's fixed cost, which does not, so some batch sizes share a plan
  // and some do not. Which ones is read from the schedules generated afresh, by their JSON (the
  // problem, which holds the batch, left out).
  auto mesh_at = [](int64_t batch) {
    scenario::Scenario scenario = scenario_of("mesh", 32, 50e9);
    scenario.problem.seq_len = 16384;
    scenario.problem.heads = 32;
    scenario.problem.kv_heads = 8;
    scenario.problem.head_dim = scenario.problem.head_dim_v = 128;
    scenario.problem.batch = batch;
    return scenario;
  };
  const std::vector<int64_t> batches{1, 2, 5, 10, 20, 2};
  std::set<std::string> programs;
  ScheduleCache cache;
  for (int64_t batch : batches) {
    INFO(batch);
    scenario::Scenario scenario = mesh_at(batch);
    scenario.simulation = scenario::make_simulation(scenario::SimulationText{}, scenario.hardware);
    const auto cached = scenario::evaluate(scenario, &cache);
    const auto fresh = scenario::evaluate(scenario);
    nlohmann::json program = schedules::schedule_to_json(fresh.schedule());
    program.erase("problem");
    programs.insert(program.dump());
    CHECK(cached.schedule().problem.batch == batch);
    CHECK(schedules::schedule_to_json(cached.schedule()) == schedules::schedule_to_json(fresh.schedule()));
    require_same_cost(cached.figures.cost, fresh.figures.cost);
    REQUIRE(cached.figures.simulated_s == fresh.figures.simulated_s);
  }
  // Five batch sizes built (the sixth, 2 again, is held); each distinct program checked once,
  // every other build sharing the check of the equal one before it.
  const auto stats = cache.stats();
  CHECK(stats.misses == 5);
  CHECK(stats.hits == 1);
  REQUIRE(programs.size() > 1);  // the case covers both: plans that differ,
  REQUIRE(programs.size() < 5);  // and plans that are shared
  CHECK(stats.shared_checks == 5 - programs.size());
}

TEST_CASE("same_program: equal whatever the batch, different for any op, item, block or stream", "[scenario][schedule_cache]") {
  const Schedule base = schedules::generate_schedule("ring", small_problem(), options_for(4));
  Schedule batched = base;
  batched.problem.batch = 7;
  CHECK(same_program(base, batched));
  std::vector<std::pair<const char*, std::function<void(Schedule&)>>> changes = {
      {"an op's peer", [](Schedule& s) { s.ops[1].peer = (s.ops[1].peer + 1) % s.gpus; }},
      {"an op's stream", [](Schedule& s) { s.ops.back().stream += 1; }},
      {"an item", [](Schedule& s) { s.items.front().chunk = (s.items.front().chunk + 1) % s.gpus; }},
      {"a block", [](Schedule& s) { s.blocks.back().kv_chunk = (s.blocks.back().kv_chunk + 1) % s.gpus; }},
      {"stream buffers", [](Schedule& s) { s.stream_buffers.back() += 1; }},
      {"one op fewer", [](Schedule& s) { s.ops.pop_back(); }},
      {"the variant", [](Schedule& s) { s.variant += " "; }},
  };
  for (const auto& [what, change] : changes) {
    INFO(what);
    Schedule changed = base;
    change(changed);
    CHECK_FALSE(same_program(base, changed));
  }
}

TEST_CASE("a batch too large for the problem is refused to its caller alone, never held for other batches",
          "[scenario][schedule_cache]") {
  ScheduleCache cache;
  scenario::Scenario huge = scenario_of("ring", 8, 50e9);
  huge.problem.batch = int64_t{1} << 40;  // far past 2^48 bytes of activations
  std::string fresh_message, cached_message;
  try {
    scenario::generate(huge);
  } catch (const UserError& error) {
    fresh_message = error.what();
  }
  try {
    scenario::generate(huge, &cache);
  } catch (const UserError& error) {
    cached_message = error.what();
  }
  REQUIRE_FALSE(fresh_message.empty());
  CHECK(cached_message == fresh_message);
  const auto fine = scenario::evaluate(scenario_of("ring", 8, 50e9), &cache);
  CHECK(fine.schedule().problem.batch == 1);
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 0);
}

TEST_CASE("a schedule that does not apply is refused from the cache as when built", "[scenario][schedule_cache]") {
  ScheduleCache cache;
  // Ulysses needs the GPUs to divide the heads: 8 heads over 16 GPUs does not.
  const auto scenario = scenario_of("ulysses", 16, 50e9);
  std::string fresh_message;
  try {
    scenario::generate(scenario);
  } catch (const UserError& error) {
    fresh_message = error.what();
  }
  REQUIRE_FALSE(fresh_message.empty());
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string message;
    try {
      scenario::generate(scenario, &cache);
    } catch (const UserError& error) {
      message = error.what();
    }
    CHECK(message == fresh_message);
  }
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("the cache keeps within its bound, least recently used first", "[scenario][schedule_cache]") {
  const auto one = scenario::generate(scenario_of("ring", 8, 50e9));
  const size_t bytes = scenario::held_bytes(one);
  // The estimate counts at least the ops and the dependency lists.
  CHECK(bytes >= one.schedule().ops.size() * sizeof(Op) + one.analysis().deps.size() * sizeof(uint32_t));

  // Room for one 8-GPU ring and a half. Rings with 2 and 3 buffers are two keys of the same size
  // (the same ops; only the buffer count differs), so the second evicts the first.
  ScheduleCache cache(bytes + bytes / 2);
  for (int32_t buffers : {2, 3, 2, 2}) {
    auto scenario = scenario_of("ring", 8, 50e9);
    scenario.options.buffers = buffers;
    require_same_cost(scenario::evaluate(scenario, &cache).figures.cost, scenario::evaluate(scenario).figures.cost);
    CHECK(cache.stats().bytes <= cache.max_bytes());
  }
  // 2 buffers (built), 3 (built; 2 evicted), 2 (built again; 3 evicted), 2 (held).
  const auto stats = cache.stats();
  CHECK(stats.misses == 3);
  CHECK(stats.hits == 1);
  CHECK(stats.evictions == 2);
  CHECK(stats.entries == 1);

  // A bound below one schedule holds nothing, and still answers.
  ScheduleCache tiny(bytes / 2);
  const auto scenario = scenario_of("ring", 8, 50e9);
  require_same_cost(scenario::evaluate(scenario, &tiny).figures.cost, scenario::evaluate(scenario).figures.cost);
  CHECK(tiny.stats().entries == 0);
  CHECK(tiny.stats().bytes == 0);

  // A schedule larger than the bound is not held and does not push out the ones that fit: a
  // 4-GPU ring is held, a 64-GPU ring (about 256 times its ops) is not, and the first stays.
  const size_t small_bytes = scenario::held_bytes(scenario::generate(scenario_of("ring", 4, 50e9)));
  ScheduleCache room_for_small(small_bytes * 4);
  (void)scenario::generate(scenario_of("ring", 4, 50e9), &room_for_small);
  (void)scenario::generate(scenario_of("ring", 64, 50e9), &room_for_small);
  (void)scenario::generate(scenario_of("ring", 4, 50e9), &room_for_small);
  CHECK(room_for_small.stats().misses == 2);
  CHECK(room_for_small.stats().hits == 1);
  CHECK(room_for_small.stats().entries == 1);
}

TEST_CASE("threads asking for one schedule at once build it once", "[scenario][schedule_cache]") {
  ScheduleCache cache;
  const auto scenario = scenario_of("ring", 16, 50e9);
  constexpr int kThreads = 4;
  std::vector<const Schedule*> schedules(kThreads);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread)
    threads.emplace_back([&, thread] { schedules[thread] = &scenario::generate(scenario, &cache).schedule(); });
  for (auto& thread : threads) thread.join();
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == kThreads - 1);
  // They share one schedule object.
  for (const Schedule* schedule : schedules) CHECK(schedule == schedules.front());
}
