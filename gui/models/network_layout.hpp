#pragma once
// Where each vertex of a topology is drawn, in its own shape: a ring (or a fully connected
// set, or GPUs around one switch) as a circle, a torus as a grid (3-D: the planes side by
// side), a hierarchical cluster as layers: GPUs at the bottom grouped by server, then
// NVSwitches, NICs, leaves and spines above. Coordinates are in [0, 1] x [0, 1], y down.
#include <QPointF>

#include <vector>

#include "tessera/scenario/network.hpp"

namespace tessera::gui {

struct NetworkLayout {
  std::vector<QPointF> vertex_positions;  // by vertex index (Topology::vertex)
  bool curved_edges = false;              // tori: draw wrap-around links as arcs
};

NetworkLayout layout_network(const topo::Topology& topology);

}  // namespace tessera::gui
