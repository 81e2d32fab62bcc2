// A fake host for unit tests with node's own test runner: a configuration,
// an object store, captured logs and failing reads, plus helpers to build
// requests and apply a response's patch. Importing this module installs the
// fake; call `reset()` at the start of each test.

import { useHost } from './host.js';
import { decodeText } from './base64.js';
import { labels, name, namespace } from './object.js';

let state;

/** Empties the store, the logs and the configuration ("{}"), and installs the fake. */
export function reset() {
  state = { config: '{}', objects: new Map(), logs: [], readError: null, changes: new Map() };
  useHost(fake);
}

/** Sets the configuration the plugin reads with `config()`. */
export function setConfig(value) {
  state.config = JSON.stringify(value);
}

/** Sets the raw configuration text (to test invalid configurations). */
export function setConfigText(text) {
  state.config = text;
}

const key = (apiVersion, resource, ns, n) => JSON.stringify([apiVersion, resource, ns, n]);

function changed(apiVersion, resource) {
  const k = JSON.stringify([apiVersion, resource]);
  state.changes.set(k, (state.changes.get(k) ?? 0) + 1);
}

/** Stores an object under its metadata.namespace / metadata.name. */
export function putObject(apiVersion, resource, object) {
  state.objects.set(key(apiVersion, resource, namespace(object), name(object)), structuredClone(object));
  changed(apiVersion, resource);
}

/** Removes an object (namespace "" for cluster-scoped ones); moves the watermark. */
export function removeObject(apiVersion, resource, ns, n) {
  state.objects.delete(key(apiVersion, resource, ns, n));
  changed(apiVersion, resource);
}

/** Makes every get/list fail with `message` (null restores normal reads). */
export function failReads(message) {
  state.readError = message ?? null;
}

/** The lines the plugin logged so far, as [level, message]. */
export function logs() {
  return state.logs.map((l) => [...l]);
}

/**
 * A request for `object` at `apiVersion` ("v1", "apps/v1") / `resource`,
 * with `kind` and namespace; name from the object's metadata. DELETE
 * requests carry it as oldObject.
 */
export function request(operation, apiVersion, resource, kind, ns, object) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  const req = {
    uid: 'test-uid',
    kind: { group, version, kind },
    resource: { group, version, resource },
    name: name(object),
    namespace: ns,
    operation,
    userInfo: { username: 'test' },
  };
  if (operation === 'DELETE') req.oldObject = object;
  else req.object = object;
  return req;
}

/** The AdmissionReview the host would send for `request` (JSON text, for runAdmission). */
export function reviewText(req) {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
}

/** Applies a response's patch (its operations, or the base64 `patch` of its wire form) to a copy of `object`. */
export function applyPatch(object, response) {
  const ops = response.patchOps ?? (response.patch ? JSON.parse(decodeText(response.patch)) : []);
  let doc = structuredClone(object);
  for (const op of ops) doc = applyOp(doc, op);
  return doc;
}

function tokens(path) {
  return path.split('/').slice(1).map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function applyOp(doc, op) {
  const parts = tokens(op.path);
  if (parts.length === 0) {
    if (op.op === 'remove') throw new Error(`${op.path}: cannot remove the root`);
    return structuredClone(op.value);
  }
  const last = parts.pop();
  let parent = doc;
  for (const p of parts) {
    parent = parent?.[p];
    if (parent === null || typeof parent !== 'object') throw new Error(`${op.path}: parent does not exist`);
  }
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    const bound = op.op === 'add' ? parent.length : parent.length - 1;
    if (!Number.isInteger(i) || i < 0 || i > bound) throw new Error(`${op.path}: index out of range`);
    if (op.op === 'add') parent.splice(i, 0, structuredClone(op.value));
    else if (op.op === 'replace') parent[i] = structuredClone(op.value);
    else parent.splice(i, 1);
    return doc;
  }
  if (op.op !== 'add' && !(last in parent)) throw new Error(`${op.path}: cannot apply`);
  if (op.op === 'remove') delete parent[last];
  else parent[last] = structuredClone(op.value);
  return doc;
}

function requirements(selector) {
  return selector
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      if (s.includes('!=')) return ['ne', ...s.split('!=', 2).map((x) => x.trim())];
      const eq = s.includes('==') ? '==' : '=';
      if (s.includes(eq)) return ['eq', ...s.split(eq, 2).map((x) => x.trim())];
      if (s.startsWith('!')) return ['absent', s.slice(1).trim()];
      return ['exists', s];
    });
}

function labelsMatch(object, selector) {
  const l = labels(object);
  return requirements(selector).every(([op, k, v]) =>
    op === 'eq' ? l[k] === v : op === 'ne' ? l[k] !== v : op === 'exists' ? k in l : !(k in l),
  );
}

function fieldsMatch(object, selector) {
  const at = (k) => {
    const v = k.split('.').reduce((o, p) => (o && typeof o === 'object' ? o[p] : undefined), object);
    return typeof v === 'string' ? v : '';
  };
  return requirements(selector).every(([op, k, v]) => (op === 'eq' ? at(k) === v : op === 'ne' ? at(k) !== v : true));
}

function checkReads() {
  if (state.readError !== null) {
    const e = new Error(state.readError);
    e.payload = state.readError;
    throw e;
  }
}

/** The host functions, as the component's imports present them (WIT names in camelCase). */
const fake = {
  log(level, message) {
    state.logs.push([level, message]);
  },
  config() {
    return state.config;
  },
  getObject(apiVersion, resource, ns, n) {
    checkReads();
    const o = state.objects.get(key(apiVersion, resource, ns ?? '', n));
    return o === undefined ? undefined : JSON.stringify(o);
  },
  listObjects(apiVersion, resource, ns, labelSelector, fieldSelector) {
    checkReads();
    const items = [...state.objects.entries()]
      .filter(([k]) => {
        const [av, r, objNs] = JSON.parse(k);
        return av === apiVersion && r === resource && (ns === undefined || ns === null || ns === objNs);
      })
      .map(([, o]) => o)
      .filter((o) => !labelSelector || labelsMatch(o, labelSelector))
      .filter((o) => !fieldSelector || fieldsMatch(o, fieldSelector));
    return JSON.stringify({ apiVersion, kind: 'List', items });
  },
  watermark(apiVersion, resource) {
    checkReads();
    return String(state.changes.get(JSON.stringify([apiVersion, resource])) ?? 0);
  },
};

reset();
