// Ensembles in the model repository (ensembles.cc): Triton's dependency
// graph under explicit model control.
#ifndef TRITON_NODE_FAKE_REPOSITORY_ENSEMBLES_H_
#define TRITON_NODE_FAKE_REPOSITORY_ENSEMBLES_H_

#include <string>

#include "../config/model_config.h"
#include "../core/engine.h"

namespace fake {

// An ensemble's steps, as Triton resolves them at load: loads the steps'
// models that are new or changed, then checks them and the ensemble
// against them. "" when the ensemble can load (and cfg->decoupled set as
// Triton sets it), else why not (INVALID_ARG). Caller holds load_mu, not
// mu.
std::string PrepareEnsemble(Engine* engine, ModelConfig* cfg);
// After `name` loaded: the ensembles that wait for it load again. Caller
// holds load_mu, not mu.
void ReloadWaitingEnsembles(Engine* engine, const std::string& name);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_REPOSITORY_ENSEMBLES_H_
