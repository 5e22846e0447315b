# The export targets' writers, one file each beside their rows in app/export/export_registry.cpp.
# gpucal_app (app/CMakeLists.txt) and the calibration-JSON fuzz target (tests/fuzz/CMakeLists.txt)
# both build this list.
set(GPUCAL_EXPORT_WRITERS export_calculon.cpp export_astrasim.cpp export_nersc.cpp export_vtrain.cpp)
