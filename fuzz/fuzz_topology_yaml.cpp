// Fuzzes topology description files (topologies/description.hpp): parse and build the
// network, as `--topology FILE` and `tessera topo show FILE` do, then draw it (to_dot).
#include "fuzz_common.hpp"
#include "tessera/topologies/description.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::expect_user_errors_only([&] {
    const topo::Topology topology = topo::parse_topology_yaml(fuzz::text_of(data, size), "fuzz.yaml");
    (void)topo::to_dot(topology);
  });
}
