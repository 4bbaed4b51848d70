#pragma once
/// \file
/// Umbrella of the store emulation (target pgroups::emulation): many ranks' store traffic
/// from one process against a real store server, and pgroups' server in a process of its
/// own. No MPI.

#include "pgroups/emulation/store_server_process.hpp"  // IWYU pragma: export
#include "pgroups/emulation/store_traffic_emulation.hpp"  // IWYU pragma: export
