# gpucal_proto_library(TARGET PROTO SOURCE_ROOT): a static library of the C++ that Debian's protoc
# writes for SOURCE_ROOT/PROTO (a path from the repository root, e.g. app/export/chakra_et.proto)
# into the build tree, included as "PROTO-without-.proto.pb.h" (e.g. "app/export/chakra_et.pb.h").
# Used by the main build (app/CMakeLists.txt) and the fuzz project (tests/fuzz/CMakeLists.txt).
function(gpucal_proto_library target proto source_root)
  find_package(Protobuf REQUIRED)
  string(REGEX REPLACE "\\.proto$" "" _stem ${proto})
  set(_out ${CMAKE_BINARY_DIR}/${_stem}.pb)
  add_custom_command(OUTPUT ${_out}.cc ${_out}.h
    COMMAND protobuf::protoc --cpp_out=${CMAKE_BINARY_DIR} -I ${source_root} ${source_root}/${proto}
    DEPENDS ${source_root}/${proto} protobuf::protoc
    COMMENT "protoc ${proto}")
  add_library(${target} STATIC ${_out}.cc)
  target_include_directories(${target} PUBLIC ${CMAKE_BINARY_DIR} ${Protobuf_INCLUDE_DIRS})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
endfunction()
