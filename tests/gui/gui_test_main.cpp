// Catch2 main for the GUI suites: Qt needs its application object before any model or
// widget exists. The platform is forced to offscreen so the tests never need a display.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#ifdef TESSERA_GUI_TEST_WIDGETS
#include <QApplication>
using TestApplication = QApplication;
#else
#include <QGuiApplication>
using TestApplication = QGuiApplication;
#endif

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  int qt_argc = 1;
  TestApplication app(qt_argc, argv);
  return Catch::Session().run(argc, argv);
}
