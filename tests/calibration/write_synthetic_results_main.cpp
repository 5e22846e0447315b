// write_synthetic_results DIR [TIME_SCALE [SEED]]: the tests' synthetic results folder, for the plot
// test and the fleet tests (a seed per node gives each its own noise).
#include <cstdlib>
#include <iostream>

#include "tests/calibration/synthetic_results.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: write_synthetic_results DIR [TIME_SCALE [SEED]]\n";
    return 2;
  }
  gpucal::calibration::testing::SyntheticOptions options;
  if (argc > 2) options.time_scale = std::atof(argv[2]);
  if (argc > 3) options.seed = static_cast<unsigned>(std::atoi(argv[3]));
  gpucal::calibration::testing::write_synthetic_results(argv[1], options);
  return 0;
}
