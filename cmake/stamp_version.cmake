# Build-time version stamp (issue 47): run by the sparseact_version target on every build, it writes
# ${OUT} from ${IN} with `git describe --always --dirty --tags` of ${SRC}, and rewrites it only when the
# text changes (configure_file keeps an identical file untouched), so an unchanged tree relinks
# nothing while an edit, a commit or a checkout is recorded by the next build, not the last configure.
# -DSRC= -DIN= -DOUT= -DPROJECT_VERSION= -DHAVE_CUDA=true|false [-DGIT=]
set(SPARSEACT_GIT_DESCRIBE "${PROJECT_VERSION}")
if(GIT)
  execute_process(COMMAND ${GIT} describe --always --dirty --tags
                  WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE _describe OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _describe_rc ERROR_QUIET)
  if(_describe_rc EQUAL 0 AND _describe)
    set(SPARSEACT_GIT_DESCRIBE "${PROJECT_VERSION}-${_describe}")
  endif()
endif()
set(SPARSEACT_HAVE_CUDA_BOOL ${HAVE_CUDA})
configure_file(${IN} ${OUT} @ONLY)
