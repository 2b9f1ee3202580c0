#include <cstdio>

#include <sparseact/spectral/marchenko_pastur.hpp>

int main() {
  const double bound = sparseact::spectral::ratio_limit(3072.0 / 768.0);  // paper 001: 9
  std::printf("ratio bound %.6f\n", bound);
  return bound > 8.999999 && bound < 9.000001 ? 0 : 1;
}
