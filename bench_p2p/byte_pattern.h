// The validation pattern of every p2p transfer, shared by host and device code: byte i of
// a buffer owned by (rank, buffer) is a pure function of (seed, i), so a receiver checks
// what it got without being sent the expected data. Poison is the complement, which
// differs from the pattern at every byte: a transfer that moves nothing leaves every
// byte wrong.
#pragma once

#include <cstdint>

#include "core/backend/element_convert.h"  // GPUCAL_HD

namespace gpucal::p2p {

// splitmix64 of one 8-byte word; bytes come little-endian from it.
GPUCAL_HD uint64_t pattern_word(uint64_t seed, uint64_t word_index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (word_index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

GPUCAL_HD uint8_t pattern_byte(uint64_t seed, uint64_t index) {
  return static_cast<uint8_t>(pattern_word(seed, index / 8) >> (8 * (index % 8)));
}

// Seed of the data that `rank` sends from its buffer number `buffer` at a point.
GPUCAL_HD uint64_t pattern_seed(uint64_t run_seed, int rank, int buffer) {
  return pattern_word(run_seed, (static_cast<uint64_t>(rank) << 8) | static_cast<uint64_t>(buffer & 0xff));
}

}  // namespace gpucal::p2p
