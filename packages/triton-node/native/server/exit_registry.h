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
// After a server started or a model loaded: registers the exit handler
// again. Triton and its backends register their own exit handlers
// (singletons, the static objects of a backend library) only then, after the
// first registration, and libc runs exit handlers latest first: without
// this, exit() would destroy them before the handler stops the servers that
// use them (issue 29: a Python backend stream open at process.exit, SIGSEGV
// or SIGABRT). The handler works once, on its first (latest) run.
void RenewExitHandler();
// The exit code the process is ending with, as the JS 'exit' event saw it
// (lib/addon/load.ts).
void NoteExitCode(int code);

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_EXIT_REGISTRY_H_
