#pragma once
// A sweep results file read generically: CSV with a header row, one row per point, units in
// the column names (gpus, seq, algo, time_s, ...). The Compare view lets the user pick an x
// column, a y column and a series column, and draws one line per series value.
#include <QPointF>
#include <QString>
#include <QStringList>

#include <vector>

namespace tessera::gui {

struct SweepSeries {
  QString name;                // the series column's value ("mesh", "ring", ...); "" without one
  std::vector<QPointF> points; // sorted by x
};

class SweepTable {
 public:
  // Throws UserError naming the file and line (wrong field count, empty file).
  static SweepTable read(const QString& path);
  static SweepTable parse(const QString& text, const QString& source_name);

  const QStringList& columns() const { return columns_; }
  int rowCount() const { return static_cast<int>(rows_.size()); }
  const QString& value(int row, int column) const { return rows_[static_cast<size_t>(row)][static_cast<size_t>(column)]; }
  // Columns whose every non-empty value is a number, "128K"-style counts included
  // (candidates for x and y).
  QStringList numericColumns() const;

  // One series per distinct value of `series_column` (in order of first appearance; none: one
  // series); rows whose x or y is not a number are left out. UserError for an unknown column.
  std::vector<SweepSeries> series(const QString& x_column, const QString& y_column,
                                  const QString& series_column = QString()) const;

 private:
  int columnIndex(const QString& name) const;
  QString source_;
  QStringList columns_;
  std::vector<QStringList> rows_;
};

}  // namespace tessera::gui
