// Checks of Chakra execution traces as ASTRA-sim reads them (astra-sim/workload/Workload.cc, its
// feeders; docs/field-reference.md): each function returns one line per problem found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/export/chakra_et.pb.h"

namespace gpucal::calibration::testing {

struct DecodedTrace {
  int64_t rank = 0;
  ChakraProtoMsg::GlobalMetadata meta;
  std::vector<ChakraProtoMsg::Node> nodes;
};

// <dir>/workload.<rank>.et decoded with protobuf: the GlobalMetadata, then every Node (each
// message length-delimited by a varint). Throws std::runtime_error naming the file for a
// message that does not parse or a length past the end.
DecodedTrace read_trace(const std::string& dir, int64_t rank);

// The attribute `name` of `node`, or null.
const ChakraProtoMsg::AttributeProto* find_attr(const ChakraProtoMsg::Node& node, const std::string& name);

// Every field ASTRA-sim's workload layer reads, with the types Chakra's feeders accept: node
// types it issues, is_cpu_op (bool, false), COMP num_ops (int64 > 0) and tensor_size (uint64 > 0),
// COMM_COLL comm_type (int64, a collective it simulates), comm_size (int64 > 0), pg_name (the
// decimal id of a group of `groups` holding this rank), involved_dim (non-empty bool list),
// comm_priority (int32); SEND/RECV comm_src / comm_dst (int32, this rank at its end, another in
// range at the other), comm_tag (int32), comm_size (int64 > 0); unique ids; dependencies on
// nodes of the trace.
std::vector<std::string> check_fields(const DecodedTrace& trace, const nlohmann::json& groups, int64_t world);

// The dependency graph is acyclic (Kahn's algorithm visits every node).
std::vector<std::string> check_acyclic(const DecodedTrace& trace);

// Every member of every group issues the group's collectives in the same order with the same
// type and size (node id order: the order a rank's program issues them).
std::vector<std::string> check_group_agreement(const std::vector<DecodedTrace>& traces, const nlohmann::json& groups);

// Every send has exactly one receive at its destination with its source, tag and size, and the
// reverse.
std::vector<std::string> check_messages_match(const std::vector<DecodedTrace>& traces);

// Runs every rank as ASTRA-sim issues nodes (a node once its dependencies finished, lowest id
// first; one collective or send in flight per rank; receives wait for their send), with zero
// durations: a collective finishes when every member issued it, a send at once, a receive
// once its send is issued. Returns a line per rank left with unfinished nodes (a deadlock).
std::vector<std::string> simulate_for_deadlock(const std::vector<DecodedTrace>& traces, const nlohmann::json& groups);

}  // namespace gpucal::calibration::testing
