// The model repository (repository.cc): what the server's model control
// does to an engine's models. Loads and unloads are serialized by the
// engine's load_mu.
#ifndef TRITON_NODE_FAKE_REPOSITORY_REPOSITORY_H_
#define TRITON_NODE_FAKE_REPOSITORY_REPOSITORY_H_

#include <string>
#include <utility>
#include <vector>

#include "../../include/triton_capi.h"
#include "../core/engine.h"

namespace fake {

// Lists the models of the engine's repositories (their folders), none
// loaded yet.
void ScanRepository(Engine* engine);
// Loads a model's versions by name. `files` (may be null): an in-memory
// model's files, relative path -> bytes; they are written to a temporary
// model directory that replaces the repository's (Triton requires
// `override_json` with them).
TRITONSERVER_Error* LoadModel(
    Engine* engine, const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files = nullptr);
// With `dependents`, the models an ensemble's steps brought in go too
// (those not loaded by name, which no other ensemble uses).
TRITONSERVER_Error* UnloadModel(Engine* engine, const std::string& name,
                                bool dependents);
// Every model, as a server's stop unloads them.
void UnloadAllModels(Engine* engine);

// TRITONFAKE_HoldModelLoads: 1 holds explicit loads back, 0 lets them go,
// -1 only asks; returns how many wait. Process-wide.
uint32_t HoldModelLoads(int32_t mode);
// An explicit load (the ServerLoadModel entry points): waits while held.
void WaitWhileModelLoadsHeld();

// LoadModel's work, under load_mu (ensembles.cc loads an ensemble's steps'
// models with it).
TRITONSERVER_Error* LoadLocked(
    Engine* engine, const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_REPOSITORY_REPOSITORY_H_
