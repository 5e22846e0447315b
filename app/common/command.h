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
class Validator;
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
  // What can be checked without reading any input (GPUCAL_PARSE_ONLY=1, the test of every --help
  // example): a verb that can refuse a command line after parsing it (a layout its model cannot
  // run) throws the usage error here too.
  virtual void check_without_inputs() {}
};

// "Examples:" and one "  command\n      what it does" pair per example, for a subcommand's footer.
std::string examples_footer(std::initializer_list<std::pair<const char*, const char*>> examples);

// A results folder, with each of its reader's warnings (torn last lines dropped) on stderr;
// `allow_suspect` keeps ok rows with suspect timings in ok_rows.
ResultsDir load_results(const std::string& dir, bool allow_suspect = false);
// --allow-suspect, for the commands that calibrate from a results folder.
void add_allow_suspect_flag(CLI::App& cmd, bool& allow_suspect);

// --as text|markdown|json: the form a verb prints its result in on standard output (aligned
// text by default). One definition, so the flag means the same in every verb that takes it.
void add_form_option(CLI::App& cmd, std::string& form);

// --collective's check in every verb that takes one: a name of the collectives' registry
// (core/formulas/collectives.cpp), or one line naming the nearest and the choices.
CLI::Validator collective_check();

}  // namespace gpucal::calibration
