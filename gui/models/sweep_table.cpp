#include "models/sweep_table.hpp"

#include <QFile>

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::gui {

namespace {

// RFC 4180 fields: commas separate, double quotes enclose fields that hold commas or quotes
// ("" is a literal quote).
QStringList split_csv_line(const QString& line) {
  QStringList fields;
  QString field;
  bool quoted = false;
  for (qsizetype k = 0; k < line.size(); ++k) {
    const QChar c = line[k];
    if (quoted) {
      if (c == '"' && k + 1 < line.size() && line[k + 1] == '"') {
        field += '"';
        ++k;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields << field.trimmed();
      field.clear();
    } else {
      field += c;
    }
  }
  fields << field.trimmed();
  return fields;
}

// Plain numbers, and counts with the toolkit's suffixes ("128K", "1M": sweep specs write
// sequence lengths that way).
bool to_number(const QString& text, double& value) {
  bool ok = false;
  value = text.toDouble(&ok);
  if (ok || text.isEmpty()) return ok;
  try {
    value = static_cast<double>(parse_count(text.toStdString()));
    return true;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace

SweepTable SweepTable::read(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) throw UserError((path + ": cannot be read").toStdString());
  return parse(QString::fromUtf8(file.readAll()), path);
}

SweepTable SweepTable::parse(const QString& text, const QString& source_name) {
  SweepTable table;
  table.source_ = source_name;
  const QStringList lines = text.split('\n');
  int line_number = 0;
  for (QString line : lines) {
    ++line_number;
    if (line.endsWith('\r')) line.chop(1);
    if (line.trimmed().isEmpty()) continue;
    QStringList fields = split_csv_line(line);
    if (table.columns_.isEmpty()) {
      table.columns_ = fields;
      continue;
    }
    if (fields.size() != table.columns_.size())
      throw UserError((source_name + ":" + QString::number(line_number) + ": " + QString::number(fields.size()) +
                       " fields, but the header has " + QString::number(table.columns_.size()))
                          .toStdString());
    table.rows_.push_back(std::move(fields));
  }
  if (table.columns_.isEmpty()) throw UserError((source_name + ": empty file, expected a header row").toStdString());
  return table;
}

QStringList SweepTable::numericColumns() const {
  QStringList numeric;
  // Empty cells (points that failed or did not apply) do not disqualify a column.
  for (int column = 0; column < columns_.size(); ++column) {
    bool all = true, any = false;
    double value = 0;
    for (const QStringList& row : rows_) {
      if (row[column].isEmpty()) continue;
      any = true;
      all = all && to_number(row[column], value);
    }
    if (all && any) numeric << columns_[column];
  }
  return numeric;
}

int SweepTable::columnIndex(const QString& name) const {
  const int index = static_cast<int>(columns_.indexOf(name));
  if (index < 0)
    throw UserError((source_ + ": no column '" + name + "' (columns: " + columns_.join(", ") + ")").toStdString());
  return index;
}

std::vector<SweepSeries> SweepTable::series(const QString& x_column, const QString& y_column,
                                            const QString& series_column) const {
  const int x = columnIndex(x_column), y = columnIndex(y_column);
  const int s = series_column.isEmpty() ? -1 : columnIndex(series_column);
  std::vector<SweepSeries> out;
  for (const QStringList& row : rows_) {
    double x_value = 0, y_value = 0;
    if (!to_number(row[x], x_value) || !to_number(row[y], y_value)) continue;
    const QString name = s >= 0 ? row[s] : QString();
    auto it = std::find_if(out.begin(), out.end(), [&](const SweepSeries& series) { return series.name == name; });
    if (it == out.end()) {
      out.push_back(SweepSeries{name, {}});
      it = out.end() - 1;
    }
    it->points.emplace_back(x_value, y_value);
  }
  for (SweepSeries& series : out)
    std::stable_sort(series.points.begin(), series.points.end(),
                     [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  return out;
}

}  // namespace tessera::gui
