// The reference side of bench/simgrid/compare.py: a ring all-reduce of SIZE bytes over N hosts
// on SimGrid (S4U), modelled as Tessera's `simulate --collective all-reduce --topology ring-N`
// models it, so that both give the same simulated time and their speed can be compared:
//  - N hosts on a ring of links, one link per direction (full duplex) of BANDWIDTH bytes/s and
//    LATENCY s; only the direction i -> i+1 carries data;
//  - 2(N-1) steps; at each step every member sends a piece of SIZE/N bytes to its successor;
//    member i starts step s+1 once its own step-s piece and its predecessor's have arrived;
//  - plain max-min sharing with a constant bandwidth per link (CM02, no TCP window, no cross
//    traffic: compare.py passes those --cfg flags), so a message takes LATENCY + bytes/BANDWIDTH.
// Usage: ring_allreduce N SIZE_BYTES BANDWIDTH_BYTES_PER_S LATENCY_S [--cfg=...]
// Prints "simulated time: T s".
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

int g_ranks = 0;
double g_piece_bytes = 0;
std::vector<sg4::Mailbox*> g_mailboxes;
char g_token = 0;  // what the messages carry (only their simulated size matters)

void member(int rank) {
  sg4::Mailbox* next = g_mailboxes[static_cast<size_t>((rank + 1) % g_ranks)];
  sg4::Mailbox* mine = g_mailboxes[static_cast<size_t>(rank)];
  for (int step = 0; step < 2 * (g_ranks - 1); ++step) {
    sg4::CommPtr send = next->put_async(&g_token, static_cast<uint64_t>(g_piece_bytes + 0.5));
    void* received = nullptr;
    sg4::CommPtr receive = mine->get_async(&received);
    send->wait();
    receive->wait();
  }
  mine->set_receiver(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine engine(&argc, argv);  // consumes the --cfg=... arguments
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s N SIZE_BYTES BANDWIDTH_BYTES_PER_S LATENCY_S [--cfg=...]\n", argv[0]);
    return 2;
  }
  g_ranks = std::atoi(argv[1]);
  const double size_bytes = std::atof(argv[2]);
  const double bandwidth = std::atof(argv[3]);
  const double latency_s = std::atof(argv[4]);
  g_piece_bytes = size_bytes / g_ranks;

  sg4::NetZone* zone = sg4::create_full_zone("ring");
  std::vector<sg4::Host*> hosts;
  for (int rank = 0; rank < g_ranks; ++rank) hosts.push_back(zone->create_host("gpu" + std::to_string(rank), 1e12));
  for (int rank = 0; rank < g_ranks; ++rank) {
    sg4::Link* link = zone->create_link("link" + std::to_string(rank), bandwidth)->set_latency(latency_s)->seal();
    zone->add_route(hosts[static_cast<size_t>(rank)]->get_netpoint(),
                    hosts[static_cast<size_t>((rank + 1) % g_ranks)]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(link)}, false);
  }
  zone->seal();
  for (int rank = 0; rank < g_ranks; ++rank) g_mailboxes.push_back(sg4::Mailbox::by_name("m" + std::to_string(rank)));
  for (int rank = 0; rank < g_ranks; ++rank) {
    sg4::ActorPtr actor = sg4::Actor::create("member" + std::to_string(rank), hosts[static_cast<size_t>(rank)], member, rank);
    // A permanent receiver: a piece starts moving when it is sent, not when it is asked for.
    g_mailboxes[static_cast<size_t>(rank)]->set_receiver(actor);
  }
  engine.run();
  std::printf("simulated time: %.9f s\n", sg4::Engine::get_clock());
  return 0;
}
