#pragma once
// Exporting what a view shows: PNG (the widget's pixels) or SVG (the widget painted into a
// vector device; charts and custom views both paint through QPainter).
#include <QString>

class QWidget;

namespace tessera::gui {

// The format follows the suffix (.svg, else PNG). Returns false when the file cannot be written.
bool export_widget(QWidget* widget, const QString& path);

}  // namespace tessera::gui
