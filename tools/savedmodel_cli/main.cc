#include <iostream>

#include "cli.h"

int main(int argc, char** argv) { return kiln::cli::Main(argc, argv, std::cout, std::cerr); }
