// tessera-gui: the desktop explorer. With --screenshot it runs headless (the offscreen
// platform unless another is set): loads the session, runs it to the end, renders the chosen
// view in the window and saves it as PNG, for documentation and tests.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QEventLoop>

#include <cstdio>
#include <cstring>
#include <vector>

#include "app/main_window.hpp"
#include "app/simulation_runner.hpp"
#include "models/session.hpp"

namespace {

bool wants_screenshot(int argc, char** argv) {
  for (int k = 1; k < argc; ++k)
    if (std::strcmp(argv[k], "--screenshot") == 0 || std::strncmp(argv[k], "--screenshot=", 13) == 0) return true;
  return false;
}

// --help and --version print and exit: they need no display, so they are answered under a
// QCoreApplication (no platform plugin) before any window system is asked for.
bool wants_help_or_version(int argc, char** argv) {
  for (int k = 1; k < argc; ++k)
    for (const char* flag : {"--help", "-h", "-?", "--help-all", "--version", "-v"})
      if (std::strcmp(argv[k], flag) == 0) return true;
  return false;
}

struct Options {
  QCommandLineOption session{"session", "Open this session file (JSON).", "FILE"};
  QCommandLineOption screenshot{"screenshot", "Render the window to this PNG and exit.", "OUT.png"};
  QCommandLineOption view{"view", "The view to show: matrix, network, timeline or compare.", "VIEW"};
};

void describe(QCommandLineParser& parser, const Options& options) {
  QCoreApplication::setApplicationName("tessera-gui");
  QCoreApplication::setApplicationVersion("0.1.0");
  parser.setApplicationDescription(
      "Tessera GUI: explore distributed attention schedules (tiles, traffic, timelines).\n"
      "Headless: tessera-gui --screenshot OUT.png [--session FILE] [--view matrix|network|timeline|compare]");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOptions({options.session, options.screenshot, options.view});
}

}  // namespace

int main(int argc, char** argv) {
  const Options options;
  if (wants_help_or_version(argc, argv)) {
    QCoreApplication core(argc, argv);
    QCommandLineParser parser;
    describe(parser, options);
    parser.process(core);  // prints the help or the version and exits 0 (a bad option: 1)
    return 0;
  }
  // The platform is chosen when QApplication starts, so decide before it exists.
  if (wants_screenshot(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  // QGuiApplication takes `-session`/`--session` for itself (X11 session management) and
  // removes it from argv, so the options are parsed from a copy made before it exists, and
  // Qt gets the arguments without --session and its value.
  QStringList arguments;
  std::vector<char*> qt_argv;
  for (int k = 0; k < argc; ++k) {
    arguments << QString::fromLocal8Bit(argv[k]);
    if (k > 0 && std::strcmp(argv[k], "--session") == 0) {
      ++k;
      if (k < argc) arguments << QString::fromLocal8Bit(argv[k]);
      continue;
    }
    if (k > 0 && std::strncmp(argv[k], "--session=", 10) == 0) continue;
    qt_argv.push_back(argv[k]);
  }
  int qt_argc = static_cast<int>(qt_argv.size());
  qt_argv.push_back(nullptr);
  QApplication app(qt_argc, qt_argv.data());
  QCommandLineParser parser;
  describe(parser, options);
  parser.process(arguments);
  const QCommandLineOption& session_option = options.session;
  const QCommandLineOption& screenshot_option = options.screenshot;
  const QCommandLineOption& view_option = options.view;

  tessera::gui::MainWindow window;
  if (parser.isSet(view_option) && !tessera::gui::is_view_name(parser.value(view_option).toStdString())) {
    std::fprintf(stderr, "tessera-gui: --view: '%s' is not one of matrix, network, timeline, compare\n",
                 qPrintable(parser.value(view_option)));
    return 2;
  }

  // Run once, and wait for it when headless.
  bool failed = false;
  QEventLoop wait;
  QObject::connect(&window, &tessera::gui::MainWindow::resultShown, &wait, &QEventLoop::quit);
  QObject::connect(&window, &tessera::gui::MainWindow::runFailed, &wait, [&] {
    failed = true;
    wait.quit();
  });
  bool loaded = true;
  if (parser.isSet(session_option))
    loaded = window.loadSession(parser.value(session_option));
  else
    window.applySession(tessera::gui::default_session());
  if (!loaded) failed = true;
  if (parser.isSet(view_option)) window.showView(parser.value(view_option));
  window.show();

  if (!parser.isSet(screenshot_option)) return app.exec();

  if (loaded && window.runner()->isRunning()) wait.exec();
  QApplication::processEvents();  // let layouts settle before grabbing
  const QString out = parser.value(screenshot_option);
  if (!window.grab().save(out, "PNG")) {
    std::fprintf(stderr, "tessera-gui: %s: cannot write the screenshot\n", qPrintable(out));
    return 2;
  }
  if (failed) {
    std::fprintf(stderr, "tessera-gui: %s (the screenshot shows the message)\n", qPrintable(window.messageText()));
    return 2;
  }
  return 0;
}
