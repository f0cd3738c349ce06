#!/usr/bin/env node
// The `switchboard` CLI. `npm ci` builds dist/ through the `prepare` script.
import '../dist/cli.js';
