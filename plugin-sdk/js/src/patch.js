// JSON Patch (RFC 6902) for mutating admission responses: a builder with
// RFC 6901 pointer escaping, and `diff(old, new)` that computes the
// operations turning one object into the other.

/** Escapes one reference token: `~` → `~0`, `/` → `~1` (RFC 6901). */
export function escape(token) {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A JSON pointer from unescaped segments: ["metadata", "labels", "a/b"] → "/metadata/labels/a~1b". */
export function pointer(segments) {
  return segments.map((s) => `/${escape(s)}`).join('');
}

/** Collects operations with segment paths: `new JsonPatch().add(["spec", "x"], v).ops`. */
export class JsonPatch {
  constructor() {
    this.ops = [];
  }
  /** Adds an `add` operation. */
  add(path, value) {
    this.ops.push({ op: 'add', path: pointer(path), value });
    return this;
  }
  /** Adds a `replace` operation. */
  replace(path, value) {
    this.ops.push({ op: 'replace', path: pointer(path), value });
    return this;
  }
  /** Adds a `remove` operation. */
  remove(path) {
    this.ops.push({ op: 'remove', path: pointer(path) });
    return this;
  }
  /** True when no operation was added. */
  isEmpty() {
    return this.ops.length === 0;
  }
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function sameJson(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * The JSON Patch that turns `before` into `after`: objects are compared key
 * by key (remove, add, replace), arrays of equal length element by element,
 * anything else that differs is replaced whole. Mutate a copy of the request's
 * object (`structuredClone`) and diff it against the original.
 */
export function diff(before, after, path = []) {
  if (sameJson(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const ops = [];
    for (const key of Object.keys(before)) {
      if (!(key in after)) ops.push({ op: 'remove', path: pointer([...path, key]) });
    }
    for (const [key, value] of Object.entries(after)) {
      if (!(key in before)) ops.push({ op: 'add', path: pointer([...path, key]), value });
      else ops.push(...diff(before[key], value, [...path, key]));
    }
    return ops;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((item, i) => diff(item, after[i], [...path, String(i)]));
  }
  return [{ op: 'replace', path: pointer(path), value: after }];
}
