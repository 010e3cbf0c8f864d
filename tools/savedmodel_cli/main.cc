#include <iostream>

#include "cli.h"
#include "kiln/exec/thread_pool.h"

int main(int argc, char** argv) {
  kiln::exec::BoundOpenMpSpinning(argv);
  return kiln::cli::Main(argc, argv, std::cout, std::cerr);
}
