// A verb of the gpucal command: it declares its subcommand, flags and worked examples on the
// CLI (add_to) and runs once parsed (run). app/main.cpp's verb registry lists one per verb;
// each lives in its verb family's folder (app/fit/fit_command.h, ...).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace CLI {
class App;
}

namespace gpucal::calibration {

struct ResultsDir;

class Command {
 public:
  virtual ~Command() = default;
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Exit status: 0 ok; 1 a failure the verb defines (a regression, a failed bench, a failed
  // write); 2 bad input. Exceptions are turned into one line by app/main.cpp.
  virtual int run() = 0;
};

// "Examples:" and one "  command\n      what it does" pair per example, for a subcommand's footer.
std::string examples_footer(std::initializer_list<std::pair<const char*, const char*>> examples);

// A results folder, with each of its reader's warnings (torn last lines dropped) on stderr.
ResultsDir load_results(const std::string& dir);

}  // namespace gpucal::calibration
