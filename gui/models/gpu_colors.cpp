#include "models/gpu_colors.hpp"

#include <cmath>

namespace tessera::gui {

QColor gpu_color(int gpu) {
  constexpr double kGoldenFraction = 0.618033988749895;
  const double hue = std::fmod(0.05 + kGoldenFraction * gpu, 1.0);
  static constexpr int kSaturation[3] = {200, 255, 150};
  static constexpr int kValue[3] = {235, 185, 210};
  const int shade = (gpu / 7) % 3;  // 7 golden steps nearly close a circle; change shade there
  return QColor::fromHsv(static_cast<int>(hue * 359.0), kSaturation[shade], kValue[shade]);
}

QColor masked_color() { return QColor(225, 225, 225); }

QColor pending_color(const QColor& gpu_colour) {
  // Blend a third of the colour into white.
  return QColor((gpu_colour.red() + 2 * 255) / 3, (gpu_colour.green() + 2 * 255) / 3, (gpu_colour.blue() + 2 * 255) / 3);
}

}  // namespace tessera::gui
