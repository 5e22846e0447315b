# The hardware export targets' writers, one file each beside their rows in
# app/export/export_registry.cpp. gpucal_app (app/CMakeLists.txt) and the calibration-JSON fuzz
# target (tests/fuzz/CMakeLists.txt) both build this list; the workload targets (chakra, simai)
# need the step's prediction and are listed in app/CMakeLists.txt (the fuzz target stands them in
# with tests/fuzz/workload_writers_absent.cpp).
set(GPUCAL_EXPORT_WRITERS export_calculon.cpp export_astrasim.cpp export_nersc.cpp export_vtrain.cpp export_xla.cpp)
