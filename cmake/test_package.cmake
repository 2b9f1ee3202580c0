# ctest's package_find_and_link: install the build into a scratch prefix, then configure, build and
# run a consumer that only says find_package(sparseact).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
# SPARSEACT_TEST_CONSUMER_FLAGS (`sparseact.sh sanitize`): what code built against an instrumented
# library without ASan must define to agree with it (Eigen's allocator).
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix
                        "-DCMAKE_CXX_FLAGS=$ENV{SPARSEACT_TEST_CONSUMER_FLAGS}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed (${rc})")
endif()
# SPARSEACT_TEST_PRELOAD (`sparseact.sh sanitize`: the ASan runtime, which must be loaded first when
# the installed library is instrumented and the consumer is not).
set(_run ${WORK}/build/consumer)
if(DEFINED ENV{SPARSEACT_TEST_PRELOAD} AND NOT "$ENV{SPARSEACT_TEST_PRELOAD}" STREQUAL "")
  set(_run ${CMAKE_COMMAND} -E env "LD_PRELOAD=$ENV{SPARSEACT_TEST_PRELOAD}" ${_run})
endif()
execute_process(COMMAND ${_run} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer run failed (${rc})")
endif()
