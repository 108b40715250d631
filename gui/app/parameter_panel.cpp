#include "app/parameter_panel.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QPushButton>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QVBoxLayout>

#include "tessera/schedules/generators.hpp"
#include "tessera/scenario/network.hpp"
#include "tessera/scenario/simulation.hpp"

namespace tessera::gui {

using schedules::GeneratorInfo;
using schedules::factor_pairs;
using schedules::list_generators;

namespace {

QString combo_or_line_text(const QWidget* input) {
  if (auto* line = qobject_cast<const QLineEdit*>(input)) return line->text();
  if (auto* combo = qobject_cast<const QComboBox*>(input)) return combo->currentText();
  return {};
}

void set_input_text(QWidget* input, const QString& value) {
  if (auto* line = qobject_cast<QLineEdit*>(input)) {
    line->setText(value);
  } else if (auto* combo = qobject_cast<QComboBox*>(input)) {
    const int index = combo->findText(value);
    if (index >= 0) {
      combo->setCurrentIndex(index);
    } else if (combo->isEditable()) {
      combo->setEditText(value);
    } else {
      // A value the list does not know (from a session file) is kept, so that the run
      // reports it by name instead of silently using another one.
      combo->addItem(value);
      combo->setCurrentIndex(combo->count() - 1);
    }
  }
}

}  // namespace

ParameterPanel::ParameterPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);

  auto* problem_box = new QGroupBox("Problem", this);
  auto* problem = new QFormLayout(problem_box);
  addLine(problem, "gpus", "GPUs", "number of GPUs (= chunks of the sequence)");
  addLine(problem, "seq", "sequence length", "tokens: 128K, 1M, or a plain number");
  addLine(problem, "batch", "batch", "sequences per batch");
  addLine(problem, "heads", "heads", "query heads H");
  addLine(problem, "kv_heads", "KV heads", "key/value heads G (G < H: grouped-query attention)");
  addLine(problem, "head_dim", "head dim", "d");
  addCombo(problem, "dtype", "dtype", {"bf16", "fp16", "fp32"}, false, "element type");
  addCombo(problem, "mask", "mask", {"full", "causal", "sliding-window", "documents"}, false, "attention mask");
  addLine(problem, "window", "window", "sliding-window width in tokens");
  addLine(problem, "documents", "documents", "document lengths, comma-separated (mask documents)");
  addCombo(problem, "layout", "layout", {"", "contiguous", "zigzag", "striped"}, false,
           "tokens to chunks; empty: contiguous for a full mask, zigzag otherwise");
  addCombo(problem, "pass", "pass", {"forward", "backward", "both"}, false, "which pass to schedule");
  layout->addWidget(problem_box);

  auto* schedule_box = new QGroupBox("Schedule", this);
  auto* schedule = new QFormLayout(schedule_box);
  QStringList algorithms;
  for (const GeneratorInfo& info : list_generators()) algorithms << QString::fromStdString(info.name);
  addCombo(schedule, "algorithm", "algorithm", algorithms, false, "schedule generator");
  addCombo(schedule, "tile", "tile", {""}, true,
           "mesh: AxB query chunks x KV chunks per tile; attention2d: rows x cols; usp: Ulysses x ring degree; "
           "empty: automatic");
  addLine(schedule, "variant", "variant", "attention2d: collective or ring");
  addLine(schedule, "input", "input file", "algorithm file: a schedule JSON; assignment: a matrix JSON");
  addBrowseButton(schedule, "input", "Schedule or assignment file (JSON)", "JSON (*.json);;All files (*)");
  layout->addWidget(schedule_box);

  auto* network_box = new QGroupBox("Network", this);
  auto* network = new QFormLayout(network_box);
  QStringList presets = {"", "h100-ib:8", "h100-ib:4", "h100-ib:2", "a100-16x4", "h100-64x1", "tpu-v4-like",
                         "ring-64", "torus-8x8", "switch-64"};
  addCombo(network, "topology", "topology", presets, true,
           "a preset (tessera topo list) or a topology YAML file; empty: uniform network");
  addBrowseButton(network, "topology", "Topology file (YAML)", "YAML (*.yaml *.yml);;All files (*)");
  addCombo(network, "placement", "placement", {"linear", "round-robin", "rail-aligned", "auto"}, true,
           "rank to GPU: linear, round-robin, rail-aligned (every other server backwards), auto (topology-aware), list:3,0,1,2");
  layout->addWidget(network_box);

  auto* simulation_box = new QGroupBox("Simulation", this);
  auto* simulation = new QFormLayout(simulation_box);
  addCombo(simulation, "fidelity", "fidelity", {"flow", "alpha-beta"}, false,
           "flow: max-min fair sharing of links; alpha-beta: no contention");
  QStringList gpus;
  for (const sim::GpuProfile& profile : sim::gpu_profiles()) gpus << QString::fromStdString(profile.name);
  addCombo(simulation, "gpu", "GPU model", gpus, false, "roofline compute model");
  layout->addWidget(simulation_box);
  layout->addStretch(1);

  connect(static_cast<QLineEdit*>(inputs_["gpus"]), &QLineEdit::editingFinished, this, [this] { refreshTiles(); });
  setSession(default_session());
}

QLineEdit* ParameterPanel::addLine(QFormLayout* form, const char* name, const QString& label, const QString& tip) {
  auto* line = new QLineEdit(this);
  line->setObjectName(name);
  line->setToolTip(tip);
  form->addRow(label, line);
  inputs_[name] = line;
  connect(line, &QLineEdit::editingFinished, this, [this, line] {
    if (line->isModified()) {
      line->setModified(false);
      emit changed();
    }
  });
  return line;
}

QComboBox* ParameterPanel::addCombo(QFormLayout* form, const char* name, const QString& label, const QStringList& items,
                                    bool editable, const QString& tip) {
  auto* combo = new QComboBox(this);
  combo->setObjectName(name);
  combo->setToolTip(tip);
  combo->setEditable(editable);
  combo->addItems(items);
  form->addRow(label, combo);
  inputs_[name] = combo;
  if (editable) {
    // Typing should not start a run per keystroke: editable combos report on Enter / focus out.
    connect(combo, &QComboBox::activated, this, [this] { emit changed(); });
    connect(combo->lineEdit(), &QLineEdit::editingFinished, this, [this, combo] {
      if (combo->lineEdit()->isModified()) {
        combo->lineEdit()->setModified(false);
        emit changed();
      }
    });
  } else {
    connect(combo, &QComboBox::currentIndexChanged, this, [this] { emit changed(); });
  }
  return combo;
}

void ParameterPanel::addBrowseButton(QFormLayout* form, const char* name, const QString& title, const QString& filter) {
  auto* button = new QPushButton("Choose a file…", this);
  form->addRow(QString(), button);
  const QString field_name = name;
  connect(button, &QPushButton::clicked, this, [this, field_name, title, filter] {
    const QString path = QFileDialog::getOpenFileName(this, title, QString(), filter);
    if (!path.isEmpty()) setField(field_name, path);
  });
}

std::string ParameterPanel::text(const char* name) const {
  return combo_or_line_text(inputs_.at(name)).trimmed().toStdString();
}

void ParameterPanel::refreshTiles() {
  auto* tile = static_cast<QComboBox*>(inputs_["tile"]);
  const QString current = tile->currentText();
  const bool was_blocked = tile->blockSignals(true);
  tile->clear();
  tile->addItem("");
  bool ok = false;
  const int gpus = static_cast<QLineEdit*>(inputs_["gpus"])->text().toInt(&ok);
  if (ok && gpus > 0 && gpus <= 4096)
    for (const TileShape& shape : factor_pairs(gpus)) tile->addItem(QString::fromStdString(to_string(shape)));
  tile->setEditText(current);
  tile->blockSignals(was_blocked);
}

Session ParameterPanel::session() const {
  Session session;
  session.problem.gpus = text("gpus");
  session.problem.seq = text("seq");
  session.problem.batch = text("batch");
  session.problem.heads = text("heads");
  session.problem.kv_heads = text("kv_heads");
  session.problem.head_dim = text("head_dim");
  session.problem.head_dim_v = head_dim_v_;
  session.problem.dtype = text("dtype");
  session.problem.mask = text("mask");
  session.problem.window = text("window");
  session.problem.documents = text("documents");
  session.problem.layout = text("layout");
  session.problem.pass = text("pass");
  session.schedule.algorithm = text("algorithm");
  session.schedule.tile = text("tile");
  session.schedule.variant = text("variant");
  session.schedule.input = text("input");
  session.network.topology = text("topology");
  session.network.placement = text("placement");
  session.fidelity = text("fidelity");
  session.gpu = text("gpu");
  session.view = view_;
  return session;
}

void ParameterPanel::setSession(const Session& session) {
  const std::map<QString, std::string> values = {
      {"gpus", session.problem.gpus},         {"seq", session.problem.seq},
      {"batch", session.problem.batch},       {"heads", session.problem.heads},
      {"kv_heads", session.problem.kv_heads}, {"head_dim", session.problem.head_dim},
      {"dtype", session.problem.dtype},       {"mask", session.problem.mask},
      {"window", session.problem.window},     {"documents", session.problem.documents},
      {"layout", session.problem.layout},     {"pass", session.problem.pass},
      {"algorithm", session.schedule.algorithm}, {"tile", session.schedule.tile},
      {"variant", session.schedule.variant},  {"input", session.schedule.input},
      {"topology", session.network.topology}, {"placement", session.network.placement},
      {"fidelity", session.fidelity},         {"gpu", session.gpu}};
  for (auto& [name, input] : inputs_) input->blockSignals(true);
  set_input_text(inputs_["gpus"], QString::fromStdString(session.problem.gpus));
  refreshTiles();
  for (const auto& [name, value] : values) set_input_text(inputs_[name], QString::fromStdString(value));
  for (auto& [name, input] : inputs_) input->blockSignals(false);
  head_dim_v_ = session.problem.head_dim_v;
  view_ = session.view;
}

bool ParameterPanel::setField(const QString& name, const QString& value) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) return false;
  it->second->blockSignals(true);
  set_input_text(it->second, value);
  it->second->blockSignals(false);
  if (name == "gpus") refreshTiles();
  emit changed();
  return true;
}

QString ParameterPanel::field(const QString& name) const {
  auto it = inputs_.find(name);
  return it == inputs_.end() ? QString() : combo_or_line_text(it->second);
}

}  // namespace tessera::gui
