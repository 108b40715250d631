#pragma once
// The parameter panel: the scenario's text fields (the command line's, see
// scenario/scenario.hpp) as line edits and combo boxes, grouped into problem, schedule,
// network and simulation. Each input's objectName is the session field's name ("seq",
// "algorithm", "topology", ...), so tests and sessions address the same things.
#include <QWidget>

#include <map>
#include <string>

#include "models/session.hpp"

class QComboBox;
class QFormLayout;
class QLineEdit;

namespace tessera::gui {

class ParameterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ParameterPanel(QWidget* parent = nullptr);

  Session session() const;
  void setSession(const Session& session);  // emits no `changed`
  // Sets one field by name (as a user would type it) and emits `changed`; false: no such field.
  bool setField(const QString& name, const QString& value);
  QString field(const QString& name) const;
  void setView(const std::string& view) { view_ = view; }

 signals:
  void changed();

 private:
  QLineEdit* addLine(QFormLayout* form, const char* name, const QString& label, const QString& tip);
  QComboBox* addCombo(QFormLayout* form, const char* name, const QString& label, const QStringList& items,
                      bool editable, const QString& tip);
  void addBrowseButton(QFormLayout* form, const char* name, const QString& title, const QString& filter);
  std::string text(const char* name) const;
  void refreshTiles();

  std::map<QString, QWidget*> inputs_;  // by field name
  std::string view_ = "matrix";         // carried through for the session file
  std::string head_dim_v_;              // no input of its own (default: head dim); kept from the session
};

}  // namespace tessera::gui
