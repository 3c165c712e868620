// What is process-wide in Triton rather than per server, and what exit()
// does to it: the host memory manager that servers share, the exit handlers
// of a started server's and of backends' singletons, and backend work still
// running when the library's static objects go.
#ifndef TRITON_NODE_FAKE_CORE_PROCESS_STATE_H_
#define TRITON_NODE_FAKE_CORE_PROCESS_STATE_H_

#include <string>

namespace fake {

// Whether Triton's process-wide host memory manager exists: made by the
// creation of a server when missing, torn down by the deletion of any
// server (or a failed start). Triton's ensembles allocate their
// intermediate tensors from it.
bool HostMemoryManagerExists();
void SetHostMemoryManager(bool exists);

// Exit order: registers, once per owner ("server", or a backend's name), an
// exit handler that marks Triton's singletons destroyed; a server stop or
// delete after it aborts (the real library crashes).
void RegisterExitSingletons(const std::string& owner);
void CheckExitSingletons(const char* call);

// Backend work running on an engine thread (an execution, a stream thread):
// the library's static objects must outlive it.
void BackendWorkBegin();
void BackendWorkEnd();

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_PROCESS_STATE_H_
