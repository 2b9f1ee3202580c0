// Opens a checkpoint and loads every loadable tensor: the reader alone, without an analysis around it,
// for tests/hostile/measure.sh. Exit 0 loaded, 2 InputError (the contract for bad files), 1 anything else.
#include <cstdio>
#include <exception>
#include <new>
#include <typeinfo>

#include <sparseact/core/checkpoint.hpp>
#include <sparseact/core/errors.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CHECKPOINT\n", argv[0]);
    return 2;
  }
  try {
    const sparseact::Checkpoint ck = sparseact::open_checkpoint(argv[1]);
    std::size_t loaded = 0;
    for (const sparseact::TensorInfo& t : ck.tensors)
      if (t.loadable) sparseact::load_tensor(t), ++loaded;
    std::printf("%zu tensors, %zu loaded\n", ck.tensors.size(), loaded);
    return 0;
  } catch (const sparseact::InputError& e) {
    std::fprintf(stderr, "InputError: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "escaped %s: %s\n", typeid(e).name(), e.what());
    return 1;
  }
}
