#include "models/session.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <functional>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/resource_limits.hpp"

namespace tessera::gui {

namespace {

struct Field {
  const char* name;
  std::string* value;
};

std::vector<Field> problem_fields(scenario::ProblemText& p) {
  return {{"gpus", &p.gpus},       {"seq", &p.seq},         {"batch", &p.batch},         {"heads", &p.heads},
          {"kv_heads", &p.kv_heads}, {"head_dim", &p.head_dim}, {"head_dim_v", &p.head_dim_v}, {"dtype", &p.dtype},
          {"mask", &p.mask},       {"window", &p.window},   {"documents", &p.documents}, {"layout", &p.layout},
          {"pass", &p.pass}};
}
std::vector<Field> schedule_fields(scenario::ScheduleText& s) {
  return {{"algorithm", &s.algorithm}, {"tile", &s.tile}, {"variant", &s.variant}, {"input", &s.input}};
}
std::vector<Field> network_fields(scenario::NetworkText& n) {
  return {{"topology", &n.topology}, {"placement", &n.placement}};
}
std::vector<Field> simulation_fields(Session& s) { return {{"fidelity", &s.fidelity}, {"gpu", &s.gpu}}; }

// Reads the string fields of one section; whole numbers are accepted for convenience
// ("gpus": 64), anything else names the field.
void read_section(const QJsonObject& root, const char* section, std::vector<Field> fields, const QString& source) {
  auto fail = [&](const QString& field, const QString& what) {
    throw UserError((source + ": " + field + ": " + what).toStdString());
  };
  if (!root.contains(section)) return;
  const QJsonValue value = root.value(section);
  if (!value.isObject()) fail(section, "expected an object");
  const QJsonObject object = value.toObject();
  for (auto it = object.begin(); it != object.end(); ++it) {
    const QString path = QString(section) + "." + it.key();
    Field* field = nullptr;
    for (Field& candidate : fields)
      if (it.key() == candidate.name) field = &candidate;
    if (!field) {
      QStringList known;
      for (const Field& candidate : fields) known << candidate.name;
      fail(path, "unknown field (expected one of " + known.join(", ") + ")");
    }
    if (it.value().isString()) {
      *field->value = it.value().toString().toStdString();
    } else if (it.value().isDouble() && it.value().toDouble() == static_cast<double>(it.value().toInteger())) {
      *field->value = std::to_string(it.value().toInteger());
    } else {
      fail(path, "expected a string (or a whole number)");
    }
  }
}

// "3:14": the 1-based line and column of byte `offset` of `text` (where Qt's parser stopped).
QString line_and_column(const QByteArray& text, qsizetype offset) {
  qsizetype line = 1, column = 1;
  for (qsizetype at = 0; at < offset && at < text.size(); ++at) {
    if (text[at] == '\n') ++line, column = 1;
    else ++column;
  }
  return QString::number(line) + ":" + QString::number(column);
}

// Parsed JSON takes several times its text's size; a session file is a few hundred bytes, so a
// file this multiple of its size past the memory limit is not a session file.
constexpr double kParsedBytesPerTextByte = 16;

QJsonObject section_json(const std::vector<Field>& fields) {
  QJsonObject object;
  for (const Field& field : fields) object.insert(field.name, QString::fromStdString(*field.value));
  return object;
}

}  // namespace

Session default_session() {
  Session session;
  session.problem.gpus = "64";
  session.problem.seq = "128K";
  session.problem.pass = "forward";
  session.schedule.algorithm = "mesh";
  session.network.topology = "h100-ib:8";
  session.network.placement = "auto";
  return session;
}

bool is_view_name(const std::string& view) {
  return view == "matrix" || view == "network" || view == "timeline" || view == "compare";
}

Session parse_session(const QByteArray& json, const QString& source, const QString& base_dir) {
  QJsonParseError error;
  const QJsonDocument document = QJsonDocument::fromJson(json, &error);
  if (error.error != QJsonParseError::NoError)
    throw UserError((source + ":" + line_and_column(json, error.offset) + ": not valid JSON (" + error.errorString() +
                     ")")
                        .toStdString());
  if (!document.isObject()) throw UserError((source + ": expected a JSON object").toStdString());
  const QJsonObject root = document.object();
  auto fail = [&](const QString& field, const QString& what) {
    throw UserError((source + ": " + field + ": " + what).toStdString());
  };
  for (auto it = root.begin(); it != root.end(); ++it) {
    static const QStringList kKnown = {"format",     "version", "problem",     "schedule",
                                       "network",    "simulation", "view", "selected_gpu", "sweep"};
    if (!kKnown.contains(it.key())) fail(it.key(), "unknown field (expected one of " + kKnown.join(", ") + ")");
  }
  if (root.value("format").toString() != "tessera-gui-session") fail("format", "expected \"tessera-gui-session\"");
  if (!root.value("version").isDouble() || root.value("version").toInt() != kSessionVersion)
    fail("version", "expected " + QString::number(kSessionVersion));

  // Missing fields keep the defaults of the text types (the command line's), not the GUI's
  // default scenario: a file says what it means on its own.
  Session session;
  read_section(root, "problem", problem_fields(session.problem), source);
  read_section(root, "schedule", schedule_fields(session.schedule), source);
  read_section(root, "network", network_fields(session.network), source);
  read_section(root, "simulation", simulation_fields(session), source);
  if (root.contains("view")) {
    if (!root.value("view").isString()) fail("view", "expected a string");
    session.view = root.value("view").toString().toStdString();
    if (!is_view_name(session.view)) fail("view", "expected one of matrix, network, timeline, compare");
  }
  if (root.contains("selected_gpu")) {
    const QJsonValue gpu = root.value("selected_gpu");
    if (!gpu.isDouble() || gpu.toDouble() != static_cast<double>(gpu.toInt()) || gpu.toInt() < -1)
      fail("selected_gpu", "expected a GPU index (or -1 for none)");
    session.selected_gpu = gpu.toInt();
  }
  if (root.contains("sweep")) {
    std::vector<Field> fields = {{"file", &session.sweep.file},
                                 {"x", &session.sweep.x},
                                 {"y", &session.sweep.y},
                                 {"series", &session.sweep.series}};
    if (!root.value("sweep").isObject()) fail("sweep", "expected an object");
    QJsonObject sweep = root.value("sweep").toObject();
    for (auto [name, flag] : {std::pair{"log_x", &session.sweep.log_x}, std::pair{"log_y", &session.sweep.log_y}}) {
      const QJsonValue value = sweep.take(name);
      if (!value.isUndefined() && !value.isBool()) fail(QString("sweep.") + name, "expected true or false");
      *flag = value.toBool(false);
    }
    QJsonObject rest;
    rest.insert("sweep", sweep);
    read_section(rest, "sweep", fields, source);
    if (!session.sweep.file.empty() && !base_dir.isEmpty())
      session.sweep.file = QDir(base_dir).absoluteFilePath(QString::fromStdString(session.sweep.file)).toStdString();
  }
  return session;
}

Session read_session(const QString& path) {
  const QFileInfo info(path);
  if (info.isDir()) throw UserError((path + ": is a directory, expected a session file").toStdString());
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) throw UserError((path + ": cannot be read").toStdString());
  require_memory(static_cast<double>(file.size()) * kParsedBytesPerTextByte, "reading " + path.toStdString());
  const QByteArray text = file.readAll();
  if (file.error() != QFileDevice::NoError)
    throw UserError((path + ": reading failed (" + file.errorString() + ")").toStdString());
  return parse_session(text, path, info.absolutePath());
}

QByteArray session_to_json(const Session& session, const QString& base_dir) {
  Session copy = session;  // the field tables point into a mutable session
  QJsonObject root;
  root.insert("format", "tessera-gui-session");
  root.insert("version", kSessionVersion);
  root.insert("problem", section_json(problem_fields(copy.problem)));
  root.insert("schedule", section_json(schedule_fields(copy.schedule)));
  root.insert("network", section_json(network_fields(copy.network)));
  root.insert("simulation", section_json(simulation_fields(copy)));
  root.insert("view", QString::fromStdString(copy.view));
  root.insert("selected_gpu", copy.selected_gpu);
  if (!copy.sweep.file.empty()) {
    QString file = QString::fromStdString(copy.sweep.file);
    if (!base_dir.isEmpty()) file = QDir(base_dir).relativeFilePath(file);
    QJsonObject sweep;
    sweep.insert("file", file);
    sweep.insert("x", QString::fromStdString(copy.sweep.x));
    sweep.insert("y", QString::fromStdString(copy.sweep.y));
    sweep.insert("series", QString::fromStdString(copy.sweep.series));
    sweep.insert("log_x", copy.sweep.log_x);
    sweep.insert("log_y", copy.sweep.log_y);
    root.insert("sweep", sweep);
  }
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

void write_session(const QString& path, const Session& session) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(session_to_json(session, QFileInfo(path).absolutePath())) < 0 ||
      !file.commit())
    throw UserError((path + ": cannot write the file").toStdString());
}

}  // namespace tessera::gui
