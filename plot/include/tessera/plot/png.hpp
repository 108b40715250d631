#pragma once
// PNG from the SVG writer's text, rendered headless through Qt (QSvgRenderer onto a QImage,
// offscreen platform, no display needed). Built only when Qt 6 Svg is found.
#include <string>

namespace tessera::plot {

// `scale` multiplies the pixel size (2: sharp on high-density screens). UserError when the
// file cannot be written.
void write_png(const std::string& svg, const std::string& path, double scale = 2.0);

}  // namespace tessera::plot
