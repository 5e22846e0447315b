// The registry helpers every extension point's CLI is made from (core/registry/registry.h):
// nearest-name suggestions, the one-line unknown-name message, choices and help columns.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "core/registry/registry.h"

namespace gpucal::registry {
namespace {

struct Entry {
  std::string_view name, help;
};
const std::vector<Entry> kTable{{"calculon", "Calculon's system"}, {"vtrain", "vTrain's tables"}, {"nersc", "NERSC"}};

TEST(Registry, NearestFindsTyposOnly) {
  const std::vector<std::string> verbs{"run", "fit", "export", "compare", "import", "predict-comm", "predict"};
  EXPECT_EQ(nearest("exprot", verbs), "export");      // a swap
  EXPECT_EQ(nearest("compar", verbs), "compare");     // a deletion
  EXPECT_EQ(nearest("predcit", verbs), "predict");    // a swap
  EXPECT_EQ(nearest("fir", verbs), "fit");            // a substitution
  EXPECT_EQ(nearest("frobnicate", verbs), "");        // another word, not a typo
  EXPECT_EQ(nearest("--thresold", {"--threshold", "--json"}), "--threshold");
  EXPECT_EQ(nearest("x", {}), "");
}

TEST(Registry, UnknownMessageIsOneLineWithChoices) {
  const std::string m = unknown_message("export target", "vtrian", names(kTable));
  EXPECT_EQ(m, "unknown export target 'vtrian' (did you mean 'vtrain'? choices: calculon, vtrain, nersc)");
  EXPECT_EQ(unknown_message("suite", "zzz", {"smoke"}), "unknown suite 'zzz' (choices: smoke)");
}

TEST(Registry, LookupChoicesAndHelpComeFromTheTable) {
  EXPECT_EQ(lookup(kTable, "nersc", "target").help, "NERSC");
  EXPECT_THROW(lookup(kTable, "nersk", "target"), UsageError);
  EXPECT_EQ(find(kTable, "none"), nullptr);
  EXPECT_EQ(choices(kTable), "calculon | vtrain | nersc");
  EXPECT_EQ(help_lines(kTable), "  calculon  Calculon's system\n  vtrain    vTrain's tables\n  nersc     NERSC");
}

}  // namespace
}  // namespace gpucal::registry
