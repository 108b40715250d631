// Requests beyond the memory limit are refused before anything is allocated: exit 2, one line
// with the estimate and the limit. TESSERA_MEMORY_LIMIT makes the limit small and the same on
// every machine, so each refusal is fast; requests just under it still run.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "cli/cli_run.hpp"

namespace {

using cli_test::lines;

// Runs `tessera ARGUMENTS` with TESSERA_MEMORY_LIMIT set to `limit` (the child inherits it).
cli_test::Run tessera_within(const std::string& limit, const std::string& arguments) {
  setenv("TESSERA_MEMORY_LIMIT", limit.c_str(), 1);
  cli_test::Run run = cli_test::tessera(arguments);
  unsetenv("TESSERA_MEMORY_LIMIT");
  return run;
}

// Exit 2 and one line on stderr naming `place`.
void require_refused(const cli_test::Run& run, const std::string& place) {
  INFO(run.err);
  REQUIRE(run.exit_code == 2);
  REQUIRE(lines(run.err) == 1);
  REQUIRE(run.err.rfind("tessera: ", 0) == 0);
  REQUIRE(run.err.find(place) != std::string::npos);
}

// ... and carrying the estimate and the limit.
void require_memory_refusal(const cli_test::Run& run, const std::string& place, const std::string& limit) {
  require_refused(run, place);
  REQUIRE(run.err.find("needs about") != std::string::npos);
  REQUIRE(run.err.find("more than the limit of " + limit) != std::string::npos);
}

void write_file(const std::string& name, const std::string& text) {
  std::ofstream(test_support::scratch_path(name), std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a plan too large for memory is refused with the estimate, never std::bad_alloc", "[cli][limits]") {
  // 65536 GPUs: the block grid alone is 8 B x 2^32 = 34 GB, past any limit this test may see.
  require_memory_refusal(tessera_within("16GB", "plan --model analytic --gpus 65536"), "no schedule fits", "16 GB");
  // Contiguous and causal: no grid allows the rotation, so every candidate is estimated in full.
  require_memory_refusal(tessera_within("200MB", "plan --model analytic --gpus 1K --layout contiguous"),
                         "on 1024 GPUs", "200 MB");
}

TEST_CASE("a plan keeps the candidates that fit and lists the others with their estimate", "[cli][limits]") {
  // 256 GPUs under 100 MB: a ring's every program is 2 passes x 1 kB x 256^2 = 131 MB, GPU 0's
  // alone 1/256 of it. Zigzag, only the analytical figures wanted: the ring is GPU 0's program
  // (schedules/rotation.hpp) and ranked; the contiguous ring is every GPU's, and listed with its
  // estimate. attention2d 16x16 fits in full.
  const cli_test::Run run = tessera_within("100MB", "plan --model analytic --gpus 256 --seq 1M");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.out.find("ring contiguous: ring on 256 GPUs needs about") != std::string::npos);
  REQUIRE(run.out.find(" ring zigzag ") != std::string::npos);
  REQUIRE(run.out.find("attention2d 16x16") != std::string::npos);
}

TEST_CASE("schedules, collectives and chunked messages past the limit are refused before they are built",
          "[cli][limits]") {
  require_memory_refusal(tessera_within("200MB", "schedule --algo all-gather --gpus 1K"), "all-gather on 1024 GPUs",
                         "200 MB");
  require_memory_refusal(tessera_within("200MB", "cost --algo ulysses --gpus 512 --heads 512 --kv-heads 512"),
                         "ulysses on 512 GPUs", "200 MB");
  // 8192^2 = 67M pairs, each its own transfer.
  require_memory_refusal(tessera_within("1GB", "simulate --collective all-to-all --gpus 8K"),
                         "all-to-all on 8192 ranks", "1 GB");
  // A ring's KV chunk on 8 GPUs of 1M tokens is 512 MiB: 5e8 messages of one byte each.
  require_memory_refusal(tessera_within("1GB", "simulate --algo ring --gpus 8 --seq 1M --chunk 1"), "--chunk", "1 GB");
}

TEST_CASE("requests just under the limit still run", "[cli][limits]") {
  CHECK(tessera_within("200MB", "cost --algo ring --gpus 64 --seq 1M").exit_code == 0);
  CHECK(tessera_within("200MB", "simulate --collective all-to-all --gpus 64").exit_code == 0);
  CHECK(tessera_within("200MB", "topo show ring-1000").exit_code == 0);
  CHECK(tessera_within("200MB", "simulate --algo ring --gpus 4 --seq 64K --chunk 1M").exit_code == 0);
}

TEST_CASE("networks past the limit are refused before a vertex is added", "[cli][limits]") {
  // 4000 x 3999 = 16.0M links, under the 2^24 supported, about 4 GB.
  require_memory_refusal(tessera_within("1GB", "topo show full-4000"), "fully connected network", "1 GB");
  write_file("ring_4m.yaml", "builder: ring\ngpus: 4194304\nbandwidth: 50GB/s\nlatency_us: 5\n");
  require_memory_refusal(tessera_within("200MB", "topo show ring_4m.yaml"), "ring_4m.yaml", "200 MB");
  // A ring's diameter is closed form: 100k GPUs no longer route 5e9 link indices.
  const cli_test::Run ring = tessera_within("200MB", "topo show ring-100000 --json");
  INFO(ring.err);
  REQUIRE(ring.exit_code == 0);
  REQUIRE(ring.out.find("\"diameter_hops\": 50000") != std::string::npos);
}

TEST_CASE("GPU counts past 32 bits are refused, never wrapped", "[cli][limits]") {
  // 4294967297 = 2^32 + 1 would wrap to 1.
  require_refused(cli_test::tessera("topo show ring --gpus 4294967297"), "--gpus");
}

TEST_CASE("executors estimate their tensors before allocating them", "[cli][limits]") {
  require_memory_refusal(tessera_within("1GB", "run --algo ring --gpus 2 --seq 64 --head-dim-v 1G"), "tensors", "1 GB");
}
