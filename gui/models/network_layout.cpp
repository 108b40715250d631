#include "models/network_layout.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

namespace tessera::gui {

namespace {

void place_on_circle(NetworkLayout& layout, const topo::Topology& topology) {
  const int gpus = topology.gpu_count();
  for (int gpu = 0; gpu < gpus; ++gpu) {
    // GPU 0 at the top, clockwise.
    const double angle = 2 * std::numbers::pi * gpu / std::max(gpus, 1) - std::numbers::pi / 2;
    layout.vertex_positions[static_cast<size_t>(topology.gpu_vertex(gpu))] =
        QPointF(0.5 + 0.42 * std::cos(angle), 0.5 + 0.42 * std::sin(angle));
  }
  // Anything else (the one switch) sits in the middle.
  for (int32_t vertex = 0; vertex < topology.vertex_count(); ++vertex)
    if (topology.vertex(vertex).kind != topo::VertexKind::gpu)
      layout.vertex_positions[static_cast<size_t>(vertex)] = QPointF(0.5, 0.5);
}

void place_on_grid(NetworkLayout& layout, const topo::Topology& topology) {
  const std::vector<int32_t>& dims = topology.torus_dims;
  const int columns = dims.empty() ? topology.gpu_count() : dims[0];
  const int rows = dims.size() > 1 ? dims[1] : 1;
  int planes = 1;
  for (size_t d = 2; d < dims.size(); ++d) planes *= dims[d];
  // 3-D and up: the planes side by side with a gap, each a little lower than the one before,
  // so that the links between planes do not run along the rows.
  const double plane_width = 1.0 / planes;
  const double plane_drop = planes > 1 ? 0.2 / (planes - 1) : 0.0;
  const double height = planes > 1 ? 0.6 : 0.8;
  for (int gpu = 0; gpu < topology.gpu_count(); ++gpu) {
    const int x = gpu % columns, y = (gpu / columns) % rows, plane = gpu / (columns * rows);
    const double px = plane * plane_width + plane_width * (0.15 + 0.7 * (columns > 1 ? double(x) / (columns - 1) : 0.5));
    const double py = 0.1 + plane * plane_drop + height * (rows > 1 ? double(y) / (rows - 1) : 0.5);
    layout.vertex_positions[static_cast<size_t>(topology.gpu_vertex(gpu))] = QPointF(px, py);
  }
}

// Layers from the top: spines, leaves, (plain switches), NICs, NVSwitches, GPUs. Within a
// layer, vertices of one server sit together under that server's span of the width.
void place_in_layers(NetworkLayout& layout, const topo::Topology& topology) {
  auto layer_of = [](topo::VertexKind kind) {
    switch (kind) {
      case topo::VertexKind::spine: return 0;
      case topo::VertexKind::leaf: return 1;
      case topo::VertexKind::switch_: return 2;
      case topo::VertexKind::nic: return 3;
      case topo::VertexKind::nvswitch: return 4;
      case topo::VertexKind::gpu: return 5;
    }
    return 2;
  };
  std::map<int, std::vector<int32_t>> layers;
  for (int32_t vertex = 0; vertex < topology.vertex_count(); ++vertex)
    layers[layer_of(topology.vertex(vertex).kind)].push_back(vertex);
  // Keep server order, then insertion order, so GPUs, their NVSwitch and NICs line up.
  for (auto& [layer, vertices] : layers)
    std::stable_sort(vertices.begin(), vertices.end(),
                     [&](int32_t a, int32_t b) { return topology.vertex(a).node < topology.vertex(b).node; });
  const int used_layers = static_cast<int>(layers.size());
  int row = 0;
  for (const auto& [layer, vertices] : layers) {
    const double y = used_layers > 1 ? 0.08 + 0.84 * row / (used_layers - 1) : 0.5;  // y down: spines on top
    const size_t count = vertices.size();
    for (size_t k = 0; k < count; ++k)
      layout.vertex_positions[static_cast<size_t>(vertices[k])] = QPointF((static_cast<double>(k) + 0.5) / static_cast<double>(count), y);
    ++row;
  }
}

}  // namespace

NetworkLayout layout_network(const topo::Topology& topology) {
  NetworkLayout layout;
  layout.vertex_positions.assign(static_cast<size_t>(topology.vertex_count()), QPointF(0.5, 0.5));
  switch (topology.shape) {
    case topo::TopologyShape::ring:
    case topo::TopologyShape::fully_connected:
    case topo::TopologyShape::single_switch:
      place_on_circle(layout, topology);
      break;
    case topo::TopologyShape::torus:
      place_on_grid(layout, topology);
      layout.curved_edges = true;
      break;
    case topo::TopologyShape::hierarchical:
    case topo::TopologyShape::custom:
      place_in_layers(layout, topology);
      break;
  }
  return layout;
}

}  // namespace tessera::gui
