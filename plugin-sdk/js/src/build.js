// Turns a policy's JS entry into a Capstan plugin component: a generated
// entry wires the host imports into the SDK and exports the world's
// function; esbuild bundles it with the policy and its packages into one
// ES module (componentize-js resolves no bare imports); componentize-js
// compiles that against the world of plugin-sdk/wit/capstan.wit, the one
// WIT file of the ABI.

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WORLDS } from './plugin.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The WIT file of the ABI (plugin-sdk/wit/capstan.wit): this package lives in plugin-sdk/js. */
export const WIT_PATH = resolve(here, '..', '..', 'wit', 'capstan.wit');

/** The host interface the component imports. */
export const HOST_IMPORT = 'capstan:plugin/host@0.1.0';

/** WASI features the server does not offer a plugin (no sockets, no HTTP). */
const DISABLED_FEATURES = ['http', 'fetch-event'];

/** A package's ES module entry from its package.json (exports' import/default, else main). */
function moduleEntry(pkg) {
  const e = pkg.exports;
  const dot = typeof e === 'object' && e !== null && '.' in e ? e['.'] : e;
  if (typeof dot === 'string') return dot;
  return dot?.import ?? dot?.default ?? pkg.main ?? 'index.js';
}

/**
 * Imports the package `name` as the policy project sees it: from the first
 * node_modules above `fromDir`, else as this module resolves it. The
 * tools (esbuild, componentize-js) are the project's pinned
 * dependencies, also when the SDK is linked from elsewhere (`file:`).
 */
export async function importFrom(fromDir, name) {
  for (let dir = resolve(fromDir); ; dir = dirname(dir)) {
    const pkgDir = join(dir, 'node_modules', name);
    if (existsSync(join(pkgDir, 'package.json'))) {
      const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
      return import(pathToFileURL(join(pkgDir, moduleEntry(pkg))).href);
    }
    if (dirname(dir) === dir) {
      try {
        return await import(name);
      } catch (e) {
        if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e?.message).includes(`'${name}'`)) throw e;
        throw Object.assign(new Error(missingTool(name, fromDir)), { code: 'CAPSTAN_MISSING_TOOL' });
      }
    }
  }
}

/**
 * The build tools a policy project pins as devDependencies (the examples'
 * package.json and package-lock.json, and so `capstan plugin new`'s):
 * this package's peerDependencies, and two it does not import itself.
 * preview2-shim: componentize-js 0.23.0 imports it undeclared, and 0.18+
 * breaks the build (README). jco: componentize-js 0.23.0 asks for ^1.15.1,
 * which now resolves to jco 1.35.0, whose own dependencies disagree on
 * preview2-shim (jco-std 0.5.0 wants ^0.25, jco 1.35 brings 0.26: npm's
 * "ERESOLVE overriding peer dependency" warnings); 1.34.0, the jco of
 * componentize-js 0.23.0's release, installs without a warning.
 */
export function pinnedTools() {
  const sdk = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
  return {
    ...sdk.peerDependencies,
    '@bytecodealliance/jco': '1.34.0',
    '@bytecodealliance/preview2-shim': '0.17.9',
  };
}

/** The oldest node the build tools run on (oxc-parser, commander 14: node 20). */
export const NODE_MAJOR = 20;

/**
 * Why this node cannot run the build (`version`: process.versions.node),
 * with where to get a newer one; null when it can.
 */
export function nodeTooOld(version = process.versions.node) {
  const major = Number(String(version).split('.')[0]);
  if (major >= NODE_MAJOR) return null;
  return `node ${version} is too old: the build tools (componentize-js's parser oxc-parser, jco's commander 14) need node ${NODE_MAJOR} or newer. ` +
    `Install node ${NODE_MAJOR}+ with npm from https://nodejs.org/en/download (Debian 12's apt has node 18; ` +
    `Debian 13's \`sudo apt-get install nodejs npm\` has node 20), then run \`npm install\` again.`;
}

/** What to say when the build tool `name` is not installed in the policy's project. */
function missingTool(name, fromDir) {
  const pinned = pinnedTools();
  const tools = Object.keys(pinned).sort();
  return `${name} is missing: the build uses the policy project's own pinned ${tools.join(', ')} ` +
    `(none in a node_modules above ${resolve(fromDir)}). Install them in the project with\n` +
    `    npm install --save-dev --save-exact ${tools.map((t) => `${t}@${pinned[t]}`).join(' ')}\n` +
    `  (or run \`npm install\` where package.json already names them).`;
}

/** The generated entry: host imports wired into the SDK, the world's export around the policy's function. */
export function entrySource(policyPath, world) {
  const spec = WORLDS[world];
  if (!spec) throw new Error(`unknown world ${JSON.stringify(world)}: one of ${Object.keys(WORLDS).join(', ')}`);
  const sdk = JSON.stringify(join(here, 'index.js'));
  const dispatch =
    world === 'admission'
      ? `runAdmission(fn, text)`
      : `runJson(fn, ${JSON.stringify(spec.input)}, text)`;
  return [
    `import { log, config, getObject, listObjects, watermark } from '${HOST_IMPORT}';`,
    `import { useHost, runAdmission, runJson } from ${sdk};`,
    `import * as policy from ${JSON.stringify(resolve(policyPath))};`,
    `useHost({ log, config, getObject, listObjects, watermark });`,
    `const fn = policy.${spec.exportName} ?? policy.default;`,
    `if (typeof fn !== 'function') throw new Error('the policy must export a function ${spec.exportName}');`,
    `export function ${spec.exportName}(text) {`,
    `  try { return ${dispatch}; } catch (e) { throw String(e?.message ?? e); }`,
    `}`,
    '',
  ].join('\n');
}

/** Bundles the generated entry and the policy into one ES module (text). */
export async function bundle(policyPath, world) {
  const esbuild = await importFrom(dirname(resolve(policyPath)), 'esbuild');
  const result = await (esbuild.build ?? esbuild.default.build)({
    stdin: { contents: entrySource(policyPath, world), resolveDir: dirname(resolve(policyPath)), sourcefile: 'capstan-entry.js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external: ['capstan:*', 'wasi:*'],
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/**
 * Builds `entry` (the policy's module, exporting e.g. `review(request)`)
 * into a component at `out` for `world` ("admission" by default). Returns
 * { bytes, seconds }.
 */
export async function build({ entry, out, world = 'admission', witPath = WIT_PATH }) {
  const started = Date.now();
  const old = nodeTooOld();
  if (old) throw Object.assign(new Error(old), { code: 'CAPSTAN_MISSING_TOOL' });
  const { componentize } = await importFrom(dirname(resolve(entry)), '@bytecodealliance/componentize-js');
  const dir = await mkdtemp(join(tmpdir(), 'capstan-plugin-'));
  try {
    const sourcePath = join(dir, 'plugin.js');
    await writeFile(sourcePath, await bundle(entry, world));
    const { component } = await componentize({
      sourcePath,
      witPath,
      worldName: world,
      disableFeatures: DISABLED_FEATURES,
    });
    await writeFile(out, component);
    return { bytes: component.length, seconds: (Date.now() - started) / 1000 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
