# ctest's mpi_off_build: a build configured with -DSPARSEACT_MPI=OFF builds, runs alone, and under
# `mpirun -n 2` refuses with exit 2 and one line instead of running the whole grid twice.
# Arguments: SOURCE (the project), WORK (scratch folder), MPIEXEC, LAUNCHER (compiler launcher or "").
file(REMOVE_RECURSE ${WORK})
set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK} -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEACT_MPI=OFF
                        -DSPARSEACT_TESTS=OFF -DSPARSEACT_CUDA=OFF ${launcher}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with SPARSEACT_MPI=OFF failed (${rc}): ${out}")
endif()
if(NOT out MATCHES "sparseact: MPI OFF")
  message(FATAL_ERROR "SPARSEACT_MPI=OFF still found MPI: ${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} --target mp_sweep RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build with SPARSEACT_MPI=OFF failed (${rc}): ${out}")
endif()
set(tiny --scale quick --n 32,48,64 --c 0.25,4 --trials 2)
execute_process(COMMAND ${WORK}/bin/mp_sweep ${tiny} --out ${WORK}/alone RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT (rc EQUAL 0 OR rc EQUAL 3) OR NOT EXISTS ${WORK}/alone/mp_sweep.json)
  message(FATAL_ERROR "mp_sweep without MPI, alone: exit ${rc}")
endif()
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -n 2 ${WORK}/bin/mp_sweep ${tiny} --out ${WORK}/ranks
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REPLACE ";" "," flat "${out}")  # a list counts semicolons as separators
string(REGEX MATCHALL "mp_sweep: error:[^\n]*" lines "${flat}")
list(LENGTH lines count)
if(NOT rc EQUAL 2 OR NOT count EQUAL 1 OR NOT out MATCHES "has no MPI" OR EXISTS ${WORK}/ranks)
  message(FATAL_ERROR "mp_sweep without MPI under mpirun -n 2: exit ${rc}, ${count} error lines, output: ${out}")
endif()
message(STATUS "SPARSEACT_MPI=OFF: builds, runs alone, refuses mpirun -n 2")
