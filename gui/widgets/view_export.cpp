#include "widgets/view_export.hpp"

#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

namespace tessera::gui {

bool export_widget(QWidget* widget, const QString& path) {
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(widget->size());
    generator.setViewBox(QRect(QPoint(0, 0), widget->size()));
    generator.setTitle("Tessera");
    QPainter painter;
    if (!painter.begin(&generator)) return false;
    widget->render(&painter);
    return painter.end();
  }
  return widget->grab().save(path, "PNG");
}

}  // namespace tessera::gui
