// The built-in shape sets: contents derived from the documented rules.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "bench_gemm/gemm_sets.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::gemm;

namespace {
bool has(const ShapeSet& s, int64_t m, int64_t n, int64_t k) {
  for (const auto& x : s.shapes)
    if (x.m == m && x.n == n && x.k == k) return true;
  return false;
}
}  // namespace

TEST(ShapeSets, NamesAndUniqueness) {
  std::set<std::string> names;
  for (const auto& s : shape_sets()) {
    names.insert(s.name);
    std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
    for (const auto& x : s.shapes) {
      EXPECT_TRUE(seen.insert({x.m, x.n, x.k}).second) << s.name << " repeats " << x.note;
      EXPECT_GT(x.m, 0);
      EXPECT_FALSE(x.note.empty());
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"square", "llm", "deepbench", "align"}));
  EXPECT_THROW(find_shape_set("nope"), UsageError);
}

TEST(ShapeSets, Llm) {
  const auto& s = find_shape_set("llm");
  EXPECT_EQ(s.shapes.size(), 3u * 4u * 6u);  // hidden sizes x token counts x layer GEMMs
  EXPECT_TRUE(has(s, 2048, 3 * 4096, 4096));    // QKV, h 4096, T 2048
  EXPECT_TRUE(has(s, 16384, 8192, 8192));       // attention out, h 8192, T 16384
  EXPECT_TRUE(has(s, 4096, 4 * 5120, 5120));    // GELU up x4
  EXPECT_TRUE(has(s, 4096, 5120, 4 * 5120));    // GELU down
  EXPECT_TRUE(has(s, 8192, 2 * 11008, 4096));   // SwiGLU gate+up, f(4096) = 11008
  EXPECT_TRUE(has(s, 8192, 5120, 13824));       // SwiGLU down, f(5120) = 13824
  EXPECT_TRUE(has(s, 2048, 8192, 22016));       // SwiGLU down, f(8192) = 22016
}

TEST(ShapeSets, SquareDeepbenchAlign) {
  const auto& sq = find_shape_set("square");
  EXPECT_EQ(sq.shapes.size(), 7u);
  EXPECT_TRUE(has(sq, 256, 256, 256));
  EXPECT_TRUE(has(sq, 16384, 16384, 16384));
  const auto& db = find_shape_set("deepbench");
  EXPECT_TRUE(has(db, 4 * 1024, 16, 1024));          // recurrent forward
  EXPECT_TRUE(has(db, 2048, 64, 4 * 2048));          // recurrent backward-data
  EXPECT_TRUE(has(db, 64, 16 * 56 * 56, 9 * 64));    // conv forward, C 64 at 56x56
  EXPECT_TRUE(has(db, 512, 9 * 512, 16 * 7 * 7));    // conv backward-weight, C 512 at 7x7
  EXPECT_EQ(db.shapes.size(), 3u * 2 * 3 + 4 * 3);
  const auto& al = find_shape_set("align");
  ASSERT_EQ(al.shapes.size(), 33u);
  EXPECT_EQ(al.shapes.front().n, 4096);
  EXPECT_EQ(al.shapes.back().n, 4352);
  EXPECT_EQ(al.shapes[1].n - al.shapes[0].n, 8);
}
