// Inputs read strictly: JSON with a repeated key (core/output/strict_json.h).
#include <gtest/gtest.h>

#include "core/output/strict_json.h"

namespace gpucal {
namespace {

TEST(StrictJson, ARepeatedKeyIsRefusedWithItsPath) {
  EXPECT_EQ(parse_json_unique_keys(R"({"a": 1, "b": {"a": 2}})")["b"]["a"], 2);  // one key per object
  auto refused = [](const std::string& text) {
    try {
      parse_json_unique_keys(text);
    } catch (const DuplicateKeyError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused(R"({"layers": 32, "layers": 80})"), "$: key 'layers' appears twice");
  EXPECT_EQ(refused(R"({"config": {"devices": [{"rank": 0}, {"rank": 1, "rank": 2}]}})"),
            "$.config.devices[]: key 'rank' appears twice");
  EXPECT_THROW(parse_json_unique_keys("{\"a\": "), nlohmann::json::parse_error);
}

}  // namespace
}  // namespace gpucal
