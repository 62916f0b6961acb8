#!/usr/bin/env node
// The installed `ptc` command: the built CLI (packages/cli/dist after `pnpm build`).
import '../dist/bin.js'
