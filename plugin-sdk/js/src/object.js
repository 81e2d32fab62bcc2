// Read helpers for Kubernetes objects (plain JSON values).

/** The value at `path` (keys) when it is a string, else undefined. */
export function getStr(object, path) {
  let v = object;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[key];
  }
  return typeof v === 'string' ? v : undefined;
}

/** `metadata.name`, "" when none. */
export function name(object) {
  return getStr(object, ['metadata', 'name']) ?? '';
}

/** `metadata.namespace`, "" when none (cluster-scoped). */
export function namespace(object) {
  return getStr(object, ['metadata', 'namespace']) ?? '';
}

/** `metadata.name`, else `metadata.generateName`, else undefined. */
export function nameOrGenerateName(object) {
  return [getStr(object, ['metadata', 'name']), getStr(object, ['metadata', 'generateName'])]
    .find((s) => s !== undefined && s !== '');
}

function stringMap(object, path) {
  let v = object;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return {};
    v = v[key];
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter(([, s]) => typeof s === 'string'));
}

/** `metadata.labels` (string values only), {} when none. */
export function labels(object) {
  return stringMap(object, ['metadata', 'labels']);
}

/** `metadata.annotations` (string values only), {} when none. */
export function annotations(object) {
  return stringMap(object, ['metadata', 'annotations']);
}
