#!/usr/bin/env node
// capstan-plugin-build ENTRY OUT [--world admission]: builds a policy into a component.
import { build } from '../src/build.js';

const args = process.argv.slice(2);
const worldAt = args.indexOf('--world');
const world = worldAt >= 0 ? args.splice(worldAt, 2)[1] : 'admission';
const [entry, out] = args;
if (!entry || !out) {
  console.error('usage: capstan-plugin-build ENTRY OUT [--world admission|authenticator|authorizer|strategy|converter]');
  process.exit(2);
}
try {
  const { bytes, seconds } = await build({ entry, out, world });
  console.error(`${out}: ${world} component, ${(bytes / 1024 / 1024).toFixed(1)} MiB, built in ${seconds.toFixed(1)} s`);
} catch (e) {
  // A missing tool: the message says which and how to install it.
  console.error(`capstan-plugin-build: ${e?.code === 'CAPSTAN_MISSING_TOOL' ? e.message : e?.stack ?? e}`);
  process.exit(1);
}
