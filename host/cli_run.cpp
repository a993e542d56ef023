// SPDX-License-Identifier: MIT
#include "cli_common.hpp"
namespace nhvk {
void add_run_command(CLI::App&, int&) {}
}
