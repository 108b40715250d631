#include "plot_command.hpp"

#include <filesystem>
#include <iostream>

#include "tessera/core/error.hpp"
#include "tessera/plot/chart.hpp"
#include "tessera/sweep/results.hpp"
#ifdef TESSERA_HAVE_PNG
#include "tessera/plot/png.hpp"
#endif

namespace tessera::cli {

bool png_available() {
#ifdef TESSERA_HAVE_PNG
  return true;
#else
  return false;
#endif
}

std::string write_figure(const plot::Figure& figure, const std::string& path, const std::string& format) {
  std::string chosen = format;
  if (chosen.empty()) chosen = std::filesystem::path(path).extension() == ".png" ? "png" : "svg";
  const std::string svg = plot::render_svg(figure);
  if (chosen == "svg") {
    sweep::write_file_atomically(path, svg);
    return path;
  }
  if (chosen != "png") throw UserError("--format: '" + chosen + "' is not svg or png");
#ifdef TESSERA_HAVE_PNG
  plot::write_png(svg, path);
  return path;
#else
  throw UserError("--format png: this tessera was built without Qt 6 Svg (apt install libqt6svg6-dev and rebuild); "
                  "use --format svg");
#endif
}

int run_plot(const PlotFlags& flags) {
  std::map<std::string, std::string> options = {{"kind", flags.kind},     {"x", flags.x},         {"y", flags.y},
                                                {"series", flags.series}, {"value", flags.value}, {"title", flags.title},
                                                {"xlabel", flags.xlabel}, {"ylabel", flags.ylabel},
                                                {"where", flags.where},   {"aggregate", flags.aggregate}};
  if (flags.logx && flags.linear_x) throw UserError("--logx and --linear-x exclude each other");
  if (flags.logx) options["logx"] = "true";
  if (flags.linear_x) options["logx"] = "false";
  if (flags.logy) options["logy"] = "true";
  plot::PlotRequest request;
  try {
    request = plot::request_from_options(options);
  } catch (const UserError& error) {
    throw UserError(std::string("--") + error.what());
  }
  const sweep::Table table = sweep::read_csv(flags.results);
  plot::Figure figure = plot::make_figure(table, request);
  if (figure.title.empty()) {
    if (request.kind == plot::FigureKind::winner)
      figure.title = "lowest " + flags.value + " among " + flags.series + ", by " + flags.x + " and " + flags.y;
    else if (request.kind == plot::FigureKind::heatmap)
      figure.title = flags.value + " by " + flags.x + " and " + flags.y;
    else
      figure.title = figure.y_label + " by " + figure.x_label + (flags.series.empty() ? "" : ", per " + flags.series);
  }
  std::string out = flags.out;
  if (out.empty()) out = (std::filesystem::path(flags.results).parent_path() / ("plot." + (flags.format.empty() ? std::string("svg") : flags.format))).string();
  std::cout << "wrote " << write_figure(figure, out, flags.format) << "\n";
  return 0;
}

}  // namespace tessera::cli
