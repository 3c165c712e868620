// Servers at process exit: every server core still able to reach Triton is
// registered, and an exit handler stops them before Triton's own static
// objects are destroyed.
#ifndef TRITON_NODE_SERVER_EXIT_REGISTRY_H_
#define TRITON_NODE_SERVER_EXIT_REGISTRY_H_

#include <memory>

namespace triton_node {

class ServerCore;

void RegisterCore(const std::shared_ptr<ServerCore>& core);
void UnregisterCore(ServerCore* core);

// Once the library is loaded: registers the exit handler (after the
// library's own static objects, so that it runs before their destructors).
void InstallExitHandler();
// A server was left undeleted after its stop timed out (server/stop.cc):
// Triton's threads may use it until the process ends, so exit skips the
// library's static destructors (as for a server still running at exit).
void NoteServerLeftUndeleted();
// The exit code the process is ending with, as the JS 'exit' event saw it
// (lib/native.ts).
void NoteExitCode(int code);

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_EXIT_REGISTRY_H_
