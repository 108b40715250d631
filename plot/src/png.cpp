#include "tessera/plot/png.hpp"

#include <QByteArray>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tessera/core/error.hpp"

namespace tessera::plot {

void write_png(const std::string& svg, const std::string& path, double scale) {
  // Headless: the offscreen platform, set before the application object exists.
  // The application object lives until the process ends (destroying it during static
  // destruction crashes); Qt wants a private runtime directory, given one under /tmp if unset.
  if (!QGuiApplication::instance()) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
      const std::string runtime = "/tmp/runtime-tessera-" + std::to_string(::getuid());
      ::mkdir(runtime.c_str(), 0700);
      qputenv("XDG_RUNTIME_DIR", QByteArray::fromStdString(runtime));
    }
    static int argc = 1;
    static char name[] = "tessera";
    static char* argv[] = {name, nullptr};
    new QGuiApplication(argc, argv);  // NOLINT: intentionally never deleted
  }
  QSvgRenderer renderer(QByteArray(svg.data(), static_cast<qsizetype>(svg.size())));
  if (!renderer.isValid()) throw UserError(path + ": the figure's SVG could not be rendered");
  const QSize size = renderer.defaultSize() * scale;
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  renderer.render(&painter);
  painter.end();
  if (!image.save(QString::fromStdString(path), "PNG")) throw UserError(path + ": cannot write the PNG file");
}

}  // namespace tessera::plot
