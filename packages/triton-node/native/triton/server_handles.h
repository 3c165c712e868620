// Every TRITONSERVER_Server of the process is created and deleted here.
//
// Triton keeps process-wide memory managers (the pinned host memory manager,
// and on GPU builds the CUDA ones). Creating a server sets them up when they
// are missing; destroying any server tears them down, whatever other servers
// still use them. A running server whose managers are gone gets null buffers
// for the tensors Triton allocates itself, the intermediate tensors of an
// ensemble among them, and every inference through an ensemble then fails
// ("in ensemble '…', INPUT0: attempted a copy of 8 Bytes to an uninitialized
// memory"). Seen on real r25.07 (CPU build): another server of the process
// stopped, or a Server.create that failed, while the ensemble's server ran.
//
// So while another server runs, a stopped server is parked (stopped, its
// models unloaded, not deleted); the delete of the last running server
// deletes the parked ones too. A failed ServerNew has already torn the
// managers down inside Triton: while other servers run, a stand-in server
// (explicit model control, no model loaded) is created at once to set them
// up again, and parked.
#ifndef TRITON_NODE_TRITON_SERVER_HANDLES_H_
#define TRITON_NODE_TRITON_SERVER_HANDLES_H_

#include <string>

#include "triton_capi.h"

namespace triton_node {

// TRITONSERVER_ServerNew, counted as a running server on success.
// `repository` is a model repository of these options (a stand-in server
// may use it later: it must exist, which a successful creation showed).
// Any thread.
TRITONSERVER_Error* CreateServer(TRITONSERVER_ServerOptions* options,
                                 const std::string& repository,
                                 TRITONSERVER_Server** server);

// For a server that ServerStop stopped (or failed to stop): parks it while
// other servers run, else deletes it and every parked server. Returns the
// error of its own ServerDelete (the caller's to delete), if any. Any
// thread, once per server.
TRITONSERVER_Error* ReleaseServer(TRITONSERVER_Server* server);

// How many servers are parked now (tests and diagnostics).
int ParkedServerCount();

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_SERVER_HANDLES_H_
