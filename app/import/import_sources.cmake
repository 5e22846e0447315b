# The log importer's readers and what they share (paths from the repository root): built into
# gpucal_app (app/CMakeLists.txt) and into the import fuzz target (tests/fuzz/CMakeLists.txt).
# A new import format adds its reader here (docs/extending.md, "Import format").
set(GPUCAL_IMPORT_SOURCES
  app/import/import_formats.cpp app/import/import_log.cpp app/import/import_text.cpp
  app/import/import_numbers.cpp app/import/import_deduce.cpp
  app/import/import_nccl_tests.cpp app/import/import_nccl_json.cpp app/import/import_osu.cpp
  app/import/import_csv.cpp app/import/import_xla.cpp)
