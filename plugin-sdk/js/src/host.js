// What the server offers a plugin (the WIT interface `capstan:plugin/host`):
// logging, the plugin's configuration, and read-only access to stored
// objects. Inside the component these call the imports (wired by the
// build's generated entry through `useHost`); in node tests they call the
// fake host of `@capstan/plugin-sdk/testing`.

let backend;

/**
 * Installs the functions behind the host calls: the component's imports
 * (`import * as wit from 'capstan:plugin/host@0.1.0'`) or a fake. The
 * build does this for you.
 */
export function useHost(impl) {
  backend = impl;
}

function host() {
  if (!backend) {
    throw new Error('no host: run inside Capstan, or import @capstan/plugin-sdk/testing in tests');
  }
  return backend;
}

/** A host call's error (WIT `err(string)`) as an Error with that message. */
function call(fn) {
  try {
    return fn();
  } catch (e) {
    const payload = e?.payload ?? e?.message ?? e;
    throw new Error(String(payload));
  }
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`host returned invalid JSON: ${e.message}`);
  }
}

/** Log levels, as in the WIT `level` enum. */
export const Level = Object.freeze({
  Trace: 'trace',
  Debug: 'debug',
  Info: 'info',
  Warn: 'warn',
  Error: 'error',
});

/** Writes a line into the server's log, tagged with the plugin's name. */
export function log(level, message) {
  host().log(level, String(message));
}

/** The plugin's configuration ({} when none), parsed; throws on invalid JSON. */
export function config() {
  const text = host().config();
  if (!text || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`invalid plugin configuration: ${e.message}`);
  }
}

/**
 * Reads one object (`apiVersion` "v1" or "group/version", `resource` the
 * plural); null when it does not exist. Throws when the store cannot answer.
 */
export function getObject(apiVersion, resource, namespace, name) {
  const text = call(() => host().getObject(apiVersion, resource, namespace ?? undefined, name));
  return text === undefined || text === null ? null : parse(text);
}

/**
 * Lists objects (selectors as with `kubectl get -l ... --field-selector ...`)
 * and returns the List's `items`.
 */
export function listObjects(apiVersion, resource, { namespace, labelSelector, fieldSelector } = {}) {
  const text = call(() => host().listObjects(apiVersion, resource, namespace, labelSelector, fieldSelector));
  const list = parse(text);
  if (list.items === undefined || list.items === null) return [];
  if (!Array.isArray(list.items)) throw new Error('host returned a List whose items is not an array');
  return list.items;
}

/**
 * A token that changes whenever an object of `resource` is created, updated
 * or deleted: compare it to decide whether a list you cached is still current.
 */
export function watermark(apiVersion, resource) {
  return call(() => host().watermark(apiVersion, resource));
}
