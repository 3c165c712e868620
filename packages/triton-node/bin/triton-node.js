#!/usr/bin/env node
// The `triton-node` command: dist/cli.js, built from lib/cli/main.ts.
import '../dist/cli.js';
